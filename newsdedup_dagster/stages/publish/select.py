"""Which stories a feed and a day's index show (pure).

Feed: stories with an article in the last `window_hours` before the hour's end (0 = no time
limit), the most significant first, at most `max_stories` (0 = no limit), at or above
`min_significance`. Index: the same rules over the hour's UTC day ("today's stories").
Ranking ties break on sources, then articles, then story id, so reruns give the same order.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from newsdedup_dagster.stages.publish.model import FeedCandidate

__all__ = ["rank_key", "select_window", "select_feed", "select_day", "load_since"]


def rank_key(c: FeedCandidate):
    return (-c.significance, -c.source_count, -c.article_count, c.story_id)


def select_window(candidates: list[FeedCandidate], since: datetime | None, until: datetime, max_stories: int,
                  min_significance: float = 0.0) -> list[FeedCandidate]:
    pool = [c for c in candidates
            if c.significance >= min_significance
            and c.first_published_at < until
            and (since is None or c.latest_published_at >= since)]
    pool.sort(key=rank_key)
    return pool[:max_stories] if max_stories else pool


def select_feed(candidates: list[FeedCandidate], until: datetime, window_hours: int, max_stories: int,
                min_significance: float = 0.0) -> list[FeedCandidate]:
    since = until - timedelta(hours=window_hours) if window_hours else None
    return select_window(candidates, since, until, max_stories, min_significance)


def select_day(candidates: list[FeedCandidate], hour: datetime, max_stories: int,
               min_significance: float = 0.0) -> list[FeedCandidate]:
    day_start = hour.replace(hour=0, minute=0, second=0, microsecond=0)
    return select_window(candidates, day_start, hour + timedelta(hours=1), max_stories, min_significance)


def load_since(hour: datetime, window_hours: int) -> datetime | None:
    """The earliest activity either selection can need: the window start or the day start."""
    until = hour + timedelta(hours=1)
    day_start = hour.replace(hour=0, minute=0, second=0, microsecond=0)
    return min(until - timedelta(hours=window_hours), day_start) if window_hours else None
