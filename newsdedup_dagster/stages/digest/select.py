"""Pure selection rules for the daily digest (no database, no Dagster).

Rules, in order:
1. Only scored stories of the day with significance >= min_significance.
2. Ranked by significance, then independent sources, then articles, then story id (stable).
3. Event diversity (hard): at most `max_per_event` stories of one event (default 1: "no two
   stories from one event unless configured"). Stories outside any event are unconstrained.
4. Region diversity (soft): at most `max_per_region` stories whose main source country is the
   same; if that leaves the digest short, the best remaining stories fill it (event rule
   still applies). Stories whose region is unknown are unconstrained.
5. At most `max_stories`.
"""

from __future__ import annotations

from dataclasses import dataclass

from newsdedup_dagster.shared.presentation.stories import Selected
from newsdedup_dagster.stages.digest.settings import DigestSettings

__all__ = ["DigestCandidate", "Selected", "select_stories"]


@dataclass(frozen=True)
class DigestCandidate:
    story_id: str
    significance: float
    event_id: str | None = None
    region: str | None = None       # main source country (ISO code) or None
    source_count: int = 1
    item_count: int = 1




def _rank_key(c: DigestCandidate):
    return (-c.significance, -c.source_count, -c.item_count, c.story_id)


def select_stories(candidates: list[DigestCandidate], settings: DigestSettings | None = None) -> list[Selected]:
    settings = settings or DigestSettings()
    pool = sorted((c for c in candidates if c.significance >= settings.min_significance), key=_rank_key)
    per_event: dict[str, int] = {}
    per_region: dict[str, int] = {}
    chosen: list[tuple[DigestCandidate, bool]] = []
    taken: set[str] = set()

    def event_ok(c: DigestCandidate) -> bool:
        return c.event_id is None or per_event.get(c.event_id, 0) < settings.max_per_event

    def region_ok(c: DigestCandidate) -> bool:
        return not settings.max_per_region or c.region is None or per_region.get(c.region, 0) < settings.max_per_region

    def take(c: DigestCandidate, relaxed: bool) -> None:
        chosen.append((c, relaxed))
        taken.add(c.story_id)
        if c.event_id is not None:
            per_event[c.event_id] = per_event.get(c.event_id, 0) + 1
        if c.region is not None:
            per_region[c.region] = per_region.get(c.region, 0) + 1

    for c in pool:
        if len(chosen) >= settings.max_stories:
            break
        if event_ok(c) and region_ok(c):
            take(c, False)
    for c in pool:  # fill pass: region diversity is a preference, not a reason for a short digest
        if len(chosen) >= settings.max_stories:
            break
        if c.story_id not in taken and event_ok(c):
            take(c, True)
    chosen.sort(key=lambda pair: _rank_key(pair[0]))
    return [Selected(i + 1, c.story_id, c.event_id, c.region, c.significance, relaxed)
            for i, (c, relaxed) in enumerate(chosen)]
