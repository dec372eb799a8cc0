"""The events stage against a real PostgreSQL (stages/events/store.py, grouping rules 3 and 5): a story
that shares no language with an event joins it at the cross-language threshold; a story of an
earlier hour left without an event joins the event a later story founds, in the later hour's
run, and a rerun of that hour writes the same rows."""

from __future__ import annotations

import numpy as np
from test_events_fixtures import DIMS, add_story, at, hour_of

from newsdedup_dagster.stages.events import store
from newsdedup_dagster.stages.events.grouping import event_id_for
from newsdedup_dagster.stages.events.settings import GroupingSettings

SETTINGS = GroupingSettings(threshold=0.45, join_gap_hours=72, quiet_hours=72, max_span_days=14, min_significance=3,
                            cross_language_margin=0.07)


def at_cosine(cosine: float) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors whose cosine is `cosine`."""
    a, b = np.zeros(DIMS, dtype=np.float32), np.zeros(DIMS, dtype=np.float32)
    a[0] = 1.0
    b[0], b[1] = cosine, np.sqrt(1.0 - cosine ** 2)
    return a, b


def memberships(conn) -> dict[str, tuple[str, object]]:
    rows = conn.execute("SELECT story_id, event_id, partition_hour FROM event_stories ORDER BY story_id").fetchall()
    conn.commit()
    return {s: (e, h) for s, e, h in rows}


def test_a_story_in_other_languages_joins_at_the_cross_language_threshold(conn):
    ja, en = at_cosine(0.41)   # below the event threshold 0.45, above 0.45 - 0.07
    add_story(conn, "iwate-ja", "quake", 23.4, vector=ja,
              titles={"ja": "三陸沖でM6.1 岩手・宮古で震度5強", "zh": "日本岩手县近海发生6.1级地震"})
    add_story(conn, "iwate-en", "quake", 23.8, vector=en, significance=2.0,
              titles={"en": "Strong 6.1 quake jolts northeast Japan", "ko": "日 이와테현 앞바다서 규모 6.1 지진"})
    store.group_hour(conn, hour_of(at(23.4)), SETTINGS)
    assert {s: e for s, (e, _) in memberships(conn).items()} == {
        "iwate-ja": event_id_for("iwate-ja"), "iwate-en": event_id_for("iwate-ja")}


def test_a_story_sharing_a_language_needs_the_event_threshold(conn):
    ja, en = at_cosine(0.41)
    add_story(conn, "iwate-ja", "quake", 23.4, vector=ja,
              titles={"ja": "三陸沖でM6.1 岩手・宮古で震度5強", "zh": "日本岩手县近海发生6.1级地震"})
    add_story(conn, "iwate-en", "quake", 23.8, vector=en, significance=2.0,
              titles={"en": "Strong 6.1 quake jolts northeast Japan", "ja": "岩手県で震度5強 宮古市"})
    store.group_hour(conn, hour_of(at(23.4)), SETTINGS)
    assert set(memberships(conn)) == {"iwate-ja"}


def test_a_story_of_an_earlier_hour_joins_the_event_founded_later(conn):
    ko, ja = at_cosine(0.40)   # across languages: 0.40 >= 0.45 - 0.07
    add_story(conn, "summit-ko", "summit", 2.1, 2.3, vector=ko, significance=2.3,
              titles={"ko": "한일 정상회담 도쿄서 개최…셔틀외교 지속·수소 협력 합의"})
    first = store.group_hour(conn, hour_of(at(2.3)), SETTINGS)
    assert memberships(conn) == {} and first.plan.unassigned == [("summit-ko", "no close event")]

    add_story(conn, "summit-ja", "summit", 4.6, 5.0, vector=ja, significance=3.5,
              titles={"ja": "日韓首脳会談 シャトル外交の継続確認", "en": "Japan, South Korea leaders agree to deepen cooperation"})
    later = store.group_hour(conn, hour_of(at(5.0)), SETTINGS)
    founded = event_id_for("summit-ja")
    got = memberships(conn)
    assert {s: e for s, (e, _) in got.items()} == {"summit-ja": founded, "summit-ko": founded}
    assert got["summit-ko"][1] == hour_of(at(5.0))       # written by the later hour's run
    assert later.plan.summary()["joined"] == 1 and later.plan.unassigned == []
    window = conn.execute("SELECT first_published_at FROM events WHERE id = %s", (founded,)).fetchone()[0]
    conn.commit()
    assert window == at(2.1)                             # the event starts with the earlier story

    # a rerun of the later hour writes the same rows; of the earlier hour, changes nothing
    store.group_hour(conn, hour_of(at(5.0)), SETTINGS)
    assert memberships(conn) == got
    store.group_hour(conn, hour_of(at(2.3)), SETTINGS)
    assert memberships(conn) == got


def test_a_waiting_story_whose_anchors_conflict_is_refused_and_recorded(conn):
    ibaraki, iwate = at_cosine(0.60)
    add_story(conn, "quake-ibaraki", "quake", 0.6, vector=ibaraki, significance=2.0,
              titles={"ko": "日 이바라키현 앞바다서 규모 5.4 지진…쓰나미 우려 없어"})
    store.group_hour(conn, hour_of(at(0.6)), SETTINGS)
    add_story(conn, "quake-iwate", "quake", 23.5, vector=iwate, significance=5.0,
              titles={"ja": "三陸沖でM6.1 岩手・宮古で震度5強"})
    result = store.group_hour(conn, hour_of(at(23.5)), SETTINGS)
    assert set(memberships(conn)) == {"quake-iwate"}
    assert [(v.story_id, v.event_id, v.reason["kinds"]) for v in result.plan.vetoes] == [
        ("quake-ibaraki", event_id_for("quake-iwate"), ["magnitudes"])]
