"""story_scores / story_translations against the embedded PostgreSQL and a real fake OpenAI server."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta

import pytest
from fake_openai import Reply
from helpers import calibrate
from hourly_helpers import stage_hour

from newsdedup_dagster.assets.llm import LLMResource
from newsdedup_dagster.shared.models.client import LLMUnavailable
from newsdedup_dagster.stages.llm import stages
from newsdedup_dagster.stages.llm.report import format_top_stories, top_stories

KEY = "sk-stage-test-SECRET-9f8e7d6c5b4a"
PARTITION = "2026-11-02-05:00"
HOUR = datetime(2026, 11, 2, 5, tzinfo=UTC)
LANGS = ("zh", "ja", "ko", "fr", "de", "es", "pt", "ru", "ar", "hi")


@pytest.fixture()
def llm_env(monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_LLM_API_KEY", KEY)


@pytest.fixture()
def online(fake, monkeypatch, tmp_path):
    """`online(max_attempts=2, concurrency=2)`: the llm resource on the fake server, its limits (and
    short timeouts and backoff) set as a deployment sets them, by environment variable and
    calibration file."""

    def resource(max_attempts: int = 2, concurrency: int = 2) -> LLMResource:
        for name, value in {"NEWSDEDUP_LLM_CONCURRENCY": concurrency,
                            "NEWSDEDUP_TRANSLATION_LANGS": ",".join(LANGS)}.items():
            monkeypatch.setenv(name, str(value))
        calibrate(monkeypatch, tmp_path, llm={"max_attempts": max_attempts, "timeout_s": 2.0, "base_s": 0.01,
                                              "max_s": 0.05, "retry_after_max_s": 5.0})
        return LLMResource(base_url=fake.base_url)

    return resource


def run(assets, db_url, llm: LLMResource, partition=PARTITION):
    """The hour of each named stage, in the order given (the chain's order): name -> result."""
    results = {}
    for name in assets:
        results[name] = stage_hour(name, partition, db_url, llm=llm)
        assert results[name].success, name
    return results


# ------------------------------------------------------------------ fixtures in SQL
def add_story(conn, story_id: str, n_items: int, langs=("en", "fr"), hour=HOUR, n_sources=None):
    """A story of n_items articles from n_sources sources (round-robin languages), updated in `hour`."""
    conn.execute("INSERT INTO embedding_models (model, provider, dims, index_type) VALUES ('tiny', 'test', 3, 'vector') "
                 "ON CONFLICT DO NOTHING")
    n_sources = n_sources or n_items
    for s in range(n_sources):
        conn.execute("INSERT INTO sources (id, name, feed_url, language) VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                     (f"src{s}", f"Source {s}", f"https://feeds.example/{s}", langs[s % len(langs)]))
    item_ids = []
    for i in range(n_items):
        item_id = f"{story_id}-i{i}"
        item_ids.append(item_id)
        conn.execute(
            "INSERT INTO items (id, canonical_url, url, title, summary, lang, published_at, partition_hour, source_id)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (item_id, f"https://news.example/{item_id}", f"https://news.example/{item_id}",
             f"Earthquake report {story_id} number {i}", f"A strong earthquake struck. Report {i} adds details.",
             langs[i % len(langs)], hour - timedelta(minutes=50 - i), hour, f"src{i % n_sources}"))
    conn.execute(
        "INSERT INTO stories (id, model, created_partition, updated_partition, first_published_at, latest_published_at,"
        " centroid, item_count, representative_item_id) VALUES (%s, 'tiny', %s, %s, %s, %s, '[1,0,0]', %s, %s)",
        (story_id, hour, hour, hour - timedelta(minutes=50), hour - timedelta(minutes=50 - n_items + 1), n_items, item_ids[0]))
    for item_id in item_ids:
        conn.execute("INSERT INTO story_items (item_id, story_id, pass, partition_hour) VALUES (%s, %s, 1, %s)",
                     (item_id, story_id, hour))
    conn.commit()


def grow_story(conn, story_id: str, new_items: int, hour: datetime):
    base = conn.execute("SELECT item_count FROM stories WHERE id = %s", (story_id,)).fetchone()[0]
    for i in range(base, base + new_items):
        item_id = f"{story_id}-i{i}"
        conn.execute(
            "INSERT INTO items (id, canonical_url, url, title, summary, lang, published_at, partition_hour, source_id)"
            " VALUES (%s, %s, %s, %s, 'More.', 'de', %s, %s, 'src0')",
            (item_id, f"https://news.example/{item_id}", f"https://news.example/{item_id}", f"Update {i}", hour, hour))
        conn.execute("INSERT INTO story_items (item_id, story_id, pass, partition_hour) VALUES (%s, %s, 1, %s)",
                     (item_id, story_id, hour))
    conn.execute("UPDATE stories SET item_count = item_count + %s, updated_partition = %s WHERE id = %s",
                 (new_items, hour, story_id))
    conn.commit()


def story_state(conn, story_id):
    return conn.execute("SELECT needs_score, score_attempts, scored_item_count FROM stories WHERE id = %s",
                        (story_id,)).fetchone()


def translation_states(conn, story_id) -> dict[str, int]:
    return dict(conn.execute("SELECT lang, status FROM story_translations WHERE story_id = %s", (story_id,)).fetchall())


def all_metadata_text(result) -> str:
    parts = []
    for stage in result.values():
        for key, value in stage.metadata.items():
            parts.append(f"{key}={getattr(value, 'value', value)}")
    return "\n".join(parts)


def score_requests(req) -> bool:
    return "significance" in req.system_text


def translate_requests(req) -> bool:
    return "target_languages" in req.user_text


# ------------------------------------------------------------------ tests
def test_offline_fallback_end_to_end(conn, clean_db, monkeypatch):
    monkeypatch.delenv("NEWSDEDUP_LLM_BASE_URL", raising=False)
    add_story(conn, "big", 6, langs=("en", "fr", "de"))
    add_story(conn, "small", 1)
    result = run(["story_scores", "story_translations"], clean_db, LLMResource())
    rows = {r[0]: r[1:] for r in conn.execute(
        "SELECT story_id, significance, offline, model, headline, summary, scale, breadth FROM story_scores")}
    assert rows["big"][0] > rows["small"][0]
    assert rows["big"][1] is True and rows["big"][2] == "offline-heuristic"
    assert rows["big"][3] == "Earthquake report big number 0"        # representative's own headline
    assert rows["big"][4] == "A strong earthquake struck. Report 0 adds details."
    assert rows["big"][5] is None and rows["big"][6] is not None      # no invented dimensions
    assert set(translation_states(conn, "big").values()) == {2}
    assert len(translation_states(conn, "big")) == len(LANGS)
    text = all_metadata_text(result)
    assert "offline fallback" in text and "offline_fallback=True" in text
    assert story_state(conn, "big")[0] == 0
    assert "OFFLINE FALLBACK" in format_top_stories(top_stories(conn, limit=5))


def test_online_scores_translates_and_records_cost(conn, clean_db, fake, llm_env, caplog, online):
    caplog.set_level(logging.DEBUG)
    add_story(conn, "s1", 3)
    result = run(["story_scores", "story_translations"], clean_db, online())
    row = conn.execute("SELECT significance, impact, headline, offline, model, languages FROM story_scores").fetchone()
    assert row[:5] == (6.5, 7.0, "Fake headline for a scored story", False, "deepseek-chat")
    assert row[5] == ["en", "fr"]
    assert story_state(conn, "s1") == (0, 0, 3)
    assert set(translation_states(conn, "s1").values()) == {0}
    zh = conn.execute("SELECT headline, model FROM story_translations WHERE lang = 'zh'").fetchone()
    assert zh == ("[zh] Fake headline for a scored story", "qwen-plus")
    # 10 languages, 2 per call: 5 calls for the headline and summary, 5 for the briefing's lines
    headline_requests = [r for r in fake.requests if translate_requests(r) and '"headline"' in r.user_text]
    assert len(headline_requests) == 5 and fake.count(translate_requests) == 10
    assert all(len(json.loads(r.user_text)["target_languages"]) == 2 for r in fake.requests if translate_requests(r))
    calls = conn.execute("SELECT task, count(*), sum(tokens_in), sum(tokens_out), sum(cost_usd) FROM llm_calls "
                         "WHERE status = 'ok' AND partition_hour = %s GROUP BY task ORDER BY task", (HOUR,)).fetchall()
    # One briefing call per story beside its score (the fake server's briefing cites the articles).
    assert [(c[0], c[1], c[2], c[3]) for c in calls] == [("briefing", 1, 120, 40),
                                                         ("briefing_translate", 5, 600, 200),
                                                         ("score", 1, 120, 40), ("translate", 5, 600, 200)]
    assert all(c[4] > 0 for c in calls)
    meta = result["story_scores"].metadata
    assert meta["tokens_in"].value == 120 and meta["cost_usd"].value > 0
    assert "Fake headline" in meta["top_stories"].value and "| sig |" in meta["top_stories"].value
    assert KEY not in caplog.text and KEY not in all_metadata_text(result)


def test_permanent_failure_is_minus_one_and_not_called_again(conn, clean_db, fake, llm_env, online):
    add_story(conn, "bad", 2)
    out_of_range = {"scale": 42, "impact": 1, "novelty": 1, "breadth": 1, "credibility": 1, "urgency": 1,
                    "significance": 5, "headline": "h", "summary": "Sentence one here. Sentence two here."}
    fake.push(Reply.json(out_of_range), match=score_requests, times=100)
    run(["story_scores"], clean_db, online(max_attempts=3))
    assert story_state(conn, "bad")[:2] == (-1, 3)
    assert conn.execute("SELECT count(*) FROM llm_calls WHERE status = 'invalid' AND task = 'score'").fetchone()[0] == 3
    assert conn.execute("SELECT count(*) FROM story_translations").fetchone()[0] == 0
    before = fake.count()
    run(["story_scores"], clean_db, online(max_attempts=3))
    assert fake.count() == before                                    # not called again
    # ... until the story grows substantially (2 -> 4 items): then it is rescored.
    later = HOUR + timedelta(hours=1)
    grow_story(conn, "bad", 2, later)
    fake.reset()
    run(["story_scores"], clean_db, online(), partition="2026-11-02-06:00")
    assert story_state(conn, "bad") == (0, 0, 4)


def test_translation_batch_three_fails_others_persist(conn, clean_db, fake, llm_env, online):
    add_story(conn, "s1", 2)
    run(["story_scores"], clean_db, online())
    # batch 3 = ("de", "es"): always invalid -> -1 for both; batches 1-2 and 4-5 are committed.
    fake.push(Reply.invalid_json(), match=lambda r: translate_requests(r) and '"de"' in r.user_text, times=100)
    result = run(["story_translations"], clean_db, online(concurrency=1))
    states = translation_states(conn, "s1")
    assert {lang for lang, s in states.items() if s == 0} == {"zh", "ja", "ko", "fr", "pt", "ru", "ar", "hi"}
    assert states["de"] == states["es"] == -1
    meta = result["story_translations"].metadata
    assert meta["batches_ok"].value == 4 and meta["batches_failed_permanent"].value == 1
    # with one worker, batches run in order: 1-2 were committed before 3 failed, 4-5 after it
    order = [json.loads(r.user_text)["target_languages"] for r in fake.requests if translate_requests(r)]
    assert order[0] == ["zh", "ja"] and order[-1] == ["ar", "hi"]
    err = conn.execute("SELECT error, attempts FROM story_translations WHERE lang = 'de'").fetchone()
    assert "invalid" in err[0] and err[1] == 2
    # -1 is not retried
    before = fake.count()
    run(["story_translations"], clean_db, online())
    assert fake.count() == before


def test_translation_failure_does_not_rescore(conn, clean_db, fake, llm_env, online):
    add_story(conn, "s1", 2)
    run(["story_scores"], clean_db, online())
    # batch ("ko", "fr") fails permanently, the rest succeed
    fake.push(Reply.invalid_json(), match=lambda r: translate_requests(r) and '"ko"' in r.user_text, times=100)
    run(["story_translations"], clean_db, online())
    states = translation_states(conn, "s1")
    assert states["ko"] == states["fr"] == -1 and states["zh"] == 0
    assert story_state(conn, "s1")[0] == 0
    fake.reset()
    run(["story_scores"], clean_db, online())
    assert fake.count(score_requests) == 0                          # scoring not re-triggered
    assert story_state(conn, "s1") == (0, 0, 2)


def test_translation_outage_burns_nothing(conn, clean_db, fake, llm_env, online):
    """Every batch failing transiently is an outage: run_translations raises (the asset's
    RetryPolicy retries later) and no attempt is counted against the rows."""
    from newsdedup_dagster.shared.db import connection
    from newsdedup_dagster.shared.models.client import LLMClient
    from newsdedup_dagster.shared.models.settings import BackoffPolicy

    add_story(conn, "s1", 2)
    run(["story_scores"], clean_db, online())
    fake.push(Reply.status_code(500), match=translate_requests, times=1000)
    settings = online().settings()
    with connection(clean_db) as c, LLMClient(settings, backoff=BackoffPolicy(0.01, 0.02, 1)) as client:
        with pytest.raises(LLMUnavailable):
            stages.run_translations(c, HOUR, settings, client)
    assert set(translation_states(conn, "s1").values()) == {1}
    assert conn.execute("SELECT max(attempts) FROM story_translations").fetchone()[0] == 0
    assert story_state(conn, "s1")[0] == 0


def test_transient_failure_counts_only_when_endpoint_works(conn, clean_db, fake, llm_env, online):
    add_story(conn, "a", 5)
    add_story(conn, "b", 2)
    from newsdedup_dagster.shared.db import connection

    settings = online(concurrency=1).settings()
    # outage: every call 503 -> raises, attempts not counted
    fake.push(Reply.status_code(503), times=100)
    with connection(clean_db) as c, pytest.raises(LLMUnavailable):
        from newsdedup_dagster.shared.models.client import LLMClient
        from newsdedup_dagster.shared.models.settings import BackoffPolicy

        with LLMClient(settings, backoff=BackoffPolicy(0.01, 0.02, 1)) as client:
            stages.run_scoring(c, HOUR, settings, client)
    assert story_state(conn, "a")[:2] == (1, 0)
    # story "a" (largest, scored first) keeps failing, "b" succeeds: a's attempts are counted, still pending
    fake.reset()
    fake.push(Reply.status_code(503), match=lambda r: "story a" in r.user_text or "report a " in r.user_text, times=100)
    with connection(clean_db) as c:
        with LLMClient(settings, backoff=BackoffPolicy(0.01, 0.02, 1)) as client:
            rep = stages.run_scoring(c, HOUR, settings, client)
    assert (rep.scored, rep.failed_transient) == (1, 1)
    assert story_state(conn, "a")[:2] == (1, 2) and story_state(conn, "b")[0] == 0


def test_api_key_never_in_logs_metadata_or_errors(conn, clean_db, fake, llm_env, caplog, online):
    caplog.set_level(logging.DEBUG)
    add_story(conn, "s1", 2)
    # a provider that echoes the key in its error body
    fake.push(Reply.status_code(500, message=f"upstream rejected key {KEY}"), match=score_requests)
    fake.push(Reply.status_code(500, message=f"Authorization: Bearer {KEY}"), match=translate_requests)
    result = run(["story_scores", "story_translations"], clean_db, online())
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in fake.requests)  # the key IS sent
    errors = [e for (e,) in conn.execute("SELECT error FROM llm_calls WHERE error IS NOT NULL AND task <> 'briefing'")]
    assert len(errors) == 2 and all(KEY not in e and "***" in e for e in errors)
    assert KEY not in caplog.text
    assert all(KEY not in record.getMessage() for record in caplog.records)
    assert KEY not in all_metadata_text(result)
    assert KEY not in json.dumps([list(map(str, r)) for r in conn.execute("SELECT * FROM story_translations")])
