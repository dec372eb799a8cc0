"""The events stage's anchor check (stages/events/store.py, grouping rule 3) against a real PostgreSQL:
two look-alike stories whose anchors conflict stay in two events, the refusal is recorded
(event_vetoes) and shown by `newsdedup explain`; a rerun of the hour writes the same rows."""

from __future__ import annotations

import json

from test_events_fixtures import add_story, at, hour_of

from newsdedup_dagster import config
from newsdedup_dagster.stages.events import store
from newsdedup_dagster.stages.events.grouping import event_id_for
from newsdedup_dagster.stages.events.settings import GroupingSettings

SETTINGS = GroupingSettings(threshold=0.45, join_gap_hours=72, quiet_hours=72, max_span_days=14, min_significance=3)


def memberships(conn) -> dict[str, str]:
    rows = conn.execute("SELECT story_id, event_id FROM event_stories ORDER BY story_id").fetchall()
    conn.commit()
    return dict(rows)


def vetoes(conn) -> list[tuple]:
    rows = conn.execute("SELECT story_id, event_id, kinds, story_anchors, event_anchors FROM event_vetoes"
                        " ORDER BY story_id").fetchall()
    conn.commit()
    return rows


def two_quakes(conn) -> None:
    # one topic vector: the centroids are as close as two earthquake stories' are
    add_story(conn, "quake-ibaraki", "japan-quake", 0.6,
              titles={"ja": "茨城県沖でM5.4の地震 日立市で震度5弱", "en": "Magnitude 5.4 earthquake strikes off Ibaraki"})
    add_story(conn, "quake-iwate", "japan-quake", 23.5,
              titles={"ko": "日 이와테현 앞바다서 규모 6.1 지진…미야코시 진도 5강",
                      "en": "Strong 6.1 quake jolts northeast Japan; bullet trains halted"})


def test_two_quakes_of_one_day_are_two_events_and_the_refusal_is_recorded(conn):
    two_quakes(conn)
    store.group_hour(conn, hour_of(at(0.6)), SETTINGS)
    result = store.group_hour(conn, hour_of(at(23.5)), SETTINGS)
    assert memberships(conn) == {"quake-ibaraki": event_id_for("quake-ibaraki"),
                                 "quake-iwate": event_id_for("quake-iwate")}
    assert [(v.story_id, v.event_id) for v in result.plan.vetoes] == [("quake-iwate", event_id_for("quake-ibaraki"))]
    [(story_id, event_id, kinds, mine, theirs)] = vetoes(conn)
    assert story_id == "quake-iwate" and "magnitudes" in kinds
    assert mine["magnitudes"] == ["M6.1"] and theirs["magnitudes"] == ["M5.4"]

    # a rerun of the hour decides the same and keeps one row
    store.group_hour(conn, hour_of(at(23.5)), SETTINGS)
    assert len(vetoes(conn)) == 1 and len(set(memberships(conn).values())) == 2


def test_without_the_anchor_check_the_look_alikes_join(conn):
    two_quakes(conn)
    off = config.merged(SETTINGS, anchor_check=False)
    store.group_hour(conn, hour_of(at(0.6)), off)
    store.group_hour(conn, hour_of(at(23.5)), off)
    assert set(memberships(conn).values()) == {event_id_for("quake-ibaraki")}
    assert vetoes(conn) == []


def test_one_quake_told_in_two_stories_joins_one_event(conn):
    add_story(conn, "iwate-ja", "japan-quake", 23.4, titles={"ja": "三陸沖でM6.1 岩手・宮古で震度5強"})
    add_story(conn, "iwate-en", "japan-quake", 23.8,
              titles={"en": "Strong 6.1 quake jolts northeast Japan", "zh": "日本岩手县近海发生6.1级地震"})
    store.group_hour(conn, hour_of(at(23.4)), SETTINGS)
    assert set(memberships(conn).values()) == {event_id_for("iwate-ja")}
    assert vetoes(conn) == []


def test_explain_shows_the_events_refusal(conn, database_url, monkeypatch, capsys):
    from newsdedup_dagster.cli import main

    two_quakes(conn)
    store.group_hour(conn, hour_of(at(0.6)), SETTINGS)
    store.group_hour(conn, hour_of(at(23.5)), SETTINGS)
    monkeypatch.setenv("NEWSDEDUP_DATABASE_URL", database_url)
    assert main(["explain", "quake-iwate"]) == 0
    out = capsys.readouterr().out
    assert "refused by the events stage" in out and "M5.4" in out and "M6.1" in out
    assert main(["explain", "quake-iwate", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["event_vetoes"][0]["event_id"] == event_id_for("quake-ibaraki")
    assert "magnitudes" in data["event_vetoes"][0]["kinds"]
