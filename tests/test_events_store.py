"""Event grouping against a real PostgreSQL + pgvector over several days of fixture stories."""

from __future__ import annotations

from datetime import timedelta

from test_events_fixtures import add_story, at, hour_of

from newsdedup_dagster.stages.events import store
from newsdedup_dagster.stages.events.grouping import event_id_for
from newsdedup_dagster.stages.events.settings import GroupingSettings

SETTINGS = GroupingSettings(threshold=0.45, join_gap_hours=72, quiet_hours=72, max_span_days=14, min_significance=3)


def run(conn, hours: float):
    return store.group_hour(conn, hour_of(at(hours)), SETTINGS)


def memberships(conn) -> dict[str, str]:
    rows = conn.execute("SELECT story_id, event_id FROM event_stories ORDER BY story_id").fetchall()
    conn.commit()
    return dict(rows)


def test_multi_day_grouping_joins_new_event_and_closing(conn):
    # Day 1: the EU proposes; a minor unrelated story (too insignificant to found an event).
    add_story(conn, "eu-proposes", "eu-ai-act", 9.2, titles={"en": "EU proposes AI act", "fr": "L'UE propose"})
    add_story(conn, "minor", "local-fair", 9.5, significance=1.0)
    r1 = run(conn, 9)
    ev = event_id_for("eu-proposes")
    assert memberships(conn) == {"eu-proposes": ev}
    assert r1.plan.unassigned == [("minor", "no close event")]

    # Day 2: the vote joins the event; an earthquake founds its own.
    add_story(conn, "eu-votes", "eu-ai-act", 33.1)
    add_story(conn, "quake", "earthquake", 33.3, significance=8.0)
    run(conn, 33)
    assert memberships(conn) == {"eu-proposes": ev, "eu-votes": ev, "quake": event_id_for("quake")}

    # Day 3: the act is signed (joins), and the quake goes quiet.
    add_story(conn, "eu-signs", "eu-ai-act", 57.4)
    run(conn, 57)
    row = conn.execute("SELECT story_count, status, first_published_at, last_published_at FROM events WHERE id = %s",
                       (ev,)).fetchone()
    assert row == (3, "open", at(9.2), at(57.4))
    positions = conn.execute("SELECT story_id, timeline_position FROM event_stories WHERE event_id = %s"
                             " ORDER BY timeline_position", (ev,)).fetchall()
    assert positions == [("eu-proposes", 1), ("eu-votes", 2), ("eu-signs", 3)]
    # centroid is the average of the member stories' centroids, computed in SQL
    diff = conn.execute(
        "SELECT e.centroid <-> (SELECT avg(s.centroid) FROM stories s JOIN event_stories es ON es.story_id = s.id"
        " WHERE es.event_id = e.id) FROM events e WHERE e.id = %s", (ev,)).fetchone()[0]
    assert diff < 1e-5

    # Day 5: 72 quiet hours after hour 33.3 the quake closes; the EU event (last 57.4) stays open.
    r = run(conn, 33.3 + 72 + 1)
    status = dict(conn.execute("SELECT id, status FROM events").fetchall())
    assert status == {ev: "open", event_id_for("quake"): "closed"}
    assert event_id_for("quake") in r.plan.closes

    # A later quake story cannot join the closed event: it founds a new one.
    add_story(conn, "quake-aftershock", "earthquake", 120.2, significance=6.0)
    run(conn, 120)
    assert memberships(conn)["quake-aftershock"] == event_id_for("quake-aftershock")

    report = store.check_invariants(conn, [ev, event_id_for("quake")], SETTINGS.quiet_hours)
    assert report.multi_membership == [] and report.gap_violations == [] and report.order_violations == []


def test_rerun_of_an_hour_is_idempotent_and_keeps_narrative(conn):
    add_story(conn, "a1", "topic-a", 1.1)
    add_story(conn, "a2", "topic-a", 1.5)
    add_story(conn, "b1", "topic-b", 1.7)
    run(conn, 1)
    conn.execute("UPDATE events SET narrative = '{\"what_happened\": \"x\"}', narrative_story_count = story_count,"
                 " needs_narrative = 0")
    conn.commit()
    before = conn.execute("SELECT id, story_count, title, status, narrative, needs_narrative FROM events ORDER BY id").fetchall()
    members = memberships(conn)
    run(conn, 1)
    run(conn, 1)
    after = conn.execute("SELECT id, story_count, title, status, narrative, needs_narrative FROM events ORDER BY id").fetchall()
    assert after == before and memberships(conn) == members
    assert members == {"a1": event_id_for("a1"), "a2": event_id_for("a1"), "b1": event_id_for("b1")}


def test_rerun_of_closing_hour_reopens_then_recloses(conn):
    add_story(conn, "x1", "topic-x", 0.5)
    run(conn, 0)
    run(conn, 80)
    assert conn.execute("SELECT status, closed_partition FROM events").fetchone() == ("closed", hour_of(at(80)))
    run(conn, 80)
    assert conn.execute("SELECT status, closed_partition FROM events").fetchone() == ("closed", hour_of(at(80)))
    conn.commit()


def test_story_gaining_articles_moves_event_window_and_timeline(conn):
    add_story(conn, "s1", "topic-s", 2.0)
    add_story(conn, "s2", "topic-s", 3.0)
    run(conn, 2)
    run(conn, 3)
    ev = event_id_for("s1")
    # s2 gains an earlier article (late-arriving feed): its first_published_at moves before s1's.
    conn.execute("UPDATE stories SET first_published_at = %s, updated_partition = %s WHERE id = 's2'",
                 (at(1.0), hour_of(at(4))))
    conn.commit()
    run(conn, 4)
    assert conn.execute("SELECT first_published_at FROM events WHERE id = %s", (ev,)).fetchone()[0] == at(1.0)
    order = [r[0] for r in conn.execute(
        "SELECT story_id FROM event_stories WHERE event_id = %s ORDER BY timeline_position", (ev,))]
    assert order == ["s2", "s1"]
    assert store.check_invariants(conn, [ev], 72).order_violations == []


def test_check_detects_gap_and_order_violations(conn):
    add_story(conn, "g1", "topic-g", 0.0)
    add_story(conn, "g2", "topic-g", 10.0)
    run(conn, 0)
    run(conn, 10)
    ev = event_id_for("g1")
    # corrupt it: a member far later than the quiet period, and positions out of time order
    conn.execute("UPDATE stories SET first_published_at = %s, latest_published_at = %s WHERE id = 'g2'",
                 (at(200), at(200)))
    conn.execute("UPDATE event_stories SET timeline_position = 3 - timeline_position WHERE event_id = %s", (ev,))
    conn.commit()
    report = store.check_invariants(conn, [ev], 72)
    assert report.gap_violations and report.gap_violations[0][0] == ev
    assert report.order_violations == [ev]


def test_summaries_list_days_and_languages(conn):
    add_story(conn, "m1", "topic-m", 1.0, titles={"en": "A", "ja": "B"}, duplicate_of_first=True)
    add_story(conn, "m2", "topic-m", 30.0, titles={"de": "C"})
    run(conn, 1)
    run(conn, 30)
    rows = store.event_summaries(conn, [event_id_for("m1")])
    assert rows[0]["days"] == 2 and rows[0]["story_count"] == 2
    assert rows[0]["langs"] == ["de", "en", "ja"]
    assert timedelta(0) < rows[0]["last_published_at"] - rows[0]["first_published_at"]


def test_stories_rerun_deleting_members_repairs_events(conn):
    add_story(conn, "r1", "topic-r", 1.0)
    add_story(conn, "r2", "topic-r", 2.0)
    run(conn, 1)
    run(conn, 2)
    ev = event_id_for("r1")
    assert conn.execute("SELECT story_count FROM events WHERE id = %s", (ev,)).fetchone()[0] == 2
    # the stories stage re-ran hour 2 and dropped r2 (cascade removes its membership)
    conn.execute("DELETE FROM stories WHERE id = 'r2'")
    conn.commit()
    run(conn, 5)
    assert conn.execute("SELECT story_count, last_published_at FROM events WHERE id = %s", (ev,)).fetchone() == (1, at(1.0))
    # an event left with no stories at all disappears
    conn.execute("DELETE FROM stories WHERE id = 'r1'")
    conn.commit()
    run(conn, 6)
    assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    conn.commit()
