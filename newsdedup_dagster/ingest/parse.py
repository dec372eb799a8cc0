"""Parse fetched feed bytes into clean, deduplicated items.

`parse_feed(body, ...)` decodes the bytes (choosing the encoding ourselves,
see `decode_feed_bytes`), runs feedparser on a UTF-8 copy, and turns each
entry into a `ParsedItem`: plain-text title/summary/content (HTML stripped,
entities decoded, whitespace normalised, <script>/<style> dropped), resolved
and canonical URL, stable item id, UTC `published_at` with anomalies clamped
and flagged, and a language. Entries that cannot become an item are listed
in `skipped` with a reason; a malformed feed keeps whatever parsed and
records the parser's complaint in `bozo_error`.

Pure: no network, no database. The same bytes and arguments give the same
result.
"""

from __future__ import annotations

import calendar
import codecs
import hashlib
import io
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import feedparser

from .canonical_url import canonical_url, item_id
from .sources import normalise_language

if TYPE_CHECKING:
    from .fetch import FetchResult
    from .sources import Source

# ---------------------------------------------------------------- config


@dataclass(frozen=True)
class ParseConfig:
    # Clock skew tolerated before a future date is clamped: feeds that label
    # local time as UTC put items hours ahead; 15 min covers honest skew only.
    max_future_skew: timedelta = timedelta(minutes=15)
    # Dates older than this (relative to fetch time) are treated as bogus
    # and clamped; a year keeps genuine old-but-republished stories dated.
    max_age: timedelta = timedelta(days=365)
    min_date: datetime = datetime(1995, 1, 1, tzinfo=timezone.utc)  # before RSS existed
    max_title_chars: int = 500
    max_summary_chars: int = 5_000
    max_content_chars: int = 100_000
    synthetic_title_chars: int = 100  # title made from the summary's first words when a title is missing
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


@dataclass(frozen=True)
class SkippedEntry:
    index: int  # position in the feed
    guid: str | None
    reason: str  # 'no_title' | 'no_identity' | 'duplicate_guid' | 'duplicate_url' | 'after_window'
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
    error: str | None = None  # fatal: not a feed at all (HTML page, empty body, ...)
    skipped_counts: dict[str, int] = field(default_factory=dict)


# ---------------------------------------------------------------- text cleaning

_DROP_CONTENT_TAGS = frozenset({"script", "style", "noscript", "template", "iframe", "object", "svg", "math", "head"})
_BREAK_TAGS = frozenset({
    "br", "p", "div", "li", "ul", "ol", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6",
    "blockquote", "section", "article", "header", "footer", "figure", "figcaption", "hr", "pre", "table",
})
_LOOKS_LIKE_MARKUP = re.compile(r"<[a-zA-Z/!][^<>]*>|&(?:#\d+|#x[0-9a-fA-F]+|[a-zA-Z][a-zA-Z0-9]{1,31});")
# C0/C1 controls and invisible format characters that only break matching.
_INVISIBLE = re.compile(r"[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200b-\u200d\u2060\ufeff\u00ad]")


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip_depth = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in _DROP_CONTENT_TAGS:
            self._skip_depth += 1
        elif tag in _BREAK_TAGS:
            self.parts.append(" ")

    def handle_startendtag(self, tag: str, attrs: Any) -> None:
        if tag in _BREAK_TAGS:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROP_CONTENT_TAGS:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag in _BREAK_TAGS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._skip_depth:
            self.parts.append(data)


def _strip_html_once(text: str) -> str:
    extractor = _TextExtractor()
    extractor.feed(text)
    extractor.close()
    return "".join(extractor.parts)


def clean_text(value: Any, max_chars: int | None = None) -> str:
    """HTML/entities -> plain text, one line, NFC, invisible characters removed.

    Runs a second pass when the first leaves markup behind: feeds often
    escape their HTML twice (`&amp;lt;b&amp;gt;`, `AT&amp;amp;T`)."""
    if value is None:
        return ""
    text = str(value)
    for _ in range(2):
        if not _LOOKS_LIKE_MARKUP.search(text) and "<" not in text:
            break
        text = _strip_html_once(text)
    text = _INVISIBLE.sub("", unicodedata.normalize("NFC", text))
    text = " ".join(text.split())
    if max_chars is not None and len(text) > max_chars:
        text = text[: max_chars - 1].rstrip() + "…"
    return text


def _title_from_summary(summary: str, max_chars: int) -> str:
    if len(summary) <= max_chars:
        return summary
    cut = summary[:max_chars]
    # Cut at a word boundary when the text has spaces (not for CJK runs).
    if " " in cut[max_chars // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:-") + "…"


# ---------------------------------------------------------------- encodings

# Labels mapped to the superset decoder browsers use (WHATWG Encoding
# Standard): servers that say gb2312/shift_jis/euc-kr/iso-8859-1 nearly
# always serve the Windows superset.
_SUPERSET = {
    "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "cp936": "gb18030", "euc-cn": "gb18030",
    "shift_jis": "cp932", "shift-jis": "cp932", "sjis": "cp932", "x-sjis": "cp932", "ms_kanji": "cp932",
    "windows-31j": "cp932",
    "euc-kr": "cp949", "ks_c_5601-1987": "cp949", "ksc5601": "cp949", "windows-949": "cp949",
    "big5": "big5hkscs", "x-big5": "big5hkscs",
    "iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252",
    "iso-8859-9": "cp1254", "iso-8859-11": "cp874", "tis-620": "cp874",
}
_MULTIBYTE = frozenset({"cp932", "euc_jp", "cp949", "gb18030", "big5hkscs", "utf-16", "utf-32", "johab",
                        "iso2022_jp", "iso2022_kr", "hz", "utf_8"})
# Legacy encoding most used for each language, the tie-breaker when nothing
# is declared (same idea as a browser's locale default).
_LEGACY_BY_LANGUAGE = {
    "ja": "cp932", "ko": "cp949", "zh": "gb18030", "ru": "cp1251", "uk": "cp1251", "bg": "cp1251",
    "sr": "cp1251", "mk": "cp1251", "be": "cp1251", "pl": "cp1250", "cs": "cp1250", "sk": "cp1250",
    "hu": "cp1250", "sl": "cp1250", "hr": "cp1250", "ro": "cp1250", "el": "cp1253", "tr": "cp1254",
    "he": "cp1255", "ar": "cp1256", "fa": "cp1256", "th": "cp874", "vi": "cp1258", "lt": "cp1257",
    "lv": "cp1257", "et": "cp1257",
}
_XML_DECL_RE = re.compile(rb"^\s*<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._:-]+)[\"']", re.IGNORECASE)
_XML_DECL_ENCODING_TEXT_RE = re.compile(r"^(\s*<\?xml[^>]*?encoding\s*=\s*)([\"'])[^\"']*\2", re.IGNORECASE)
_META_CHARSET_RE = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([A-Za-z0-9._:-]+)", re.IGNORECASE)


def _codec_name(label: str | bytes | None) -> str | None:
    """Normalised Python codec name for a declared label, None if unknown."""
    if not label:
        return None
    if isinstance(label, bytes):
        label = label.decode("ascii", errors="replace")
    label = label.strip().strip("\"'").lower()
    label = _SUPERSET.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def _charset_from_content_type(content_type: str | None) -> str | None:
    if not content_type:
        return None
    match = re.search(r"charset\s*=\s*[\"']?([^\s;\"']+)", content_type, re.IGNORECASE)
    return match.group(1) if match else None


def _strict(body: bytes, codec: str) -> str | None:
    try:
        return body.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


def _detector_guess(body: bytes) -> str | None:
    try:
        import charset_normalizer
    except ImportError:  # optional: without it we fall back to the language default
        return None
    best = charset_normalizer.from_bytes(body[:200_000]).best()
    return _codec_name(best.encoding) if best is not None else None


def decode_feed_bytes(body: bytes, content_type: str | None = None, language_hint: str | None = None
                      ) -> tuple[str, str, str | None]:
    """Choose the encoding of a feed and decode it. Returns (text, codec, note).

    Order, and why:
    1. a byte-order mark is unambiguous;
    2. valid UTF-8 with non-ASCII bytes is UTF-8 whatever is declared (other
       encodings' text is practically never valid UTF-8), except a declared
       7-bit ISO-2022 encoding whose escapes are plain ASCII;
    3. a declared multi-byte encoding (XML declaration first, since the CMS
       that wrote the bytes wrote it; then the HTTP charset) that decodes
       without error;
    4. a declared single-byte encoding decodes almost anything, so it is
       kept unless the detector finds a multi-byte encoding that decodes
       cleanly (EUC-KR or GBK served as "ISO-8859-1");
    5. nothing usable declared: detector's multi-byte guess, else the
       source language's legacy encoding (Windows-1252 for Western
       languages), else the detector's guess, else Windows-1252 with
       replacement characters.
    """
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                       (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                       (codecs.BOM_UTF16_BE, "utf-16")):
        if body.startswith(bom):
            return body.decode(codec, errors="replace"), codec.replace("-sig", ""), "byte-order mark"
    xml_match = _XML_DECL_RE.match(body[:1024])
    meta_match = None if xml_match else _META_CHARSET_RE.search(body[:4096])
    declared = [c for c in (_codec_name(xml_match.group(1)) if xml_match else None,
                            _codec_name(_charset_from_content_type(content_type)),
                            _codec_name(meta_match.group(1)) if meta_match else None) if c]
    declared = list(dict.fromkeys(declared))
    for codec in declared:
        if codec.startswith("iso2022") or codec in ("hz", "utf-7"):
            text = _strict(body, codec)
            if text is not None:
                return text, codec, None
    text = _strict(body, "utf-8")
    if text is not None:
        note = None if not declared or declared[0] == "utf-8" or body.isascii() else \
            f"declared {declared[0]} but the bytes are valid UTF-8"
        return text, "utf-8", note
    for codec in declared:
        if codec in _MULTIBYTE:
            text = _strict(body, codec)
            if text is not None:
                return text, codec, None if codec == declared[0] else f"first declared {declared[0]} did not decode"
    single_byte = [codec for codec in declared if codec not in _MULTIBYTE and codec != "utf-8"]
    guess = _detector_guess(body)
    if guess in _MULTIBYTE and guess != "utf_8":
        text = _strict(body, guess)
        if text is not None:
            why = f"declared {'/'.join(declared)} did not fit" if declared else "undeclared"
            return text, guess, f"{why}; detected {guess}"
    for codec in single_byte:
        text = _strict(body, codec)
        if text is not None:
            return text, codec, None
    # Languages without an entry use Windows-1252, the WHATWG default for
    # Western locales (a byte-frequency detector confuses 1250 and 1252).
    legacy = _LEGACY_BY_LANGUAGE.get(language_hint, "cp1252") if language_hint else None
    if legacy:
        text = _strict(body, legacy)
        if text is not None:
            return text, legacy, f"undeclared; legacy encoding of source language {language_hint!r}"
    if guess:
        text = _strict(body, guess)
        if text is not None:
            return text, guess, f"undeclared; detected {guess}"
    fallback = single_byte[0] if single_byte else "cp1252"
    return body.decode(fallback, errors="replace"), fallback, f"no encoding fits; decoded as {fallback} with replacements"


def _as_utf8_document(text: str) -> bytes:
    """UTF-8 bytes whose XML declaration (if any) says utf-8, so feedparser
    sees one consistent encoding."""
    text = _XML_DECL_ENCODING_TEXT_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}utf-8{m.group(2)}", text, count=1)
    return text.encode("utf-8")


# ---------------------------------------------------------------- dates


def _struct_to_datetime(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromtimestamp(calendar.timegm(value), tz=timezone.utc)
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


# ---------------------------------------------------------------- language

_langid_identifier = None


def detect_language(text: str) -> str | None:
    """Offline language guess (py3langid), ISO 639-1 or None."""
    global _langid_identifier
    if not text:
        return None
    if _langid_identifier is None:
        import py3langid

        _langid_identifier = py3langid
    code, _score = _langid_identifier.classify(text)
    return normalise_language(code)


# ---------------------------------------------------------------- parsing

_ABSOLUTE_HTTP = re.compile(r"^https?://[^/\s]+", re.IGNORECASE)


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def _synthetic_id(source_id: str, key: str) -> str:
    return f"urn:newsdedup:{source_id}:{hashlib.sha1(key.encode('utf-8')).hexdigest()[:20]}"


def _resolve_link(base_url: str | None, link: Any) -> str | None:
    if not link or not isinstance(link, str):
        return None
    link = link.strip()
    if base_url and not _ABSOLUTE_HTTP.match(link):
        link = urljoin(base_url, link)
    return link if _ABSOLUTE_HTTP.match(link) else None


def _entry_language(entry: Mapping, feed_language: str | None) -> str | None:
    for detail_key in ("title_detail", "summary_detail"):
        detail = entry.get(detail_key) or {}
        code = normalise_language(detail.get("language"))
        if code and code != feed_language:
            return code
    return normalise_language(entry.get("language"))


def _entry_content(entry: Mapping, max_chars: int) -> str:
    parts = []
    for block in entry.get("content") or []:
        value = block.get("value") if isinstance(block, Mapping) else None
        if value:
            parts.append(clean_text(value))
    return clean_text(" ".join(parts), max_chars)


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
    """Parse one feed body.

    `fetched_at` dates undated entries and bounds future/old dates.
    `base_url` (the final URL after redirects) resolves relative links when
    the feed has no xml:base. `visible_before` (replay) keeps only entries
    published before that instant: what the feed showed at that time.
    """
    if fetched_at.tzinfo is None:
        raise ValueError("fetched_at must be timezone-aware")
    fetched_at = fetched_at.astimezone(timezone.utc)
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    content_type = content_type or headers.get("content-type")
    if not body or not body.strip():
        return ParseResult(source_id=source_id, error="empty body: nothing to parse")

    text, encoding, encoding_note = decode_feed_bytes(body, content_type, source_language)
    media_type = _media_type(content_type) or "application/xml"
    parser_headers = {"content-type": f"{media_type}; charset=utf-8"}
    if base_url:
        parser_headers["content-location"] = base_url
    if headers.get("content-language"):
        parser_headers["content-language"] = headers["content-language"]
    # A stream, never the bytes: feedparser treats a str/bytes argument that
    # looks like a path or URL as something to open. Its HTML sanitiser and
    # relative-URI rewriting inside HTML are off: we reduce all HTML to plain
    # text ourselves (dropping <script>/<style> content), and both passes cost
    # ~25 % of parse time (cProfile of parse_feed on a 2,000-entry
    # tests/feedserver.rss_entries feed: 1.75 s -> 1.31 s). Entry links are
    # still resolved by feedparser (xml:base) and again below (feed URL).
    parsed = feedparser.parse(io.BytesIO(_as_utf8_document(text)), response_headers=parser_headers,
                              resolve_relative_uris=False, sanitize_html=False)

    bozo_error = None
    if parsed.get("bozo"):
        exc = parsed.get("bozo_exception")
        bozo_error = _one_line(f"{type(exc).__name__}: {exc}") if exc is not None else "malformed feed"
    feed = parsed.get("feed") or {}
    feed_language = normalise_language(feed.get("language")) or normalise_language(headers.get("content-language"))
    feed_title = clean_text(feed.get("title"), config.max_title_chars) or None
    entries = parsed.get("entries") or []
    version = parsed.get("version") or None

    if not entries and not version:
        head = text[:2048].lower()
        if "<html" in head or media_type in ("text/html", "application/xhtml+xml"):
            error = f"not a feed: got an HTML page ({media_type or 'no content type'})"
        elif bozo_error:
            error = f"not a feed: {bozo_error}"
        else:
            error = "not a feed: no RSS, Atom or RDF root element"
        return ParseResult(source_id=source_id, feed_title=feed_title, encoding=encoding,
                           encoding_note=encoding_note, bozo_error=bozo_error, error=error)

    effective_base = base_url
    items: list[ParsedItem] = []
    skipped: list[SkippedEntry] = []
    seen_guids: set[str] = set()
    seen_ids: set[str] = set()
    for index, entry in enumerate(entries):
        guid = clean_text(entry.get("id")) or None
        raw_title = clean_text(entry.get("title"), config.max_title_chars)
        summary = clean_text(entry.get("summary"), config.max_summary_chars)
        content = _entry_content(entry, config.max_content_chars)

        raw_date, date_origin, date_flag = _entry_date(entry, fetched_at)
        if visible_before is not None and raw_date is not None and raw_date >= visible_before:
            skipped.append(SkippedEntry(index, guid, "after_window", raw_date.isoformat()))
            continue

        if guid is not None:
            if guid in seen_guids:
                skipped.append(SkippedEntry(index, guid, "duplicate_guid", "same guid earlier in this feed"))
                continue
            seen_guids.add(guid)

        title, title_origin = raw_title, "title"
        if not title:
            fallback_text = summary or content
            if not fallback_text:
                skipped.append(SkippedEntry(index, guid, "no_title", "entry has neither title nor summary"))
                continue
            title, title_origin = _title_from_summary(fallback_text, config.synthetic_title_chars), "summary"

        url = _resolve_link(effective_base, entry.get("link"))
        if url is None and guid and _ABSOLUTE_HTTP.match(guid):
            url = guid
        if url is not None:
            canonical = canonical_url(url)
        else:
            # No URL at all: a stable id from the source and the guid (or, without
            # a guid, the title), so a rerun gives the same id.
            key = guid or raw_title
            if not key:
                skipped.append(SkippedEntry(index, guid, "no_identity", "no link, guid or title"))
                continue
            canonical = _synthetic_id(source_id, key)
        identifier = item_id(canonical)
        if identifier in seen_ids:
            skipped.append(SkippedEntry(index, guid, "duplicate_url", canonical))
            continue
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

        items.append(ParsedItem(
            item_id=identifier, source_id=source_id, guid=guid, url=url, canonical_url=canonical,
            title=title, summary=summary or None, content=(content or None) if content != summary else None,
            author=clean_text(entry.get("author"), 300) or None, published_at=published_at,
            date_origin=date_origin, date_flag=date_flag, language=language, language_origin=language_origin,
            title_origin=title_origin,
        ))

    counts: dict[str, int] = {}
    for skip in skipped:
        counts[skip.reason] = counts.get(skip.reason, 0) + 1
    return ParseResult(
        source_id=source_id, items=tuple(items), skipped=tuple(skipped), entry_count=len(entries),
        feed_title=feed_title, feed_language=feed_language, feed_format=version, encoding=encoding,
        encoding_note=encoding_note, bozo_error=bozo_error, skipped_counts=counts,
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


# ------------------------------------------------------------------ many feeds
# feedparser is pure Python (~0.28 ms per entry here): with hundreds of feeds, parsing, not
# the network, bounds an hourly run. Feeds are independent, so large batches are parsed in
# worker processes. Below this many body bytes, process start-up costs more than it saves
# (bench/ingest.py: 200 feeds x 50 entries = ~4 MB).
PARALLEL_PARSE_MIN_BYTES = 1_000_000


def _parse_job(job):
    result, source, visible_before, config = job
    return parse_fetch_result(result, source, visible_before=visible_before, config=config)


def parse_many(jobs, *, workers: int | None = None):
    """parse_fetch_result over (result, source, visible_before, config) jobs, in order.
    Uses a fork-based process pool for large batches on multi-core machines."""
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    jobs = list(jobs)
    workers = workers or min(len(jobs), os.cpu_count() or 1)
    total = sum(len(job[0].body or b"") for job in jobs)
    if workers < 2 or total < PARALLEL_PARSE_MIN_BYTES or "fork" not in multiprocessing.get_all_start_methods():
        return [_parse_job(job) for job in jobs]
    # fork: children inherit the imported modules (no re-import); they only run pure parsing.
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(_parse_job, jobs, chunksize=max(1, len(jobs) // (workers * 4))))
