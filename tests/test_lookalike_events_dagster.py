"""The sample day's look-alike events through the Dagster hourly job (replayed feeds, the real
database, the default embedder, offline LLM stages): the sports results of one evening in eight
languages are separate stories, and the two Japanese earthquakes of one day (M5.4 off Ibaraki at
00:36, M6.1 off Iwate from 23:33) are two events, the later one refused by the events stage's
anchor check on its magnitude, while the Iwate quake, told in four languages, is one story (its
ja/zh and en/ko groups joined across languages on the magnitude they agree on) in one event."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from newsdedup_dagster import config
from newsdedup_dagster.shared import db

# the hours that hold the quakes' and the sports results' items, in time order
HOURS = ["00", "01", "02", "11", "12", "13", "14", "17", "20", "21", "22", "23"]
SPORTS = ["volleyball-koreanair-hyundai", "cba-liaoning-guangdong", "japan-series-hanshin", "khl-avangard-ska",
          "ice-hockey-eisbaeren", "ligue1-lens-nantes", "laliga-rayo-getafe", "football-fulham-villa"]
QUAKES = ["quake-ibaraki-m54", "quake-iwate-m61"]


def gold_stories() -> dict[str, str]:
    from newsdedup_dagster.shared.http.canonical_url import canonical_url, item_id

    out = {}
    for line in (config.SAMPLE_DATA_DIR / "gold.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out[item_id(canonical_url(row["url"]))] = row["story"]
    return out


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_sports_results_and_two_quakes_through_the_hourly_job(clean_db, monkeypatch):
    from newsdedup_dagster.assets.hourly import hourly_run_config
    from newsdedup_dagster.definitions import HOURLY_JOB_NAME, defs
    from newsdedup_dagster.instance import QUIET_RUN_CONFIG, get_instance

    monkeypatch.setenv("NEWSDEDUP_FETCH_MODE", "replay")
    instance = get_instance()
    job = defs.resolve_job_def(HOURLY_JOB_NAME)
    for hour in HOURS:
        result = job.execute_in_process(
            partition_key=f"2026-11-02-{hour}:00", instance=instance,
            run_config={**QUIET_RUN_CONFIG, **hourly_run_config(raw_items={"fetch_mode": "replay"},
                                                                 stories={"later_partitions": "reset"})})
        assert result.success, hour

    gold = gold_stories()
    with db.connection(clean_db) as conn:
        rows = conn.execute(
            "SELECT sa.item_id, sa.story_id, es.event_id FROM story_articles sa"
            " LEFT JOIN event_stories es ON es.story_id = sa.story_id WHERE sa.item_id = ANY(%s)",
            (list(gold),)).fetchall()
        vetoes = conn.execute("SELECT story_id, event_id, kinds, story_anchors, event_anchors FROM event_vetoes").fetchall()
    story_golds: dict[str, set[str]] = defaultdict(set)
    event_golds: dict[str, set[str]] = defaultdict(set)
    for item, story, event in rows:
        story_golds[story].add(gold[item])
        event_golds[event or story].add(gold[item])

    # a story that holds one of the evening's results holds nothing else (a result reported by one
    # outlet only stays an unassigned item: stories have two members or more)
    for story, golds in story_golds.items():
        if golds & set(SPORTS):
            assert len(golds) == 1, (story, golds)
    clustered = {g for golds in story_golds.values() for g in golds}
    assert "japan-series-hanshin" in clustered  # four reports in three languages: one story
    # the two quakes are two events, and each quake is in an event or story of its own
    for golds in event_golds.values():
        assert not set(QUAKES) <= golds, golds
    assert set(QUAKES) <= {g for golds in event_golds.values() for g in golds}
    # the Iwate quake, told as 震度5強 / M6.1 (ja, zh) and as 6.1 / 규모 6.1 (en, ko), is one event: the
    # English-Korean story joins the Japanese-Chinese event across languages
    iwate_events = {event or story for item, story, event in rows if gold[item] == "quake-iwate-m61"}
    assert len(iwate_events) == 1, iwate_events
    # ... and one story: its ja/zh and en/ko groups are joined in pass 2 on the same magnitude (M6.1,
    # 6.1级, 6.1, 규모 6.1) at the item threshold minus the cross-language margin
    iwate = [(item, story) for item, story, _ in rows if gold[item] == "quake-iwate-m61"]
    assert len(iwate) == 5 and len({story for _, story in iwate}) == 1, iwate
    # the events stage refused the Iwate story the Ibaraki event, on the magnitudes, and says so
    magnitude_vetoes = [v for v in vetoes if "magnitudes" in v[2]]
    assert magnitude_vetoes, vetoes
    _, _, _, mine, theirs = magnitude_vetoes[0]
    assert {tuple(mine["magnitudes"]), tuple(theirs["magnitudes"])} == {("M6.1",), ("M5.4",)}
