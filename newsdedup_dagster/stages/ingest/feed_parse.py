"""Parse fetched feed bytes into clean, deduplicated items.

`parse_feed(body, ...)` decodes the bytes (choosing the encoding ourselves,
see `decode_feed_bytes`), runs feedparser on a UTF-8 copy, and turns each
entry into a `ParsedItem`: plain-text title/summary/content (HTML stripped,
entities decoded, whitespace normalised, <script>/<style> dropped), resolved
and canonical URL, stable item id, UTC `published_at` with anomalies clamped
and flagged, and a language. Entries that cannot become an item are listed
in `skipped` with a reason; a malformed feed keeps whatever parsed and
records the parser's complaint in `bozo_error`.

Hostile input is bounded before it reaches feedparser or an HTML parser:
DOCTYPE and ENTITY declarations are removed (no entity expansion), character
references outside Unicode, surrogates and control characters are replaced,
a feed with more than `max_entries` entries keeps the newest, every field is
cut to `max_field_chars` before markup is stripped (by a linear scanner, not
html.parser, which is quadratic on unclosed comments), links and GUIDs are
length-capped and validated, and one entry that still fails is skipped with
reason `entry_error` while the others are kept. `parse_many` runs each feed
in a worker process with a hard time budget (parse_pool.py). What was repaired is counted in
`ParseResult.repairs`. Decoding is in encoding.py, markup and hostile-document handling in
sanitise.py, the settings and result types in parse_types.py.

Pure: no network, no database. The same bytes and arguments give the same
result.
"""

from __future__ import annotations

import calendar
import hashlib
import io
import re
import time
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import feedparser

from newsdedup_dagster.shared.http.canonical_url import LinkRefused, browser_url, canonical_url, item_id, outlet_of
from newsdedup_dagster.shared.sources import normalise_language
from newsdedup_dagster.shared.text.cleaning import clean_model_text
from newsdedup_dagster.shared.text.encoding import as_utf8_document, decode_feed_bytes
from newsdedup_dagster.shared.text.language import detect_language
from newsdedup_dagster.shared.text.sanitise import cap_entries, clean_text, sanitise_document, title_from_summary
from newsdedup_dagster.stages.ingest.parse_types import ParseConfig, ParsedItem, ParseResult, SkippedEntry

if TYPE_CHECKING:
    from newsdedup_dagster.shared.http.fetch import FetchResult
    from newsdedup_dagster.shared.sources import Source


def _struct_to_datetime(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromtimestamp(calendar.timegm(value), tz=UTC)
    except (OverflowError, ValueError, TypeError, OSError):
        return None


def _entry_date(entry: Mapping, fetched_at: datetime) -> tuple[datetime | None, str, str | None]:
    """(raw date or None, origin, flag) before clamping."""
    for key in ("published", "updated", "created"):
        parsed = _struct_to_datetime(entry.get(f"{key}_parsed"))
        if parsed is not None:
            return parsed, "published" if key == "published" else "updated", None
    had_text = any(entry.get(key) for key in ("published", "updated", "created"))
    return None, "fetched", "unparseable" if had_text else "missing"


_ABSOLUTE_HTTP = re.compile(r"^https?://[^/\s]+", re.IGNORECASE)
# WHATWG URL parsing: tab and newline are removed anywhere; other controls never belong in a link.
_URL_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200d\u2060\ufeff\ud800-\udfff]")


class ParseBudgetExceeded(Exception):
    pass


def one_line(text: str, limit: int = 300) -> str:
    text = clean_model_text(" ".join(str(text).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def synthetic_id(source_id: str, key: str) -> str:
    return f"urn:newsdedup:{source_id}:{hashlib.sha1(key.encode('utf-8', 'replace')).hexdigest()[:20]}"


def _resolve_link(base_url: str | None, link: Any, max_chars: int = 2_048) -> str | None:
    """An absolute http(s) URL with a host, as a browser reads it (canonical_url.browser_url), or
    None. Controls are removed first; a link longer than max_chars, or one with userinfo, is refused."""
    if not link or not isinstance(link, str):
        return None
    if len(link) > max_chars * 2:
        return None
    link = _URL_CONTROL.sub("", link).strip()
    try:
        link = browser_url(link, base_url if base_url and not _ABSOLUTE_HTTP.match(link) else None)
    except LinkRefused:
        return None
    return link if len(link) <= max_chars else None


def _entry_language(entry: Mapping, feed_language: str | None) -> str | None:
    for detail_key in ("title_detail", "summary_detail"):
        detail = entry.get(detail_key) or {}
        code = normalise_language(detail.get("language"))
        if code and code != feed_language:
            return code
    return normalise_language(entry.get("language"))


def _entry_content(entry: Mapping, max_chars: int, max_field_chars: int) -> str:
    parts = []
    budget = max_field_chars
    for block in entry.get("content") or []:
        value = block.get("value") if isinstance(block, Mapping) else None
        if value and budget > 0:
            parts.append(clean_text(value, max_field_chars=budget))
            budget -= len(value)
    return clean_text(" ".join(parts), max_chars, max_field_chars)


def _bounded_guid(value: Any, config: ParseConfig, repairs: Counter) -> str | None:
    guid = clean_text(value, max_field_chars=config.max_field_chars) or None
    if guid is not None and len(guid) > config.max_guid_chars:
        # Cut, but keep it unique: the hash of the whole GUID ends the cut one.
        digest = hashlib.sha1(guid.encode("utf-8", "replace")).hexdigest()[:20]
        guid = f"{guid[: config.max_guid_chars - 22]}…#{digest}"
        repairs["guids_cut"] += 1
    return guid


def _parsed_timestamp(entry: Mapping) -> float:
    for key in ("published_parsed", "updated_parsed", "created_parsed"):
        value = entry.get(key)
        if value:
            try:
                return float(calendar.timegm(value))
            except (OverflowError, ValueError, TypeError):
                continue
    return float("-inf")


def parse_feed(
    body: bytes,
    *,
    source_id: str,
    fetched_at: datetime,
    content_type: str | None = None,
    headers: Mapping[str, str] | None = None,
    base_url: str | None = None,
    source_language: str | None = None,
    visible_before: datetime | None = None,
    config: ParseConfig = ParseConfig(),
) -> ParseResult:
    """Parse one feed body. Never raises for bad input: a failure of the
    whole feed is `ParseResult.error`, a failure of one entry is a skipped
    entry with reason `entry_error`.

    `fetched_at` dates undated entries and bounds future/old dates.
    `base_url` (the final URL after redirects) resolves relative links when
    the feed has no xml:base. `visible_before` (replay) keeps only entries
    published before that instant: what the feed showed at that time.
    """
    if fetched_at.tzinfo is None:
        raise ValueError("fetched_at must be timezone-aware")
    deadline = time.monotonic() + config.time_budget
    try:
        return _parse_feed(body, source_id, fetched_at.astimezone(UTC), content_type, headers, base_url,
                           source_language, visible_before, config, deadline)
    except ParseBudgetExceeded as exc:
        return ParseResult(source_id=source_id, error=f"parse time budget of {config.time_budget:g}s exceeded{exc}")
    except (MemoryError, RecursionError) as exc:
        return ParseResult(source_id=source_id, error=f"parse failed: {type(exc).__name__}")
    except Exception as exc:  # a parser bug on hostile bytes fails this feed only
        return ParseResult(source_id=source_id, error=one_line(f"parse failed: {type(exc).__name__}: {exc}"))


def _parse_feed(body, source_id, fetched_at, content_type, headers, base_url, source_language, visible_before,
                config: ParseConfig, deadline: float) -> ParseResult:
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    content_type = content_type or headers.get("content-type")
    if not body or not body.strip():
        return ParseResult(source_id=source_id, error="empty body: nothing to parse")

    # 1. Bytes to a clean document: decoded, repaired, capped at max_entries.
    text, encoding, encoding_note = decode_feed_bytes(body, content_type, source_language)
    text, document_repairs = sanitise_document(text)
    repairs: Counter = Counter(document_repairs)
    text, dropped_before = cap_entries(text, config.max_entries)
    media_type = _media_type(content_type) or "application/xml"
    # 2. feedparser.
    parsed = _feedparser_parse(text, media_type, headers, base_url)
    del text

    # 3. The feed's own fields; a document without a feed is an error of the whole feed.
    bozo_error = _bozo_error(parsed, repairs)
    feed = parsed.get("feed") or {}
    feed_language = normalise_language(feed.get("language")) or normalise_language(headers.get("content-language"))
    feed_title = clean_text(feed.get("title"), config.max_title_chars, config.max_field_chars) or None
    entries = parsed.get("entries") or []
    version = parsed.get("version") or None
    entry_count = len(entries) + dropped_before
    if not entries and not version:
        return ParseResult(source_id=source_id, feed_title=feed_title, encoding=encoding,
                           encoding_note=encoding_note, bozo_error=bozo_error,
                           error=_not_a_feed(body, media_type, bozo_error), repairs=dict(repairs))

    # 4. The entries: capped again (tags that did not pair up), then one item or skip each.
    skipped: list[SkippedEntry] = []
    entries, dropped_after = _newest_entries(entries, config.max_entries)
    dropped = dropped_before + dropped_after
    if dropped:
        skipped.append(SkippedEntry(-1, None, "over_entry_cap",
                                    f"{dropped} older entries beyond the cap of {config.max_entries} dropped"))
    items = _entry_items(entries, deadline, skipped, repairs, source_id=source_id, fetched_at=fetched_at,
                         base_url=base_url, source_language=source_language, feed_language=feed_language,
                         visible_before=visible_before, config=config)

    counts = Counter(skip.reason for skip in skipped if skip.reason != "over_entry_cap")
    if dropped:
        counts["over_entry_cap"] = dropped
    return ParseResult(
        source_id=source_id, items=tuple(items), skipped=tuple(skipped), entry_count=entry_count,
        feed_title=feed_title, feed_language=feed_language, feed_format=version, encoding=encoding,
        encoding_note=encoding_note, bozo_error=bozo_error, skipped_counts=dict(counts),
        repairs={k: v for k, v in repairs.items() if v},
    )


def _feedparser_parse(text: str, media_type: str, headers: Mapping[str, str], base_url: str | None):
    parser_headers = {"content-type": f"{media_type}; charset=utf-8"}
    # Given a base, feedparser urljoins every link and guid (~20 % of its time,
    # cProfile of parse_feed on bench/ingest.py feeds). Without xml:base in the
    # document that only repeats _resolve_link (links against the feed URL,
    # http(s) kept); with xml:base, feedparser's scoping of it needs the base.
    if base_url and "xml:base" in text:
        parser_headers["content-location"] = base_url
    if headers.get("content-language"):
        parser_headers["content-language"] = one_line(headers["content-language"], 100)
    # A stream, never the bytes: feedparser treats a str/bytes argument that
    # looks like a path or URL as something to open. Its HTML sanitiser and
    # relative-URI rewriting inside HTML are off: we reduce all HTML to plain
    # text ourselves (dropping <script>/<style> content), and both passes cost
    # ~25 % of parse time (cProfile of parse_feed on a 2,000-entry
    # tests/feedserver.rss_entries feed: 1.75 s -> 1.31 s). Entry links are
    # resolved by feedparser when the feed uses xml:base, then against the feed URL.
    return feedparser.parse(io.BytesIO(as_utf8_document(text)), response_headers=parser_headers,
                            resolve_relative_uris=False, sanitize_html=False)


def _bozo_error(parsed, repairs: Counter) -> str | None:
    """What feedparser found malformed, and whether declarations were removed before parsing."""
    bozo_error = None
    if parsed.get("bozo"):
        exc = parsed.get("bozo_exception")
        bozo_error = one_line(f"{type(exc).__name__}: {exc}") if exc is not None else "malformed feed"
    if repairs.get("declarations_removed"):
        note = "DOCTYPE/ENTITY declarations removed before parsing"
        bozo_error = f"{note}; {bozo_error}" if bozo_error else note
    return bozo_error


def _not_a_feed(body: bytes, media_type: str, bozo_error: str | None) -> str:
    head = body[:2048].decode("latin-1").lower()
    if "<html" in head or media_type in ("text/html", "application/xhtml+xml"):
        return f"not a feed: got an HTML page ({media_type or 'no content type'})"
    if bozo_error:
        return f"not a feed: {bozo_error}"
    return "not a feed: no RSS, Atom or RDF root element"


def _newest_entries(entries: list, max_entries: int) -> tuple[list, int]:
    """At most max_entries entries, the newest by date (ties: document order); and how many were dropped."""
    if max_entries <= 0 or len(entries) <= max_entries:
        return entries, 0
    order = sorted(range(len(entries)), key=lambda i: (-_parsed_timestamp(entries[i]), i))
    keep = sorted(order[:max_entries])
    return [entries[i] for i in keep], len(entries) - len(keep)


def _entry_items(entries: list, deadline: float, skipped: list[SkippedEntry], repairs: Counter,
                 **context) -> list[ParsedItem]:
    """Each entry as an item, or a skip appended to `skipped`; one entry's surprise skips that entry only."""
    items: list[ParsedItem] = []
    seen_guids: set[str] = set()
    seen_ids: set[str] = set()
    for index, entry in enumerate(entries):
        if time.monotonic() > deadline:
            raise ParseBudgetExceeded(f" (after {index} of {len(entries)} entries)")
        try:
            outcome = _entry_item(entry, index, seen_guids=seen_guids, seen_ids=seen_ids, repairs=repairs, **context)
        except Exception as exc:
            outcome = SkippedEntry(index, None, "entry_error", one_line(f"{type(exc).__name__}: {exc}", 200))
        if isinstance(outcome, SkippedEntry):
            skipped.append(outcome)
        else:
            items.append(outcome)
    return items


def _entry_item(entry: Mapping, index: int, *, source_id: str, fetched_at: datetime, base_url: str | None,
                source_language: str | None, feed_language: str | None, visible_before: datetime | None,
                config: ParseConfig, seen_guids: set[str], seen_ids: set[str],
                repairs: Counter) -> ParsedItem | SkippedEntry:
    """One entry as an item, or why it is skipped."""
    cap = config.max_field_chars
    guid = _bounded_guid(entry.get("id"), config, repairs)
    raw_title_value = entry.get("title")
    for value in (raw_title_value, entry.get("summary")):
        if isinstance(value, str) and len(value) > cap:
            repairs["fields_cut"] += 1
    raw_title = clean_text(raw_title_value, config.max_title_chars, cap)
    summary = clean_text(entry.get("summary"), config.max_summary_chars, cap)
    content = _entry_content(entry, config.max_content_chars, cap)

    raw_date, date_origin, date_flag = _entry_date(entry, fetched_at)
    if visible_before is not None and raw_date is not None and raw_date >= visible_before:
        return SkippedEntry(index, guid, "after_window", raw_date.isoformat())

    if guid is not None:
        if guid in seen_guids:
            return SkippedEntry(index, guid, "duplicate_guid", "same guid earlier in this feed")
        seen_guids.add(guid)

    title, title_origin = raw_title, "title"
    if not title:
        fallback_text = summary or content
        if not fallback_text:
            return SkippedEntry(index, guid, "no_title", "entry has neither title nor summary")
        title, title_origin = title_from_summary(fallback_text, config.synthetic_title_chars), "summary"

    raw_link = entry.get("link")
    url = _resolve_link(base_url, raw_link, config.max_url_chars)
    if url is None and raw_link:
        repairs["links_dropped"] += 1
    if url is None and guid and _ABSOLUTE_HTTP.match(guid):
        url = _resolve_link(None, guid, config.max_url_chars)
    canonical = None
    if url is not None:
        canonical = canonical_url(url)
        if len(canonical) > config.max_url_chars:
            canonical, url = None, None
            repairs["links_dropped"] += 1
    if canonical is None:
        # No usable URL: a stable id from the source and the guid (or, without
        # a guid, the title), so a rerun gives the same id.
        key = guid or raw_title
        if not key:
            return SkippedEntry(index, guid, "no_identity", "no link, guid or title")
        canonical = synthetic_id(source_id, key)
    identifier = item_id(canonical)
    if identifier in seen_ids:
        return SkippedEntry(index, guid, "duplicate_url", canonical[:200])
    seen_ids.add(identifier)

    if raw_date is None:
        published_at = fetched_at
    elif raw_date > fetched_at + config.max_future_skew:
        published_at, date_origin, date_flag = fetched_at, "fetched", "future_clamped"
    elif raw_date < config.min_date or raw_date < fetched_at - config.max_age:
        published_at, date_origin, date_flag = fetched_at, "fetched", "too_old_clamped"
    else:
        published_at = raw_date
    published_at = published_at.replace(microsecond=0)

    language = _entry_language(entry, feed_language)
    language_origin = "entry"
    if language is None and feed_language:
        language, language_origin = feed_language, "feed"
    if language is None and source_language:
        language, language_origin = normalise_language(source_language), "source"
    if language is None and config.detect_language:
        sample = f"{title} {summary}".strip()
        language = detect_language(sample) if len(sample) >= config.min_detect_chars else None
        language_origin = "detected" if language else "unknown"
    if language is None:
        language_origin = "unknown"

    return ParsedItem(
        item_id=identifier, source_id=source_id, guid=guid, url=url, canonical_url=canonical,
        title=title, summary=summary or None, content=(content or None) if content != summary else None,
        author=clean_text(entry.get("author"), 300, cap) or None, published_at=published_at,
        date_origin=date_origin, date_flag=date_flag, language=language, language_origin=language_origin,
        title_origin=title_origin, outlet=outlet_of(url),
    )


def parse_fetch_result(result: FetchResult, source: Source | None = None, *,
                       visible_before: datetime | None = None, config: ParseConfig = ParseConfig()) -> ParseResult:
    """Parse a FetchResult (live, archived or replayed). Non-'ok' results
    (304, errors) give an empty ParseResult: nothing new to parse."""
    if result.status != "ok" or result.body is None:
        return ParseResult(source_id=result.source_id)
    base_url = result.final_url if result.final_url and _ABSOLUTE_HTTP.match(result.final_url) else None
    if base_url is None and source is not None:
        base_url = source.feed_url  # replay: relative links resolve against the real feed's URL
    return parse_feed(
        result.body, source_id=result.source_id, fetched_at=result.fetched_at,
        content_type=result.content_type, headers=result.headers, base_url=base_url,
        source_language=source.language if source is not None else None,
        visible_before=visible_before, config=config,
    )
