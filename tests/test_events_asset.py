"""The `events` asset: materialize hourly partitions against the real database (offline)."""

from __future__ import annotations

from dagster import materialize
from test_events_fixtures import add_story

from newsdedup_dagster.assets.events import events
from newsdedup_dagster.assets.llm import LLMResource
from newsdedup_dagster.resources import PostgresResource


def _run(url, key):
    return materialize([events], partition_key=key,
                       resources={"postgres": PostgresResource(database_url=url), "llm": LLMResource()})


def test_events_asset_groups_checks_and_reports(clean_db, conn):
    add_story(conn, "e1", "topic-e", 5.2, titles={"en": "Ceasefire announced", "ar": "إعلان وقف إطلاق النار"},
              headline="Ceasefire announced")
    add_story(conn, "e2", "topic-e", 29.4, titles={"fr": "Le cessez-le-feu tient"})
    r1 = _run(clean_db, "2026-11-02-05:00")
    assert r1.success
    r2 = _run(clean_db, "2026-11-03-05:00")
    r2 = _run(clean_db, "2026-11-03-05:00")  # rerun: same rows, checks still pass
    assert r2.success
    mats = r2.asset_materializations_for_node("events")
    md = mats[-1].metadata
    assert md["joined"].value == 1 and md["new_events"].value == 0
    table = md["events"].value
    assert "| Ceasefire announced | 2 | 2 | ar, en, fr | open | offline extractive |" in table
    assert "offline extractive" in md["narrative_mode"].value
    checks = r2.get_asset_check_evaluations()
    assert {c.check_name: c.passed for c in checks} == {
        "story_in_at_most_one_event": True, "no_gap_longer_than_quiet_period": True, "timeline_in_time_order": True}
    assert conn.execute("SELECT count(*) FROM event_stories").fetchone()[0] == 2
    conn.commit()
