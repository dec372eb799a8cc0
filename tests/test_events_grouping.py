"""Pure event-grouping rules (no database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from helpers import calibrate

from newsdedup_dagster import config
from newsdedup_dagster.stages.events.grouping import (
    OpenEvent,
    StoryCandidate,
    event_id_for,
    interval_gap_hours,
    plan_hour,
    timeline_gaps_hours,
    timeline_in_order,
)
from newsdedup_dagster.stages.events.settings import GroupingSettings

T0 = datetime(2026, 11, 2, 0, 0, tzinfo=UTC)
SETTINGS = GroupingSettings(threshold=0.45, join_gap_hours=72, quiet_hours=72, max_span_days=14, min_significance=3)


def h(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def story(sid: str, start: float, end: float | None = None, sig: float | None = 5.0, event: str | None = None):
    return StoryCandidate(sid, h(start), h(start if end is None else end), sig, event)


def test_story_joins_most_similar_open_event_within_gate():
    events = [OpenEvent("ev_a", h(0), h(10)), OpenEvent("ev_b", h(0), h(12))]
    sims = {("s1", "ev_a"): 0.50, ("s1", "ev_b"): 0.62}
    plan = plan_hour([story("s1", 30)], events, sims, {}, h(31), SETTINGS)
    assert [(j.story_id, j.event_id, j.similarity) for j in plan.joins] == [("s1", "ev_b", 0.62)]
    assert plan.new_events == [] and plan.closes == []
    assert plan.joins[0].gap_hours == pytest.approx(18.0)


def test_below_threshold_founds_new_event_when_significant_else_unassigned():
    events = [OpenEvent("ev_a", h(0), h(10))]
    sims = {("s1", "ev_a"): 0.40, ("s2", "ev_a"): 0.44}
    plan = plan_hour([story("s1", 11, sig=6.0), story("s2", 11.5, sig=1.0)], events, sims, {}, h(12), SETTINGS)
    assert [n.event_id for n in plan.new_events] == [event_id_for("s1")]
    assert plan.unassigned == [("s2", "no close event")]


def test_unscored_story_never_founds_an_event_but_may_join():
    events = [OpenEvent("ev_a", h(0), h(10))]
    plan = plan_hour([story("s1", 11, sig=None), story("s2", 11, sig=None)], events, {("s2", "ev_a"): 0.9}, {}, h(12), SETTINGS)
    assert [(j.story_id, j.event_id) for j in plan.joins] == [("s2", "ev_a")]
    assert plan.unassigned == [("s1", "no close event, not scored")]


def test_time_gate_blocks_join_across_long_gap():
    events = [OpenEvent("ev_a", h(0), h(10))]
    plan = plan_hour([story("s1", 10 + 73)], events, {("s1", "ev_a"): 0.95}, {}, h(84), SETTINGS)
    assert plan.joins[0].event_id == event_id_for("s1")  # a new event, not ev_a
    assert "ev_a" in plan.closes  # and ev_a closes: 74 h quiet > 72 h


def test_max_span_blocks_join_and_closes_event():
    settings = GroupingSettings(threshold=0.45, join_gap_hours=72, quiet_hours=72, max_span_days=2, min_significance=3)
    events = [OpenEvent("ev_a", h(0), h(40))]
    plan = plan_hour([story("s1", 49)], events, {("s1", "ev_a"): 0.9}, {}, h(50), settings)
    assert plan.joins[0].event_id != "ev_a"
    assert "ev_a" in plan.closes


def test_events_founded_in_the_same_hour_collect_later_stories_by_mean_similarity():
    stories = [story("a", 1), story("b", 1.2), story("c", 1.4), story("d", 1.6)]
    pairs = {("a", "b"): 0.8, ("a", "c"): 0.5, ("b", "c"): 0.35, ("a", "d"): 0.1}
    plan = plan_hour(stories, [], {}, pairs, h(2), SETTINGS)
    by_story = {j.story_id: j.event_id for j in plan.joins}
    assert by_story["a"] == by_story["b"] == event_id_for("a")
    # c: similar to a (0.5) but b-c is below threshold -> the mean over members is not trusted
    assert by_story["c"] == event_id_for("c")
    assert by_story["d"] == event_id_for("d")


def test_mean_similarity_to_same_hour_members_must_pass_threshold():
    stories = [story("a", 1), story("b", 1.2), story("c", 1.4)]
    pairs = {("a", "b"): 0.9, ("a", "c"): 0.46, ("b", "c"): 0.46}
    plan = plan_hour(stories, [], {}, pairs, h(2), SETTINGS)
    assert {j.event_id for j in plan.joins} == {event_id_for("a")}


def test_already_grouped_story_stays_and_widens_window():
    events = [OpenEvent("ev_a", h(0), h(10))]
    # s1 is in ev_a and gained articles up to hour 100: ev_a must not close at hour 101
    plan = plan_hour([story("s1", 5, 100, event="ev_a")], events, {("s1", "ev_b"): 0.99}, {}, h(101), SETTINGS)
    assert plan.kept == ["s1"] and plan.joins == [] and plan.closes == []
    assert plan.event_windows["ev_a"] == (h(0), h(100))


def test_closing_after_quiet_period_uses_partition_time():
    events = [OpenEvent("ev_old", h(0), h(10)), OpenEvent("ev_live", h(0), h(60))]
    plan = plan_hour([], events, {}, {}, h(10 + 72.5), SETTINGS)
    assert plan.closes == ["ev_old"]


def test_deterministic_regardless_of_input_order_and_ties():
    events = [OpenEvent("ev_b", h(0), h(5)), OpenEvent("ev_a", h(0), h(5))]
    sims = {("s1", "ev_a"): 0.7, ("s1", "ev_b"): 0.7}
    stories = [story("s2", 6), story("s1", 6)]
    one = plan_hour(stories, events, sims, {}, h(7), SETTINGS)
    two = plan_hour(list(reversed(stories)), list(reversed(events)), sims, {}, h(7), SETTINGS)
    assert one.joins == two.joins and one.new_events == two.new_events
    assert [j.event_id for j in one.joins if j.story_id == "s1"] == ["ev_a"]


def test_multi_day_sequence_join_new_close():
    """Three days: day 1 founds an event, day 2 a follow-up joins, a different subject founds
    its own event, and after 72 quiet hours the first event closes."""
    settings = SETTINGS
    events: list[OpenEvent] = []
    plan1 = plan_hour([story("eu-proposes", 9)], events, {}, {}, h(10), settings)
    ev = plan1.new_events[0].event_id
    events = [OpenEvent(ev, *plan1.event_windows[ev])]
    plan2 = plan_hour([story("eu-votes", 33), story("quake", 33.5)], events,
                      {("eu-votes", ev): 0.58, ("quake", ev): 0.05}, {("eu-votes", "quake"): 0.06}, h(34), settings)
    assert [(j.story_id, j.event_id) for j in plan2.joins][0] == ("eu-votes", ev)
    quake_ev = event_id_for("quake")
    assert [n.event_id for n in plan2.new_events] == [quake_ev]
    events = [OpenEvent(e, *plan2.event_windows[e]) for e in (ev, quake_ev)]
    plan3 = plan_hour([], events, {}, {}, h(33 + 73), settings)
    assert sorted(plan3.closes) == sorted([ev, quake_ev])


def test_interval_gap_and_timeline_helpers():
    assert interval_gap_hours(h(0), h(2), h(1), h(5)) == 0
    assert interval_gap_hours(h(10), h(11), h(0), h(4)) == 6
    assert interval_gap_hours(h(0), h(1), h(4), h(9)) == 3
    assert timeline_gaps_hours([(h(0), h(30)), (h(5), h(6)), (h(40), h(41))]) == [0.0, 10.0]
    assert timeline_in_order([(1, h(0), "a"), (2, h(1), "b")])
    assert not timeline_in_order([(1, h(1), "a"), (2, h(0), "b")])
    assert not timeline_in_order([(1, h(0), "a"), (3, h(1), "b")])


def test_settings_validation_and_calibration_file(monkeypatch, tmp_path):
    calibrate(monkeypatch, tmp_path, events={"threshold": 0.55, "quiet_hours": 48, "join_gap_hours": 24})
    s = config.grouping_settings()
    assert (s.threshold, s.quiet_hours, s.join_gap_hours) == (0.55, 48, 24)
    with pytest.raises(ValueError):
        GroupingSettings(threshold=0.5, join_gap_hours=100, quiet_hours=72)
    calibrate(monkeypatch, tmp_path, events={"threshold": "high"})
    with pytest.raises(ValueError, match="events.threshold"):
        config.grouping_settings()


def test_a_vetoed_join_goes_to_the_next_event_and_is_recorded():
    events = [OpenEvent("ev_a", h(0), h(10)), OpenEvent("ev_b", h(0), h(12))]
    sims = {("s1", "ev_a"): 0.50, ("s1", "ev_b"): 0.62}
    asked = []

    def veto(story_id, event_id, joined):
        asked.append((story_id, event_id, tuple(joined)))
        return {"kinds": ["magnitudes"], "a": {"magnitudes": ["M5.4"]}, "b": {"magnitudes": ["M6.1"]}} \
            if event_id == "ev_b" else None

    plan = plan_hour([story("s1", 30)], events, sims, {}, h(31), SETTINGS, veto)
    assert [(j.story_id, j.event_id) for j in plan.joins] == [("s1", "ev_a")]
    assert [(v.story_id, v.event_id, v.similarity, v.reason["kinds"]) for v in plan.vetoes] == \
        [("s1", "ev_b", 0.62, ["magnitudes"])]
    assert ("s1", "ev_a", ()) in asked


def test_a_story_vetoed_by_every_event_founds_its_own():
    events = [OpenEvent("ev_a", h(0), h(10))]
    plan = plan_hour([story("s1", 11)], events, {("s1", "ev_a"): 0.9}, {}, h(12), SETTINGS,
                     lambda s, e, joined: {"kinds": ["scores"], "a": {}, "b": {}})
    assert [n.founding_story_id for n in plan.new_events] == ["s1"]
    assert len(plan.vetoes) == 1


def test_the_veto_sees_the_stories_that_joined_an_event_this_hour():
    seen = {}

    def veto(story_id, event_id, joined):
        seen[story_id] = list(joined)
        return {"kinds": ["places"], "a": {}, "b": {}} if story_id == "s3" else None

    stories = [story("s1", 5.0), story("s2", 5.1), story("s3", 5.2)]
    pairs = {("s1", "s2"): 0.8, ("s1", "s3"): 0.8, ("s2", "s3"): 0.8}
    plan = plan_hour(stories, [], {}, pairs, h(6), SETTINGS, veto)
    assert seen["s2"] == ["s1"] and seen["s3"] == ["s1", "s2"]
    founded = event_id_for("s1")
    assert {j.story_id: j.event_id for j in plan.joins} == {"s1": founded, "s2": founded, "s3": event_id_for("s3")}


def test_vetoes_without_a_callback_are_none():
    events = [OpenEvent("ev_a", h(0), h(10))]
    plan = plan_hour([story("s1", 11)], events, {("s1", "ev_a"): 0.9}, {}, h(12), SETTINGS)
    assert plan.vetoes == [] and plan.joins[0].event_id == "ev_a"
