"""LLMClient against a real HTTP server on 127.0.0.1 (tests/fake_openai.py), plus the pure helpers."""

from __future__ import annotations

import logging
import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from fake_openai import Reply

from newsdedup_dagster.config import LLMSettings
from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.models import pricing, translation
from newsdedup_dagster.shared.models.cache import PostgresResultCache
from newsdedup_dagster.shared.models.client import (
    LLMClient,
    LLMConfigError,
    LLMUnavailable,
    MemoryRecorder,
    OutputInvalid,
    PostgresCallRecorder,
    RequestRejected,
    backoff_delay,
    parse_json_reply,
    parse_retry_after,
    redact,
)
from newsdedup_dagster.shared.models.settings import BackoffPolicy
from newsdedup_dagster.stages.llm import scoring

KEY = "sk-test-SECRET-0123456789abcdef"
FAST = BackoffPolicy(base_s=0.01, max_s=0.05, retry_after_max_s=5.0)


def make_client(fake, **overrides) -> LLMClient:
    settings = LLMSettings(base_url=fake.base_url, api_key=KEY, timeout_s=overrides.pop("timeout_s", 2.0),
                           max_attempts=overrides.pop("max_attempts", 3), concurrency=2,
                           prices="deepseek-chat=0.27/1.10/0.07,qwen-plus=0.40/1.20")
    return LLMClient(settings, MemoryRecorder(), backoff=overrides.pop("backoff", FAST), **overrides)


def score_call(client):
    return client.complete_json("score", "deepseek-chat", scoring.system_prompt("en"), "articles...",
                                scoring.validate_score, story_id="s1")


def test_success_records_tokens_cost_and_sends_key(fake):
    fake.push(Reply.json({"scale": 6, "impact": 7, "novelty": 5, "breadth": 4, "credibility": 8, "urgency": 6,
                          "significance": 6.5, "headline": "Quake hits coast",
                          "summary": "A strong quake hit the coast. Dozens were hurt."},
                         prompt_tokens=1000, completion_tokens=200, cached_tokens=600))
    with make_client(fake) as client:
        result, usage = score_call(client)
        records = client.recorder.records
    assert result.significance == 6.5 and result.headline == "Quake hits coast"
    assert (usage.tokens_in, usage.tokens_out, usage.tokens_cached, usage.attempts) == (1000, 200, 600, 1)
    # 400 uncached x 0.27 + 600 cached x 0.07 + 200 out x 1.10, per 1M tokens
    assert usage.cost_usd == Decimal("0.000370")
    assert [(r.status, r.attempt, r.tokens_in, r.story_id) for r in records] == [("ok", 1, 1000, "s1")]
    req = fake.requests[0]
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.body["response_format"] == {"type": "json_object"}
    assert req.system_text == scoring.system_prompt("en")  # stable prefix, story text only in the user turn


def test_invalid_json_then_success(fake):
    fake.push(Reply.invalid_json())
    with make_client(fake) as client:
        result, usage = score_call(client)
        statuses = [r.status for r in client.recorder.records]
    assert usage.attempts == 2 and statuses == ["invalid", "ok"]
    # The retry shows the model its mistake after the unchanged prefix.
    retry = fake.requests[1].messages
    assert retry[0] == fake.requests[0].messages[0] and "invalid" in retry[-1]["content"]


def test_out_of_range_score_is_retried_then_permanent(fake):
    bad = {"scale": 11, "impact": 7, "novelty": 5, "breadth": 4, "credibility": 8, "urgency": 6,
           "significance": 6, "headline": "h", "summary": "One sentence here. Two sentences here."}
    fake.push(Reply.json(bad), times=3)
    with make_client(fake) as client, pytest.raises(OutputInvalid) as info:
        score_call(client)
    assert info.value.permanent and info.value.attempts == 3
    assert "outside 0-10" in str(info.value)
    assert fake.count() == 3


def test_429_honours_retry_after(fake):
    fake.push(Reply.status_code(429, retry_after=1))
    with make_client(fake) as client:
        _result, usage = score_call(client)
    assert usage.attempts == 2
    gap = fake.requests[1].arrived - fake.requests[0].arrived
    assert gap >= 1.0, f"retried after {gap:.2f}s, Retry-After was 1s (backoff alone would be ~0.01s)"


def test_retry_after_beyond_cap_gives_up_at_once(fake):
    fake.push(Reply.status_code(429, retry_after=3600))
    with make_client(fake) as client, pytest.raises(LLMUnavailable) as info:
        score_call(client)
    assert not info.value.permanent and fake.count() == 1


def test_500_then_success(fake):
    fake.push(Reply.status_code(500))
    with make_client(fake) as client:
        _result, usage = score_call(client)
        statuses = [r.status for r in client.recorder.records]
    assert usage.attempts == 2 and statuses == ["error", "ok"]


def test_500_exhausted_is_transient(fake):
    fake.push(Reply.status_code(503), times=3)
    with make_client(fake) as client, pytest.raises(LLMUnavailable) as info:
        score_call(client)
    assert not info.value.permanent and info.value.attempts == 3


def test_timeout_then_success(fake):
    fake.push(Reply.slow(1.5))
    with make_client(fake, timeout_s=0.3) as client:
        _result, usage = score_call(client)
        records = client.recorder.records
    assert usage.attempts == 2
    assert records[0].status == "error" and "timeout" in records[0].error


def test_auth_error_fails_fast_and_is_redacted(fake, caplog):
    caplog.set_level(logging.DEBUG)
    fake.push(Reply.status_code(401, message=f"Incorrect API key provided: {KEY}"))
    with make_client(fake) as client, pytest.raises(LLMConfigError) as info:
        score_call(client)
    assert fake.count() == 1
    assert KEY not in str(info.value) and "***" in str(info.value)
    assert KEY not in caplog.text


def test_bad_request_is_permanent_without_retry(fake):
    fake.push(Reply.status_code(400, message="context length exceeded"))
    with make_client(fake) as client, pytest.raises(RequestRejected):
        score_call(client)
    assert fake.count() == 1


def test_concurrency_limit(fake):
    from concurrent.futures import ThreadPoolExecutor

    fake.push(Reply.slow(0.3), times=4)
    with make_client(fake) as client:  # concurrency=2
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda _: score_call(client), range(4)))
    arrivals = sorted(r.arrived for r in fake.requests)
    # two waves: the 3rd request only starts once one of the first two has finished
    assert arrivals[2] - arrivals[0] >= 0.25


def test_translate_fields_two_languages(fake):
    with make_client(fake) as client:
        out, usage = translation.translate_fields(
            client, "qwen-plus", {"headline": "Quake hits coast", "summary": "A quake. People hurt."},
            ["fr", "de"], source_lang="en", story_id="s1")
    assert out["fr"]["headline"] == "[fr] Quake hits coast" and set(out) == {"fr", "de"}
    assert usage.cost_usd > 0


def test_translation_missing_language_is_invalid():
    with pytest.raises(OutputInvalid, match='"de"'):
        translation.validate_translations({"translations": {"fr": {"h": "x"}}}, {"h": "y"}, ["fr", "de"])


# ------------------------------------------------------------------ pure helpers
def test_pricing():
    table = pricing.parse_prices("a=1/2,b=0.5/1/0.1")
    assert pricing.cost_usd(table, "a", 1_000_000, 500_000) == (Decimal("2.000000"), True)
    assert pricing.cost_usd(table, "b", 1_000_000, 0, 1_000_000) == (Decimal("0.100000"), True)
    assert pricing.cost_usd(table, "zzz", 10, 10) == (Decimal(0), False)
    with pytest.raises(ValueError, match="bad"):
        pricing.parse_prices("bad")


def test_backoff_and_retry_after():
    policy = BackoffPolicy(base_s=1, max_s=8, retry_after_max_s=60)
    rng = random.Random(1)
    for attempt, ceiling in [(1, 1), (2, 2), (3, 4), (5, 8), (9, 8)]:
        delay = backoff_delay(attempt, policy, rng)
        assert ceiling / 2 <= delay <= ceiling
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    now = datetime(2026, 11, 2, 5, 0, tzinfo=UTC)
    date = (now + timedelta(seconds=30)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert abs(parse_retry_after({"retry-after": date}, now=now.timestamp()) - 30) < 1
    assert parse_retry_after({}) is None


def test_redact_and_parse():
    assert redact(f"key {KEY} and Bearer abc.def", (KEY,)) == "key *** and Bearer ***"
    assert parse_json_reply('```json\n{"a": 1}\n```') == {"a": 1}
    with pytest.raises(OutputInvalid):
        parse_json_reply("[1, 2]")


def test_validate_score_rules():
    ok = {"scale": 1, "impact": "2", "novelty": 3.5, "breadth": 0, "credibility": 10, "urgency": 9,
          "significance": 7, "headline": "  A   headline ", "summary": "First sentence here. Second one here."}
    result = scoring.validate_score(ok)
    assert result.dims["impact"] == 2.0 and result.headline == "A headline"
    for key, value, message in [("significance", -1, "outside"), ("urgency", True, "number"),
                                ("headline", "x" * 200, "limit"), ("summary", "short", "characters")]:
        with pytest.raises(OutputInvalid, match=message):
            scoring.validate_score({**ok, key: value})
    missing = dict(ok)
    del missing["novelty"]
    with pytest.raises(OutputInvalid, match="novelty"):
        scoring.validate_score(missing)


def _facts(items, sources, langs, hours):
    t0 = datetime(2026, 11, 2, 5, tzinfo=UTC)
    rep = scoring.Article("Big <b>news</b> today", "<p>First sentence. Second sentence. Third.</p>", "en", "S")
    return scoring.StoryFacts("s", items, sources, langs, t0, t0 + timedelta(hours=hours), rep, [])


def test_offline_score_is_deterministic_and_monotone():
    small = scoring.offline_score(_facts(1, 1, ["en"], 0))
    # coverage counts outlets (one article per outlet): 40 outlets reach every saturation point
    big = scoring.offline_score(_facts(40, 40, ["en", "fr", "de", "es", "zh", "ja", "ru", "ar"], 2))
    assert small.significance == 0 and big.significance == 10.0
    mid = scoring.offline_score(_facts(6, 4, ["en", "fr"], 3))
    assert mid == scoring.offline_score(_facts(6, 4, ["en", "fr"], 3))
    assert 0 < mid.significance < 10 and mid.offline
    assert mid.headline == "Big news today" and mid.summary == "First sentence. Second sentence."
    assert mid.dims["scale"] is None and mid.dims["breadth"] is not None


def test_offline_headline_prefers_an_article_in_the_pivot_language():
    t0 = datetime(2026, 11, 2, 5, tzinfo=UTC)
    rep = scoring.Article("La UE reforma su ley de IA", "Resumen en español.", "es", "El País")
    newer_en = scoring.Article("EU revises AI act, again", "The EU revised its AI act again on Monday, officials said.", "en", "Guardian")
    older_en = scoring.Article("EU agrees to revise AI rules", "Brussels eased the rules for small firms and delayed high-risk duties.", "en", "BBC")
    aggregator = scoring.Article("EU agrees AI deal", "EU agrees AI deal  Reuters", "en", "Google News")
    facts = scoring.StoryFacts("s", 3, 3, ["en", "es"], t0, t0 + timedelta(hours=2), rep, [rep, newer_en, older_en, aggregator])
    english = scoring.offline_score(facts, "en")
    assert (english.headline, english.pivot_lang) == ("EU agrees to revise AI rules", "en")
    assert scoring.offline_score(facts, "de").headline == "La UE reforma su ley de IA"  # no German: representative
    assert scoring.offline_score(facts).pivot_lang == "es"
    # the article's own outlet suffix goes; other suffixes are part of the headline
    assert scoring._without_own_outlet("EU strikes deal on AI rules - Reuters", "Reuters") == "EU strikes deal on AI rules"
    assert scoring._without_own_outlet("Arsenal 2-1 Chelsea - as it happened", "Guardian") == "Arsenal 2-1 Chelsea - as it happened"


def test_rescore_rule_and_batches_and_status():
    assert not scoring.needs_rescore(2, 1)  # one new item on a 1-item story: not substantial
    assert scoring.needs_rescore(3, 1) and not scoring.needs_rescore(11, 10) and scoring.needs_rescore(15, 10)
    langs = ("zh", "ja", "ko", "fr", "de", "es", "pt", "ru", "ar", "hi")
    assert translation.language_batches(langs) == [("zh", "ja"), ("ko", "fr"), ("de", "es"), ("pt", "ru"), ("ar", "hi")]
    job = translation.BatchJob("s", {}, ("zh", "ja"), "en", attempts_so_far=3)
    transient = translation.BatchOutcome(job, None, LLMUnavailable("x", attempts=3), None)
    assert translation.next_status(transient, max_attempts=3) == 1
    job.attempts_so_far = 6
    assert translation.next_status(transient, max_attempts=3) == -1
    permanent = translation.BatchOutcome(job, None, OutputInvalid("x", attempts=3), None)
    assert translation.next_status(permanent, max_attempts=3) == -1


def test_a_paid_answer_and_its_call_record_commit_together(fake, clean_db):
    """On the real database: the stored answer and the llm_calls row of the attempt that paid for it
    are written by one transaction (same xmin), so a process killed between the two writes cannot
    leave a paid call without its answer, which the rerun would pay for again."""
    fake.push(Reply.json({"scale": 6, "impact": 7, "novelty": 5, "breadth": 4, "credibility": 8, "urgency": 6,
                          "significance": 6.5, "headline": "Quake hits coast",
                          "summary": "A strong quake hit the coast. Dozens were hurt."}))
    settings = LLMSettings(base_url=fake.base_url, api_key=KEY, timeout_s=2.0, max_attempts=3)
    with LLMClient(settings, PostgresCallRecorder(clean_db), backoff=FAST,
                   cache=PostgresResultCache(clean_db)) as client:
        client.complete_json("score", "deepseek-chat", scoring.system_prompt("en"), "articles...",
                             scoring.validate_score, story_id="s1", prompt_version=scoring.PROMPT_VERSION,
                             target_langs=("en",), input_material="articles...")
    with db.connection(clean_db) as conn:
        answers = conn.execute("SELECT cache_key, xmin::text FROM llm_results").fetchall()
        calls = conn.execute("SELECT cache_key, xmin::text FROM llm_calls WHERE status = 'ok'").fetchall()
    assert len(answers) == 1 and calls == answers


def test_a_paid_answer_is_stored_when_its_call_record_is_refused(fake, clean_db, caplog):
    """After PostgreSQL's crash recovery the llm_calls sequence can hand out an id a row already has
    (seen in the crash suite, on a database copied from a template just before the server was
    stopped in immediate mode). The refused call row must not take the paid answer with it: the
    answer is stored, the call recorded on its own, and the next run reuses the answer."""
    fake.push(Reply.json({"scale": 6, "impact": 7, "novelty": 5, "breadth": 4, "credibility": 8, "urgency": 6,
                          "significance": 6.5, "headline": "Quake hits coast",
                          "summary": "A strong quake hit the coast. Dozens were hurt."}))
    with db.connection(clean_db) as conn:  # the id the sequence hands out next is taken already
        conn.execute("INSERT INTO llm_calls (id, task, model, status) VALUES (1, 'score', 'deepseek-chat', 'ok')")
        conn.commit()
    settings = LLMSettings(base_url=fake.base_url, api_key=KEY, timeout_s=2.0, max_attempts=3)

    def ask():
        with LLMClient(settings, PostgresCallRecorder(clean_db), backoff=FAST,
                       cache=PostgresResultCache(clean_db)) as client:
            return client.complete_json("score", "deepseek-chat", scoring.system_prompt("en"), "articles...",
                                        scoring.validate_score, story_id="s1", prompt_version=scoring.PROMPT_VERSION,
                                        target_langs=("en",), input_material="articles...")

    with caplog.at_level(logging.ERROR, logger="newsdedup_dagster.shared.models.client"):
        first, usage = ask()
    assert usage.reused == 0 and "call record was refused" in caplog.text
    with db.connection(clean_db) as conn:
        answers = conn.execute("SELECT cache_key FROM llm_results").fetchall()
        paid = conn.execute("SELECT cache_key FROM llm_calls WHERE status = 'ok' AND NOT cached"
                            " AND cache_key IS NOT NULL").fetchall()
    assert len(answers) == 1 and paid == answers  # the answer, and its call recorded apart
    requests = fake.count()
    again, usage = ask()
    assert usage.reused == 1 and again == first and fake.count() == requests
