"""Markup to plain text (a linear scanner, not html.parser) and hostile feed documents made safe
to parse: declarations removed, character references and controls repaired, entries capped.
Pure: no network, no database."""

from __future__ import annotations

import calendar
import email.utils
import html
import re
import unicodedata
from datetime import UTC, datetime
from typing import Any

import feedparser

from newsdedup_dagster.shared.text.cleaning import clean_model_text

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
    removed (shared/text/cleaning.py's rules, the same as for model output).

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
    # The same rules as model output (shared/text/cleaning.py): controls, bidi overrides and isolates,
    # zero-width and other invisible format characters, surrogates and noncharacters go.
    text = clean_model_text(unicodedata.normalize("NFC", text))
    text = " ".join(text.split())
    if max_chars is not None and len(text) > max_chars:
        text = text[: max_chars - 1].rstrip() + "…"
    return text


def title_from_summary(summary: str, max_chars: int) -> str:
    if len(summary) <= max_chars:
        return summary
    cut = summary[:max_chars]
    # Cut at a word boundary when the text has spaces (not for CJK runs).
    if " " in cut[max_chars // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:-") + "…"


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
        moment = moment.replace(tzinfo=UTC)
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
