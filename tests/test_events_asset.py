"""The `events` asset: materialize hourly partitions against the real database (offline)."""

from __future__ import annotations

from helpers import calibrate
from hourly_helpers import stage_hour
from test_events_fixtures import add_story

from newsdedup_dagster.assets.llm import LLMResource


def _run(url, key):
    return stage_hour("events", key, url, llm=LLMResource())


def test_events_asset_groups_checks_and_reports(clean_db, conn):
    add_story(conn, "e1", "topic-e", 5.2, titles={"en": "Ceasefire announced", "ar": "إعلان وقف إطلاق النار"},
              headline="Ceasefire announced")
    add_story(conn, "e2", "topic-e", 29.4, titles={"fr": "Le cessez-le-feu tient"})
    r1 = _run(clean_db, "2026-11-02-05:00")
    assert r1.success
    r2 = _run(clean_db, "2026-11-03-05:00")
    r2 = _run(clean_db, "2026-11-03-05:00")  # rerun: same rows, checks still pass
    assert r2.success
    md = r2.metadata
    assert md["joined"].value == 1 and md["new_events"].value == 0
    rows = [r.data for r in md["events"].records]
    assert {"event": "Ceasefire announced", "days": 2, "stories": 2, "languages": "ar, en, fr", "status": "open",
            "narrative": "offline extractive"} in rows
    assert "offline extractive" in md["narrative_mode"].value
    assert r2.checks() == {
        "story_in_at_most_one_event": True, "no_gap_longer_than_quiet_period": True, "timeline_in_time_order": True}
    assert conn.execute("SELECT count(*) FROM event_stories").fetchone()[0] == 2
    conn.commit()


def test_events_asset_with_llm_narrative_and_16_language_translation(clean_db, conn, monkeypatch, tmp_path):
    import fake_openai

    def responder(req):
        if "running explainer" in req.system_text:
            return {"title": "Ceasefire talks", "what_happened": "A ceasefire was announced.",
                    "background": "Fighting lasted weeks.", "how_it_developed": "Talks began on 2 Nov.",
                    "what_to_watch": "Whether it holds."}
        return fake_openai.default_responder(req)

    add_story(conn, "e1", "topic-e", 5.2, titles={"en": "Ceasefire announced"})
    with fake_openai.FakeOpenAI() as server:
        server.responder = responder
        calibrate(monkeypatch, tmp_path, llm={"base_s": 0.001, "max_s": 0.002})
        llm = LLMResource(base_url=server.base_url)
        result = stage_hour("events", "2026-11-02-05:00", clean_db, llm=llm)
    assert result.success
    md = result.metadata
    assert md["narrative_mode"].value.startswith("llm: ")
    assert md["narratives"].value["generated"] == 1 and md["narratives"].value["translated_batches"] == 8
    assert {"event": "Ceasefire talks", "days": 1, "stories": 1, "languages": "en", "status": "open",
            "narrative": "LLM"} in [r.data for r in md["events"].records]
    rows = dict(conn.execute("SELECT lang, status FROM event_translations").fetchall())
    assert len(rows) == 15 and set(rows.values()) == {0}  # 16 narrative languages minus the source (en)
    assert conn.execute("SELECT narrative_title FROM events").fetchone()[0] == "Ceasefire talks"
    conn.commit()


def test_events_threshold_follows_the_active_model_unless_set(clean_db, conn, monkeypatch, tmp_path):
    from test_events_fixtures import MODEL

    from newsdedup_dagster.stages.events.settings import EVENT_THRESHOLDS

    monkeypatch.delenv("NEWSDEDUP_CALIBRATION_FILE", raising=False)
    monkeypatch.setenv("NEWSDEDUP_EMBEDDING_PROVIDER", "e5")  # the configured provider differs from the database's
    add_story(conn, "e1", "topic-e", 5.2, titles={"en": "Ceasefire announced"})
    conn.execute("UPDATE embedding_models SET active = true WHERE model = %s", (MODEL,))
    conn.commit()

    def threshold(**run_config):
        result = stage_hour("events", "2026-11-02-05:00", clean_db, llm=LLMResource(),
                            options={"events": run_config} if run_config else None)
        md = result.metadata
        return md["threshold"].value, md["embedding_model"].value

    assert threshold() == (EVENT_THRESHOLDS[MODEL], MODEL)  # the active model's value, not e5's
    assert threshold(threshold=0.61)[0] == 0.61  # run config wins
    calibrate(monkeypatch, tmp_path, events={"threshold": 0.52})
    assert threshold()[0] == 0.52  # the calibration file wins over the model's value
