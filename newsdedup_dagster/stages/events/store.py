"""SQL that drives event grouping for one partition hour (no Dagster imports).

Python moves ids, timestamps and similarity numbers; vectors stay in PostgreSQL
(event centroid = avg(story centroids), similarity = 1 - (a <=> b)). The decisions are made by
the pure `grouping.plan_hour`.

Idempotency: a run of hour H first undoes what a previous run of H wrote (its memberships and
its closings), then decides again from the same inputs, in one transaction under an advisory
lock. Events keep ids derived from their founding story, so a rerun finds the same rows and
keeps their narratives. As with stories, reproducing a whole range exactly needs the hours to
be (re)run in time order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import psycopg

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.crashpoints import crash_point
from newsdedup_dagster.shared.db.story_members import story_member_texts
from newsdedup_dagster.shared.text import anchors as anchor_check
from newsdedup_dagster.shared.text.item_text import LEAD_CHARS
from newsdedup_dagster.stages.events.grouping import (
    GroupingPlan,
    OpenEvent,
    StoryCandidate,
    plan_hour,
    timeline_gaps_hours,
    timeline_in_order,
)
from newsdedup_dagster.stages.events.settings import GroupingSettings

__all__ = ["HourResult", "group_hour", "check_invariants", "event_summaries", "InvariantReport"]

# Arbitrary constant: serialises event grouping across processes (hourly runs must not interleave).
EVENTS_LOCK_KEY = 727_050
# How many nearest open events SQL returns per story; the pure rules pick among them.
NEAREST_EVENTS = 5
# A story's anchors are those of its most recent members (as the stories stage's pass 1 reads them)
STORY_ANCHOR_MEMBERS = 20
# The anchor check of a join: every kind at the stories stage's defaults (shared/text/anchors.py)
DEFAULT_ANCHOR_RULES = anchor_check.AnchorRules()


class _EventAnchors:
    """The anchor check of rule 3 over this hour's stories and the open events' stories (their
    members' headlines and leads, read once)."""

    def __init__(self, conn: psycopg.Connection, story_ids: list[str], event_ids: list[str],
                 rules: anchor_check.AnchorRules):
        self.rules = rules
        self.event_stories: dict[str, list[str]] = {}
        if event_ids:
            for event_id, story_id in conn.execute(db.load_sql("event_story_members"), {"event_ids": event_ids}):
                self.event_stories.setdefault(event_id, []).append(story_id)
        wanted = set(story_ids) | {s for ids in self.event_stories.values() for s in ids}
        texts = story_member_texts(conn, wanted, STORY_ANCHOR_MEMBERS)
        self.story: dict[str, anchor_check.Anchors] = {
            story: anchor_check.group_anchors([anchor_check.extract(t, sm, lang, LEAD_CHARS) for t, sm, lang in by_item.values()])
            for story, by_item in texts.items()}

    def __call__(self, story_id: str, event_id: str, joined_this_hour) -> dict | None:
        mine = self.story.get(story_id)
        theirs = [self.story[s] for s in [*self.event_stories.get(event_id, []), *joined_this_hour]
                  if s in self.story]
        if mine is None or not theirs:
            return None
        clash = anchor_check.conflict(mine, anchor_check.group_anchors(theirs), self.rules)
        return clash.as_dict() if clash is not None else None


@dataclass
class HourResult:
    hour: datetime
    candidates: int = 0
    open_events: int = 0
    plan: GroupingPlan = field(default_factory=GroupingPlan)
    touched_event_ids: list[str] = field(default_factory=list)
    reopened: int = 0
    orphans_deleted: int = 0

    def counts(self) -> dict[str, int]:
        return {"candidate_stories": self.candidates, "open_events_before": self.open_events,
                **self.plan.summary(), "touched_events": len(self.touched_event_ids)}


def _languages(conn: psycopg.Connection, story_ids: list[str], event_ids: list[str]) -> dict[str, frozenset[str]]:
    """Story id / event id -> the languages of its articles (rule 3's cross-language threshold)."""
    if not story_ids:
        return {}
    rows = conn.execute(db.load_sql("event_languages"), {"story_ids": story_ids, "event_ids": event_ids})
    return {key: frozenset(langs or ()) for key, langs in rows}


def _waiting_stories(conn: psycopg.Connection, hour: datetime, settings: GroupingSettings,
                     candidate_ids: list[str]) -> list[StoryCandidate]:
    rows = conn.execute(db.load_sql("event_waiting_stories"), {
        "hour": hour, "gap_hours": settings.join_gap_hours, "candidate_ids": candidate_ids}).fetchall()
    return [StoryCandidate(sid, first, latest, float(sig) if sig is not None else None)
            for sid, first, latest, sig in rows]


def _fetch_candidates(conn: psycopg.Connection, hour: datetime) -> list[StoryCandidate]:
    rows = conn.execute(db.load_sql("event_candidates"), {"hour": hour}).fetchall()
    return [StoryCandidate(sid, first, latest, float(sig) if sig is not None else None, eid)
            for sid, _model, first, latest, sig, eid in rows]


def group_hour(
    conn: psycopg.Connection, hour: datetime, settings: GroupingSettings | None = None,
    anchor_rules: anchor_check.AnchorRules | None = DEFAULT_ANCHOR_RULES,
) -> HourResult:
    """Group the stories new or changed in [hour, hour + 1h) into events; commit. anchor_rules:
    the anchor check of each join (None, or settings.anchor_check off: no check)."""
    settings = settings or GroupingSettings()
    if not settings.anchor_check:
        anchor_rules = None
    now = hour + timedelta(hours=1)
    result = HourResult(hour=hour)
    with conn.transaction():
        conn.execute(db.load_sql("advisory_xact_lock"), (EVENTS_LOCK_KEY,))
        undone = {r[0] for r in conn.execute(db.load_sql("event_undo_memberships"), {"hour": hour})}
        conn.execute(db.load_sql("event_vetoes_undo"), {"hour": hour})
        result.reopened = len(conn.execute(db.load_sql("event_reopen"), {"hour": hour}).fetchall())
        stale = {r[0] for r in conn.execute(db.load_sql("event_stale"), {"hour": hour})}
        if stale:  # centroids and windows must reflect current members before we compare
            conn.execute(db.load_sql("event_refresh"), {"event_ids": sorted(stale), "hour": hour})

        candidates = _fetch_candidates(conn, hour)
        open_events = [OpenEvent(*row) for row in conn.execute(db.load_sql("event_open"), {"hour": hour})]
        result.candidates, result.open_events = len(candidates), len(open_events)

        unassigned_ids = [s.story_id for s in candidates if s.event_id is None]
        # SQL returns pairs down to the cross-language threshold; plan_hour applies each pair's own
        lowest = settings.threshold - settings.cross_language_margin
        story_event: dict[tuple[str, str], float] = {}
        story_story: dict[tuple[str, str], float] = {}
        if unassigned_ids and open_events:
            for sid, eid, sim in conn.execute(
                db.load_sql("event_story_event_similarity"),
                {"story_ids": unassigned_ids, "event_ids": [e.event_id for e in open_events],
                 "gap_hours": settings.join_gap_hours, "k": NEAREST_EVENTS, "threshold": lowest},
            ):
                story_event[(sid, eid)] = float(sim)
        if len(unassigned_ids) > 1:
            for a, b, sim in conn.execute(
                db.load_sql("event_story_pairs"), {"story_ids": unassigned_ids, "threshold": lowest}
            ):
                story_story[(a, b)] = float(sim)

        waiting: list[StoryCandidate] = []
        if story_story or any(s.significance is not None and s.significance >= settings.min_significance
                              for s in candidates if s.event_id is None):
            waiting = _waiting_stories(conn, hour, settings, [s.story_id for s in candidates])
            if waiting:
                for a, b, sim in conn.execute(db.load_sql("event_waiting_pairs"), {
                        "waiting_ids": [w.story_id for w in waiting], "story_ids": unassigned_ids, "threshold": lowest}):
                    story_story[(a, b)] = float(sim)
                waiting = [w for w in waiting if any(a == w.story_id for a, _ in story_story)]
        waiting_ids = [w.story_id for w in waiting]

        veto = None
        if anchor_rules is not None and unassigned_ids and (story_event or story_story):
            near = sorted({e for _, e in story_event})
            veto = _EventAnchors(conn, unassigned_ids + waiting_ids, near, anchor_rules)
        languages = _languages(conn, unassigned_ids + waiting_ids, sorted({e for _, e in story_event}))
        plan = plan_hour(candidates, open_events, story_event, story_story, now, settings, veto, languages, waiting)
        result.plan = plan
        if plan.vetoes:
            conn.execute(db.load_sql("event_vetoes_insert"), {"hour": hour, "rows": json.dumps([
                {"story_id": v.story_id, "event_id": v.event_id, "similarity": v.similarity,
                 "kinds": v.reason["kinds"], "story_anchors": v.reason["a"], "event_anchors": v.reason["b"]}
                for v in plan.vetoes], ensure_ascii=False)})
        crash_point("events.after_plan")

        if plan.new_events:
            conn.execute(db.load_sql("event_insert_new"), {
                "hour": hour, "quiet_hours": settings.quiet_hours,
                "event_ids": [n.event_id for n in plan.new_events],
                "story_ids": [n.founding_story_id for n in plan.new_events],
            })
        if plan.joins:
            conn.execute(db.load_sql("event_insert_memberships"), {
                "hour": hour,
                "story_ids": [j.story_id for j in plan.joins],
                "event_ids": [j.event_id for j in plan.joins],
                "similarities": [j.similarity for j in plan.joins],
            })
        kept_events = {s.event_id for s in candidates if s.event_id is not None}
        touched = sorted(undone | stale | kept_events | {j.event_id for j in plan.joins})
        if touched:
            result.orphans_deleted = len(conn.execute(
                db.load_sql("event_delete_orphans"), {"event_ids": touched}).fetchall())
            conn.execute(db.load_sql("event_refresh"), {"event_ids": touched, "hour": hour})
            conn.execute(db.load_sql("event_timeline_positions"), {"event_ids": touched})
        if plan.closes:
            conn.execute(db.load_sql("event_close"), {"event_ids": plan.closes, "hour": hour, "now": now})
        existing = {r[0] for r in conn.execute(db.load_sql("event_ids_existing"), (touched,))} if touched else set()
        result.touched_event_ids = [e for e in touched if e in existing]
    return result


@dataclass
class InvariantReport:
    multi_membership: list[tuple[str, int]]
    gap_violations: list[tuple[str, float, float]]      # (event_id, max gap h, quiet h)
    order_violations: list[str]
    events_checked: int


def check_invariants(conn: psycopg.Connection, event_ids: list[str], default_quiet_hours: float) -> InvariantReport:
    """The three event invariants. Membership uniqueness over the whole table; gaps and timeline
    order over the given events (the ones the run touched), using the pure rules."""
    multi = [(sid, int(n)) for sid, n in conn.execute(db.load_sql("event_multi_membership"))]
    timelines: dict[str, list[tuple]] = {}
    quiet: dict[str, float] = {}
    if event_ids:
        for eid, sid, pos, first, latest, q in conn.execute(db.load_sql("event_timeline"), {"event_ids": event_ids}):
            timelines.setdefault(eid, []).append((sid, pos, first, latest))
            quiet[eid] = float(q) if q is not None else default_quiet_hours
    gaps, order = [], []
    for eid, rows in timelines.items():
        widest = max(timeline_gaps_hours([(first, latest) for _, _, first, latest in rows]), default=0.0)
        if widest > quiet[eid] + 1e-6:
            gaps.append((eid, round(widest, 2), quiet[eid]))
        if any(pos is None for _, pos, _, _ in rows) or not timeline_in_order(
            [(pos, first, sid) for sid, pos, first, _ in rows]
        ):
            order.append(eid)
    conn.commit()
    return InvariantReport(multi, gaps, order, len(timelines))


def event_summaries(conn: psycopg.Connection, event_ids: list[str], limit: int = 20) -> list[dict]:
    """Title, days, stories, languages per event (for asset metadata and the CLI)."""
    if not event_ids:
        return []
    cur = conn.execute(db.load_sql("event_summary"), {"event_ids": event_ids, "limit": limit})
    names = [c.name for c in cur.description]
    rows = [dict(zip(names, row)) for row in cur]
    conn.commit()
    return rows
