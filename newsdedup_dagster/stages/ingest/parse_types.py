"""What the parse step takes and gives: its settings (ParseConfig) and results (ParsedItem,
SkippedEntry, ParseResult). Plain data, no logic."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta


@dataclass(frozen=True)
class ParseConfig:
    # Clock skew tolerated before a future date is clamped: feeds that label
    # local time as UTC put items hours ahead; 15 min covers honest skew only.
    max_future_skew: timedelta = timedelta(minutes=15)
    # Dates older than this (relative to fetch time) are treated as bogus
    # and clamped; a year keeps genuine old-but-republished stories dated.
    max_age: timedelta = timedelta(days=365)
    min_date: datetime = datetime(1995, 1, 1, tzinfo=UTC)  # before RSS existed
    max_title_chars: int = 500
    max_summary_chars: int = 5_000
    max_content_chars: int = 100_000
    synthetic_title_chars: int = 100  # title made from the summary's first words when a title is missing
    # Hostile-input bounds (safety limits, not calibrated on data; see docs/SECURITY.md#hostile-input).
    max_entries: int = 1_000  # entries kept per feed (the newest); news feeds carry 10-300
    max_field_chars: int = 200_000  # raw characters of one field kept before markup is stripped
    max_url_chars: int = 2_048  # longer links are dropped (the entry keeps its guid or a synthetic id)
    max_guid_chars: int = 1_024  # longer GUIDs are cut and suffixed with a hash of the whole
    time_budget: float = 15.0  # seconds to parse one feed; on expiry the source is recorded as failed
    detect_language: bool = True  # py3langid as the last resort (offline, ~30 us per item)
    min_detect_chars: int = 12  # shorter text gives no language guess


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class ParsedItem:
    item_id: str  # sha1(canonical_url)[:20]
    source_id: str
    guid: str | None
    url: str | None  # the entry's link, resolved to absolute; None for link-less entries
    canonical_url: str  # identity key (a urn:newsdedup: id when the entry has no URL)
    title: str
    summary: str | None
    content: str | None
    author: str | None
    published_at: datetime  # UTC
    date_origin: str  # 'published' | 'updated' | 'fetched'
    date_flag: str | None  # None | 'missing' | 'unparseable' | 'future_clamped' | 'too_old_clamped'
    language: str | None  # ISO 639-1
    language_origin: str  # 'entry' | 'feed' | 'source' | 'detected' | 'unknown'
    title_origin: str = "title"  # 'title' | 'summary'
    # The publisher the link is attributed to: registrable domain of the host a browser opens
    # (canonical_url.outlet_of); None for link-less items.
    outlet: str | None = None


@dataclass(frozen=True)
class SkippedEntry:
    index: int  # position in the feed
    guid: str | None
    # 'no_title' | 'no_identity' | 'duplicate_guid' | 'duplicate_url' | 'after_window'
    # | 'over_entry_cap' (one row for all dropped entries, index -1) | 'entry_error'
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class ParseResult:
    source_id: str
    items: tuple[ParsedItem, ...] = ()
    skipped: tuple[SkippedEntry, ...] = ()
    entry_count: int = 0
    feed_title: str | None = None
    feed_language: str | None = None
    feed_format: str | None = None  # feedparser's version: 'rss20', 'atom10', ...
    encoding: str | None = None
    encoding_note: str | None = None  # how the encoding was chosen, when not plainly declared
    bozo_error: str | None = None  # feedparser's complaint about malformed input (items kept)
    error: str | None = None  # fatal: not a feed at all (HTML page, empty body, time budget, ...)
    skipped_counts: dict[str, int] = field(default_factory=dict)
    repairs: dict[str, int] = field(default_factory=dict)  # what was fixed or removed, by kind
