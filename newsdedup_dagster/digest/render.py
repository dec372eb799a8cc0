"""Render a day's digest per language: HTML (Jinja2 with autoescaping) + plain text (pure).

Which text a reader of language L sees, per story:
- the story's translation into L (story_translations status 0), else
- the rewritten headline/summary if they are already in L (story_scores.pivot_lang = L), else
- the story's own article in L, else
- the pivot-language headline and summary (never a third language a source happened to write
  in), or, when the story has no pivot text, the representative article's title; either is
  marked with its language (`lang` attribute in HTML, a note in text).
Event narratives: the translation into L (event_translations status 0), else the narrative in
its own language; an offline extractive narrative carries a visible note and is written in L
(events/narrative.py `narrative_lines`: its own words in L, the stories' headlines as reported).
Each section is a line of runs, so that every stretch in another language is isolated (`<bdi>`
with its `lang` and direction) and named ("in English, no translation yet"), like every other
text shown in a language that is not L.
Briefings, in a compact form: the category's name in L and the first key points (their
translation into L when the briefing's current version has one, briefing_translations; else in the
briefing's own language, marked), each followed by the outlets of the articles it cites; a point
none of whose citations names an outlet of the story is left out; an extractive briefing is marked;
then the perspectives (the country named in L, its line, its outlets), two countries or none.

Hostile feed text (`<script>`, `"><img onerror=...>`) is data: the HTML environment
autoescapes every value, links keep only http(s) URLs, and subjects lose line breaks (no
header injection).

Each reader's copy carries that reader's unsubscribe link (`personalised`): the stored digest
holds UNSUBSCRIBE_SLOT, an HTML comment no feed text can produce (every value is escaped, so
`<!--` comes only from the template), replaced per message; the text part gets the link appended.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from urllib.parse import urlsplit

from babel.lists import format_list
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from ..briefings.taxonomy import CATEGORIES, category_name
from ..events.narrative import FACTS, Run, narrative_lines
from ..llm.text import clean_visible_line
from ..markdown_text import escape_markdown
from .labels import count, event_span, labels_for, language_name, locale_of, long_date, text_direction

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
SECTIONS = ("what_happened", "background", "how_it_developed", "what_to_watch")
# Sources listed per story; the rest are counted ("and 4 more").
SOURCES_SHOWN = 5
# Key points a digest shows per story (the story page shows all of them).
POINTS_SHOWN = 3
# Perspectives a digest shows per story (a briefing has at most 4).
PERSPECTIVES_SHOWN = 3
UNSUBSCRIBE_SLOT = "<!--newsdedup:unsubscribe-->"

__all__ = ["StoryRecord", "StoryBriefing", "EventRecord", "SourceLink", "DigestStory", "DigestPoint", "DigestPerspective",
           "DigestEvent", "DigestView",
           "RenderedDigest", "build_view", "render", "safe_url", "markdown_preview", "personalised",
           "UNSUBSCRIBE_SLOT"]


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
    since: str = ""                 # what is new since the reader's previous edition carried it (digest/updates.py)


@dataclass
class DigestView:
    day: date
    lang: str
    dir: str
    labels: dict[str, str]
    subject: str
    stories: list[DigestStory]


@dataclass
class RenderedDigest:
    day: date
    lang: str
    subject: str
    html: str
    text: str
    story_ids: list[str]
    event_ids: list[str]
    markdown: str


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
    breaks (llm/text.py's rules, the same for feed text and model output)."""
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


def _environments() -> tuple[Environment, Environment]:
    html_env = Environment(
        loader=FileSystemLoader(TEMPLATES_DIR),
        autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=True, default=True),
        undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
    )
    # Plain text must not be HTML-escaped ("&amp;" in a text mail is a bug, not a defence).
    text_env = Environment(loader=FileSystemLoader(TEMPLATES_DIR), autoescape=False, undefined=StrictUndefined,
                           trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    return html_env, text_env


_ENVS: tuple[Environment, Environment] | None = None


def _envs() -> tuple[Environment, Environment]:
    global _ENVS
    if _ENVS is None:
        _ENVS = _environments()
    return _ENVS


def _fmt(template: str, **values) -> str:
    return template.format(**values)


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


def render(view: DigestView) -> RenderedDigest:
    html_env, text_env = _envs()
    context = {"v": view, "L": view.labels, "fmt": _fmt, **locale_helpers(view.lang, view.labels)}
    html = html_env.get_template("digest.html.j2").render(**context)
    text = text_env.get_template("digest.txt.j2").render(**context)
    return RenderedDigest(
        day=view.day, lang=view.lang, subject=view.subject, html=html, text=text,
        story_ids=[s.story_id for s in view.stories],
        event_ids=sorted({s.event.event_id for s in view.stories if s.event}),
        markdown=markdown_preview(view),
    )


def personalised(html: str, text: str, lang: str, unsubscribe_link: str) -> tuple[str, str]:
    """(html, text) of one reader's copy: the rendered digest in `lang` with the reader's
    unsubscribe link in its footer (in the slot of the HTML, at the end of the text)."""
    html_env, text_env = _envs()
    context = {"L": labels_for(lang), "link": unsubscribe_link}
    footer = html_env.get_template("unsubscribe.html.j2").render(**context).rstrip("\n")
    if UNSUBSCRIBE_SLOT in html:
        html = html.replace(UNSUBSCRIBE_SLOT, footer, 1)
    else:   # a digest rendered without the slot: before the end of the body
        head, body_end, tail = html.rpartition("</body>")
        html = f"{head}{footer}\n{body_end}{tail}" if body_end else html + footer
    return html, text.rstrip("\n") + "\n" + text_env.get_template("unsubscribe.txt.j2").render(**context)


def markdown_preview(view: DigestView, limit: int = 5) -> str:
    """The top of the digest as markdown, for asset metadata."""
    lines = [f"**{escape_markdown(view.subject)}** ({view.lang}, {len(view.stories)} stories)", ""]
    for s in view.stories[:limit]:
        marker = f" _({s.headline_lang}, original)_" if s.is_original else ""
        lines.append(f"{s.rank}. **{escape_markdown(s.headline)}**{marker} — {escape_markdown(s.summary[:200])}")
        if s.event:
            lines.append(f"   - event: {escape_markdown(s.event.title)} ({s.event.story_count} stories, {s.event.days} days)")
    if len(view.stories) > limit:
        lines.append(f"\n… {len(view.stories) - limit} more")
    if not view.stories:
        lines.append(escape_markdown(view.labels["empty"]))
    return "\n".join(lines)
