"""Event-grouping rules 3 and 5 (pure, no database): a story that shares no language with an
event joins it at a lower threshold, and stories left without an event try once more the events
founded after them (in their hour, or from earlier hours while within the join gap)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from newsdedup_dagster.stages.events.grouping import OpenEvent, StoryCandidate, event_id_for, plan_hour
from newsdedup_dagster.stages.events.settings import GroupingSettings

T0 = datetime(2026, 11, 2, 0, 0, tzinfo=UTC)
SETTINGS = GroupingSettings(threshold=0.40, join_gap_hours=72, quiet_hours=72, max_span_days=14,
                            min_significance=3, cross_language_margin=0.07)


def h(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def story(sid: str, start: float, end: float | None = None, sig: float | None = 5.0):
    return StoryCandidate(sid, h(start), h(start if end is None else end), sig)


def test_a_story_in_other_languages_joins_at_the_lower_threshold():
    events = [OpenEvent("ev_quake", h(0), h(1))]
    sims = {("s_en_ko", "ev_quake"): 0.394}
    languages = {"ev_quake": frozenset({"ja", "zh"}), "s_en_ko": frozenset({"en", "ko"})}
    plan = plan_hour([story("s_en_ko", 1, sig=2.3)], events, sims, {}, h(2), SETTINGS, languages=languages)
    assert [(j.story_id, j.event_id) for j in plan.joins] == [("s_en_ko", "ev_quake")]
    # one shared language: the threshold is the event threshold, and 0.394 is below it
    languages["s_en_ko"] = frozenset({"en", "ja"})
    plan = plan_hour([story("s_en_ko", 1, sig=2.3)], events, sims, {}, h(2), SETTINGS, languages=languages)
    assert plan.joins == [] and plan.unassigned == [("s_en_ko", "no close event")]
    # no languages known, or no margin: one threshold for every pair
    assert plan_hour([story("s_en_ko", 1, sig=2.3)], events, sims, {}, h(2), SETTINGS).joins == []
    no_margin = GroupingSettings(threshold=0.40, min_significance=3, cross_language_margin=0.0)
    languages["s_en_ko"] = frozenset({"en", "ko"})
    assert plan_hour([story("s_en_ko", 1, sig=2.3)], events, sims, {}, h(2), no_margin, languages=languages).joins == []


def test_an_event_speaks_the_languages_of_the_stories_that_joined_it_this_hour():
    events = [OpenEvent("ev_a", h(0), h(1))]
    sims = {("s1", "ev_a"): 0.36, ("s2", "ev_a"): 0.36}
    languages = {"ev_a": frozenset({"ja"}), "s1": frozenset({"en"}), "s2": frozenset({"en"})}
    plan = plan_hour([story("s1", 1, sig=1), story("s2", 1.5, sig=1)], events, sims, {}, h(2), SETTINGS,
                     languages=languages)
    # s1 (en) joins the Japanese event across languages; then the event holds English and s2 (en)
    # is compared at the event threshold
    assert [(j.story_id, j.event_id) for j in plan.joins] == [("s1", "ev_a")]
    assert plan.unassigned == [("s2", "no close event")]


def test_a_story_first_in_its_hour_joins_the_event_a_later_story_founds():
    stories = [story("s_ko", 2.1, 2.3, sig=2.3), story("s_ja", 2.6, 2.9, sig=3.5)]
    pairs = {("s_ja", "s_ko"): 0.347}
    languages = {"s_ko": frozenset({"ko"}), "s_ja": frozenset({"ja", "en", "zh"})}
    plan = plan_hour(stories, [], {}, pairs, h(3), SETTINGS, languages=languages)
    founded = event_id_for("s_ja")
    assert [n.event_id for n in plan.new_events] == [founded]
    assert sorted((j.story_id, j.event_id) for j in plan.joins) == [("s_ja", founded), ("s_ko", founded)]
    assert plan.unassigned == []
    assert plan.event_windows[founded][0] == h(2.1)   # the event's window starts with the earlier story
    # same language: 0.347 is below the event threshold and the story stays without an event
    languages["s_ko"] = frozenset({"ja"})
    plan = plan_hour(stories, [], {}, pairs, h(3), SETTINGS, languages=languages)
    assert plan.unassigned == [("s_ko", "no close event")]


def test_an_event_founded_before_a_story_is_not_tried_twice():
    events_seen = []

    def veto(story_id, event_id, joined):
        events_seen.append((story_id, event_id))
        return {"kinds": ["magnitudes"], "a": {}, "b": {}}

    stories = [story("s_big", 1, sig=6), story("s_small", 1.5, sig=1)]
    plan = plan_hour(stories, [], {}, {("s_big", "s_small"): 0.9}, h(2), SETTINGS, veto=veto)
    assert events_seen == [("s_small", event_id_for("s_big"))]      # once, in the hour's first pass
    assert len(plan.vetoes) == 1 and plan.unassigned == [("s_small", "no close event")]


def test_waiting_stories_of_earlier_hours_join_an_event_founded_now():
    waiting = [story("s_old", 1, 2, sig=2.0), story("s_other", 1, 2, sig=2.0), story("s_far", 1, 2, sig=2.0)]
    pairs = {("s_old", "s_new"): 0.55, ("s_other", "s_new"): 0.2, ("s_far", "s_new"): 0.9}

    def veto(story_id, event_id, joined):
        return {"kinds": ["places"], "a": {}, "b": {}} if story_id == "s_far" else None

    plan = plan_hour([story("s_new", 5, 6, sig=5.0)], [], {}, pairs, h(6), SETTINGS, veto=veto, waiting=waiting)
    founded = event_id_for("s_new")
    assert sorted((j.story_id, j.event_id) for j in plan.joins) == [("s_new", founded), ("s_old", founded)]
    # a waiting story that joins nothing is not reported as this hour's; a refused one is recorded
    assert plan.unassigned == []
    assert [(v.story_id, v.event_id) for v in plan.vetoes] == [("s_far", founded)]
    assert plan.event_windows[founded] == (h(1), h(6))


def test_a_waiting_story_beyond_the_join_gap_stays_out():
    settings = GroupingSettings(threshold=0.40, join_gap_hours=24, quiet_hours=24, min_significance=3)
    plan = plan_hour([story("s_new", 50, sig=5.0)], [], {}, {("s_old", "s_new"): 0.9}, h(51), settings,
                     waiting=[story("s_old", 1, 2, sig=1.0)])
    assert [j.story_id for j in plan.joins] == ["s_new"]


def test_the_margin_is_validated():
    with pytest.raises(ValueError):
        GroupingSettings(cross_language_margin=-0.1)
    with pytest.raises(ValueError):
        GroupingSettings(cross_language_margin=1.5)


def test_two_waiting_stories_both_join_the_event_founded_now():
    waiting = [story("s_old1", 1, 2, sig=2.0), story("s_old2", 3, 4, sig=2.0)]
    pairs = {("s_old1", "s_new"): 0.55, ("s_old2", "s_new"): 0.6}   # no cosine between the two waiting ones
    plan = plan_hour([story("s_new", 5, 6, sig=5.0)], [], {}, pairs, h(6), SETTINGS, waiting=waiting)
    founded = event_id_for("s_new")
    assert sorted(j.story_id for j in plan.joins if j.event_id == founded) == ["s_new", "s_old1", "s_old2"]
