"""Materialising `story_scores` again for an hour it finished changes nothing and says so: the
hour keeps its figures (read back from the database), with a plain "unchanged" line, instead of
reporting the rerun's zeros as the hour's. Real parts: Dagster in process, the embedded PostgreSQL,
the offline scorer and briefings."""

from __future__ import annotations

from test_llm_stages import HOUR, add_story, grow_story, run  # noqa: F401  (fixtures)

from newsdedup_dagster.assets.common import ROW_COUNT
from newsdedup_dagster.resources import LLMResource


def _values(result) -> dict:
    return {key: getattr(value, "value", value) for key, value in result.metadata.items()}


def _stored(conn) -> tuple[int, int]:
    row = conn.execute("SELECT (SELECT count(*) FROM story_scores WHERE partition_hour = %(h)s),"
                       " (SELECT count(*) FROM story_briefings WHERE partition_hour = %(h)s)", {"h": HOUR}).fetchone()
    conn.commit()
    return row


def test_a_rerun_that_changes_nothing_keeps_the_hours_figures(conn, clean_db):
    add_story(conn, "s1", 3, langs=("en",))
    add_story(conn, "s2", 2, langs=("en", "fr"))
    first = _values(run(["story_scores"], clean_db, LLMResource())["story_scores"])
    assert first[ROW_COUNT] == first["scored"] == 2 and first["briefed"] == 2
    assert "unchanged" not in first

    again = _values(run(["story_scores"], clean_db, LLMResource())["story_scores"])
    scored, briefed = _stored(conn)
    assert (scored, briefed) == (2, 2)
    # The hour's figures, as stored, not this run's nothing; what this run wrote stays its own.
    assert (again[ROW_COUNT], again["scored"], again["briefings_stored"]) == (scored, scored, briefed)
    assert again["briefed"] == 0
    assert again["unchanged"] == f"unchanged: {scored} stories scored earlier"
    assert again["candidates"] == 0
    # Its top stories are the hour's as well.
    assert again["top_stories"] == first["top_stories"]


def test_a_rerun_with_work_reports_its_own_figures(conn, clean_db):
    add_story(conn, "s1", 2, langs=("en",))
    run(["story_scores"], clean_db, LLMResource())
    grow_story(conn, "s1", 2, HOUR)
    again = _values(run(["story_scores"], clean_db, LLMResource())["story_scores"])
    assert "unchanged" not in again
    assert again[ROW_COUNT] == again["scored"] == 1
