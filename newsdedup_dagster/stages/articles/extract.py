"""One fetched page -> its main text and what the page says of itself (pure: no network, no database).

- HTML only: the Content-Type must say HTML, or say nothing more specific than a generic type
  (`application/octet-stream`, `text/plain`) while the bytes start as HTML does; bytes that are a
  PDF, an image or a feed are refused whatever the header says (WHATWG MIME Sniffing, the HTML
  and binary signatures).
- Decoded as feed bytes are (shared/text/encoding.py: BOM, valid UTF-8, declared charset, detector), so
  a wrong declared charset is repaired the same way.
- Main text by trafilatura (lxml; no script is ever run), tables included (a table of figures or
  results is article text; some sites lay the whole article out in a table), rows as
  `| cell | cell |` lines. Each paragraph is plain text already (trafilatura decoded the markup):
  it keeps its literal `<` and `&` (`<The Palace>`, a title in angle brackets, stays) and loses
  only invisible and direction-changing characters (shared/text/cleaning.py: clean_visible_line), NFC.
- Publication and update times by htmldate, byline and canonical link from trafilatura's
  metadata, language from the text (py3langid) or else the page's `lang` attribute.
- The libraries get parsed trees, never the page as a string: htmldate downloads a string that
  starts with `http` and has no space (its own HTTP client: no address check, no robots.txt), so
  a page whose text is a URL would make it fetch.
- Paywalled pages (schema.org `isAccessibleForFree: false`) keep only the part the page serves
  free: the elements its JSON-LD names as the paywalled part (`hasPart` with
  `isAccessibleForFree: false` and a `cssSelector`, Google's markup for subscription content) are
  removed before extraction, and what remains is kept when it has `min_words` words. A page that
  marks itself not free without naming the part (or names it in a way not understood here) keeps
  no text, as does one whose free part is too short: reason `paywall`.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime

from newsdedup_dagster.shared.sources import normalise_language
from newsdedup_dagster.shared.text.cleaning import clean_visible_line
from newsdedup_dagster.shared.text.encoding import decode_feed_bytes
from newsdedup_dagster.shared.text.language import detect_language
from newsdedup_dagster.shared.text.sanitise import clean_text

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# Types that say nothing about the bytes: the bytes decide (sniffing).
GENERIC_TYPES = frozenset({"", "application/octet-stream", "text/plain", "binary/octet-stream",
                           "application/unknown", "unknown/unknown"})
# WHATWG MIME Sniffing 7.1: the HTML signatures (after leading whitespace), case-insensitive,
# each followed by a space or '>'.
_HTML_SIGNATURE = re.compile(
    rb"^[\t\n\x0c\r ]*(?:<!doctype html|<html|<head|<script|<iframe|<h1|<div|<font|<table|<a|<style|<title|<b"
    rb"|<body|<br|<p|<!--)[ >]", re.IGNORECASE)
# Bytes that are something else, whatever the header says.
_BINARY_SIGNATURES = (b"%PDF-", b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"PK\x03\x04", b"\x1f\x8b", b"RIFF",
                      b"\x00\x00\x01\x00", b"OggS", b"ID3", b"\x00\x00\x00")
_FEED_START = re.compile(rb"^[\t\n\x0c\r ]*(?:<\?xml[^>]*>\s*)?<(?:rss|feed|rdf:RDF)[\s>]", re.IGNORECASE)
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")

_HTML_LANG = re.compile(r"<html\b[^>]*?\blang\s*=\s*[\"']?([A-Za-z]{2,3})(?:[-_][A-Za-z0-9]+)*", re.IGNORECASE)
# schema.org's mark of paywalled content (Google's structured data for subscription articles).
_NOT_FREE = re.compile(r"[\"']?isAccessibleForFree[\"']?\s*[:=]\s*[\"']?(?:false|False|FALSE)\b")
_LD_JSON = re.compile(r"<script\b[^>]*\btype\s*=\s*[\"']?application/ld\+json[\"']?[^>]*>(.*?)</script\s*>",
                      re.IGNORECASE | re.DOTALL)
# The CSS selectors understood in `hasPart.cssSelector`: a tag and/or classes and ids (`.paywall`,
# `div.article-body.locked`, `#premium`), in a comma-separated list.
_SIMPLE_SELECTOR = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)?((?:[.#][A-Za-z_][A-Za-z0-9_-]*)*)$")
_SELECTOR_PART = re.compile(r"([.#])([A-Za-z_][A-Za-z0-9_-]*)")
# A page with more start tags than this is refused before it is parsed: parsing and walking such a
# tree costs seconds per 100k elements, and no article needs that many (a long news page: 2-5k).
MAX_ELEMENTS = 100_000
# Han, kana and Thai are written without spaces between words: each character counts as a word.
_WORD = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W\u0e00-\u0e7f"
                   r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
# trafilatura's rendering of a table row (`| cell | cell |`) and of its header rule (`|---|---|`).
_TABLE_ROW = re.compile(r"^\|.*\|$")
_CELL_SEPARATOR = re.compile(r"(?<!\\)\|")
MAX_BYLINE_CHARS = 300
MAX_LEAD_CHARS = 1_000
MAX_URL_CHARS = 2_048
DATE_FORMAT = "%Y-%m-%dT%H:%M:%S%z"


@dataclass(frozen=True)
class ExtractLimits:
    min_words: int = 25
    max_text_chars: int = 100_000
    max_elements: int = MAX_ELEMENTS


@dataclass(frozen=True)
class Extraction:
    """What a page yielded: `reason` None and a text, or the reason it has none."""

    reason: str | None                 # None | not_html | paywall | too_large | extraction_empty
    detail: str | None = None
    text: str | None = None            # paragraphs separated by '\n'
    lead: str | None = None            # the first paragraph that is not the headline
    word_count: int | None = None
    language: str | None = None
    published_at: datetime | None = None
    updated_at: datetime | None = None
    byline: str | None = None
    canonical_url: str | None = None
    encoding: str | None = None


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def html_refusal(content_type: str | None, body: bytes) -> str | None:
    """None when the response is an HTML page, else why it is not."""
    declared = media_type(content_type)
    head = body[:1024]
    for bom in _BOMS:
        if head.startswith(bom):
            head = head[len(bom):]
            break
    if head.startswith(_BINARY_SIGNATURES) or _FEED_START.match(head):
        return f"the bytes are not HTML (declared {declared or 'nothing'})"
    if declared in HTML_TYPES:
        return None
    if declared in GENERIC_TYPES and _HTML_SIGNATURE.match(head):
        return None
    return f"Content-Type {declared or 'missing'} is not HTML"


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


def _moment(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.strptime(value, DATE_FORMAT)
    except ValueError:
        try:
            moment = datetime.strptime(value[:10], "%Y-%m-%d")
        except ValueError:
            return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def plain_line(value: str | None, max_chars: int | None = None) -> str:
    """One paragraph of extracted text as kept: NFC, invisible and direction-changing characters
    removed, whitespace collapsed, cut at `max_chars` (with an ellipsis). No markup pass: the text is
    plain already, so a literal `<The Palace>` or `AT&amp;T` in it is the page's text (the feed
    cleaner, clean_text, would read the first as a tag and drop it)."""
    text = clean_visible_line(unicodedata.normalize("NFC", value or ""))
    if max_chars is not None and len(text) > max_chars:
        text = text[: max_chars - 1].rstrip() + "…"
    return text


def _paragraphs(raw: str, max_chars: int) -> list[str]:
    kept: list[str] = []
    total = 0
    for line in raw.splitlines():
        paragraph = plain_line(line)
        if not paragraph:
            continue
        if total + len(paragraph) > max_chars:
            if not kept:  # one huge paragraph: cut it rather than keep nothing
                kept.append(plain_line(paragraph, max_chars=max_chars))
            break
        kept.append(paragraph)
        total += len(paragraph) + 1
    return kept


def first_paragraph(text: str, title: str = "") -> str | None:
    """The lead of a main text (plain paragraphs separated by newlines): its first paragraph of five
    words or more that is neither the headline nor a table row; else (an article laid out in a
    table, a page of figures) the table cell with the most words; else its first paragraph; cleaned
    and cut at MAX_LEAD_CHARS."""
    paragraphs = [p for p in (plain_line(line) for line in text.splitlines()) if p]
    if not paragraphs:
        return None
    headline = plain_line(clean_text(title))
    lead = next((p for p in paragraphs if not _TABLE_ROW.match(p) and p != headline and word_count(p) >= 5), None)
    if lead is None:
        cells = [cell.strip().replace("\\|", "|") for row in paragraphs if _TABLE_ROW.match(row)
                 for cell in _CELL_SEPARATOR.split(row[1:-1])]
        cells = [cell for cell in cells if cell != headline and word_count(cell) >= 5]
        lead = max(cells, key=word_count) if cells else paragraphs[0]
    return plain_line(lead, max_chars=MAX_LEAD_CHARS) or None


def _http_url(value: str | None) -> str | None:
    if not value or len(value) > MAX_URL_CHARS or any(ch.isspace() for ch in value):
        return None
    return value if re.match(r"^https?://[^/\s]+", value, re.IGNORECASE) else None


def extract_page(body: bytes, content_type: str | None, url: str, *, language_hint: str | None = None,
                 limits: ExtractLimits = ExtractLimits()) -> Extraction:
    """The main text and metadata of one fetched page. Never raises for a page's content (a
    parser failure is an Extraction with reason `extraction_failed`)."""
    refusal = html_refusal(content_type, body)
    if refusal:
        return Extraction("not_html", refusal)
    page, encoding, _note = decode_feed_bytes(body, content_type, language_hint)
    if page.count("<") > limits.max_elements:
        return Extraction("too_large", f"more than {limits.max_elements:,} tags", encoding=encoding)
    paywalled: list[str] = []
    if _NOT_FREE.search(page):
        parts = paywalled_parts(page)
        if parts is None:
            return Extraction("paywall", "the page marks its content isAccessibleForFree: false without "
                                         "naming the paywalled part", encoding=encoding)
        paywalled = parts
    try:
        return _extract(page, url, language_hint, limits, encoding, paywalled)
    except (RecursionError, MemoryError) as exc:
        return Extraction("extraction_failed", f"{type(exc).__name__}: the page's tree is too deep or large",
                          encoding=encoding)
    except Exception as exc:  # noqa: BLE001 - a parser's surprise stays with this page
        return Extraction("extraction_failed", f"{type(exc).__name__}: {str(exc)[:200]}", encoding=encoding)


def _false(value) -> bool:
    return value is False or (isinstance(value, str) and value.strip().lower() == "false")


def _selector_xpath(selector: str) -> str | None:
    """XPath of a simple CSS selector (a tag and/or classes and ids), None for any other."""
    match = _SIMPLE_SELECTOR.match(selector.strip())
    if not match or not (match.group(1) or match.group(2)):
        return None
    tests = [f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')" if kind == "." else f"@id='{name}'"
             for kind, name in _SELECTOR_PART.findall(match.group(2) or "")]
    return f"//{(match.group(1) or '*').lower()}" + "".join(f"[{test}]" for test in tests)


def paywalled_parts(page: str) -> list[str] | None:
    """XPaths of the elements a page's JSON-LD names as paywalled (`hasPart` entries with
    `isAccessibleForFree: false` and a `cssSelector`), or None when the page cannot be read that
    way: a JSON-LD block that does not parse, no such part named, a selector beyond tag/class/id.
    The caller keeps no text on None."""
    selectors: list[str] = []
    for block in _LD_JSON.findall(page):
        try:
            data = json.loads(block.strip().removeprefix("<!--").removesuffix("-->"), strict=False)
        except ValueError:
            return None
        stack = [data]
        while stack:
            node = stack.pop()
            if isinstance(node, list):
                stack.extend(node)
            elif isinstance(node, dict):
                for part in node.get("hasPart") if isinstance(node.get("hasPart"), list) else [node.get("hasPart")]:
                    if isinstance(part, dict) and _false(part.get("isAccessibleForFree")):
                        named = part.get("cssSelector")
                        if not named:
                            return None  # a paywalled part the page does not locate: all of it may be
                        for selector in named if isinstance(named, list) else [named]:
                            selectors.extend(str(selector).split(","))
                stack.extend(value for value in node.values() if isinstance(value, (list, dict)))
    xpaths = [_selector_xpath(selector) for selector in selectors]
    if not xpaths or any(xpath is None for xpath in xpaths):
        return None
    return list(dict.fromkeys(xpaths))


def _drop_paywalled(tree, xpaths: list[str]) -> bool:
    """Remove the paywalled elements from the tree (their tail text stays: it is outside them);
    False when one of them is the whole page."""
    for xpath in xpaths:
        for element in tree.xpath(xpath):
            parent = element.getparent()
            if parent is None:
                return False
            element.drop_tree()
    return True


def _trafilatura_config():
    from trafilatura.settings import use_config  # deferred: only extraction workers need trafilatura

    config = use_config()
    # The worker's own time budget stops an extraction (trafilatura's alarm signal is not used).
    config.set("DEFAULT", "EXTRACTION_TIMEOUT", "0")
    config.set("DEFAULT", "MAX_TREE_SIZE", str(MAX_ELEMENTS))
    return config


_CONFIG = None


def _date_tree(page: str):
    """The page parsed by htmldate's own loader, given bytes: it downloads a str that looks like a
    URL, never bytes (decoded as UTF-8, which they are here, so it builds the tree it built from the
    str). Its parser keeps comments, which it searches for dates; trafilatura's drops them, so each
    library gets a tree from its own loader."""
    from htmldate.utils import load_html  # deferred: only extraction workers need htmldate

    return load_html(page.encode("utf-8", errors="replace"))


def _date(htmldate, tree, url: str, *, original: bool) -> datetime | None:
    if tree is None:  # what htmldate answers for a page its loader refuses
        return None
    # htmldate prunes a copy of a tree it is given, so one tree serves both searches.
    return _moment(htmldate.find_date(tree, original_date=original, extensive_search=False,
                                      outputformat=DATE_FORMAT, url=url))


def _extract(page: str, url: str, language_hint: str | None, limits: ExtractLimits, encoding: str,
             paywalled: list[str]) -> Extraction:
    global _CONFIG
    import htmldate  # deferred: only extraction workers need htmldate (and its date parsers)
    import trafilatura  # deferred: as above

    if _CONFIG is None:
        _CONFIG = _trafilatura_config()
    # trafilatura's loader never fetches (a str is only parsed); trafilatura works on a copy of the tree.
    text_tree = trafilatura.load_html(page)
    if text_tree is not None and paywalled and not _drop_paywalled(text_tree, paywalled):
        return Extraction("paywall", "the page marks all of itself as paywalled", encoding=encoding)
    # Flags calibrated on real news pages (docs/calibration/articles.md#article-text-on-real-pages): precision
    # favoured (the text feeds leads and the briefing's checks: a navigation line read as article text
    # costs more than a missed sentence), tables kept.
    document = None if text_tree is None else trafilatura.bare_extraction(
        text_tree, url=url, with_metadata=True, include_comments=False, include_tables=True, include_images=False,
        include_links=False, include_formatting=False, deduplicate=False, favor_precision=True, config=_CONFIG)
    raw = (document.text or "") if document is not None else ""
    paragraphs = _paragraphs(raw, limits.max_text_chars)
    text = "\n".join(paragraphs)
    words = word_count(text)
    if words < limits.min_words and paywalled:
        return Extraction("paywall", f"{words} words outside the part the page marks as paywalled (fewer than "
                                     f"{limits.min_words})", encoding=encoding)
    if words < limits.min_words:
        return Extraction("extraction_empty", f"{words} words extracted (fewer than {limits.min_words})",
                          encoding=encoding)
    lead = first_paragraph(text, getattr(document, "title", None) or "")
    language = detect_language(text[:4_000])
    if language is None:
        declared = _HTML_LANG.search(page[:20_000])
        language = normalise_language(declared.group(1)) if declared else None
    date_tree = _date_tree(page)
    published = _date(htmldate, date_tree, url, original=True)
    updated = _date(htmldate, date_tree, url, original=False)
    if published and updated and updated <= published:
        updated = None
    byline = plain_line(getattr(document, "author", None) or "", max_chars=MAX_BYLINE_CHARS) or None
    return Extraction(
        None, text=text, lead=lead, word_count=words, language=language,
        published_at=published, updated_at=updated, byline=byline,
        canonical_url=_http_url(getattr(document, "url", None)), encoding=encoding)
