"""OPML subscription lists, read and written.

Reading (`read_opml`): OPML 1.0, 1.1 and 2.0 as feed readers export them (Miniflux, FreshRSS,
NewsBlur, Feedly, Inoreader): every `<outline>` with an `xmlUrl` is a feed, its `title` (else
`text`) its name; `htmlUrl`, `language` and this project's own `newsdedup:` attributes are kept
where present; the outlines without `xmlUrl` around a feed are its categories, kept as one hint
("News/Europe"). Attribute names are matched without regard to case (`xmlurl` occurs in the wild).

What is refused, and how much:
- the whole file, nothing imported, when it cannot be read safely: larger than `max_bytes`, not
  well-formed XML, a DTD or entity declaration (no expansion ever happens: defusedxml refuses it
  before), outlines nested deeper than `max_depth`, more than `max_outlines` outlines, or a root
  that is not `<opml>`;
- one entry, the rest imported, when that entry is unusable: a feed address that is not http(s)
  (`javascript:`, `file:`, `data:` ...), has no host, holds spaces or is too long; a language
  attribute that is not a language. The refusal names the entry's line and the reason.
Which entries are duplicates (in the file or of the sources file) is decided when merging (edit.py).

Writing (`write_opml`): OPML 2.0 that Miniflux's and FreshRSS's importers read (their published
parsing rules: `opml > head + body > outline`, `text` on every outline, `type="rss"` with an http(s)
`xmlUrl`, RFC 1123 `dateCreated`), one level of categories (both readers keep one), and the
fields an import here needs again as `newsdedup:` attributes, which other readers ignore.

Pure: bytes in, values out; no network, no files.
"""

from __future__ import annotations

import io
import re
import xml.sax
import xml.sax.handler
from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime
from urllib.parse import urlsplit
from xml.etree import ElementTree

import defusedxml
import defusedxml.expatreader

from newsdedup_dagster.shared.sources import normalise_language

# Our own attributes, in a namespace of their own so that other readers skip them.
NAMESPACE = "urn:newsdedup:opml"
PREFIX = "newsdedup"

# A reader's export of 10,000 feeds is about 3 MB.
MAX_OPML_BYTES = 5 * 1024 * 1024
# opml > body > categories > feed: real exports are 3-5 deep; a few levels of folders more are kept.
MAX_DEPTH = 32
MAX_OUTLINES = 50_000
MAX_URL_CHARS = 2_048
MAX_TEXT_CHARS = 300


@dataclass(frozen=True)
class OpmlFeed:
    """One feed outline of an OPML file."""

    line: int
    feed_url: str
    title: str | None = None
    site_url: str | None = None
    category: str | None = None    # the enclosing outlines' names, outermost first, joined by '/'
    language: str | None = None    # ISO 639-1, from `language` (or `newsdedup:language`)
    country: str | None = None     # `newsdedup:country`, as written
    source_id: str | None = None   # `newsdedup:id`, as written
    enabled: bool | None = None    # `newsdedup:enabled`; None: not said


@dataclass(frozen=True)
class Refusal:
    """An entry that is not imported: where and why, in one line."""

    line: int | None
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}" if self.line else self.reason


@dataclass(frozen=True)
class OpmlDocument:
    title: str | None
    feeds: tuple[OpmlFeed, ...]
    refused: tuple[Refusal, ...]


class OpmlRefused(ValueError):
    """The whole file is refused: nothing of it is imported. The message is one line."""


def _one_line(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown(value: str, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def feed_url_problem(url: str) -> str | None:
    """Why `url` cannot be a feed's address, or None: http(s) only, with a host, no spaces."""
    if len(url) > MAX_URL_CHARS:
        return f"address longer than {MAX_URL_CHARS} characters"
    if re.search(r"\s", url):
        return f"address {_shown(url)} contains spaces"
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:
        return f"address {_shown(url)} is not a URL ({_one_line(exc, 80)})"
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        shown = f"'{scheme}:' address" if scheme else f"address {_shown(url)} without a scheme"
        return f"{shown} refused: only http and https feeds are read"
    if not host:
        return f"address {_shown(url)} has no host"
    return None


class _Found(Exception):
    """Raised from the handler to stop at the first reason to refuse the whole file."""


class _OutlineHandler(xml.sax.handler.ContentHandler):
    def __init__(self, max_depth: int, max_outlines: int):
        super().__init__()
        self.max_depth = max_depth
        self.max_outlines = max_outlines
        self.locator = None
        self.stack: list[str] = []
        # One entry per open <outline>: its category name (None for a feed or a nameless outline).
        self.categories: list[str | None] = []
        self.outlines = 0
        self.in_title = False
        self.title_parts: list[str] = []
        self.feeds: list[OpmlFeed] = []
        self.refused: list[Refusal] = []

    def setDocumentLocator(self, locator):  # noqa: N802 - SAX's name
        self.locator = locator

    def _line(self) -> int:
        return self.locator.getLineNumber() if self.locator is not None else 0

    def startElement(self, name, attrs):  # noqa: N802 - SAX's name
        if not self.stack and name != "opml":
            raise _Found(f"line {self._line()}: not OPML: the root element is <{name[:40]}>, not <opml>")
        if len(self.stack) >= self.max_depth:
            raise _Found(f"line {self._line()}: outlines nested more than {self.max_depth} levels deep")
        self.stack.append(name)
        if name == "title" and self.stack[-2:-1] == ["head"] and len(self.stack) == 3:
            self.in_title = True
        if name != "outline" or "body" not in self.stack:
            return
        self.outlines += 1
        if self.outlines > self.max_outlines:
            raise _Found(f"line {self._line()}: more than {self.max_outlines} outlines")
        values = {key.lower(): value for key, value in attrs.items()}
        name_text = _one_line(values.get("title") or values.get("text") or "") or None
        feed_url = (values.get("xmlurl") or "").strip()
        if not feed_url:
            self.categories.append(name_text)
            return
        self.categories.append(None)
        self._feed(values, feed_url, name_text)

    def _feed(self, values: dict[str, str], feed_url: str, name_text: str | None) -> None:
        line = self._line()
        problem = feed_url_problem(feed_url)
        if problem:
            self.refused.append(Refusal(line, problem))
            return
        raw_language = (values.get("language") or values.get(f"{PREFIX}:language") or "").strip()
        language = normalise_language(raw_language) if raw_language else None
        if raw_language and language is None:
            self.refused.append(Refusal(line, f"language {_shown(raw_language)} is not a language code "
                                              "(ISO 639-1, such as 'en' or 'pt-BR')"))
            return
        site_url = (values.get("htmlurl") or "").strip() or None
        if site_url and feed_url_problem(site_url):
            site_url = None   # only a hint: an unusable one is dropped, the feed is kept
        enabled = values.get(f"{PREFIX}:enabled", "").strip().lower()
        path = [name for name in self.categories[:-1] if name]
        self.feeds.append(OpmlFeed(
            line=line, feed_url=feed_url, title=name_text, site_url=site_url,
            category="/".join(path) or None, language=language,
            country=(values.get(f"{PREFIX}:country") or "").strip() or None,
            source_id=(values.get(f"{PREFIX}:id") or "").strip() or None,
            enabled={"true": True, "false": False}.get(enabled)))

    def endElement(self, name):  # noqa: N802 - SAX's name
        self.stack.pop()
        if name == "outline" and "body" in self.stack:
            self.categories.pop()
        if name == "title":
            self.in_title = False

    def characters(self, content):
        if self.in_title and sum(map(len, self.title_parts)) < MAX_TEXT_CHARS:
            self.title_parts.append(content)


def read_opml(data: bytes, *, max_bytes: int = MAX_OPML_BYTES, max_depth: int = MAX_DEPTH,
              max_outlines: int = MAX_OUTLINES) -> OpmlDocument:
    """The feeds of an OPML file and the entries refused; raises OpmlRefused (one line) when the
    whole file is refused."""
    if len(data) > max_bytes:
        raise OpmlRefused(f"file is larger than {max_bytes} bytes ({len(data)} bytes)")
    if not data.strip():
        raise OpmlRefused("file is empty")
    handler = _OutlineHandler(max_depth, max_outlines)
    # No DTD at all: an OPML file has no use for one, and it is where entity bombs and external
    # entities live. defusedxml refuses them while parsing, before anything is expanded.
    parser = defusedxml.expatreader.create_parser(forbid_dtd=True, forbid_entities=True, forbid_external=True)
    parser.setContentHandler(handler)
    parser.setFeature(xml.sax.handler.feature_external_ges, False)
    try:
        parser.parse(io.BytesIO(data))
    except _Found as exc:
        raise OpmlRefused(str(exc)) from None
    except defusedxml.DTDForbidden:
        raise OpmlRefused(f"line {handler._line()}: a DTD (<!DOCTYPE ...>) is not allowed in an OPML file") from None
    except defusedxml.EntitiesForbidden:
        raise OpmlRefused(f"line {handler._line()}: entity declarations are not allowed (nothing is expanded)") from None
    except defusedxml.ExternalReferenceForbidden:
        raise OpmlRefused(f"line {handler._line()}: external references are not allowed") from None
    except xml.sax.SAXParseException as exc:
        raise OpmlRefused(f"line {exc.getLineNumber()}: not well-formed XML: {_one_line(exc.getMessage(), 120)}") from None
    except (xml.sax.SAXException, ValueError, LookupError) as exc:
        raise OpmlRefused(f"not readable as XML: {_one_line(exc, 120)}") from None
    if handler.outlines == 0:
        raise OpmlRefused("no <outline> in the file's <body>")
    return OpmlDocument(title=_one_line("".join(handler.title_parts)) or None, feeds=tuple(handler.feeds),
                        refused=tuple(handler.refused))


@dataclass(frozen=True)
class ExportedFeed:
    """What one exported outline says."""

    source_id: str
    name: str
    feed_url: str
    language: str
    country: str
    site_url: str | None = None
    category: str | None = None
    enabled: bool = True


def write_opml(feeds: list[ExportedFeed], *, title: str, created: datetime) -> bytes:
    """OPML 2.0 bytes (UTF-8): categories as one level of outlines, in first-seen order."""
    ElementTree.register_namespace(PREFIX, NAMESPACE)
    root = ElementTree.Element("opml", {"version": "2.0"})
    head = ElementTree.SubElement(root, "head")
    ElementTree.SubElement(head, "title").text = title
    ElementTree.SubElement(head, "dateCreated").text = format_datetime(created)
    body = ElementTree.SubElement(root, "body")
    folders: dict[str, ElementTree.Element] = {}
    for feed in feeds:
        parent = body
        if feed.category:
            parent = folders.get(feed.category)
            if parent is None:
                parent = folders[feed.category] = ElementTree.SubElement(
                    body, "outline", {"text": feed.category, "title": feed.category})
        attributes = {"type": "rss", "text": feed.name, "title": feed.name, "xmlUrl": feed.feed_url}
        if feed.site_url:
            attributes["htmlUrl"] = feed.site_url
        attributes["language"] = feed.language
        attributes[f"{{{NAMESPACE}}}id"] = feed.source_id
        attributes[f"{{{NAMESPACE}}}country"] = feed.country
        if not feed.enabled:
            attributes[f"{{{NAMESPACE}}}enabled"] = "false"
        ElementTree.SubElement(parent, "outline", attributes)
    # An empty list still needs one outline to be a valid OPML 2.0 body (FreshRSS refuses none).
    if not feeds:
        ElementTree.SubElement(body, "outline", {"text": "(no sources)"})
    ElementTree.indent(root, space="  ")
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
