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

from ..settings import check_language_codes, setting

__all__ = ["DigestCandidate", "DigestSettings", "Selected", "select_stories"]


@dataclass(frozen=True)
class DigestSettings:
    """The digest stage's settings (config.digest_settings()): the selection rules above, the
    languages rendered and whether backfills may send."""

    # 10 stories: a digest a reader finishes in a few minutes.
    max_stories: int = setting(10, env="NEWSDEDUP_DIGEST_MAX_STORIES", doc="stories in a digest")
    max_per_event: int = setting(1, env="NEWSDEDUP_DIGEST_MAX_PER_EVENT", doc="stories of one event in a digest")
    # 3 of 10 from one country keeps a national news burst from filling the digest; 0 = off.
    max_per_region: int = setting(3, env="NEWSDEDUP_DIGEST_MAX_PER_REGION",
                                  doc="stories of one country in a digest; 0 = no limit")
    min_significance: float = setting(0.0, env="NEWSDEDUP_DIGEST_MIN_SIGNIFICANCE",
                                      doc="stories below this significance are left out")
    # Languages rendered besides every language an active subscriber asked for; empty = the pivot
    # language and the story translation languages (digest/build.py: digest_langs).
    langs: tuple[str, ...] = setting((), env="NEWSDEDUP_DIGEST_LANGS",
                                     shown="pivot + translation + subscribers' languages",
                                     doc="rendered languages, comma-separated")
    # Backfill runs render only, unless this (or the run's allow_backfill_send) is set.
    allow_backfill_send: bool = setting(False, env="NEWSDEDUP_DIGEST_ALLOW_BACKFILL_SEND",
                                        doc="backfills render but never send unless set")

    def __post_init__(self) -> None:
        if self.max_stories < 1 or self.max_per_event < 1 or self.max_per_region < 0:
            raise ValueError("digest selection: max_stories and max_per_event must be >= 1, max_per_region >= 0")
        check_language_codes("NEWSDEDUP_DIGEST_LANGS", self.langs)    # each names an outbox file


@dataclass(frozen=True)
class DigestCandidate:
    story_id: str
    significance: float
    event_id: str | None = None
    region: str | None = None       # main source country (ISO code) or None
    source_count: int = 1
    item_count: int = 1


@dataclass(frozen=True)
class Selected:
    rank: int
    story_id: str
    event_id: str | None
    region: str | None
    significance: float
    relaxed_region: bool = False    # taken in the fill pass, beyond the region limit


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
