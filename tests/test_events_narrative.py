"""Narratives: offline extractive, LLM regeneration with the previous narrative as context and an
interval bound, per-batch translation failures, against the real local OpenAI-compatible server."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from fake_openai import FakeOpenAI, Reply
from helpers import calibrate
from test_events_fixtures import add_story, at, hour_of

from newsdedup_dagster import config
from newsdedup_dagster.shared.models.client import LLMClient, OutputInvalid, PostgresCallRecorder
from newsdedup_dagster.shared.models.settings import BackoffPolicy
from newsdedup_dagster.stages.events import narrative, store
from newsdedup_dagster.stages.events.grouping import event_id_for
from newsdedup_dagster.stages.events.narrative import (
    TimelineStory,
    due_for_regeneration,
    offline_narrative,
    validate_narrative,
)
from newsdedup_dagster.stages.events.settings import GroupingSettings, NarrativeSettings

GROUPING = GroupingSettings(threshold=0.45, join_gap_hours=72, quiet_hours=72, max_span_days=14, min_significance=3)
LANGS = "en,fr,de,ja,ko,zh"


def _narrative_reply(tag: str) -> dict:
    return {"title": f"Title {tag}", "what_happened": f"What {tag}.", "background": f"Background {tag}.",
            "how_it_developed": f"Developed {tag}.", "what_to_watch": f"Watch {tag}."}


def _is_narrative(req) -> bool:
    return "running explainer" in req.system_text


def _is_translation(req) -> bool:
    return "target_languages" in req.user_text


@pytest.fixture()
def fake():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture()
def llm(fake, monkeypatch, clean_db, tmp_path):
    monkeypatch.setenv("NEWSDEDUP_LLM_BASE_URL", fake.base_url)
    monkeypatch.setenv("NEWSDEDUP_NARRATIVE_LANGS", LANGS)
    calibrate(monkeypatch, tmp_path, llm={"max_attempts": 2})
    settings = config.llm_settings()
    client = LLMClient(settings, recorder=PostgresCallRecorder(clean_db), backoff=BackoffPolicy(0.001, 0.002, 5),
                       sleep=lambda s: None)
    yield settings, client
    client.close()


def test_due_for_regeneration_rules():
    h = at(10)
    assert due_for_regeneration(1, None, h, 6, offline=False)
    assert not due_for_regeneration(1, h - timedelta(hours=5), h, 6, offline=False)
    assert due_for_regeneration(1, h - timedelta(hours=6), h, 6, offline=False)
    assert due_for_regeneration(1, h - timedelta(hours=1), h, 6, offline=True)
    assert not due_for_regeneration(0, None, h, 6, offline=False)
    assert not due_for_regeneration(-1, None, h, 6, offline=True)


def test_offline_narrative_is_extractive_in_time_order():
    tl = [TimelineStory("b", at(30), "EU votes on AI act", "Parliament votes.", "en", 6.0, 3, ("en", "fr")),
          TimelineStory("a", at(5), "EU proposes AI act", "Commission proposes.", "en", 4.0, 2, ("en",))]
    out = offline_narrative(tl)
    assert set(out) == set(narrative.SECTIONS)
    assert out["what_happened"].startswith("EU votes on AI act.")  # most significant
    # The date and the languages written the reader's way (Babel), like every date on the site.
    assert out["background"].startswith("First reported November 2, 2026: EU proposes AI act.")
    assert out["how_it_developed"].index("proposes") < out["how_it_developed"].index("votes")
    assert "languages: English and French" in out["background"]


def test_validate_narrative_rejects_missing_and_runaway_sections():
    with pytest.raises(OutputInvalid):
        validate_narrative({"what_happened": "x", "background": "y", "how_it_developed": "z"})
    with pytest.raises(OutputInvalid):
        validate_narrative({k: "x" * 5000 for k in narrative.SECTIONS})
    assert validate_narrative({**{k: " a  b " for k in narrative.SECTIONS}, "title": "T"})["what_happened"] == "a b"


def _group(conn, hours):
    store.group_hour(conn, hour_of(at(hours)), GROUPING)


def test_offline_narratives_and_skipped_translations(conn, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_NARRATIVE_LANGS", LANGS)
    add_story(conn, "o1", "topic-o", 1.0, titles={"en": "Storm hits coast"})
    _group(conn, 1)
    res = narrative.generate_narratives(conn, hour_of(at(1)), config.llm_settings(), client=None)
    assert res.offline == 1
    row = conn.execute("SELECT narrative, narrative_offline, narrative_model, narrative_lang, needs_narrative FROM events").fetchone()
    assert row[1] is True and row[2] == "offline-extractive" and row[3] == "en" and row[4] == 0
    assert "Storm hits coast" in row[0]["what_happened"]
    statuses = dict(conn.execute("SELECT lang, status FROM event_translations").fetchall())
    assert statuses == {lang: 2 for lang in LANGS.split(",") if lang != "en"}
    conn.commit()


def test_llm_narrative_regenerates_with_previous_context_at_most_once_per_interval(conn, fake, llm):
    settings, client = llm
    ev = event_id_for("n1")
    fake.responder = lambda req: _narrative_reply("v1") if _is_narrative(req) else __import__("fake_openai").default_responder(req)
    add_story(conn, "n1", "topic-n", 1.0, titles={"en": "Talks open"})
    _group(conn, 1)
    r1 = narrative.generate_narratives(conn, hour_of(at(1)), settings, NarrativeSettings(6, 50, 50), client)
    assert r1.generated == 1
    first_prompt = json.loads([r for r in fake.requests if _is_narrative(r)][0].user_text)
    assert first_prompt["previous_narrative"] is None

    # Two hours later a new story joins: within the 6 h interval -> not regenerated yet.
    add_story(conn, "n2", "topic-n", 3.0, titles={"en": "Talks stall"})
    _group(conn, 3)
    r2 = narrative.generate_narratives(conn, hour_of(at(3)), settings, NarrativeSettings(6, 50, 50), client)
    assert r2.generated == 0 and r2.skipped_interval == 1
    assert conn.execute("SELECT needs_narrative FROM events WHERE id = %s", (ev,)).fetchone()[0] == 1

    # At hour 7 (6 h after the first) it is regenerated, with v1 as context.
    fake.responder = lambda req: _narrative_reply("v2") if _is_narrative(req) else __import__("fake_openai").default_responder(req)
    r3 = narrative.generate_narratives(conn, hour_of(at(7)), settings, NarrativeSettings(6, 50, 50), client)
    assert r3.generated == 1
    prompt = json.loads([r for r in fake.requests if _is_narrative(r)][-1].user_text)
    assert prompt["previous_narrative"]["what_happened"] == "What v1."
    assert [t["headline"] for t in prompt["timeline"]] == ["Talks open", "Talks stall"]
    row = conn.execute("SELECT narrative->>'what_happened', narrative_offline, narrative_title, narrative_story_count,"
                       " needs_narrative, narrative_partition FROM events WHERE id = %s", (ev,)).fetchone()
    assert row == ("What v2.", False, "Title v2", 2, 0, hour_of(at(7)))
    calls = conn.execute("SELECT count(*) FROM llm_calls WHERE task = 'narrative' AND event_id = %s AND status = 'ok'",
                         (ev,)).fetchone()[0]
    assert calls == 2
    conn.commit()


def test_translation_batches_commit_independently_and_failures_follow_rules(conn, fake, llm):
    settings, client = llm
    fake.responder = lambda req: _narrative_reply("v1") if _is_narrative(req) else __import__("fake_openai").default_responder(req)
    add_story(conn, "t1", "topic-t", 1.0, titles={"en": "Summit ends"})
    _group(conn, 1)
    narrative.generate_narratives(conn, hour_of(at(1)), settings, NarrativeSettings(6, 50, 50), client)
    ev = event_id_for("t1")
    # targets (en is the source): de,fr | ja,ko | zh  -> 3 batches
    # ja/ko batch: invalid JSON on every attempt -> permanent -1; zh: 503 every attempt -> transient.
    fake.push(Reply.invalid_json(), match=lambda r: _is_translation(r) and '"ja"' in r.user_text, times=10)
    fake.push(Reply.status_code(503), match=lambda r: _is_translation(r) and '"zh"' in r.user_text, times=10)
    res = narrative.translate_narratives(conn, hour_of(at(1)), client, settings, NarrativeSettings(6, 50, 50))
    assert res.translated_batches == 1 and res.failed_batches == 2
    rows = {lang: (status, attempts) for lang, status, attempts in
            conn.execute("SELECT lang, status, attempts FROM event_translations WHERE event_id = %s", (ev,))}
    assert rows["de"][0] == 0 and rows["fr"][0] == 0
    assert rows["ja"][0] == -1 and rows["ko"][0] == -1
    assert rows["zh"] == (1, 2)  # transient: still pending, its attempts counted (another batch succeeded)
    de = conn.execute("SELECT title, narrative->>'what_happened' FROM event_translations WHERE event_id = %s AND lang = 'de'",
                      (ev,)).fetchone()
    assert de == ("[de] Title v1", "[de] What v1.")
    # next run: zh succeeds; -1 rows are never retried
    before = fake.count(_is_translation)
    fake.reset()
    res2 = narrative.translate_narratives(conn, hour_of(at(2)), client, settings, NarrativeSettings(6, 50, 50))
    assert res2.translated_batches == 1
    assert fake.count(_is_translation) == 1 and before >= 3
    assert conn.execute("SELECT status FROM event_translations WHERE event_id = %s AND lang = 'zh'", (ev,)).fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM event_translations WHERE status = -1").fetchone()[0] == 2
    conn.commit()


def test_permanent_narrative_failure_falls_back_to_extractive(conn, fake, llm):
    settings, client = llm
    fake.push(Reply.invalid_json(), match=_is_narrative, times=10)
    add_story(conn, "f1", "topic-f", 1.0, titles={"en": "Bridge collapses"})
    _group(conn, 1)
    res = narrative.generate_narratives(conn, hour_of(at(1)), settings, NarrativeSettings(6, 50, 50), client)
    assert res.failed == 1
    row = conn.execute("SELECT needs_narrative, narrative_offline, narrative->>'what_happened', narrative_error FROM events").fetchone()
    assert row[0] == -1 and row[1] is True and "Bridge collapses" in row[2] and row[3]
    conn.commit()
