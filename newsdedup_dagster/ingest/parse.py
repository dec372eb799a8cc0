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
in a worker process with a hard time budget. What was repaired is counted in
`ParseResult.repairs`.

Pure: no network, no database. The same bytes and arguments give the same
result.
"""

from __future__ import annotations

import calendar
import codecs
import email.utils
import hashlib
import html
import io
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

import feedparser

from .canonical_url import LinkRefused, browser_url, canonical_url, item_id, outlet_of
from ..llm.text import clean_model_text
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
    # Hostile-input bounds (safety limits, not calibrated on data; see README "Hostile input").
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


# ---------------------------------------------------------------- text cleaning

_DROP_CONTENT_TAGS = frozenset({"script", "style", "noscript", "template", "iframe", "object", "svg", "math", "head"})
_BREAK_TAGS = frozenset({
    "br", "p", "div", "li", "ul", "ol", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6",
    "blockquote", "section", "article", "header", "footer", "figure", "figcaption", "hr", "pre", "table",
})
_LOOKS_LIKE_MARKUP = re.compile(r"<[a-zA-Z/!][^<>]*>|&(?:#\d+|#x[0-9a-fA-F]+|[a-zA-Z][a-zA-Z0-9]{1,31});")
# One scan over the text, each character visited a bounded number of times:
# a comment, a tag, a processing instruction / declaration, or a bare "<".
_MARKUP = re.compile(r"<!--|<(/?)([a-zA-Z][a-zA-Z0-9:-]*)[^<>]*>|<[!?][^<>]*>")
_DROP_CLOSERS = {tag: re.compile(rf"</{tag}\s*>", re.IGNORECASE) for tag in _DROP_CONTENT_TAGS}


def _strip_html_once(text: str) -> str:
    """Tags removed (block tags leave a space), <script>-like elements and
    comments dropped with their content, entities decoded. Linear time: an
    unclosed comment or <script> runs to the end of the text, as in browsers,
    instead of being searched for again at every later "<"."""
    parts: list[str] = []
    pos = 0
    while True:
        match = _MARKUP.search(text, pos)
        if match is None:
            parts.append(text[pos:])
            break
        parts.append(text[pos:match.start()])
        token = match.group(0)
        if token == "<!--":
            close = text.find("-->", match.end())
            if close < 0:
                break
            pos = close + 3
            continue
        pos = match.end()
        name = (match.group(2) or "").lower()
        if not name:
            continue
        if not match.group(1) and name in _DROP_CLOSERS and not token.endswith("/>"):
            closer = _DROP_CLOSERS[name].search(text, pos)
            if closer is None:
                break
            pos = closer.end()
            parts.append(" ")
        elif name in _BREAK_TAGS:
            parts.append(" ")
    return html.unescape("".join(parts))


def clean_text(value: Any, max_chars: int | None = None, max_field_chars: int | None = 200_000) -> str:
    """HTML/entities -> plain text, one line, NFC, invisible and direction-changing characters
    removed (llm/text.py's rules, the same as for model output).

    The raw value is first cut to `max_field_chars`, so no field costs more
    than a bounded amount of work, whatever its markup.

    Runs a second pass when the first leaves markup behind: feeds often
    escape their HTML twice (`&amp;lt;b&amp;gt;`, `AT&amp;amp;T`)."""
    if value is None:
        return ""
    text = str(value)
    if max_field_chars is not None and len(text) > max_field_chars:
        text = text[:max_field_chars]
    for _ in range(2):
        if not _LOOKS_LIKE_MARKUP.search(text) and "<" not in text:
            break
        text = _strip_html_once(text)
    # The same rules as model output (llm/text.py): controls, bidi overrides and isolates,
    # zero-width and other invisible format characters, surrogates and noncharacters go.
    text = clean_model_text(unicodedata.normalize("NFC", text))
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


# ---------------------------------------------------------------- hostile documents

_DECLARATION = re.compile(r"<!(?:DOCTYPE|ENTITY)(?=[\s\[>])", re.IGNORECASE)
# Inside a declaration: quoted strings (an unclosed quote runs to the end), brackets, '>'.
_DECLARATION_TOKEN = re.compile(r"""[^"'\[\]>]+|"[^"]*"?|'[^']*'?|[\[\]>]""")
_CHARREF = re.compile(r"&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));?")
# Characters XML 1.0 forbids (raw): C0 controls but tab/LF/CR, surrogates, U+FFFE/U+FFFF.
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _declaration_end(text: str, pos: int) -> int:
    """Index just after the '>' closing a declaration whose body starts at pos
    (the end of the text when it never closes)."""
    depth = 0
    for token in _DECLARATION_TOKEN.finditer(text, pos):
        value = token.group(0)
        if value == "[":
            depth += 1
        elif value == "]":
            depth = max(0, depth - 1)
        elif value == ">" and depth == 0:
            return token.end()
    return len(text)


def _strip_declarations(text: str) -> tuple[str, int]:
    """Remove every <!DOCTYPE ...> (with its internal subset) and <!ENTITY ...>
    declaration: feedparser's loose parser would expand internal entities
    without limit ("billion laughs"). References to the removed entities stay
    as text. Linear: each character is scanned once."""
    match = _DECLARATION.search(text)
    if match is None:
        return text, 0
    parts: list[str] = []
    pos = 0
    removed = 0
    while match is not None:
        parts.append(text[pos:match.start()])
        pos = _declaration_end(text, match.end())
        removed += 1
        match = _DECLARATION.search(text, pos)
    parts.append(text[pos:])
    return "".join(parts), removed


def _valid_xml_codepoint(code: int) -> bool:
    return (code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD
            or 0x10000 <= code <= 0x10FFFF)


def sanitise_document(text: str) -> tuple[str, dict[str, int]]:
    """The document with what no parser should see removed, and what was done.

    * DOCTYPE / ENTITY declarations: removed (see _strip_declarations);
    * character references to code points outside Unicode, surrogates or
      noncharacters (`&#x110000;`, `&#99999999999;`, `&#xD800;`): replaced
      by U+FFFD (feedparser raises on some: `chr() arg not in range`);
      references to control characters: removed;
    * raw control characters, surrogates and U+FFFE/U+FFFF: removed (XML
      forbids them, PostgreSQL refuses NUL).
    """
    repairs: dict[str, int] = {}
    text, removed = _strip_declarations(text)
    if removed:
        repairs["declarations_removed"] = removed
    if "&#" in text:
        replaced = 0

        def fix(match: re.Match) -> str:
            nonlocal replaced
            hex_digits, dec_digits = match.groups()
            digits = hex_digits or dec_digits
            code = int(digits, 16 if hex_digits else 10) if len(digits) <= 8 else -1
            if _valid_xml_codepoint(code):
                return match.group(0)
            replaced += 1
            if 0 <= code < 0x20 or 0x7F <= code <= 0x9F:
                return ""
            return "&#xFFFD;"

        text = _CHARREF.sub(fix, text)
        if replaced:
            repairs["charrefs_replaced"] = replaced
    if _XML_FORBIDDEN.search(text):
        cleaned = _XML_FORBIDDEN.sub("", text)
        repairs["control_chars_removed"] = len(text) - len(cleaned)
        text = cleaned
    return text, repairs


# An entry element's start or end tag, any namespace prefix: <item ...>, </entry>, <atom:entry>.
_ENTRY_TAG = re.compile(r"<(/?)(?:[A-Za-z_][\w.-]*:)?(?:item|entry)(?=[\s/>])([^<>]*)>?", re.IGNORECASE)
_ENTRY_DATE = re.compile(
    r"<(?:[A-Za-z_][\w.-]*:)?(?:pubDate|published|updated|date|modified|issued|created)\b[^<>]*>"
    r"\s*(?:<!\[CDATA\[)?([^<]{1,80})", re.IGNORECASE)


def _block_timestamp(block: str) -> float | None:
    match = _ENTRY_DATE.search(block)
    if match is None:
        return None
    value = match.group(1).strip()
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            parsed = feedparser.datetimes._parse_date(value)  # the parser feedparser itself uses
            return float(calendar.timegm(parsed)) if parsed else None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _newest_first(timestamps: list[float | None]) -> list[int]:
    """Indices of entries, newest first: dated by date (descending), then
    undated ones in document order (feeds list newest first by convention)."""
    return sorted(range(len(timestamps)),
                  key=lambda i: (timestamps[i] is None, -(timestamps[i] or 0.0), i))


def cap_entries(text: str, max_entries: int) -> tuple[str, int]:
    """Keep the newest `max_entries` <item>/<entry> elements of a document,
    cut out before parsing so that a 100,000-entry feed costs what a
    1,000-entry one does. Returns (text, number dropped). A document whose
    entry tags do not pair up is returned whole (parse_feed caps again after
    parsing)."""
    if max_entries <= 0:
        return text, 0
    opening = 0
    for match in _ENTRY_TAG.finditer(text):
        if not match.group(1) and not match.group(2).endswith("/"):
            opening += 1
    if opening <= max_entries:
        return text, 0
    blocks: list[tuple[int, int]] = []
    depth = 0
    start = 0
    for match in _ENTRY_TAG.finditer(text):
        closing = bool(match.group(1))
        if not closing and match.group(2).endswith("/"):
            continue  # <item/>: empty, not a block of its own
        if not closing:
            if depth == 0:
                start = match.start()
            depth += 1
        else:
            if depth == 0:
                return text, 0
            depth -= 1
            if depth == 0:
                blocks.append((start, match.end()))
    if depth != 0 or len(blocks) <= max_entries:
        return text, 0
    stamps = [_block_timestamp(text[a:b]) for a, b in blocks]
    keep = sorted(_newest_first(stamps)[:max_entries])
    kept = "\n".join(text[blocks[i][0]:blocks[i][1]] for i in keep)
    return text[:blocks[0][0]] + kept + text[blocks[-1][1]:], len(blocks) - len(keep)


# ---------------------------------------------------------------- parsing

_ABSOLUTE_HTTP = re.compile(r"^https?://[^/\s]+", re.IGNORECASE)
# WHATWG URL parsing: tab and newline are removed anywhere; other controls never belong in a link.
_URL_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200d\u2060\ufeff\ud800-\udfff]")


class ParseBudgetExceeded(Exception):
    pass


def _one_line(text: str, limit: int = 300) -> str:
    text = clean_model_text(" ".join(str(text).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def _synthetic_id(source_id: str, key: str) -> str:
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
        return _parse_feed(body, source_id, fetched_at.astimezone(timezone.utc), content_type, headers, base_url,
                           source_language, visible_before, config, deadline)
    except ParseBudgetExceeded as exc:
        return ParseResult(source_id=source_id, error=f"parse time budget of {config.time_budget:g}s exceeded{exc}")
    except (MemoryError, RecursionError) as exc:
        return ParseResult(source_id=source_id, error=f"parse failed: {type(exc).__name__}")
    except Exception as exc:  # a parser bug on hostile bytes fails this feed only
        return ParseResult(source_id=source_id, error=_one_line(f"parse failed: {type(exc).__name__}: {exc}"))


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
        parser_headers["content-language"] = _one_line(headers["content-language"], 100)
    # A stream, never the bytes: feedparser treats a str/bytes argument that
    # looks like a path or URL as something to open. Its HTML sanitiser and
    # relative-URI rewriting inside HTML are off: we reduce all HTML to plain
    # text ourselves (dropping <script>/<style> content), and both passes cost
    # ~25 % of parse time (cProfile of parse_feed on a 2,000-entry
    # tests/feedserver.rss_entries feed: 1.75 s -> 1.31 s). Entry links are
    # resolved by feedparser when the feed uses xml:base, then against the feed URL.
    return feedparser.parse(io.BytesIO(_as_utf8_document(text)), response_headers=parser_headers,
                            resolve_relative_uris=False, sanitize_html=False)


def _bozo_error(parsed, repairs: Counter) -> str | None:
    """What feedparser found malformed, and whether declarations were removed before parsing."""
    bozo_error = None
    if parsed.get("bozo"):
        exc = parsed.get("bozo_exception")
        bozo_error = _one_line(f"{type(exc).__name__}: {exc}") if exc is not None else "malformed feed"
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
            outcome = SkippedEntry(index, None, "entry_error", _one_line(f"{type(exc).__name__}: {exc}", 200))
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
        title, title_origin = _title_from_summary(fallback_text, config.synthetic_title_chars), "summary"

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
        canonical = _synthetic_id(source_id, key)
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


# ------------------------------------------------------------------ many feeds
# feedparser is pure Python (~0.3-0.5 ms per entry here): with hundreds of feeds, parsing, not
# the network, bounds an hourly run. Feeds are independent, so they are parsed in worker
# processes: in parallel on several cores, and each under a hard time budget (a worker that
# overruns is stopped and replaced; a worker that dies takes only its task with it).
# Seconds a worker gets beyond the feed's own cooperative budget before it is stopped.
HARD_BUDGET_GRACE = 2.0
# Small feeds travel to a worker several to a task: one task per feed cost more in dispatch and
# result hand-back than the parse itself under load. A batch that overruns or kills its worker
# is parsed again one feed per task, so each feed still gets its whole budget alone and a
# hostile feed fails by itself. Typical news feeds are 10-300 KB.
BATCH_MAX_BYTES = 256 * 1024
BATCH_MAX_FEEDS = 8


def _parse_job(job):
    result, source, visible_before, config = job
    return parse_fetch_result(result, source, visible_before=visible_before, config=config)


def _parse_batch(jobs):
    return [_parse_job(job) for job in jobs]


def _failed(job, error: str) -> ParseResult:
    return ParseResult(source_id=job[0].source_id, error=error)


def _needs_parsing(job) -> bool:
    result = job[0]
    return result.status == "ok" and result.body is not None


def _batches(jobs: list) -> list[list]:
    """Consecutive small jobs grouped (at most BATCH_MAX_FEEDS feeds and BATCH_MAX_BYTES body bytes);
    a job above the byte bound travels alone."""
    batches: list[list] = []
    current: list = []
    size = 0
    for job in jobs:
        body = len(job[0].body or b"")
        if current and (size + body > BATCH_MAX_BYTES or len(current) >= BATCH_MAX_FEEDS):
            batches.append(current)
            current, size = [], 0
        current.append(job)
        size += body
    if current:
        batches.append(current)
    return batches


class ParsePool:
    """Worker processes that parse feeds as they are handed in, each feed under
    its config's time budget (cooperative, plus a hard stop at budget +
    HARD_BUDGET_GRACE). `submit(jobs)` returns at once; `results()` waits and
    returns every submitted job's ParseResult in submission order. A feed that
    overruns, crashes its worker or raises comes back with `error` set; the
    others are unaffected.

    Without `isolate` (or without fork), jobs are parsed in this process at submit."""

    def __init__(self, workers: int | None = None, *, isolate: bool = True):
        import multiprocessing
        import os

        self._isolated = isolate and "fork" in multiprocessing.get_all_start_methods()
        self._workers = max(1, workers or os.cpu_count() or 1)
        self._pool = None
        self._slots: list[ParseResult | None] = []
        self._pending: list[tuple[list[int], list, Any]] = []  # (slot indices, jobs, future)

    def __enter__(self) -> "ParsePool":
        if self._isolated:
            import multiprocessing

            import pebble

            detect_language("warm up")  # load the language model once, before forking
            # fork: workers inherit the imported modules (no re-import); they only run pure parsing.
            self._pool = pebble.ProcessPool(max_workers=self._workers, context=multiprocessing.get_context("fork"))
            # Start the workers now, while this process has no other threads of ours running.
            self._pool.schedule(len, args=((),)).result()
        return self

    def __exit__(self, *exc_info) -> None:
        if self._pool is not None:
            if exc_info[0] is None:
                self._pool.close()
            else:
                self._pool.stop()
            self._pool.join()
            self._pool = None

    @property
    def submitted(self) -> int:
        """How many jobs were submitted so far (the next job's position in results())."""
        return len(self._slots)

    def _schedule(self, slots: list[int], jobs: list) -> None:
        budget = max(job[3].time_budget for job in jobs) + HARD_BUDGET_GRACE
        future = self._pool.schedule(_parse_batch, args=(jobs,), timeout=budget)
        self._pending.append((slots, jobs, future))

    def submit(self, jobs) -> None:
        """Queue (result, source, visible_before, config) jobs for parsing."""
        to_schedule: list[tuple[int, Any]] = []
        for job in jobs:
            slot = len(self._slots)
            self._slots.append(None)
            if self._pool is None or not _needs_parsing(job):
                self._slots[slot] = _parse_job(job)  # nothing to parse (304, error) or not isolated
            else:
                to_schedule.append((slot, job))
        for batch in _batches([job for _, job in to_schedule]):
            slots = [slot for slot, _ in to_schedule[:len(batch)]]
            to_schedule = to_schedule[len(batch):]
            self._schedule(slots, batch)

    def results(self) -> list[ParseResult]:
        """Wait for every submitted job; their results in submission order."""
        from concurrent.futures import TimeoutError as FutureTimeout

        import pebble

        while self._pending:
            pending, self._pending = self._pending, []
            for slots, jobs, future in pending:
                try:
                    for slot, parsed in zip(slots, future.result()):
                        self._slots[slot] = parsed
                    continue
                except FutureTimeout:
                    error = "parse time budget of {budget:g}s exceeded (worker stopped)"
                except pebble.ProcessExpired as exc:
                    error = (f"parse worker died (exit code {exc.exitcode}): "
                             "the feed is archived and is parsed again on a rerun")
                except Exception as exc:  # noqa: BLE001 - one feed's failure stays with that feed
                    error = _one_line(f"parse failed: {type(exc).__name__}: {exc}")
                if len(jobs) > 1:  # which feed of the batch it was is unknown: each again, alone
                    for slot, job in zip(slots, jobs):
                        self._schedule([slot], [job])
                else:
                    self._slots[slots[0]] = _failed(jobs[0], error.format(budget=jobs[0][3].time_budget))
        assert all(slot is not None for slot in self._slots)
        return list(self._slots)  # type: ignore[arg-type]


def parse_many(jobs, *, workers: int | None = None, isolate: bool = True) -> list[ParseResult]:
    """parse_fetch_result over (result, source, visible_before, config) jobs, in order.

    With `isolate` (and fork available), feeds are parsed in worker processes
    (see ParsePool): a feed that overruns its time budget, crashes its worker
    or raises comes back as a ParseResult with `error` set; the others are
    unaffected."""
    jobs = list(jobs)
    if not jobs:
        return []
    if not isolate or not any(_needs_parsing(job) for job in jobs):
        return [_parse_job(job) for job in jobs]
    with ParsePool(workers=min(len(jobs), workers or _cpu_count()), isolate=isolate) as pool:
        pool.submit(jobs)
        return pool.results()


def _cpu_count() -> int:
    import os

    return os.cpu_count() or 1
