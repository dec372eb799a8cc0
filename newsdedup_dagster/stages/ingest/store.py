"""Ingestion's database side: sources sync, raw fetch archive, item upserts,
and `ingest_partition`, the one function the raw_items asset calls.

Rules (raw is immutable per hour; partitions are idempotent):

* Every fetch result (ok, 304, error) is archived in `feed_fetches` with its
  partition hour and its body gzip-compressed.
* Archive first: a source that already has a non-error archived fetch for
  hour H is re-parsed from the archive, never fetched again. A backfill of a
  past hour therefore reproduces what was fetched then, and a rerun of H
  writes the same rows.
* Items are keyed by sha1(canonical URL); an item already owned by another
  hour is left alone (ON CONFLICT ... WHERE partition_hour matches), and one
  item seen from two sources is one `items` row with two `item_sources` rows.
* The network is never used inside a database transaction: read state,
  fetch, then write everything of the hour in one transaction.

SQL lives in sql/queries/ingest.sql, loaded by name with db.load_sql.
"""

from __future__ import annotations

import gzip
import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from newsdedup_dagster.shared.crashpoints import crash_point
from newsdedup_dagster.shared.db import load_sql
from newsdedup_dagster.shared.http.canonical_url import canonical_outlet, links_directly
from newsdedup_dagster.shared.http.fetch import FetchConfig, FetchRequest, FetchResult
from newsdedup_dagster.shared.http.netguard import AddressPolicy
from newsdedup_dagster.shared.sources import Source
from newsdedup_dagster.shared.text.markdown import markdown_cell
from newsdedup_dagster.stages.ingest.parse_pool import ParsePool
from newsdedup_dagster.stages.ingest.parse_types import ParseConfig, ParsedItem, ParseResult
from newsdedup_dagster.stages.ingest.pipeline import fetch_and_parse
from newsdedup_dagster.stages.ingest.replay import load_jsonl_partition, replay_fetch_results, replay_window

MODES = ("live", "replay", "archive")
# Live fetching of hour H is allowed until this long after H ends: the hourly
# schedule materialises H just after it ends, and a retry may follow. Later,
# H is a backfill and only its archive is used.
LIVE_GRACE = timedelta(hours=2)
# Two-int advisory lock (namespace, epoch hour): one ingest per hour at a time.
INGEST_LOCK_NAMESPACE = 727_010
GZIP_LEVEL = 6  # zlib default: feeds compress ~5-8x; level 9 saves ~2 % more for 2-3x the CPU


# ------------------------------------------------------------------ reports


@dataclass(frozen=True)
class SourceSyncReport:
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    disabled: tuple[str, ...] = ()
    retired_urls: tuple[str, ...] = ()  # retired sources whose feed_url a renamed source took over


@dataclass(frozen=True)
class SourceIngestRow:
    source_id: str
    origin: str  # 'fetched' | 'replayed' | 'archive' | 'none'
    status: str  # 'ok' | 'not_modified' | 'error' | 'no_archive' | 'no_replay_file'
    http_status: int | None = None
    fetch_id: int | None = None
    entries: int = 0  # entries in the feed body
    items: int = 0  # entries that became items (after dedup/skips)
    new_items: int = 0  # items inserted into `items` by this run with this source as their first source
    new_links: int = 0  # (item, source) pairs inserted into item_sources by this run
    error: str | None = None  # fetch error or fatal parse error (one line)
    bozo_error: str | None = None  # malformed-feed complaint (items were kept)
    skipped: dict[str, int] = field(default_factory=dict)  # entries skipped, by reason
    elapsed_ms: int | None = None
    attempts: int | None = None
    parse_status: str | None = None  # 'ok' | 'partial' | 'failed'; None when nothing was parsed
    repairs: dict[str, int] = field(default_factory=dict)  # hostile input fixed or removed, by kind


@dataclass(frozen=True)
class IngestReport:
    partition_start: datetime
    mode: str
    rows: tuple[SourceIngestRow, ...]
    sources_sync: SourceSyncReport | None
    items_seen: int  # distinct items parsed for this hour
    new_items: int
    partition_items: int  # (item, source) pairs owned by this hour after the run
    fetch_seconds: float
    parse_seconds: float
    store_seconds: float

    @property
    def errors(self) -> tuple[SourceIngestRow, ...]:
        return tuple(row for row in self.rows if row.status == "error" or row.error)

    def skipped_totals(self) -> dict[str, int]:
        """Entries skipped this hour, by reason, over all sources."""
        totals: dict[str, int] = {}
        for row in self.rows:
            for reason, count in row.skipped.items():
                totals[reason] = totals.get(reason, 0) + count
        return dict(sorted(totals.items()))

    def repair_totals(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for row in self.rows:
            for kind, count in row.repairs.items():
                totals[kind] = totals.get(kind, 0) + count
        return dict(sorted(totals.items()))

    def counts_by_status(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for row in self.rows:
            counts[row.status] = counts.get(row.status, 0) + 1
        return counts

    def as_markdown(self, limit: int = 50) -> str:
        """Per-source table for Dagster metadata (errors first)."""
        ordered = sorted(self.rows, key=lambda r: (r.status != "error" and not r.error, r.source_id))
        lines = ["| source | origin | status | http | parse | items | new | skipped | error |",
                 "|---|---|---|---|---|---|---|---|---|"]
        for row in ordered[:limit]:
            error = markdown_cell(row.error or row.bozo_error, 120)  # a server's or a feed's words
            skipped = ", ".join(f"{reason} {count}" for reason, count in sorted(row.skipped.items()))
            lines.append(f"| {row.source_id} | {row.origin} | {row.status} | {row.http_status or ''} | "
                         f"{row.parse_status or ''} | {row.items} | {row.new_items} | {skipped} | {error} |")
        if len(ordered) > limit:
            lines.append(f"| … {len(ordered) - limit} more | | | | | | | | |")
        return "\n".join(lines)


# ------------------------------------------------------------------ settings


def configs_for(settings) -> tuple[FetchConfig, ParseConfig]:
    """FetchConfig and ParseConfig from config.IngestSettings (read by the caller)."""
    fetch = FetchConfig(
        max_concurrency=settings.max_concurrency, max_per_host=settings.max_per_host,
        total_timeout=settings.total_timeout, max_body_bytes=settings.max_body_bytes,
        max_decoded_bytes=settings.max_decoded_bytes,
        address_policy=AddressPolicy.from_entries(settings.allow_private))
    parse = ParseConfig(
        max_entries=settings.max_entries, max_field_chars=settings.max_field_chars,
        max_title_chars=settings.max_title_chars, max_summary_chars=settings.max_summary_chars,
        max_content_chars=settings.max_content_chars, max_url_chars=settings.max_url_chars,
        time_budget=settings.parse_time_budget)
    return fetch, parse


# ------------------------------------------------------------------ helpers


def _utc_hour(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("partition_start must be timezone-aware (UTC)")
    moment = moment.astimezone(UTC)
    if moment != moment.replace(minute=0, second=0, microsecond=0):
        raise ValueError(f"partition_start {moment.isoformat()} is not on the hour")
    return moment


def choose_mode(partition_start: datetime, fetch_mode: str, now: datetime | None = None) -> str:
    """Map the configured fetch mode to this hour's mode.

    'replay' -> 'replay' (offline data exists for every hour);
    'live' -> 'live' while H is recent (until LIVE_GRACE after H ends),
    else 'archive' (a backfill must not fetch today's feed into a past hour)."""
    if fetch_mode == "replay":
        return "replay"
    if fetch_mode != "live":
        raise ValueError(f"fetch_mode {fetch_mode!r}: expected 'live' or 'replay'")
    now = now or datetime.now(UTC)
    partition_end = _utc_hour(partition_start) + timedelta(hours=1)
    return "live" if now <= partition_end + LIVE_GRACE else "archive"


def compress_body(body: bytes | None) -> bytes | None:
    # mtime=0: the same body always compresses to the same bytes.
    return gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0) if body is not None else None


_NOT_PG_TEXT = re.compile("[\x00\ud800-\udfff]")


def pg_text(value: str | None) -> str | None:
    """`value` as PostgreSQL accepts text: no NUL, no lone surrogates (parsing
    already removes both; this is the last line, for any other string such as
    a server's header or an exception message)."""
    if value is None or not _NOT_PG_TEXT.search(value):
        return value
    return _NOT_PG_TEXT.sub(lambda m: "" if m.group(0) == "\x00" else "\ufffd", value)


def _pg_texts(values: Iterable[str | None]) -> list[str | None]:
    return [pg_text(v) for v in values]


def _connection_lost(conn: psycopg.Connection, exc: BaseException) -> bool:
    """True when `exc` means the database itself is unreachable (then the
    hour fails and is retried), False for an error caused by one source's data."""
    return conn.broken or conn.closed or isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError))


def _source_from_row(row: Sequence) -> Source:
    return Source(id=row[0], name=row[1], feed_url=row[2], language=row[3], country=row[4] or "",
                  syndicator=row[5], enabled=row[6], replay_file=Path(row[7]) if row[7] else None)


# ------------------------------------------------------------------ sources


def sync_sources(conn: psycopg.Connection, sources: Sequence[Source], *, disable_missing: bool = True
                 ) -> SourceSyncReport:
    """Upsert configured sources (added / changed), disable the ones no longer
    configured (never delete). Runs in the caller's transaction."""
    ids = [s.id for s in sources]
    feed_urls = [s.feed_url for s in sources]
    retired: list[str] = []
    disabled: list[str] = []
    if disable_missing:
        retired = [r[0] for r in conn.execute(load_sql("ingest_sources_release_urls"),
                                              {"ids": ids, "feed_urls": feed_urls}).fetchall()]
        disabled = [r[0] for r in conn.execute(load_sql("ingest_sources_disable_missing"), {"ids": ids}).fetchall()]
    rows = conn.execute(load_sql("ingest_sources_upsert"), {
        "ids": ids, "names": [s.name for s in sources], "feed_urls": feed_urls,
        "languages": [s.language for s in sources], "countries": [s.country or None for s in sources],
        "syndicators": [bool(s.syndicator) for s in sources], "enabled": [bool(s.enabled) for s in sources],
        "replay_files": [str(s.replay_file) if s.replay_file else None for s in sources],
    }).fetchall()
    added = tuple(sorted(r[0] for r in rows if r[1]))
    changed = tuple(sorted(r[0] for r in rows if not r[1]))
    return SourceSyncReport(added=added, changed=changed, disabled=tuple(sorted(disabled)),
                            retired_urls=tuple(sorted(retired)))


def stored_sources(conn: psycopg.Connection, ids: Iterable[str]) -> dict[str, tuple[Source, str | None, str | None]]:
    """{id: (Source, etag, last_modified)} as stored."""
    rows = conn.execute(load_sql("ingest_sources_select"), {"ids": sorted(set(ids))}).fetchall()
    return {row[0]: (_source_from_row(row), row[8], row[9]) for row in rows}


# ------------------------------------------------------------------ fetch archive


@dataclass(frozen=True)
class ArchivedFetch:
    fetch_id: int
    mode: str  # 'live' | 'replay'
    result: FetchResult  # body decompressed


def archive_fetches(conn: psycopg.Connection, results: Sequence[FetchResult], partition_start: datetime,
                    mode: str) -> dict[str, int]:
    """Insert fetch results into feed_fetches; returns {source_id: fetch_id}."""
    if not results:
        return {}
    if len({r.source_id for r in results}) != len(results):
        raise ValueError("archive_fetches takes at most one result per source per call")
    partition_start = _utc_hour(partition_start)
    bodies = [compress_body(r.body) for r in results]
    rows = conn.execute(load_sql("ingest_fetch_insert"), {
        "source_ids": [r.source_id for r in results], "partition_hours": [partition_start] * len(results),
        "modes": [mode] * len(results), "urls": _pg_texts(r.url for r in results),
        "final_urls": _pg_texts(r.final_url for r in results), "fetched_ats": [r.fetched_at for r in results],
        "statuses": [r.status for r in results], "http_statuses": [r.http_status for r in results],
        "elapsed_ms": [r.elapsed_ms for r in results], "attempts": [max(1, r.attempts) for r in results],
        "etags": _pg_texts(r.etag for r in results), "last_modifieds": _pg_texts(r.last_modified for r in results),
        "content_types": _pg_texts(r.content_type for r in results), "errors": _pg_texts(r.error for r in results),
        "bodies": bodies, "body_bytes": [len(r.body) if r.body is not None else None for r in results],
    }).fetchall()
    return {source_id: fetch_id for fetch_id, source_id in rows}


def archive_fetches_isolated(conn: psycopg.Connection, results: Sequence[FetchResult], partition_start: datetime,
                             mode: str) -> dict[str, int]:
    """archive_fetches, one source's failure kept to that source: on a data
    error the rows are inserted one by one, and a row that still fails is
    archived without its body, as an error naming the reason."""
    try:
        with conn.transaction():
            return archive_fetches(conn, results, partition_start, mode)
    except psycopg.Error as exc:
        if _connection_lost(conn, exc):
            raise
    fetch_ids: dict[str, int] = {}
    for result in results:
        try:
            with conn.transaction():
                fetch_ids.update(archive_fetches(conn, [result], partition_start, mode))
        except psycopg.Error as exc:
            if _connection_lost(conn, exc):
                raise
            failed = replace(result, status="error", body=None, etag=None, last_modified=None,
                             error=_one_line_error(f"archive failed: {type(exc).__name__}: {exc}"))
            with conn.transaction():
                fetch_ids.update(archive_fetches(conn, [failed], partition_start, mode))
    return fetch_ids


def _one_line_error(text: str, limit: int = 300) -> str:
    text = pg_text(" ".join(str(text).split())) or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def load_archived_fetches(conn: psycopg.Connection, partition_start: datetime) -> list[ArchivedFetch]:
    """The archived fetches of hour H (bodies decompressed), by source then time."""
    archived = []
    for row in conn.execute(load_sql("ingest_fetches_for_partition"),
                            {"partition_hour": _utc_hour(partition_start)}).fetchall():
        (fetch_id, source_id, mode, url, final_url, fetched_at, status, http_status, elapsed_ms, attempts,
         etag, last_modified, content_type, error, body_gzip) = row
        try:
            body = gzip.decompress(body_gzip) if body_gzip is not None else None
        except (OSError, EOFError, ValueError) as exc:  # a damaged archive row fails its source only
            body, status, error = None, "error", _one_line_error(f"archived body unreadable: {exc}")
        archived.append(ArchivedFetch(fetch_id=fetch_id, mode=mode, result=FetchResult(
            source_id=source_id, url=url, final_url=final_url, status=status, http_status=http_status,
            elapsed_ms=elapsed_ms or 0, etag=etag, last_modified=last_modified, body=body,
            content_type=content_type, headers={"content-type": content_type} if content_type else {},
            error=error, attempts=attempts, fetched_at=fetched_at)))
    return archived


def parse_status(parsed: ParseResult) -> str:
    """'failed' (nothing usable), 'partial' (malformed, entries skipped for
    errors or over the cap) or 'ok'."""
    if parsed.error:
        return "failed"
    if parsed.bozo_error or parsed.skipped_counts.get("entry_error") or parsed.skipped_counts.get("over_entry_cap"):
        return "partial"
    return "ok"


def record_parse_outcomes(conn: psycopg.Connection, outcomes: dict[int, ParseResult]) -> None:
    if not outcomes:
        return
    ids = sorted(outcomes)
    errors = []
    for fetch_id in ids:
        parsed = outcomes[fetch_id]
        errors.append(pg_text(parsed.error or (f"malformed feed (items kept): {parsed.bozo_error}"
                                               if parsed.bozo_error else None)))
    conn.execute(load_sql("ingest_fetch_update_parse"), {
        "ids": ids, "parse_errors": errors, "items_parsed": [len(outcomes[i].items) for i in ids],
        "parse_statuses": [parse_status(outcomes[i]) for i in ids],
        "entries_totals": [outcomes[i].entry_count for i in ids],
        "skipped": [json.dumps(outcomes[i].skipped_counts, sort_keys=True) if outcomes[i].skipped_counts else None
                    for i in ids],
        "repairs": [json.dumps(outcomes[i].repairs, sort_keys=True) if outcomes[i].repairs else None for i in ids]})


# ------------------------------------------------------------------ items


@dataclass(frozen=True)
class UpsertOutcome:
    new_item_ids: frozenset[str]
    new_links: frozenset[tuple[str, str]]  # (item_id, source_id)
    new_item_sources: dict[str, str] = field(default_factory=dict)  # new item id -> the source its row names
    # item id -> the (item, fetch_id) pair its `items` row was written from by this call
    written: dict[str, tuple[ParsedItem, int | None]] = field(default_factory=dict)


def claim_key(item: ParsedItem, feed_outlets: Mapping[str, str | None]) -> tuple[bool, bool, str]:
    """How strongly an entry claims the `items` row of its canonical URL; the smallest key keeps
    the row. First an entry whose own link opens the canonical host (not a redirect wrapper's or
    an AMP cache's link to it), then the publisher's own feed (the outlet of the source's feed URL
    is the registrable domain of the canonical URL), then the lowest source id: the same entry
    wins in whatever order the feeds arrive, are archived or are re-parsed."""
    own = feed_outlets.get(item.source_id)
    return (not links_directly(item.url, item.canonical_url),
            own is None or canonical_outlet(item.canonical_url) != own, item.source_id)


def upsert_items(conn: psycopg.Connection, items: Sequence[tuple[ParsedItem, int | None]],
                 partition_start: datetime, *,
                 claimed: Mapping[str, tuple[ParsedItem, int | None]] | None = None,
                 feed_outlets: Mapping[str, str | None] | None = None) -> UpsertOutcome:
    """Upsert (item, fetch_id) pairs into items and item_sources (idempotent).

    Of the pairs of one item id, the one with the smallest `claim_key` decides the `items` row
    (title, link and source_id; ties keep the first pair): an entry linking the article's own
    host, from the publisher's own feed, before any other. So another feed listing the same URL
    (directly or through a known redirect service) under its own title cannot take the item over
    from its publisher. A rerun of the hour rewrites the row when a stronger entry arrived since;
    an item stored by an earlier hour is never rewritten (raw is immutable per hour). Every
    (item, source) pair gets an item_sources row. `claimed` holds the pairs an earlier call of the
    same run wrote the `items` rows from: a pair here replaces one only with a smaller key."""
    partition_start = _utc_hour(partition_start)
    feed_outlets = feed_outlets or {}
    claimed = claimed or {}
    by_id: dict[str, list[tuple[ParsedItem, int | None]]] = {}
    links: dict[tuple[str, str], tuple[ParsedItem, int | None]] = {}
    for item, fetch_id in items:
        by_id.setdefault(item.item_id, []).append((item, fetch_id))
        links.setdefault((item.item_id, item.source_id), (item, fetch_id))
    if not links:
        return UpsertOutcome(frozenset(), frozenset())
    written: dict[str, tuple[ParsedItem, int | None]] = {}
    for item_id, pairs in by_id.items():
        earlier = claimed.get(item_id)
        contenders = pairs if earlier is None else [earlier, *pairs]
        # min() keeps the first of equal keys; keys are computed only where entries compete.
        winner = contenders[0] if len(contenders) == 1 else min(
            contenders, key=lambda pair: claim_key(pair[0], feed_outlets))
        if winner is not earlier:
            written[item_id] = winner
    rows = list(written.values())
    inserted = conn.execute(load_sql("ingest_items_upsert"), {
        "ids": [i.item_id for i, _ in rows], "canonical_urls": _pg_texts(i.canonical_url for i, _ in rows),
        # items.url is NOT NULL: link-less entries keep their urn:newsdedup: identity there.
        "urls": _pg_texts(i.url or i.canonical_url for i, _ in rows), "guids": _pg_texts(i.guid for i, _ in rows),
        "titles": _pg_texts(i.title for i, _ in rows), "summaries": _pg_texts(i.summary or "" for i, _ in rows),
        "contents": _pg_texts(i.content for i, _ in rows), "authors": _pg_texts(i.author for i, _ in rows),
        "langs": [i.language for i, _ in rows], "lang_origins": [i.language_origin for i, _ in rows],
        "published_ats": [i.published_at for i, _ in rows], "date_flags": [i.date_flag for i, _ in rows],
        "partition_hours": [partition_start] * len(rows), "source_ids": [i.source_id for i, _ in rows],
        "fetch_ids": [f for _, f in rows], "outlets": [i.outlet for i, _ in rows],
    }).fetchall()
    pairs = list(links.values())
    linked = conn.execute(load_sql("ingest_item_sources_upsert"), {
        "item_ids": [i.item_id for i, _ in pairs], "source_ids": [i.source_id for i, _ in pairs],
        "urls": _pg_texts(i.url or i.canonical_url for i, _ in pairs), "guids": _pg_texts(i.guid for i, _ in pairs),
        "fetch_ids": [f for _, f in pairs], "partition_hours": [partition_start] * len(pairs),
    }).fetchall()
    new_ids = frozenset(r[0] for r in inserted if r[1])
    return UpsertOutcome(new_item_ids=new_ids, new_links=frozenset((r[0], r[1]) for r in linked if r[2]),
                         new_item_sources={item_id: written[item_id][0].source_id for item_id in new_ids},
                         written=written)


def _store_groups(conn: psycopg.Connection, groups: list[tuple[str, int, ParseResult, bool]],
                  partition_start: datetime, feed_outlets: Mapping[str, str],
                  ) -> tuple[list[tuple[str, int, ParseResult, bool]], UpsertOutcome]:
    """Upsert every group's items in one statement; when the database refuses
    the batch for a reason other than a lost connection, store source by source
    (a savepoint each) and record a refused source as failed, items dropped."""
    pairs = [(item, fetch_id) for _, fetch_id, parsed, _ in groups for item in parsed.items]
    try:
        with conn.transaction():
            return groups, upsert_items(conn, pairs, partition_start, feed_outlets=feed_outlets)
    except psycopg.Error as exc:
        if _connection_lost(conn, exc):
            raise
    kept: list[tuple[str, int, ParseResult, bool]] = []
    claimed: dict[str, tuple[ParsedItem, int | None]] = {}
    new_ids: set[str] = set()
    new_links: set[tuple[str, str]] = set()
    new_sources: dict[str, str] = {}
    for source_id, fetch_id, parsed, record in groups:
        try:
            with conn.transaction():
                outcome = upsert_items(conn, [(item, fetch_id) for item in parsed.items], partition_start,
                                       claimed=claimed, feed_outlets=feed_outlets)
        except psycopg.Error as exc:
            if _connection_lost(conn, exc):
                raise
            parsed = replace(parsed, items=(), error=_one_line_error(
                f"store failed: {type(exc).__name__}: {exc} (the body is archived; a rerun parses it again)"))
        else:
            claimed.update(outcome.written)
            new_ids |= outcome.new_item_ids
            new_links |= outcome.new_links
            new_sources.update(outcome.new_item_sources)
            # A stronger entry rewrote a row this run inserted: the row names its source now.
            new_sources.update({item_id: pair[0].source_id for item_id, pair in outcome.written.items()
                                if item_id in new_ids})
        kept.append((source_id, fetch_id, parsed, record))
    return kept, UpsertOutcome(frozenset(new_ids), frozenset(new_links), new_sources)


def partition_item_counts(conn: psycopg.Connection, partition_start: datetime) -> dict[str, int]:
    return {row[0]: row[1] for row in conn.execute(load_sql("ingest_partition_counts"),
                                                   {"partition_hour": _utc_hour(partition_start)}).fetchall()}


# ------------------------------------------------------------------ the hour


def ingest_partition(
    conn: psycopg.Connection,
    sources: Sequence[Source],
    partition_start: datetime,
    *,
    mode: str = "live",
    fetch_config: FetchConfig | None = None,
    parse_config: ParseConfig = ParseConfig(),
    sync: bool = True,
) -> IngestReport:
    """Ingest hour H = [partition_start, +1h) and return a per-source report.

    mode 'live': fetch enabled sources that have no usable archive for H;
    'replay': read their replay_file instead (entries visible at the end of H);
    'archive': only re-parse what was archived for H (backfills).
    In every mode, sources with a non-error archived fetch for H are re-parsed
    from the archive and not fetched again; archived sources that left the
    configuration are re-parsed too (the archive is the truth for H).

    `conn` must not be inside a transaction; this function commits."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r}: expected one of {MODES}")
    partition_start = _utc_hour(partition_start)
    fetch_config = fetch_config or FetchConfig()
    lock_key = int(partition_start.timestamp() // 3600)
    conn.execute(load_sql("advisory_lock_pair"), (INGEST_LOCK_NAMESPACE, lock_key))
    conn.commit()
    try:
        return _ingest_locked(conn, sources, partition_start, mode, fetch_config, parse_config, sync)
    finally:
        conn.rollback()
        conn.execute(load_sql("advisory_unlock_pair"), (INGEST_LOCK_NAMESPACE, lock_key))
        conn.commit()


@dataclass
class _HourFetch:
    """What step 2 of an hour's ingestion shares: the hour, the mode, the sources' rows, and the
    fetch rows archived so far (with the time archiving took)."""

    conn: psycopg.Connection
    partition_start: datetime
    mode: str
    parse_config: ParseConfig
    source_for: dict
    visible_before: datetime
    fetch_ids: dict[str, int] = field(default_factory=dict)
    archive_seconds: float = 0.0

    def job(self, result: FetchResult, replayed: bool | None = None):
        """A parse job: replayed bodies only show the entries visible at the end of the hour
        (`replayed` None: this run's fresh fetch, replayed in replay mode)."""
        replayed = self.mode == "replay" if replayed is None else replayed
        return (result, self.source_for.get(result.source_id), self.visible_before if replayed else None,
                self.parse_config)

    def archive(self, results: Sequence[FetchResult]) -> None:
        """Archive fresh fetches (and the validators of live ones) in one committed transaction."""
        began = time.monotonic()
        origin = "replay" if self.mode == "replay" else "live"
        with self.conn.transaction():
            self.fetch_ids.update(archive_fetches_isolated(self.conn, results, self.partition_start, origin))
            validators = [r for r in results if self.mode == "live" and r.status in ("ok", "not_modified")]
            if validators:
                self.conn.execute(load_sql("ingest_sources_update_validators"), {
                    "ids": [r.source_id for r in validators], "etags": _pg_texts(r.etag for r in validators),
                    "last_modifieds": _pg_texts(r.last_modified for r in validators)})
        self.archive_seconds += time.monotonic() - began


def _ingest_locked(conn, sources, partition_start, mode, fetch_config, parse_config, sync) -> IngestReport:
    configured = {s.id: s for s in sources}
    # 1. Read state (short read transaction).
    archived = load_archived_fetches(conn, partition_start)
    stored = stored_sources(conn, set(configured) | {a.result.source_id for a in archived})
    conn.commit()
    usable_archive: dict[str, list[ArchivedFetch]] = {}
    archived_errors: dict[str, ArchivedFetch] = {}
    for entry in archived:
        if entry.result.status == "error":
            archived_errors[entry.result.source_id] = entry  # the latest error, by order
        else:
            usable_archive.setdefault(entry.result.source_id, []).append(entry)
    archive_entries = [entry for source_id in sorted(usable_archive) for entry in usable_archive[source_id]]
    source_for = {sid: entry[0] for sid, entry in stored.items()}
    source_for.update(configured)
    hour = _HourFetch(conn, partition_start, mode, parse_config, source_for, replay_window(partition_start)[1])

    # 2. Fetch / replay what has no usable archive, and parse.
    to_get = [s for s in sources if s.enabled and s.id not in usable_archive]
    fetched = _fetch_and_parse(hour, sources, to_get, stored, archive_entries, archived_errors, fetch_config, sync)
    # Parse results come in submission order: the archived entries', then the fresh fetches'.
    parsed_fresh_by_id = {result.source_id: parsed
                          for result, parsed in zip(fetched.fresh, fetched.parsed[len(archive_entries):])}
    fresh_results = sorted(fetched.fresh, key=lambda r: r.source_id)

    # 3. Store items, one source's bad data kept to that source.
    started = time.monotonic()
    groups, upserted, counts = _store_parsed(conn, partition_start, archive_entries, fetched.parsed,
                                             fresh_results, parsed_fresh_by_id, hour.fetch_ids, source_for)
    store_seconds = time.monotonic() - started + hour.archive_seconds + fetched.sync_seconds

    # 4. Report, one row per source.
    rows = _report_rows(mode, groups, archive_entries, fresh_results, fetched.missing_rows, archived_errors,
                        usable_archive, hour.fetch_ids, upserted)
    items_seen = len({item.item_id for _, _, parsed, _ in groups for item in parsed.items})
    return IngestReport(
        partition_start=partition_start, mode=mode, rows=tuple(rows), sources_sync=fetched.sync_report,
        items_seen=items_seen, new_items=len(upserted.new_item_ids), partition_items=sum(counts.values()),
        fetch_seconds=round(fetched.fetch_seconds, 3),
        parse_seconds=round(fetched.parse_seconds, 3), store_seconds=round(store_seconds, 3))


@dataclass
class _Fetched:
    fresh: list[FetchResult]
    parsed: list[ParseResult]          # the archived entries' results, then the fresh ones'
    missing_rows: list[SourceIngestRow]
    sync_report: SourceSyncReport | None
    sync_seconds: float
    fetch_seconds: float
    parse_seconds: float


def _fetch_and_parse(hour: _HourFetch, sources, to_get, stored, archive_entries, archived_errors,
                     fetch_config: FetchConfig, sync: bool) -> _Fetched:
    """Fetch / replay what has no usable archive (no transaction open), and parse (worker
    processes, a time budget per feed). Live fetches are parsed as they arrive, each batch of
    arrivals archived and committed first: a source whose body then fails to parse (or kills its
    parser) is re-parsed from there by a rerun."""
    conn, mode = hour.conn, hour.mode
    fresh: list[FetchResult] = []
    missing_rows: list[SourceIngestRow] = []
    fetch_seconds = 0.0
    with ParsePool() as pool:
        pool.submit(hour.job(entry.result, entry.mode == "replay") for entry in archive_entries)
        started = time.monotonic()
        with conn.transaction():
            sync_report = sync_sources(conn, sources) if sync else None
        sync_seconds = time.monotonic() - started
        started = time.monotonic()
        if mode == "live" and to_get:
            outcome = fetch_and_parse(_fetch_requests(to_get, stored), fetch_config, hour.job,
                                      before_parse=hour.archive, pool=pool)
            fresh = [result for result, _ in outcome.pairs]
            fetch_seconds = outcome.fetch_seconds - hour.archive_seconds  # archiving ran in the fetch's wait
        else:
            if mode == "replay" and to_get:
                fresh = replay_fetch_results(to_get, hour.partition_start)
                with_file = {r.source_id for r in fresh}
                missing_rows = [SourceIngestRow(source_id=s.id, origin="none", status="no_replay_file",
                                                error="source has no replay_file")
                                for s in to_get if s.id not in with_file]
            elif mode == "archive":
                for source in to_get:
                    if source.id in archived_errors:
                        continue  # reported below from the archived error
                    missing_rows.append(SourceIngestRow(
                        source_id=source.id, origin="none", status="no_archive",
                        error="no archived fetch for this hour (past hours are never fetched)"))
            fetch_seconds = time.monotonic() - started
            if fresh:
                hour.archive(fresh)
            pool.submit(hour.job(result) for result in fresh)
        started = time.monotonic()
        parsed_all = pool.results()
    parse_seconds = time.monotonic() - started  # what parsing took beyond the fetch it overlapped
    return _Fetched(fresh, parsed_all, missing_rows, sync_report, sync_seconds, max(0.0, fetch_seconds),
                    parse_seconds)


def _fetch_requests(to_get, stored) -> list[FetchRequest]:
    requests = []
    for source in to_get:
        _, etag, last_modified = stored.get(source.id, (None, None, None))
        # Validators belong to the stored URL; a changed feed_url starts fresh.
        same_url = source.id in stored and stored[source.id][0].feed_url == source.feed_url
        requests.append(FetchRequest(source.id, source.feed_url, etag if same_url else None,
                                     last_modified if same_url else None, allow_private=source.allow_private))
    return requests


def _store_parsed(conn, partition_start, archive_entries, parsed_all, fresh_results, parsed_fresh_by_id, fetch_ids,
                  source_for):
    """Upsert every source's items and record the parse outcomes in one transaction. Returns the
    groups as stored, the upsert outcome and the hour's item counts."""
    # (source_id, fetch_id, parsed, record the outcome on the fetch row) in a fixed order,
    # so that the first source of a shared item is the same in every run.
    groups: list[tuple[str, int, ParseResult, bool]] = []
    for entry, parsed in zip(archive_entries, parsed_all):
        groups.append((entry.result.source_id, entry.fetch_id, parsed, True))
    for result in fresh_results:
        parsed = parsed_fresh_by_id[result.source_id]
        if result.source_id in fetch_ids:
            groups.append((result.source_id, fetch_ids[result.source_id], parsed, result.status == "ok"))
    with conn.transaction():
        feed_outlets = {sid: source.own_outlet for sid, source in source_for.items()}
        groups, upserted = _store_groups(conn, groups, partition_start, feed_outlets)
        crash_point("raw_items.after_upsert")
        record_parse_outcomes(conn, {fetch_id: parsed for _, fetch_id, parsed, record in groups if record})
        counts = partition_item_counts(conn, partition_start)
    return groups, upserted, counts


def _report_rows(mode, groups, archive_entries, fresh_results, missing_rows, archived_errors, usable_archive,
                 fetch_ids, upserted) -> list[SourceIngestRow]:
    """One row per source: archived fetches re-parsed, fresh fetches, and (archive mode) archived errors."""
    parsed_archives: list[tuple[ArchivedFetch, ParseResult]] = list(
        zip(archive_entries, [g[2] for g in groups[:len(archive_entries)]]))
    parsed_by_fresh = {g[0]: g[2] for g in groups[len(archive_entries):]}
    rows: list[SourceIngestRow] = list(missing_rows)
    by_source: dict[str, list[tuple[ArchivedFetch, ParseResult]]] = {}
    for entry, parsed in parsed_archives:
        by_source.setdefault(entry.result.source_id, []).append((entry, parsed))
    for source_id, entries in sorted(by_source.items()):
        last = entries[-1][0]
        rows.append(_source_row(source_id, "archive", last.result, last.fetch_id, [p for _, p in entries], upserted))
    for result in fresh_results:
        parsed = parsed_by_fresh.get(result.source_id, ParseResult(source_id=result.source_id))
        rows.append(_source_row(result.source_id, "replayed" if mode == "replay" else "fetched", result,
                                fetch_ids.get(result.source_id), [parsed] if result.status == "ok" else [], upserted))
    if mode == "archive":
        for source_id, entry in sorted(archived_errors.items()):
            if source_id not in usable_archive:
                rows.append(_source_row(source_id, "archive", entry.result, entry.fetch_id, [], upserted))
    rows.sort(key=lambda r: r.source_id)
    return rows


def _source_row(source_id, origin, result: FetchResult, fetch_id, parsed_list: list[ParseResult],
                upserted: UpsertOutcome) -> SourceIngestRow:
    items = {item.item_id for parsed in parsed_list for item in parsed.items}
    skipped: dict[str, int] = {}
    for parsed in parsed_list:
        for reason, count in parsed.skipped_counts.items():
            skipped[reason] = skipped.get(reason, 0) + count
    repairs: dict[str, int] = {}
    for parsed in parsed_list:
        for kind, count in parsed.repairs.items():
            repairs[kind] = repairs.get(kind, 0) + count
    parse_error = next((p.error for p in parsed_list if p.error), None)
    statuses = [parse_status(p) for p in parsed_list]
    status_of_parse = next((st for st in ("failed", "partial", "ok") if st in statuses), None)
    return SourceIngestRow(
        source_id=source_id, origin=origin, status=result.status, http_status=result.http_status,
        fetch_id=fetch_id, entries=sum(p.entry_count for p in parsed_list), items=len(items),
        new_items=sum(1 for i in items if upserted.new_item_sources.get(i) == source_id),
        new_links=sum(1 for i in items if (i, source_id) in upserted.new_links),
        error=result.error or parse_error, bozo_error=next((p.bozo_error for p in parsed_list if p.bozo_error), None),
        skipped=skipped, elapsed_ms=result.elapsed_ms, attempts=result.attempts,
        parse_status=status_of_parse if result.body is not None else None,
        repairs=repairs)


def ingest_jsonl_partition(conn: psycopg.Connection, path: str | Path, partition_start: datetime, *,
                           parse_config: ParseConfig = ParseConfig()) -> IngestReport:
    """Ingest the rows of a JSON-lines dump published in hour H (evaluation
    data; no feed bodies, so nothing is archived). Its sources are upserted
    without disabling the configured ones."""
    partition_start = _utc_hour(partition_start)
    started = time.monotonic()
    part = load_jsonl_partition(path, partition_start, config=parse_config)
    parse_seconds = time.monotonic() - started
    started = time.monotonic()
    with conn.transaction():
        sync_report = sync_sources(conn, part.sources, disable_missing=False)
        upserted = upsert_items(conn, [(item, None) for item in part.items], partition_start,
                                feed_outlets={s.id: s.own_outlet for s in part.sources})
        counts = partition_item_counts(conn, partition_start)
    per_source: dict[str, list[ParsedItem]] = {}
    for item in part.items:
        per_source.setdefault(item.source_id, []).append(item)
    rows = tuple(
        SourceIngestRow(source_id=sid, origin="replayed", status="ok", entries=len(items), items=len(items),
                        new_items=sum(1 for i in items if upserted.new_item_sources.get(i.item_id) == sid),
                        new_links=sum(1 for i in items if (i.item_id, sid) in upserted.new_links))
        for sid, items in sorted(per_source.items()))
    return IngestReport(
        partition_start=partition_start, mode="replay", rows=rows, sources_sync=sync_report,
        items_seen=len(part.items), new_items=len(upserted.new_item_ids), partition_items=sum(counts.values()),
        fetch_seconds=0.0, parse_seconds=round(parse_seconds, 3), store_seconds=round(time.monotonic() - started, 3))


def reparse_partition(conn: psycopg.Connection, sources: Sequence[Source], partition_start: datetime, *,
                      parse_config: ParseConfig = ParseConfig()) -> IngestReport:
    """Backfill hour H from its archive only (never fetches)."""
    return ingest_partition(conn, sources, partition_start, mode="archive", parse_config=parse_config)


__all__ = [
    "ArchivedFetch", "IngestReport", "LIVE_GRACE", "SourceIngestRow", "SourceSyncReport", "UpsertOutcome",
    "archive_fetches", "archive_fetches_isolated", "choose_mode", "claim_key", "configs_for", "parse_status", "pg_text",
    "compress_body", "ingest_jsonl_partition", "ingest_partition",
    "load_archived_fetches", "partition_item_counts", "record_parse_outcomes", "reparse_partition",
    "stored_sources", "sync_sources", "upsert_items",
]
