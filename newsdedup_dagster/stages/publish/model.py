"""What one language's feed and site show, built from the digest's story records (pure).

The choice of text per language is the digest's (`shared.presentation.stories.build_view`): the story's
translation, else the rewritten text when already in that language, else the story's own
article in that language, else the pivot-language headline marked with its language. The feed
adds what the digest leaves out: every outlet with its article, counts, languages, the story's one
category (`briefings.categories.story_category`: its briefing's, else the offline one from its own
text), the entry's stamps.

An outlet is the publisher host of an article's link (`publisher_host`): an aggregator's item
that links to reuters.com is Reuters' article, so a story counts and lists each host once, and
such an item is named by the host it links to, not by the aggregator.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from urllib.parse import quote, urlsplit, urlunsplit

from newsdedup_dagster.shared.presentation.categories import story_category
from newsdedup_dagster.shared.presentation.labels import locale_of
from newsdedup_dagster.shared.presentation.stories import (
    DigestEvent,
    StoryRecord,
    build_view,
    clean_line,
    outlet_name,
    safe_url,
)
from newsdedup_dagster.shared.text.places import country_of_name
from newsdedup_dagster.shared.text.players import distinct_players

__all__ = ["FeedCandidate", "SourceArticle", "StoryLink",
           "StoryView", "EventView", "EntryStamp", "story_views", "fingerprint", "decide_stamp",
           "entry_tag_uri", "feed_tag_uri", "category_feed_tag_uri", "category_page", "safe_name", "valid_lang_tag",
           "publisher_host", "outlet_name", "uri_text"]

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,120}$")
_LANG_TAG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")


def safe_name(identifier: str) -> str:
    """A file name for a story/event id: the id itself when it is plain, else a hash of it."""
    if _SAFE_NAME.match(identifier):
        return identifier
    return "x" + hashlib.sha256(identifier.encode("utf-8")).hexdigest()[:32]


def valid_lang_tag(lang: str | None) -> str | None:
    """A BCP 47-shaped language tag or None ('und', 'mul', junk from feeds)."""
    if not lang or lang in ("und", "mul") or not _LANG_TAG.match(lang):
        return None
    return lang


# RFC 3986 section 2: what may stand unescaped in a URI; everything else is percent-encoded
# (UTF-8). "%" is kept only as the start of a valid escape.
_URI_ALLOWED = "!$&'()*+,;=:@/?-._~"
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _encode_part(part: str) -> str:
    # A lone surrogate cannot be UTF-8: it is written as its escape, never dropped silently.
    return quote(_BAD_PERCENT.sub("%25", part), safe=_URI_ALLOWED + "%", errors="backslashreplace")


def uri_text(url: str) -> str:
    """`url` as a URI every validator accepts: path, query and fragment percent-encoded where
    RFC 3986 does not allow a character (franceinfo's `#xtor=RSS-3-[lestitres]` becomes
    `#xtor=RSS-3-%5Blestitres%5D`), the host IDNA-encoded. Already valid URIs are unchanged."""
    if not url:
        return url
    parts = urlsplit(url)
    netloc = parts.netloc
    if netloc and not netloc.isascii():
        try:
            host = parts.hostname or ""
            ascii_host = host.encode("idna").decode("ascii")
            netloc = netloc.replace(host, ascii_host) if host in netloc else netloc
        except UnicodeError:
            netloc = quote(netloc, safe=_URI_ALLOWED + "[]%")
    return urlunsplit((parts.scheme, netloc, _encode_part(parts.path), _encode_part(parts.query),
                       _encode_part(parts.fragment)))


def publisher_host(url: str | None) -> str | None:
    """The outlet an article's link belongs to: its host, lower-case, without a leading `www.`,
    `m.`, `amp.` or `mobile.` (the same rule as the SQL of `publish_candidates`, sql/queries/publish.sql)."""
    if not url:
        return None
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    if not host:
        return None
    return re.sub(r"^(www|m|amp|mobile)\.", "", host.lower()) or None


@dataclass(frozen=True)
class FeedCandidate:
    """One scored story, as the candidate query returns it."""

    story_id: str
    significance: float
    event_id: str | None
    first_published_at: datetime
    latest_published_at: datetime
    article_count: int
    source_count: int
    langs: tuple[str, ...]
    articles_hash: str          # changes whenever the story gains (or loses) an article


@dataclass(frozen=True)
class SourceArticle:
    """One source of a story with its own article: what a story page lists."""

    name: str
    url: str                    # "" when the article's URL is not an absolute http(s) URL
    lang: str | None
    title: str = ""
    published_at: datetime | None = None
    home: str = ""              # the outlet's site (scheme://host/), its author URI in the feeds
    outlet: str = ""            # item_outlet() of the article: what a briefing's citation points at


@dataclass(frozen=True)
class StoryLink:
    """An earlier story of the same event, cited by its page (its permanent link)."""

    story_id: str
    headline: str               # in the reader's language where translated, like its own page's
    headline_lang: str | None
    first_published_at: datetime
    page: str                   # story/<id>.html under the language directory


@dataclass(frozen=True)
class BriefingLine:
    text: str
    lang: str | None
    refs: tuple[int, ...]       # 1-based numbers of the story's sources the line cites
    speaker: str = ""           # quotes only
    role: str = ""
    stories: tuple[StoryLink, ...] = ()   # background and what to watch: the earlier stories cited


@dataclass(frozen=True)
class NameView:
    """A player or place as a page shows it: as the articles write it, or a country's name in the
    page's language (CLDR), with the numbers of the sources that name it."""

    text: str
    lang: str | None
    refs: tuple[int, ...] = ()


@dataclass(frozen=True)
class BriefingView:
    category: str               # a briefings.taxonomy category
    method: str                 # extractive | model
    points: tuple[BriefingLine, ...]
    quotes: tuple[BriefingLine, ...]
    # (country code, line): two or more of different countries, or none (a single one is no difference)
    perspectives: tuple[tuple[str, BriefingLine], ...] = ()
    players: tuple[NameView, ...] = ()
    places: tuple[NameView, ...] = ()
    names_lang: str | None = None   # the briefing's language, which its players and places are written in
    summary: BriefingLine | None = None   # in the reader's language where translated, like the points
    background: tuple[BriefingLine, ...] = ()
    watch: tuple[BriefingLine, ...] = ()
    # The background is the event's earlier stories themselves (no line of the briefing gave one):
    # each line's text is empty and its one story is what it shows.
    background_listed: bool = False

    @staticmethod
    def country_name(code: str, lang: str) -> str:
        """A country's name in the page's language (CLDR), the code itself when CLDR has none."""
        return locale_of(lang).territories.get(code.upper(), code)


@dataclass(frozen=True)
class StoredBriefing:
    """A story_briefings row as publishing reads it: the briefing and each article's outlet."""

    category: str
    method: str
    briefing: dict
    outlets: dict[str, str]     # item id -> item_outlet()


@dataclass(frozen=True)
class EventView:
    event_id: str
    title: str
    title_lang: str | None
    sections: list[tuple[str, str]]
    narrative_lang: str | None
    offline: bool
    story_count: int
    days: int
    page: str                   # path under the language directory: event/<id>.html


@dataclass
class StoryView:
    story_id: str
    headline: str
    headline_lang: str | None
    is_original: bool           # no text in the feed's language: the original headline, marked
    summary: str
    summary_lang: str | None
    significance: float
    langs: tuple[str, ...]
    source_count: int
    article_count: int
    sources: list[SourceArticle]  # every source, safe http(s) links only (url "" = no link)
    first_published_at: datetime
    latest_published_at: datetime
    event: EventView | None
    page: str                   # path under the language directory: story/<id>.html
    category: str = ""          # its one taxonomy category (story_category), the same wherever it is shown
    fingerprint: str = ""
    entry_id: str = ""
    published_at: datetime | None = None
    updated_at: datetime | None = None
    content_html: str | None = None     # the feed entry's body, rendered once for Atom and JSON
    content_key: tuple | None = None
    briefing: BriefingView | None = None
    category_page: str = ""             # its category page under the language directory, once that exists

    @property
    def scored(self) -> bool:
        """Whether the story has a significance to show: the offline heuristic gives 0.0 to a story
        nothing measures yet (one outlet), which is no score, not the lowest one."""
        return self.significance > 0


def _event_view(e: DigestEvent | None) -> EventView | None:
    if e is None:
        return None
    return EventView(e.event_id, e.title, e.title_lang, e.sections, e.narrative_lang, e.offline, e.story_count,
                     e.days, f"event/{safe_name(e.event_id)}.html")


# Earlier stories an offline background lists (the latest, oldest first).
BACKGROUND_STORIES = 3


def briefing_view(stored: StoredBriefing | None, sources: list[SourceArticle],
                  earlier: dict[str, StoryLink] | None = None, lang: str | None = None) -> BriefingView | None:
    """The briefing as a page shows it: each line's citations as the numbers of the story's source
    lines (by outlet); a line none of whose citations is a shown source is left out. Its players and
    places, at most 5 each (a short line). `earlier`: the earlier stories of the story's event that
    have a page, by id, oldest first: what background and what-to-watch lines may cite besides the
    sources; when the briefing has no background line left, the background lists the latest of them.
    A place that is a country is named in the page's language `lang`; other names as written."""
    if stored is None:
        return None
    earlier = earlier or {}
    number = {}
    for n, source in enumerate(sources, 1):
        number.setdefault(source.outlet, n)

    def refs(item_ids) -> tuple[int, ...]:
        found = {number.get(stored.outlets.get(str(i), "")) for i in item_ids or ()}
        return tuple(sorted(n for n in found if n))

    def line(value) -> BriefingLine | None:
        """A summary or point as shown: its text and the numbers of the shown sources it cites."""
        if not isinstance(value, dict) or not isinstance(value.get("text"), str):
            return None
        cited = refs(value.get("citations"))
        text = clean_line(value["text"])
        return BriefingLine(text, valid_lang_tag(value.get("lang")), cited) if cited and text else None

    summary = line(stored.briefing.get("summary"))
    points = [p for p in map(line, stored.briefing.get("points") or ()) if p is not None]
    quotes = []
    for said in stored.briefing.get("quotes") or ():
        cited = refs([said.get("article_id")])
        if cited and said.get("text") and said.get("speaker"):
            quotes.append(BriefingLine(clean_line(said["text"]), valid_lang_tag(said.get("lang")), cited,
                                       clean_line(said["speaker"]), clean_line(said.get("role") or "")))
    # Briefings stored before perspectives existed have none; one left after the citations are
    # matched to the shown sources differs from nothing, so it is not shown either.
    perspectives = []
    for held in stored.briefing.get("perspectives") or ():
        cited = refs(held.get("citations"))
        country = str(held.get("country") or "").strip().upper()
        if cited and held.get("text") and country and country not in {c for c, _ in perspectives}:
            perspectives.append((country, BriefingLine(clean_line(held["text"]), valid_lang_tag(held.get("lang")),
                                                       cited)))
    if len(perspectives) < 2:
        perspectives = []
    if summary is None and not points and not quotes and not perspectives:
        return None

    first = stored.briefing.get("summary") or {}
    # The language the names are written in: the briefing's own (a translation keeps it as names_lang).
    names_lang = valid_lang_tag(stored.briefing.get("names_lang")) or next(
        (valid_lang_tag(x.get("lang")) for x in (first, *(stored.briefing.get("points") or ()))
         if isinstance(x, dict) and x.get("lang")), None)
    named = stored.briefing.get("named") if isinstance(stored.briefing.get("named"), dict) else {}

    def names(key: str) -> tuple[NameView, ...]:
        out: dict[str, NameView] = {}
        raws = [raw for raw in stored.briefing.get(key) or () if isinstance(raw, str)]
        # Laws and acronyms of a listed name out of the players, whoever listed them (briefings stored
        # before the rule, a model's list).
        for raw in distinct_players(raws) if key == "players" else raws:
            name = clean_line(raw)
            if not name:
                continue
            view = NameView(name, names_lang, refs(named.get(raw) or ()))
            code = country_of_name(name) if key == "places" and lang else None
            if code:
                view = NameView(clean_line(BriefingView.country_name(code, lang)), lang, view.refs)
            out.setdefault(view.text, view)
        return tuple(out.values())[:5]

    def context(value) -> BriefingLine | None:
        """A background or what-to-watch line: its sources and the earlier stories it cites (one of them at least)."""
        if not isinstance(value, dict) or not isinstance(value.get("text"), str):
            return None
        cited = refs(value.get("citations"))
        stories = tuple(earlier[str(i)] for i in dict.fromkeys(value.get("stories") or ()) if str(i) in earlier)
        text = clean_line(value["text"])
        return BriefingLine(text, valid_lang_tag(value.get("lang")), cited, stories=stories) \
            if text and (cited or stories) else None

    background = [c for c in map(context, stored.briefing.get("background") or ()) if c is not None]
    watch = [c for c in map(context, stored.briefing.get("watch") or ()) if c is not None]
    listed = not background and bool(earlier)
    if listed:
        background = [BriefingLine("", link.headline_lang, (), stories=(link,))
                      for link in list(earlier.values())[-BACKGROUND_STORIES:]]

    return BriefingView(stored.category, stored.method, tuple(points), tuple(quotes), tuple(perspectives),
                        names("players"), names("places"), names_lang, summary, tuple(background), tuple(watch),
                        listed)


def earlier_links(records: list[StoryRecord], shown: list, candidates: dict[str, FeedCandidate],
                  events: dict[str, list[tuple[str, datetime]]], pages: set[str]) -> dict[str, dict[str, StoryLink]]:
    """Per story, the stories of its event first reported on an earlier UTC day that have a page (in
    `pages`), oldest first, each with its headline as `shown` (build_view's stories, aligned with
    `records`) gives it."""
    headline = {r.story_id: (x.headline, valid_lang_tag(x.headline_lang)) for r, x in zip(records, shown)}
    out: dict[str, dict[str, StoryLink]] = {}
    for record in records:
        if record.event is None:
            continue
        cand = candidates.get(record.story_id)
        first_day = (cand.first_published_at if cand else record.first_published_at).astimezone(UTC).date()
        links = {}
        for sid, first in events.get(record.event.event_id, ()):
            if sid != record.story_id and sid in pages and sid in headline and first.astimezone(UTC).date() < first_day:
                links[sid] = StoryLink(sid, headline[sid][0], headline[sid][1], first.astimezone(UTC),
                                       f"story/{safe_name(sid)}.html")
        if links:
            out[record.story_id] = links
    return out


def story_views(day: date, lang: str, records: list[StoryRecord], candidates: dict[str, FeedCandidate],
                articles: dict[str, list[SourceArticle]] | None = None,
                briefings: dict[str, StoredBriefing] | None = None,
                events: dict[str, list[tuple[str, datetime]]] | None = None,
                pages: set[str] | None = None) -> list[StoryView]:
    """One view per record (in the records' order) for the feed in `lang`. `articles` (story id ->
    its sources with their articles' titles) replaces the record's plain source links. `events`
    (event id -> its stories with their first report) and `pages` (the stories with a page in
    `lang`) give a briefing the earlier stories its background cites or lists."""
    view = build_view(day, lang, records)
    earlier = earlier_links(records, view.stories, candidates, events or {}, pages or set())
    out: list[StoryView] = []
    for record, shown in zip(records, view.stories):
        cand = candidates.get(record.story_id)
        raw = (articles or {}).get(record.story_id) or [SourceArticle(s.name, s.url, s.lang) for s in record.sources]
        sources = []
        for s in raw:
            url = uri_text(safe_url(s.url) or "")
            host = publisher_host(url)
            home = uri_text(f"{urlsplit(url).scheme}://{urlsplit(url).hostname}/") if host else ""
            sources.append(SourceArticle(clean_line(s.name), url, valid_lang_tag(s.lang), clean_line(s.title),
                                         s.published_at, home, s.outlet))
        out.append(StoryView(
            story_id=record.story_id, headline=shown.headline, headline_lang=valid_lang_tag(shown.headline_lang),
            is_original=shown.is_original, summary=shown.summary, summary_lang=valid_lang_tag(shown.summary_lang),
            significance=record.significance,
            langs=cand.langs if cand else tuple(sorted({s.lang for s in sources if s.lang})),
            source_count=cand.source_count if cand else (record.source_total or len(sources)),
            article_count=cand.article_count if cand else len(sources),
            sources=sources,
            first_published_at=cand.first_published_at if cand else record.first_published_at,
            latest_published_at=cand.latest_published_at if cand else record.first_published_at,
            event=_event_view(shown.event), page=f"story/{safe_name(record.story_id)}.html",
            category=_category((briefings or {}).get(record.story_id), record),
            briefing=briefing_view((briefings or {}).get(record.story_id), sources, earlier.get(record.story_id),
                                   lang),
        ))
    return out


def _category(stored: StoredBriefing | None, record: StoryRecord) -> str:
    return story_category(stored.category if stored is not None else None,
                          (record.headline, record.original_title), (record.summary,))


def category_page(category: str) -> str:
    """A category's page under the language directory (its feeds sit beside it)."""
    return f"category/{category}/index.html"


def fingerprint(story: StoryView, articles_hash: str) -> str:
    """What a subscriber would see change: the articles, the score, the text, the event, the briefing."""
    payload = [articles_hash, round(story.significance, 2), story.headline, story.summary,
               story.is_original, story.event.event_id if story.event else None]
    if story.briefing is not None:
        # The entry's content carries the briefing: a new version or its translation is a change.
        payload.append(repr(story.briefing))
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class EntryStamp:
    entry_id: str
    published_at: datetime
    updated_at: datetime
    status: str                 # new | updated | unchanged


def entry_tag_uri(authority: str, minted: datetime, story_id: str, lang: str) -> str:
    """RFC 4151 tag URI, minted once per (story, language) and then kept."""
    return f"tag:{authority},{minted.date().isoformat()}:story/{story_id}/{lang}"


def feed_tag_uri(authority: str, minted: datetime, lang: str) -> str:
    return f"tag:{authority},{minted.date().isoformat()}:feed/{lang}"


def category_feed_tag_uri(authority: str, minted: datetime, lang: str, category: str) -> str:
    """A category feed's id: under its language feed's, minted on the same date, so it never changes."""
    return f"{feed_tag_uri(authority, minted, lang)}/category/{category}"


def decide_stamp(stored: tuple[str, datetime, datetime, str] | None, new_fingerprint: str, stamp: datetime,
                 authority: str, story_id: str, lang: str, first_seen: datetime | None = None,
                 last_changed: datetime | None = None) -> EntryStamp:
    """The entry's id and stamps. `stored` = (entry_id, published_at, updated_at, fingerprint) from
    an earlier run, `stamp` = this run's time (it mints the id), `first_seen`/`last_changed` = the
    story's first and newest article. A new entry is published when the story was first seen
    and updated when it last gained an article (exact times, not the run's hour; never after
    `stamp`). Unchanged content keeps its stamps (a rerun is a no-op); changed content moves
    `updated` to the newest article, or one second past the previous `updated` when the change
    is not a new article (a translation, a score), so a reader always sees the newer version as
    newer."""
    first = min(first_seen or stamp, stamp)
    last = max(min(last_changed or first, stamp), first)
    if stored is None:
        return EntryStamp(entry_tag_uri(authority, stamp, story_id, lang), first, last, "new")
    entry_id, published_at, updated_at, old = stored
    if old == new_fingerprint:
        return EntryStamp(entry_id, published_at, updated_at, "unchanged")
    return EntryStamp(entry_id, published_at, max(last, updated_at + timedelta(seconds=1)), "updated")
