"""Render one language's Atom 1.0 feed, JSON Feed 1.1 and static HTML pages (pure).

Every value that came from a feed or a model is data: HTML goes through Jinja2 with
autoescaping, Atom through ElementTree (which escapes) after removing the characters XML 1.0
cannot carry, JSON through json.dumps. Links are only absolute http(s) URLs (sources) or the
site's own pages. Site pages link to each other relatively, so the directory works from any
server or bucket; feeds carry absolute URLs under the configured base URL, as readers need.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from babel.lists import format_list
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from newsdedup_dagster.shared.presentation.labels import (
    date_time,
    decimal,
    locale_of,
    long_date,
    own_name,
    text_direction,
)
from newsdedup_dagster.shared.presentation.stories import locale_helpers
from newsdedup_dagster.shared.presentation.taxonomy import category_name
from newsdedup_dagster.stages.publish.model import EventView, StoryView, uri_text

__all__ = ["FeedMeta", "EventStoryLine", "RootLanguage", "xml_text", "rfc3339", "build_atom", "build_json_feed",
           "render_entry_content", "render_index", "render_category", "render_story", "story_page_hash", "render_event",
           "render_root", "ARCHIVE_INDEX", "ATOM_NS", "JSON_FEED_VERSION", "ICON", "FAVICON", "STATIC_DIR", "category"]

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
ATOM_NS = "http://www.w3.org/2005/Atom"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
JSON_FEED_VERSION = "https://jsonfeed.org/version/1.1"
GENERATOR = "newsdedup"
# The site's icons, at the top of the output directory (copied from `publish/static/`).
ICON = "icon.png"          # 512 x 512: JSON Feed `icon`
FAVICON = "favicon.png"    # 64 x 64: JSON Feed `favicon`, Atom `icon`, the pages' rel="icon"
STATIC_DIR = Path(__file__).resolve().parent / "static"
# Every archived day of a language, by month (stages/publish/archive.py writes it; every feed links it).
ARCHIVE_INDEX = "archive/index.html"

# Characters XML 1.0 cannot carry at all (escaping does not help): C0 controls except tab/LF/CR,
# lone surrogates, U+FFFE/U+FFFF; and the C1 controls it discourages, which feed readers decode
# as Windows-1252 (U+0080 shows as "€").
_XML_INVALID = re.compile("[^\u0009\u000a\u000d\u0020-\u007e\u00a0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: str | None) -> str:
    return _XML_INVALID.sub("", value or "")


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class FeedMeta:
    lang: str
    dir: str
    title: str
    subtitle: str
    site_title: str
    base_url: str            # absolute, ends with "/"
    feed_id: str
    updated: datetime
    labels: dict
    # Where this feed's own files (atom.xml, feed.json, its index.html) sit under the language
    # directory: "" for the language feed, "category/<category>/" for a category feed.
    feed_path: str = ""

    def url(self, path: str) -> str:
        """Absolute URL of a path under this language's directory."""
        return uri_text(f"{self.base_url}{self.lang}/{path}")

    def feed_url(self, name: str) -> str:
        """Absolute URL of one of this feed's own files (its self link, its page)."""
        return self.url(f"{self.feed_path}{name}")

    def site_url(self, path: str) -> str:
        """Absolute URL of a path at the top of the site (the icons)."""
        return uri_text(f"{self.base_url}{path}")


@dataclass(frozen=True)
class EventStoryLine:
    story_id: str
    headline: str
    headline_lang: str | None
    first_published_at: datetime
    source_count: int
    page: str
    linked: bool             # the story has a page in this language


@dataclass(frozen=True)
class RootLanguage:
    lang: str
    title: str
    count: int


_ENV: Environment | None = None


def _env() -> Environment:
    global _ENV
    if _ENV is None:
        _ENV = Environment(
            loader=FileSystemLoader(TEMPLATES_DIR),
            autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=True, default=True),
            undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        )
    return _ENV


def _fmt(template: str, **values) -> str:
    return template.format(**values)


def _helpers(lang: str, labels: dict) -> dict:
    """Numbers, plurals, dates and language names the page language's way (CLDR via Babel)."""
    helpers = locale_helpers(lang, labels)
    langname = helpers["langname"]
    return {
        **helpers, "fmt": _fmt, "own_name": own_name, "direction": text_direction,
        "decimal": lambda value: decimal(lang, value),
        "when": lambda moment: date_time(lang, moment),
        "iso": rfc3339,
        "langlist": lambda codes: format_list([langname(c) for c in codes], locale=locale_of(lang)) if codes else "",
        "category_name": lambda category: category_name(category, lang),
        "country_name": lambda code: locale_of(lang).territories.get(code, code),
    }


def _page(template: str, meta: FeedMeta | None, lang: str, direction: str, labels: dict, root: str,
          page_title: str, site_title: str, generated: datetime | None, switch: list[tuple[str, str]] | None = None,
          **context) -> str:
    """`switch`: (language, relative href) of this page in every published language."""
    return _env().get_template(template).render(
        lang=lang, dir=direction, L=labels, root=root, page_title=page_title, site_title=site_title,
        feeds=meta, generated=generated, switch=switch or [], **_helpers(lang, labels), **context)


def _switch(langs: list[str], root: str, page: str) -> list[tuple[str, str]]:
    return [(lang, f"{root}{lang}/{page}") for lang in langs]


# ------------------------------------------------------------------------------ HTML pages
def render_index(meta: FeedMeta, day: date, stories: list[StoryView], langs: list[str] | None = None,
                 categories: list[str] | None = None, archive: tuple[str, str | None] | None = None,
                 countries: list[str] | None = None) -> str:
    """`langs`: every published language (the language switcher); `categories`: those with a
    page to link (taxonomy order); `archive`: (the archive's index, the archived day before or
    None) under the language directory, once the archive is written; `countries`: the country
    codes with a page to link (stages/publish/countries.py)."""
    shown_day = long_date(meta.lang, day)
    title = f"{_fmt(meta.labels['today'], date=shown_day)} · {meta.site_title}"
    return _page("index.html.j2", meta, meta.lang, meta.dir, meta.labels, "../", title, meta.site_title,
                 meta.updated, _switch(langs or [meta.lang], "../", "index.html"), day=shown_day, stories=stories,
                 categories=categories or [], here="", current_category=None, archive=archive,
                 countries=countries or [])


def render_category(meta: FeedMeta, category_meta: FeedMeta, category: str, stories: list[StoryView],
                    langs: list[str], categories: list[str]) -> str:
    """One category's page (`category_meta.feed_path` + index.html): its stories as the language
    index shows them, its own feeds, and the other categories with a page."""
    page = f"{category_meta.feed_path}index.html"
    root = "../" * (page.count("/") + 1)
    return _page("category.html.j2", meta, meta.lang, meta.dir, meta.labels, root,
                 f"{category_name(category, meta.lang)} · {meta.site_title}", meta.site_title,
                 category_meta.updated, _switch(langs or [meta.lang], root, page), stories=stories,
                 categories=categories, here="../" * page.count("/"), current_category=category,
                 category_feeds=category_meta)


_TEMPLATES_HASH: str | None = None


def _templates_hash() -> str:
    global _TEMPLATES_HASH
    if _TEMPLATES_HASH is None:
        digest = hashlib.sha256()
        for path in sorted(TEMPLATES_DIR.glob("*.j2")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        _TEMPLATES_HASH = digest.hexdigest()
    return _TEMPLATES_HASH


def story_page_hash(meta: FeedMeta, story: StoryView, langs: list[str]) -> str:
    """Everything `render_story` reads, hashed: an unchanged story page is not rendered again (the
    briefing and the category link included: either can change while the story's articles do not)."""
    inputs = (story.story_id, story.headline, story.headline_lang, story.is_original, story.summary,
              story.summary_lang, story.significance, story.langs, story.source_count, story.article_count,
              story.sources, story.first_published_at, story.latest_published_at, story.updated_at, story.event,
              story.page, story.category, story.briefing, story.category_page, langs, meta.lang, meta.dir, meta.title,
              meta.site_title, repr(sorted(meta.labels.items())), _templates_hash())
    return hashlib.sha256(repr(_in_utc(inputs)).encode("utf-8", "surrogatepass")).hexdigest()


def _in_utc(value):
    """`value` with every aware datetime in timezone.utc. A stamp decided in this run carries
    timezone.utc, the same stamp read back from publish_entries carries the session's zone
    (ZoneInfo('Etc/UTC')): the same instant, but repr() differs, so a rerun saw every page as
    changed and stored a page_hash an uninterrupted run never stores."""
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo is not None else value
    if isinstance(value, (list, tuple)):
        return type(value)(_in_utc(x) for x in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: _in_utc(getattr(value, f.name))
                                             for f in dataclasses.fields(value) if f.init})
    return value


# A story or event page carries no site-wide stamp, so it is rewritten only when it changed.
def render_story(meta: FeedMeta, story: StoryView, langs: list[str]) -> str:
    """`langs`: every published language (the story has a page in each)."""
    return _page("story.html.j2", meta, meta.lang, meta.dir, meta.labels, "../../",
                 f"{story.headline} · {meta.site_title}", meta.site_title, None,
                 _switch(langs or [meta.lang], "../../", story.page), s=story)


def render_event(meta: FeedMeta, event: EventView, stories: list[EventStoryLine], langs: list[str] | None = None) -> str:
    return _page("event.html.j2", meta, meta.lang, meta.dir, meta.labels, "../../",
                 f"{event.title} · {meta.site_title}", meta.site_title, None,
                 _switch(langs or [meta.lang], "../../", event.page), e=event, stories=stories)


def render_root(site_title: str, lang: str, direction: str, labels: dict, languages: list[RootLanguage],
                generated: datetime) -> str:
    return _page("root.html.j2", None, lang, direction, labels, "", site_title, site_title, generated,
                 _switch([x.lang for x in languages], "", "index.html"), languages=languages)


def render_entry_content(meta: FeedMeta, story: StoryView) -> str:
    """The entry's HTML body (summary, counts, every source, the event), absolute links only.
    Cached on the view: the Atom and the JSON feed carry the same body."""
    key = (meta.base_url, meta.lang)
    if story.content_html is not None and story.content_key == key:
        return story.content_html
    story.content_key = key
    story.content_html = _entry_content(meta, story)
    return story.content_html


def _entry_content(meta: FeedMeta, story: StoryView) -> str:
    event_url = meta.url(story.event.page) if story.event else ""
    category_url = meta.url(story.category_page) if story.category_page else ""
    return _env().get_template("entry_content.html.j2").render(
        s=story, L=meta.labels, lang=meta.lang, story_url=meta.url(story.page), event_url=event_url, url=meta.url,
        category_url=category_url, **_helpers(meta.lang, meta.labels)).strip()


# ------------------------------------------------------------------------------------- Atom
def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str | None) -> ET.Element:
    el = ET.SubElement(parent, f"{{{ATOM_NS}}}{tag}")
    for key, value in attrs.items():
        if value is not None:
            el.set(XML_LANG if key == "xml_lang" else key, xml_text(value))
    if text is not None:
        el.text = xml_text(text)
    return el


def build_atom(meta: FeedMeta, stories: list[StoryView]) -> bytes:
    """RFC 4287 feed. Each story is one entry: its tag URI id, `published` when it first appeared,
    `updated` when what it shows last changed, the story page as alternate link and every source
    article as a `related` link."""
    ET.register_namespace("", ATOM_NS)
    feed = ET.Element(f"{{{ATOM_NS}}}feed", {XML_LANG: meta.lang})
    _sub(feed, "id", meta.feed_id)
    _sub(feed, "title", meta.title, type="text")
    _sub(feed, "subtitle", meta.subtitle, type="text")
    _sub(feed, "updated", rfc3339(meta.updated))
    _sub(feed, "link", rel="self", type="application/atom+xml", href=meta.feed_url("atom.xml"))
    _sub(feed, "link", rel="alternate", type="text/html", href=meta.feed_url("index.html"))
    _sub(feed, "link", rel="alternate", type="application/feed+json", href=meta.feed_url("feed.json"))
    # The feed keeps a window; every earlier day is in the archive (an IANA-registered relation).
    _sub(feed, "link", rel="archives", type="text/html", href=meta.url(ARCHIVE_INDEX))
    author = _sub(feed, "author")
    _sub(author, "name", meta.site_title)
    _sub(feed, "generator", GENERATOR)
    _sub(feed, "icon", meta.site_url(FAVICON))
    for s in stories:
        entry = _sub(feed, "entry")
        _sub(entry, "id", s.entry_id)
        _sub(entry, "title", s.headline, type="text", xml_lang=s.headline_lang)
        _sub(entry, "published", rfc3339(s.published_at or meta.updated))
        _sub(entry, "updated", rfc3339(s.updated_at or meta.updated))
        # The outlets that carried the story are its authors (the feed's author covers none).
        for src in s.sources:
            if src.name:
                outlet = _sub(entry, "author")
                _sub(outlet, "name", src.name)
                if src.home:
                    _sub(outlet, "uri", src.home)
        _sub(entry, "link", rel="alternate", type="text/html", href=meta.url(s.page))
        for src in s.sources:
            if src.url:
                _sub(entry, "link", rel="related", type="text/html", href=src.url, title=src.name, hreflang=src.lang)
        term, scheme, label = category(meta, s)
        _sub(entry, "category", term=term, scheme=scheme, label=label)
        if s.summary:
            _sub(entry, "summary", s.summary, type="text", xml_lang=s.summary_lang)
        _sub(entry, "content", render_entry_content(meta, s), type="html")
    ET.indent(feed)
    return ET.tostring(feed, encoding="utf-8", xml_declaration=True) + b"\n"


def category(meta: FeedMeta, s: StoryView) -> tuple[str, str, str]:
    """(term, scheme, label) of a story's one category (its event is in the entry's content and data)."""
    return s.category, meta.url("category/"), category_name(s.category, meta.lang)


# -------------------------------------------------------------------------------- JSON Feed
def build_json_feed(meta: FeedMeta, stories: list[StoryView]) -> str:
    """JSON Feed 1.1 (https://www.jsonfeed.org/version/1.1/): the same entries as the Atom feed,
    with the story's counts and sources also as data under `_newsdedup`."""
    items = []
    for s in stories:
        item = {
            "id": s.entry_id,
            "url": meta.url(s.page),
            "title": s.headline,
            "content_html": render_entry_content(meta, s),
            "summary": s.summary,
            "date_published": rfc3339(s.published_at or meta.updated),
            "date_modified": rfc3339(s.updated_at or meta.updated),
            "language": s.headline_lang or meta.lang,
            "_newsdedup": {
                "about": meta.url("index.html"),
                "story_id": s.story_id,
                "significance": round(s.significance, 2),
                "languages": list(s.langs),
                "source_count": s.source_count,
                "article_count": s.article_count,
                "translated": not s.is_original,
                "sources": [{"name": x.name, "url": x.url, "language": x.lang} for x in s.sources if x.url],
                "event": ({"id": s.event.event_id, "title": s.event.title, "url": meta.url(s.event.page)}
                          if s.event else None),
            },
        }
        first_source = next((x.url for x in s.sources if x.url), None)
        if first_source:
            item["external_url"] = first_source
        item["tags"] = [category(meta, s)[2]]
        authors = [{"name": x.name, **({"url": x.home} if x.home else {})} for x in s.sources if x.name]
        if authors:
            item["authors"] = authors
        items.append(item)
    feed = {
        "version": JSON_FEED_VERSION,
        "title": meta.title,
        "home_page_url": meta.feed_url("index.html"),
        "feed_url": meta.feed_url("feed.json"),
        "description": meta.subtitle,
        "language": meta.lang,
        "icon": meta.site_url(ICON),
        "favicon": meta.site_url(FAVICON),
        "authors": [{"name": meta.site_title, "url": meta.site_url("")}],
        # JSON Feed has no archive field: an extension, as the items' `_newsdedup`.
        "_newsdedup": {"archive": meta.url(ARCHIVE_INDEX)},
        "items": items,
    }
    return json.dumps(feed, ensure_ascii=False, indent=1) + "\n"
