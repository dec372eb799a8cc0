"""Pure event-grouping rules: given this hour's candidate stories, the open events and the
similarities SQL computed, decide which story joins which event, which stories found a new
event, and which events close. No database, no Dagster, no vectors: deterministic in its inputs.

Terms
- A *story* is one real-world happening (<= 36 h of articles, built by the stories stage).
- An *event* is a run of stories about the same subject over days ("EU proposes AI act" ->
  "EU votes" -> "AI act signed"). Its centroid is the average of its stories' centroids (SQL).
- *gap*: the time between a story's interval [first, latest published] and an event's interval
  [first, last published]; 0 when they overlap.

Rules (all thresholds in `GroupingSettings`, stages/events/settings.py, built by config.grouping_settings()):
1. Stories are processed in (first_published_at, story_id) order, so ties never depend on
   input order.
2. A story already in an event stays there (a story belongs to at most one event; moving
   stories between events would rewrite narratives already sent to readers).
3. Otherwise it joins the most similar *open* event with similarity >= threshold and
   gap <= join_gap_hours and whose span stays <= max_span_days; ties -> smaller event id.
   When the story and the event share no language (`languages`: the languages of each story's
   and each open event's articles), the threshold is lower by cross_language_margin: one event
   told in two languages sits further apart than in one (the anchor check below still refuses
   look-alikes).
   Events founded earlier in the same hour are candidates too: their similarity is the mean
   of the story's similarities to the event's members from this hour. For unit vectors the
   mean cosine is a lower bound of the cosine to their (unnormalised) average, so this never
   admits a story the SQL centroid would reject.
4. Otherwise, if its significance >= min_significance, it founds a new event whose id is
   derived from the story id (reruns give the same ids).
5. Otherwise it stays without an event (it is reconsidered whenever it gains articles). Once
   every story of the hour is placed, each story left without one tries once more, by rule 3,
   the events founded later in the same hour (a low-significance story first in its hour must
   not miss the event a later story founds), and so do the stories of earlier hours still
   without an event whose articles reach into the join gap (`waiting`).
   A join the anchor check refuses (the `veto` callback: the story's and the event's names,
   years, places, magnitudes or scores conflict, shared/text/anchors.py) is not made: the story
   goes to the next candidate event, and the refusal is recorded (plan.vetoes).
6. After the joins, an open event closes when `now - last_published_at > quiet_hours`
   (now = end of the partition hour, not the wall clock, so backfills decide like live runs)
   or when its span exceeds max_span_days.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from newsdedup_dagster.stages.events.settings import GroupingSettings

__all__ = [
    "StoryCandidate",
    "OpenEvent",
    "Join",
    "NewEvent",
    "EventVeto",
    "GroupingPlan",
    "event_id_for",
    "interval_gap_hours",
    "plan_hour",
    "timeline_gaps_hours",
    "timeline_in_order",
]


@dataclass(frozen=True)
class StoryCandidate:
    story_id: str
    first_published_at: datetime
    latest_published_at: datetime
    significance: float | None = None
    event_id: str | None = None  # the event it already belongs to, if any


@dataclass(frozen=True)
class OpenEvent:
    event_id: str
    first_published_at: datetime
    last_published_at: datetime


@dataclass(frozen=True)
class Join:
    story_id: str
    event_id: str
    similarity: float
    gap_hours: float


@dataclass(frozen=True)
class NewEvent:
    event_id: str
    founding_story_id: str
    first_published_at: datetime
    last_published_at: datetime


@dataclass(frozen=True)
class EventVeto:
    """A join the anchor check refused: the story, the event, the cosine, and why (the reason the
    veto callback returned, e.g. anchors.Conflict.as_dict())."""
    story_id: str
    event_id: str
    similarity: float
    reason: dict


# veto(story_id, event_id, story ids that joined the event earlier this hour) -> a reason, or None
VetoFn = Callable[[str, str, Sequence[str]], "dict | None"]


@dataclass
class GroupingPlan:
    joins: list[Join] = field(default_factory=list)        # includes the founding stories
    vetoes: list[EventVeto] = field(default_factory=list)
    new_events: list[NewEvent] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)          # already in an event
    unassigned: list[tuple[str, str]] = field(default_factory=list)  # (story_id, reason)
    closes: list[str] = field(default_factory=list)
    event_windows: dict[str, tuple[datetime, datetime]] = field(default_factory=dict)

    def summary(self) -> dict[str, int]:
        return {
            "joined": len(self.joins) - len(self.new_events),  # joins minus the founders
            "new_events": len(self.new_events),
            "kept": len(self.kept),
            "unassigned": len(self.unassigned),
            "closed": len(self.closes),
        }


def event_id_for(founding_story_id: str) -> str:
    """Stable event id from the founding story (reruns give the same id)."""
    return "ev_" + hashlib.sha1(founding_story_id.encode("utf-8")).hexdigest()[:16]


def _hours(delta: timedelta) -> float:
    return delta.total_seconds() / 3600.0


def interval_gap_hours(a_first: datetime, a_last: datetime, b_first: datetime, b_last: datetime) -> float:
    """Hours between two intervals; 0 when they overlap."""
    if a_first > b_last:
        return _hours(a_first - b_last)
    if b_first > a_last:
        return _hours(b_first - a_last)
    return 0.0


def plan_hour(
    stories: Iterable[StoryCandidate],
    open_events: Iterable[OpenEvent],
    story_event_similarity: Mapping[tuple[str, str], float],
    story_story_similarity: Mapping[tuple[str, str], float],
    now: datetime,
    settings: GroupingSettings | None = None,
    veto: VetoFn | None = None,
    languages: Mapping[str, frozenset[str]] | None = None,
    waiting: Iterable[StoryCandidate] = (),
) -> GroupingPlan:
    """Decide joins / new events / closes for one hour.

    story_event_similarity: (story_id, event_id) -> cosine to the event centroid (pairs absent
      = below threshold or not computed). story_story_similarity: (a, b) -> cosine between two
      candidate stories of this hour, either key order.
    veto: the anchor check of a story against an event (rule 3); None = no check.
    languages: story id or open event id -> the languages of its articles (rule 3's cross-language
      threshold); None = one threshold for every pair.
    waiting: stories of earlier hours without an event (rule 5): each may join an event founded in
      this hour (story_story_similarity holds their cosines to this hour's stories). A waiting
      story that joins is in plan.joins; one that does not is not reported.
    """
    settings = settings or GroupingSettings()
    stories = list(stories)
    plan = GroupingPlan()
    events_before: dict[str, int] = {}  # an unassigned story -> how many events were founded before it
    windows: dict[str, tuple[datetime, datetime]] = {
        e.event_id: (e.first_published_at, e.last_published_at) for e in open_events
    }
    open_ids = set(windows)
    members_this_hour: dict[str, list[str]] = {}  # events founded this hour -> member story ids
    max_span = timedelta(days=settings.max_span_days)
    event_languages: dict[str, set[str]] = {e.event_id: set((languages or {}).get(e.event_id, ())) for e in open_events}

    def threshold_for(story_id: str, event_id: str) -> float:
        """Rule 3's threshold: lower by cross_language_margin when the two share no language."""
        mine = (languages or {}).get(story_id)
        theirs = event_languages.get(event_id)
        if mine and theirs and not (set(mine) & theirs):
            return settings.threshold - settings.cross_language_margin
        return settings.threshold

    def similarity_to(story_id: str, event_id: str) -> float | None:
        """Rule 3: cosine to an open event's centroid; to an event founded this hour, the mean of
        the cosines to its members (None when any is below threshold: the mean would be too)."""
        if event_id not in members_this_hour:
            return story_event_similarity.get((story_id, event_id))
        sims = [_pair_similarity(story_story_similarity, story_id, m) for m in members_this_hour[event_id]]
        return None if any(x is None for x in sims) else sum(sims) / len(sims)

    # Rule 1: in (first_published_at, story_id) order.
    for story in sorted(stories, key=lambda s: (s.first_published_at, s.story_id)):
        if story.event_id is not None:  # rule 2: it stays
            plan.kept.append(story.story_id)
            if story.event_id in windows:  # widen the window the closing rule looks at
                first, last = windows[story.event_id]
                windows[story.event_id] = (min(first, story.first_published_at), max(last, story.latest_published_at))
            continue

        def refused(story_id: str, event_id: str) -> dict | None:
            if veto is None:
                return None
            return veto(story_id, event_id, list(members_this_hour.get(event_id, [])))

        best = _best_event(story, sorted(open_ids), windows, similarity_to, settings, max_span, refused, plan.vetoes,
                           threshold_for)
        if best is not None:
            similarity, event_id, gap = best
            plan.joins.append(Join(story.story_id, event_id, round(similarity, 6), round(gap, 3)))
            event_languages.setdefault(event_id, set()).update((languages or {}).get(story.story_id, ()))
            first, last = windows[event_id]
            windows[event_id] = (min(first, story.first_published_at), max(last, story.latest_published_at))
            if event_id in members_this_hour:
                members_this_hour[event_id].append(story.story_id)
            continue

        significance = story.significance if story.significance is not None else float("-inf")
        if significance < settings.min_significance:
            events_before[story.story_id] = len(plan.new_events)
            plan.unassigned.append(
                (story.story_id, "no close event" if story.significance is not None else "no close event, not scored")
            )
            continue
        event_id = event_id_for(story.story_id)
        plan.new_events.append(NewEvent(event_id, story.story_id, story.first_published_at, story.latest_published_at))
        plan.joins.append(Join(story.story_id, event_id, 1.0, 0.0))
        windows[event_id] = (story.first_published_at, story.latest_published_at)
        open_ids.add(event_id)
        members_this_hour[event_id] = [story.story_id]
        event_languages[event_id] = set((languages or {}).get(story.story_id, ()))

    # Rule 5: the hour's stories left without an event try the events founded after them this
    # hour; the waiting stories of earlier hours, every event founded this hour.
    still = []
    by_id = {s.story_id: s for s in stories}
    waiting = sorted(waiting, key=lambda s: (s.first_published_at, s.story_id))
    retry = [(s.story_id, "") for s in waiting if s.story_id not in by_id] + list(plan.unassigned)
    by_id.update({s.story_id: s for s in waiting if s.story_id not in by_id})
    for story_id, reason in retry:
        story = by_id[story_id]

        def refused(sid: str, event_id: str) -> dict | None:
            return None if veto is None else veto(sid, event_id, list(members_this_hour.get(event_id, [])))

        later = sorted(n.event_id for n in plan.new_events[events_before.get(story_id, 0):])
        best = _best_event(story, later, windows, similarity_to, settings, max_span, refused,
                           plan.vetoes, threshold_for)
        if best is None:
            if reason:
                still.append((story_id, reason))
            continue
        similarity, event_id, gap = best
        plan.joins.append(Join(story_id, event_id, round(similarity, 6), round(gap, 3)))
        first, last = windows[event_id]
        windows[event_id] = (min(first, story.first_published_at), max(last, story.latest_published_at))
        if reason:   # a story of this hour; a waiting one has no cosines to the other waiting stories
            members_this_hour[event_id].append(story_id)
        event_languages[event_id].update((languages or {}).get(story_id, ()))
    plan.unassigned = still

    plan.closes = _closing(sorted(open_ids), windows, now, settings.quiet_hours, max_span)
    plan.event_windows = windows
    return plan


def _pair_similarity(similarity: Mapping[tuple[str, str], float], a: str, b: str) -> float | None:
    value = similarity.get((a, b))
    return similarity.get((b, a)) if value is None else value


def _best_event(story: StoryCandidate, event_ids: list[str], windows: dict[str, tuple[datetime, datetime]],
                similarity_to, settings: GroupingSettings, max_span: timedelta,
                refused=lambda story_id, event_id: None,
                vetoes: list[EventVeto] | None = None,
                threshold_for=None) -> tuple[float, str, float] | None:
    """Rule 3: (similarity, event_id, gap) of the most similar open event the story may join, ties
    to the smaller event id; None when no event passes the threshold (`threshold_for(story_id,
    event_id)`, else settings.threshold), the gap, the span and the anchor check (each refusal
    appended to `vetoes`)."""
    best: tuple[float, str, float] | None = None
    for event_id in event_ids:
        similarity = similarity_to(story.story_id, event_id)
        threshold = threshold_for(story.story_id, event_id) if threshold_for else settings.threshold
        if similarity is None or similarity < threshold:
            continue
        first, last = windows[event_id]
        gap = interval_gap_hours(story.first_published_at, story.latest_published_at, first, last)
        if gap > settings.join_gap_hours:
            continue
        if max(last, story.latest_published_at) - min(first, story.first_published_at) > max_span:
            continue
        reason = refused(story.story_id, event_id)
        if reason is not None:
            if vetoes is not None:
                vetoes.append(EventVeto(story.story_id, event_id, round(similarity, 6), reason))
            continue
        if best is None or similarity > best[0] or (similarity == best[0] and event_id < best[1]):
            best = (similarity, event_id, gap)
    return best


def _closing(event_ids: list[str], windows: dict[str, tuple[datetime, datetime]], now: datetime,
             quiet_hours: float, max_span: timedelta) -> list[str]:
    """Rule 6: events quiet for longer than quiet_hours, or spanning more than max_span."""
    closes = []
    for event_id in event_ids:
        first, last = windows[event_id]
        if _hours(now - last) > quiet_hours or last - first > max_span or now - first > max_span:
            closes.append(event_id)
    return closes


def timeline_gaps_hours(intervals: Iterable[tuple[datetime, datetime]]) -> list[float]:
    """Gaps (hours) between consecutive stories of one event, ordered by start: the time from
    the furthest end reached so far to the next story's start (0 when they overlap)."""
    ordered = sorted(intervals)
    gaps: list[float] = []
    reach: datetime | None = None
    for first, last in ordered:
        if reach is not None:
            gaps.append(max(0.0, _hours(first - reach)))
            reach = max(reach, last)
        else:
            reach = last
    return gaps


def timeline_in_order(entries: Iterable[tuple[int, datetime, str]]) -> bool:
    """True when timeline positions 1..n follow (first_published_at, story_id) order."""
    rows = sorted(entries)
    if [r[0] for r in rows] != list(range(1, len(rows) + 1)):
        return False
    keys = [(r[1], r[2]) for r in rows]
    return keys == sorted(keys)

