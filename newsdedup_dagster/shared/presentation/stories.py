"""A story as a reader sees it, shared by the site and the digest: what is loaded from the database for
the stories shown (`load_records`) and the view a page or a mail renders (`build_view`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from urllib.parse import urlsplit

import psycopg
from babel.lists import format_list

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.models.translation import translated_briefing
from newsdedup_dagster.shared.presentation.labels import (
    count,
    event_span,
    labels_for,
    language_name,
    locale_of,
    long_date,
    text_direction,
)
from newsdedup_dagster.shared.presentation.narrative import FACTS, Run, narrative_lines
from newsdedup_dagster.shared.presentation.taxonomy import CATEGORIES, category_name
from newsdedup_dagster.shared.text.cleaning import clean_visible_line
from newsdedup_dagster.shared.text.headline import strip_named_outlet


@dataclass(frozen=True)
class Selected:
    rank: int
    story_id: str
    event_id: str | None
    region: str | None
    significance: float
    relaxed_region: bool = False    # taken in the fill pass, beyond the region limit


SECTIONS = ("what_happened", "background", "how_it_developed", "what_to_watch")


# Sources listed per story; the rest are counted ("and 4 more").
SOURCES_SHOWN = 5


# Key points a digest shows per story (the story page shows all of them).
POINTS_SHOWN = 3


# Perspectives a digest shows per story (a briefing has at most 4).
PERSPECTIVES_SHOWN = 3


def outlet_name(source_name: str, syndicator: bool, outlet: str | None, feed_outlet: str | None) -> str:
    """How a story's source is named: an aggregator's item (syndicator) that belongs to another
    outlet (item_outlet() in SQL: the publisher it was attributed to or whose article it links) is
    named by that outlet; anything else keeps its source's name. The aggregator's own domain
    (news.google.com's feed, google.com's items) is not another outlet."""
    if not syndicator or not outlet or outlet.startswith("source:") or not feed_outlet:
        return source_name
    same = outlet == feed_outlet or feed_outlet.endswith("." + outlet) or outlet.endswith("." + feed_outlet)
    return source_name if same else outlet


@dataclass(frozen=True)
class SourceLink:
    name: str
    url: str
    lang: str | None = None


@dataclass
class EventRecord:
    event_id: str
    title: str
    narrative: dict | None
    narrative_lang: str | None
    narrative_offline: bool
    story_count: int
    first_published_at: datetime
    last_published_at: datetime
    translations: dict[str, tuple[str | None, dict | None]] = field(default_factory=dict)


@dataclass(frozen=True)
class StoryBriefing:
    """A story_briefings row as the digest reads it: the briefing and each article's outlet name."""

    category: str
    method: str                   # extractive | model
    briefing: dict
    outlets: dict[str, str]       # item id -> the outlet name its source line shows
    # lang -> the briefing with its lines in that language (llm.translation.translated_briefing)
    translated: dict[str, dict] = field(default_factory=dict)

    def in_lang(self, lang: str | None) -> dict:
        """The briefing a reader of `lang` reads: its translation when there is one, else itself."""
        return self.translated.get(lang or "", self.briefing)


@dataclass(frozen=True)
class DigestPoint:
    text: str
    lang: str | None
    outlets: tuple[str, ...]      # the outlets of the articles the point cites


@dataclass(frozen=True)
class DigestPerspective:
    country: str                  # the country's name in the digest's language
    text: str
    lang: str | None
    outlets: tuple[str, ...]      # the outlets of the articles the line cites (all of that country)


@dataclass
class StoryRecord:
    story_id: str
    significance: float
    headline: str                 # story_scores.headline (pivot language)
    summary: str
    pivot_lang: str               # language of headline/summary ('und' = unknown)
    original_title: str
    original_lang: str | None
    first_published_at: datetime
    sources: list[SourceLink] = field(default_factory=list)
    source_total: int = 0
    translations: dict[str, tuple[str, str]] = field(default_factory=dict)
    # lang -> (title, summary) of the story's own article in that language, if it has one
    native: dict[str, tuple[str, str]] = field(default_factory=dict)
    event: EventRecord | None = None
    briefing: StoryBriefing | None = None


@dataclass
class DigestEvent:
    event_id: str
    title: str
    title_lang: str | None
    sections: list[tuple[str, tuple[Run, ...]]]   # (label, the line's runs)
    narrative_lang: str | None
    offline: bool
    story_count: int
    days: int


@dataclass
class DigestStory:
    rank: int
    story_id: str
    headline: str
    headline_lang: str | None
    is_original: bool               # no translation: the original-language headline
    summary: str
    summary_lang: str | None
    sources: list[SourceLink]
    more_sources: int
    significance: float
    event: DigestEvent | None
    category: str = ""              # the briefing's category, named in the digest's language
    points: tuple[DigestPoint, ...] = ()
    extractive: bool = False        # the points are the articles' own sentences (no model)
    perspectives: tuple[DigestPerspective, ...] = ()   # none, or two or more of different countries
    since: str = ""                 # what is new since the reader's previous edition carried it (stages/digest/updates.py)


@dataclass
class DigestView:
    day: date
    lang: str
    dir: str
    labels: dict[str, str]
    subject: str
    stories: list[DigestStory]


def safe_url(url: str | None) -> str | None:
    """Only absolute http(s) URLs become links (no javascript:, data:, relative paths)."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    return url.strip() if parts.scheme in ("http", "https") and parts.netloc else None


def clean_line(text: str | None) -> str:
    """One line of plain text: no control, invisible or direction-changing characters, no line
    breaks (shared/text/cleaning.py's rules, the same for feed text and model output)."""
    return clean_visible_line(text)


MIN_EVENT_STORIES_SHOWN = 2


def _lang_known(lang: str | None) -> str | None:
    return None if not lang or lang in ("und", "mul") else lang


def narrative_sections(narrative: dict | None, narrative_lang: str | None, offline: bool,
                       lang: str) -> dict[str, tuple[Run, ...]]:
    """The sections a reader of `lang` reads, each a line of runs: an extractive narrative written
    in `lang` from its facts; any other (a model's, or an extractive one stored before its facts
    were) as one run in its own language."""
    narrative = narrative or {}
    facts = narrative.get(FACTS)
    if offline and isinstance(facts, dict):
        try:
            return {k: runs for k, runs in narrative_lines(facts, lang).items() if "".join(r.text for r in runs)}
        except (KeyError, TypeError, ValueError, AttributeError):
            pass    # facts of another shape: the stored text below
    out = {}
    for key in SECTIONS:
        text = clean_line(narrative.get(key)) if isinstance(narrative.get(key), str) else ""
        if text:
            out[key] = (Run(text, "data", _lang_known(narrative_lang)),)
    return out


def briefing_points(briefing: StoryBriefing | None, limit: int = POINTS_SHOWN,
                    lang: str | None = None) -> tuple[DigestPoint, ...]:
    """The first key points a reader of the digest (in `lang`) sees, each with the outlets it comes from."""
    if briefing is None:
        return ()
    out = []
    for point in briefing.in_lang(lang).get("points") or ():
        if len(out) == limit or not isinstance(point, dict):
            break
        text = clean_line(point.get("text"))
        outlets = tuple(dict.fromkeys(clean_line(briefing.outlets.get(str(item), ""))
                                      for item in point.get("citations") or ()))
        outlets = tuple(name for name in outlets if name)
        if text and outlets:
            point_lang = point.get("lang")
            out.append(DigestPoint(text, _lang_known(point_lang) if isinstance(point_lang, str) else None, outlets))
    return tuple(out)


def briefing_perspectives(briefing: StoryBriefing | None, lang: str) -> tuple[DigestPerspective, ...]:
    """What each country's outlets stress, compact: the country named in `lang`, the line (its translation
    when there is one), the outlets it cites. As on the story page: one line per country, a line citing
    no outlet of the story left out, and none at all unless two countries are left."""
    if briefing is None:
        return ()
    out: list[DigestPerspective] = []
    seen: set[str] = set()
    territories = locale_of(lang).territories
    for held in briefing.in_lang(lang).get("perspectives") or ():
        if not isinstance(held, dict) or len(out) == PERSPECTIVES_SHOWN:
            continue
        text, code = clean_line(held.get("text")), str(held.get("country") or "").strip().upper()
        outlets = tuple(dict.fromkeys(clean_line(briefing.outlets.get(str(item), ""))
                                      for item in held.get("citations") or ()))
        outlets = tuple(name for name in outlets if name)
        if text and code and outlets and code not in seen:
            seen.add(code)
            line_lang = held.get("lang")
            out.append(DigestPerspective(clean_line(territories.get(code, code)), text,
                                         _lang_known(line_lang) if isinstance(line_lang, str) else None, outlets))
    return tuple(out) if len(out) >= 2 else ()


def build_view(day: date, lang: str, stories: list[StoryRecord]) -> DigestView:
    labels = labels_for(lang)
    out: list[DigestStory] = []
    for rank, s in enumerate(stories, start=1):
        translated = s.translations.get(lang)
        if translated and translated[0]:
            headline, headline_lang, summary, summary_lang, original = translated[0], lang, translated[1] or "", lang, False
        elif s.pivot_lang == lang:
            headline, headline_lang, summary, summary_lang, original = s.headline, lang, s.summary, lang, False
        elif lang in s.native:
            # No translation yet, but one of the story's own articles is in the reader's language.
            headline, summary = s.native[lang]
            headline_lang, summary_lang, original = lang, lang, False
        elif s.headline and _lang_known(s.pivot_lang):
            # The pivot language is the one every reader's fallback shares.
            headline, headline_lang, summary, summary_lang = s.headline, s.pivot_lang, s.summary, s.pivot_lang
            original = True
        else:
            headline, headline_lang = s.original_title or s.headline, _lang_known(s.original_lang)
            summary, summary_lang = s.summary, _lang_known(s.pivot_lang) or _lang_known(s.original_lang)
            original = headline_lang != lang
        event = None
        # A one-story event's narrative only restates the story: the panel starts at two stories.
        if s.event is not None and s.event.story_count >= MIN_EVENT_STORIES_SHOWN:
            e = s.event
            t_title, t_narr = e.translations.get(lang, (None, None))
            narr, narr_lang = (t_narr, lang) if t_narr else (e.narrative, e.narrative_lang)
            lines = narrative_sections(narr, narr_lang, bool(e.narrative_offline and not t_narr), lang)
            sections = [(labels[k], lines[k]) for k in SECTIONS if k in lines]
            days = (e.last_published_at.date() - e.first_published_at.date()).days + 1
            # An untranslated event title is the narrative's, in the narrative's language.
            title_lang = lang if t_title else (_lang_known(e.narrative_lang) if e.narrative else None)
            event = DigestEvent(e.event_id, clean_line(t_title or e.title), title_lang, sections,
                                _lang_known(narr_lang), bool(e.narrative_offline and not t_narr), e.story_count, days)
        sources = [SourceLink(clean_line(x.name), safe_url(x.url) or "", x.lang) for x in s.sources[:SOURCES_SHOWN]]
        points = briefing_points(s.briefing, lang=lang)
        known = s.briefing is not None and s.briefing.category in CATEGORIES
        category = category_name(s.briefing.category, lang) if known else ""
        out.append(DigestStory(rank, s.story_id, clean_line(headline), headline_lang, original, clean_line(summary),
                               summary_lang, sources, max(0, s.source_total - len(sources)), s.significance, event,
                               clean_line(category), points, bool(points) and s.briefing.method != "model",
                               briefing_perspectives(s.briefing, lang)))
    subject = clean_line(labels["subject"].format(date=long_date(lang, day)))
    return DigestView(day, lang, text_direction(lang), labels, subject, out)


def foreign_langs(runs, lang: str) -> list[str]:
    """The languages other than `lang` of a line's data runs, in order of appearance: what its
    "no translation yet" note names."""
    return list(dict.fromkeys(r.lang for r in runs if r.kind == "data" and r.lang and r.lang != lang))


def locale_helpers(lang: str, labels: dict) -> dict:
    """What templates call to write numbers, dates and language names the reader's way."""
    return {
        "count": lambda label, n: count(lang, label, n),
        "span": lambda stories, days: event_span(lang, labels, stories, days),
        "langname": lambda code: language_name(code, lang),
        "langlist": lambda codes: format_list([language_name(c, lang) for c in codes], locale=locale_of(lang))
        if codes else "",
        "longdate": lambda d: long_date(lang, d),
        "direction": text_direction,
        "foreign": lambda runs: foreign_langs(runs, lang),
        "plain": lambda runs: "".join(r.text for r in runs),
    }


def load_records(conn: psycopg.Connection, selected: list[Selected]) -> list[StoryRecord]:
    """Everything the renderer needs for the selected stories, in selection order (7 queries)."""
    ids = [s.story_id for s in selected]
    if not ids:
        return []
    records: dict[str, StoryRecord] = {}
    events: dict[str, EventRecord] = {}
    for row in conn.execute(db.load_sql("digest_story_details"), {"story_ids": ids}):
        (sid, sig, headline, summary, pivot_lang, original_title, original_lang, first,
         eid, etitle, narrative, narrative_lang, offline, ecount, efirst, elast) = row
        event = None
        if eid is not None:
            event = events.setdefault(eid, EventRecord(eid, etitle, narrative, narrative_lang, offline, ecount,
                                                       efirst, elast))
        records[sid] = StoryRecord(sid, float(sig), headline, summary, pivot_lang, original_title, original_lang,
                                   first, event=event)
    for sid, lang, headline, summary in conn.execute(db.load_sql("digest_story_translations"), {"story_ids": ids}):
        records[sid].translations[lang] = (headline, summary or "")
    for sid, lang, title, summary in conn.execute(db.load_sql("digest_story_native"), {"story_ids": ids}):
        records[sid].native[lang] = (title, summary or "")
    if events:
        for eid, lang, title, narrative in conn.execute(db.load_sql("digest_event_translations"),
                                                         {"event_ids": list(events)}):
            events[eid].translations[lang] = (title, narrative)
    for sid, category, method, briefing, outlets in conn.execute(db.load_sql("digest_story_briefings"),
                                                                   {"story_ids": ids}):
        names = {str(item): outlet_name(*parts) for item, parts in (outlets or {}).items()}
        records[sid].briefing = StoryBriefing(category, method, briefing or {}, names)
    if any(r.briefing is not None for r in records.values()):
        # Only translations of each briefing's current version come back (the query's guard).
        for sid, lang, lines in conn.execute(db.load_sql("briefing_translations_shown"), {"story_ids": ids}):
            shown = records[sid].briefing if sid in records else None
            if shown is not None:
                shown.translated[lang] = translated_briefing(shown.briefing, lines, lang)
    outlets: dict[str, set[str]] = {}
    for sid, name, url, lang, total, syndicator, outlet, feed_outlet in conn.execute(
            db.load_sql("digest_story_sources"), {"story_ids": ids}):
        shown = outlet_name(name, syndicator, outlet, feed_outlet)
        records[sid].sources.append(SourceLink(shown, url, lang))
        records[sid].source_total = int(total)
        outlets.setdefault(sid, set()).update(x for x in (name, shown, outlet) if x)
    conn.commit()
    for sid, record in records.items():
        _without_outlet_suffixes(record, outlets.get(sid, set()))
    return [records[s] for s in ids if s in records]


def _without_outlet_suffixes(record: StoryRecord, outlets: set[str]) -> None:
    """The story's headlines as a reader sees them: an article's title (the offline headline is
    one) without the " - The Japan Times" its feed appended, when that names one of its outlets."""
    record.headline = strip_named_outlet(record.headline or "", outlets)
    record.original_title = strip_named_outlet(record.original_title or "", outlets)
    record.native = {lang: (strip_named_outlet(title or "", outlets), summary)
                     for lang, (title, summary) in record.native.items()}
