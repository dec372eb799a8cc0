"""Every phrase the product writes itself (labels, counts, dates, the event narratives' own words,
the mail's header and footer) exists in every language it renders: the site's 11 published
languages (NEWSDEDUP_PUBLISH_LANGS' default: the pivot and the translation languages) and the
digest's 16 (the narrative languages). Checked twice: in the phrase tables themselves (a phrase
missing, or equal to the English one outside a short list of words spelled the same), and in
every page, feed and mail rendered in each language (no English phrase left in what a reader
sees). Text shown in another language than the reader's (an untranslated summary, key point,
quote, narrative line, event title or headline) carries its `lang`, its own bidi isolate and the
note naming its language ("in English, no translation yet"). Pure: rendering only."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from lxml import html as lxml_html

from newsdedup_dagster.config import LLMSettings
from newsdedup_dagster.shared.presentation.labels import (
    KEYS,
    LABELS,
    labels_for,
    language_name,
    locale_of,
    text_direction,
)
from newsdedup_dagster.shared.presentation.narrative import PHRASES, narrative_lines
from newsdedup_dagster.shared.presentation.stories import (
    SECTIONS,
    EventRecord,
    SourceLink,
    StoryBriefing,
    StoryRecord,
    build_view,
)
from newsdedup_dagster.shared.presentation.taxonomy import NAMES as CATEGORY_NAMES
from newsdedup_dagster.stages.digest.render import personalised, render
from newsdedup_dagster.stages.events.narrative import TimelineStory, offline_record
from newsdedup_dagster.stages.publish.archive import (
    archive_navigation,
    render_archive_day,
    render_archive_index,
    render_day_stories,
)
from newsdedup_dagster.stages.publish.countries import render_country
from newsdedup_dagster.stages.publish.model import FeedCandidate, SourceArticle, StoredBriefing, story_views
from newsdedup_dagster.stages.publish.render import (
    EventStoryLine,
    FeedMeta,
    RootLanguage,
    build_atom,
    build_json_feed,
    render_category,
    render_entry_content,
    render_event,
    render_index,
    render_root,
    render_story,
)

SITE_LANGS = (LLMSettings().pivot_lang, *LLMSettings().translation_langs)
MAIL_LANGS = LLMSettings().narrative_langs

# Which languages must have each table's phrases.
# One label table per language: the site's labels (site, archive, country pages) in every published
# language, the digest's (KEYS) in every mail language.
TABLES = {
    "site": ({lang: {k: v for k, v in table.items() if k not in KEYS} for lang, table in LABELS.items()}, SITE_LANGS),
    "digest": ({lang: {k: table[k] for k in KEYS if k in table} for lang, table in LABELS.items()}, MAIL_LANGS),
    "narrative": (PHRASES, MAIL_LANGS),
    "categories": (CATEGORY_NAMES, MAIL_LANGS),
}
# (table, language, key): a phrase that is the same word in that language as in English.
SAME_AS_ENGLISH = {("digest", "fr", "sources"), ("categories", "fr", "culture")}
# English words a page in another language may show: names (of the project, the formats, the time
# zone) and, per language, the words it spells the same way.
PROPER_NAMES = {"newsdedup", "Atom", "JSON Feed", "UTC"}
SAME_WORDS = {"fr": {"Sources", "sources", "source", "article", "articles"}}


def _forms(value) -> list[str]:
    return list(value.values()) if isinstance(value, dict) else [value]


def _has_words(text: str) -> bool:
    return bool(re.search(r"[^\W\d_]", re.sub(r"\{\w+\}", "", text)))


def missing_phrases(name: str, table: dict, lang: str) -> list[str]:
    """The keys of `table`'s English phrases that `lang` lacks, leaves in English, or whose counting
    form lacks one of the language's CLDR plural categories."""
    english, own = table["en"], table.get(lang, {})
    tags = set(locale_of(lang).plural_form.tags) | {"other"}
    out = []
    for key, value in english.items():
        if key not in own:
            out.append(key)
        elif (lang != "en" and own[key] == value and any(_has_words(v) for v in _forms(value))
              and (name, lang, key) not in SAME_AS_ENGLISH):
            out.append(key)
        elif isinstance(value, dict) and not (isinstance(own[key], dict) and tags <= set(own[key])):
            out.append(key)
    return out


def test_the_default_languages():
    assert len(SITE_LANGS) == 11 and len(MAIL_LANGS) == 16 and set(SITE_LANGS) <= set(MAIL_LANGS)


@pytest.mark.parametrize("lang", MAIL_LANGS)
def test_no_phrase_is_missing_or_left_in_english(lang):
    for name, (table, langs) in TABLES.items():
        if lang in langs:
            assert missing_phrases(name, table, lang) == [], (name, lang)


def test_the_table_check_finds_what_is_missing():
    assert missing_phrases("narrative", {"en": PHRASES["en"], "ar": {}}, "ar") == list(PHRASES["en"])
    left = {**PHRASES["ar"], "stays_open": PHRASES["en"]["stays_open"], "hour_count": {"other": "{n} ساعة"}}
    assert missing_phrases("narrative", {"en": PHRASES["en"], "ar": left}, "ar") == ["stays_open", "hour_count"]
    # a word spelled the same is allowed only where it is listed
    assert missing_phrases("site", {"en": {"topic_sport": "Sport"}, "it": {"topic_sport": "Sport"}}, "it") == [
        "topic_sport"]


# ------------------------------------------------------------------------ everything rendered
# Data text is made of symbols that are no word in any language: every word on a page is the product's.
D = "Ⓓ"
T = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
SOURCES = [SourceLink(D, "https://o1.example/a", "en"), SourceLink(D, "https://o2.example/b", "ja")]
OUTLETS = {"i1": "o1.example", "i2": "o2.example"}


def _briefing() -> dict:
    """A briefing whose lines are in English and Japanese: on most pages, another language."""
    line = {"text": D, "citations": ["i1"], "lang": "en"}
    return {"summary": line, "points": [line, {"text": D + D, "citations": ["i2"], "lang": "ja"}],
            "quotes": [{"text": D, "speaker": D, "role": D, "article_id": "i1", "lang": "en"}],
            "perspectives": [{**line, "country": "GB"}, {"text": D, "citations": ["i2"], "country": "JP", "lang": "ja"}],
            "players": [D], "places": ["Japan"], "background": [line], "watch": [line]}


def _records(lang: str) -> list[StoryRecord]:
    timeline = [TimelineStory("s1", T - timedelta(days=1), D, D + " " + D, "en", 6.0, 3, ("en", "ja")),
                TimelineStory("s2", T, D, D, "ja", 5.0, 9, ("ja",))]
    # An extractive narrative (its own words in the reader's language) and a model's, not translated.
    extractive = EventRecord("ev1", D, offline_record(timeline), "mul", True, 2, T - timedelta(days=1), T)
    modelled = EventRecord("ev2", D, {k: D for k in SECTIONS}, "en", False, 3, T - timedelta(days=2), T)
    briefing = StoryBriefing("disasters", "extractive", _briefing(), OUTLETS)
    translated = StoryRecord("s1", 7.5, D, D, "en", D, "en", T - timedelta(hours=3), sources=list(SOURCES),
                             source_total=9, translations={lang: (D, D)}, event=extractive, briefing=briefing)
    untranslated = StoryRecord("s2", 4.0, D, D, "en", D, "ja", T - timedelta(hours=2), sources=list(SOURCES),
                               source_total=2, event=modelled)
    alone = StoryRecord("s3", 3.0, D, D, "en", D, "en", T - timedelta(hours=1), sources=list(SOURCES), source_total=2)
    return [translated, untranslated, alone]


def _meta(lang: str, feed_path: str = "") -> FeedMeta:
    labels = labels_for(lang)
    return FeedMeta(lang, text_direction(lang), labels["feed_title"].format(site="newsdedup"), labels["feed_subtitle"],
                    "newsdedup", "https://news.example.org/", f"tag:x.example,2026-11-02:feed/{lang}", T, labels,
                    feed_path)


def mail_outputs(lang: str) -> dict[str, str]:
    digest = render(build_view(T.date(), lang, _records(lang)))
    mail_html, mail_text = personalised(digest.html, digest.text, lang, "https://news.example.org/u?t=1")
    return {"mail html": mail_html, "mail text": mail_text, "mail subject": digest.subject}


def site_outputs(lang: str) -> dict[str, str]:
    records = _records(lang)
    candidates = {r.story_id: FeedCandidate(r.story_id, r.significance, r.event.event_id if r.event else None,
                                            r.first_published_at, T, 4, 2, ("en", "ja"), "h") for r in records}
    articles = {r.story_id: [SourceArticle(D, s.url, s.lang, D, T - timedelta(hours=1), outlet=f"o{n}.example")
                             for n, s in enumerate(r.sources, 1)] for r in records}
    briefings = {"s1": StoredBriefing("disasters", "extractive", _briefing(), OUTLETS)}
    views = story_views(T.date(), lang, records, candidates, articles, briefings)
    for v in views:
        v.entry_id, v.published_at, v.updated_at = f"tag:x.example,2026-11-02:story/{v.story_id}/{lang}", T, T
    meta, langs = _meta(lang), list(SITE_LANGS)
    lines = [EventStoryLine(v.story_id, v.headline, v.headline_lang, v.first_published_at, v.source_count, v.page,
                            n == 0) for n, v in enumerate(views[:2])]
    day_html = render_day_stories(meta, T.date(), views)
    return {
        "root": render_root("newsdedup", lang, text_direction(lang), meta.labels, [RootLanguage(lang, meta.title, 3)], T),
        "index": render_index(meta, T.date(), views, langs, ["disasters"], ("archive/index.html", None), ["JP"]),
        "story": render_story(meta, views[0], langs),
        "untranslated story": render_story(meta, views[1], langs),
        "story without event": render_story(meta, views[2], langs),
        "extractive event": render_event(meta, views[0].event, lines, langs),
        "model's event": render_event(meta, views[1].event, lines, langs),
        "entry": render_entry_content(meta, views[0]),
        "category": render_category(meta, _meta(lang, "category/disasters/"), "disasters", views, langs, ["disasters"]),
        "country": render_country(meta, _meta(lang, "country/jp/"), "JP", views, langs, ["JP"]),
        "archive day": render_archive_day(meta, archive_navigation([T.date()])[T.date()], day_html, 3, langs),
        "archive": render_archive_index(meta, [T.date()], langs),
        "atom": build_atom(meta, views).decode("utf-8"),
        "json": build_json_feed(meta, views),
    }


def outputs(lang: str) -> dict[str, str]:
    return {**mail_outputs(lang), **(site_outputs(lang) if lang in SITE_LANGS else {})}


def _visible(kind: str, output: str) -> str:
    """What a reader sees: a page's text and the attributes shown (title, aria-label, alt); a
    feed's titles and labels; a mail's text part and subject as they are."""
    if kind in ("atom", "json"):
        return " ".join(re.findall(r'(?:<title[^>]*>|<subtitle[^>]*>|label=")([^<"]*)', output)
                        + re.findall(r'"(?:title|description)": "([^"]*)"', output)
                        + re.findall(r'"tags": \[\s*"([^"]*)"', output))
    if kind in ("mail text", "mail subject"):
        return output
    doc = lxml_html.fromstring(output)
    for hidden in doc.xpath("//style | //script"):
        hidden.drop_tree()
    shown = doc.xpath("//@title | //@aria-label | //@alt")
    return " ".join([doc.text_content(), *shown])


def _english_chunks() -> set[str]:
    """The English phrases' own words: each phrase cut at its `{fields}`, ends trimmed."""
    chunks = set()
    for table, _langs in TABLES.values():
        for value in table["en"].values():
            for form in _forms(value):
                for part in re.split(r"\{\w+\}", form):
                    part = part.strip(" .,:;()·—-")
                    if re.search(r"[^\W\d_]{3}", part) and part not in PROPER_NAMES:
                        chunks.add(part)
    return chunks


def english_left(lang: str, text: str) -> list[str]:
    allowed = SAME_WORDS.get(lang, set())
    return sorted(c for c in _english_chunks() - allowed
                  if re.search(rf"(?<![^\W\d_]){re.escape(c)}(?![^\W\d_])", text))


@pytest.mark.parametrize("lang", [x for x in MAIL_LANGS if x != "en"])
def test_no_english_phrase_is_left_in_any_output(lang):
    for kind, output in outputs(lang).items():
        text = _visible(kind, output)
        assert not english_left(lang, text), f"{lang} {kind}: {english_left(lang, text)}\n{text[:3000]}"


def test_the_english_check_finds_english():
    """It fails where it should: English words in an Arabic mail are found (a narrative's own
    words written in English, an English label)."""
    english = narrative_lines(_records("ar")[0].event.narrative["facts"], "en")
    text = " ".join(r.text for r in english["what_to_watch"]) + " " + LABELS["en"]["footer"]
    assert {"Latest", "The event stays open until there has been no new story for",
            "You receive this digest because you subscribed to newsdedup"} <= set(english_left("ar", text))
    assert english_left("fr", "12 sources, 1 article") == []


# ------------------------------------------------------------- text in another language: marked
# Where a text in another language is no "untranslated" text: the language switcher and the root's
# list (each language in itself), the sources (each named with its language), the people and
# places named, a quote's speaker.
UNMARKED = ("ancestor::nav", "ancestor::ul[contains(@class, 'sources')]", "ancestor::*[contains(@class, 'names')]",
            "ancestor::figcaption", "ancestor-or-self::*[contains(@class, 'speaker')]",
            "ancestor-or-self::*[contains(@class, 'untranslated')]")
BLOCKS = ("p", "li", "h1", "h2", "h3", "blockquote", "div")


def unmarked_foreign_text(output: str, page_lang: str, fragment: bool = False) -> list[str]:
    """Every element in another language than the page's that is no bidi isolate of its own, or
    whose block (or, for a headline, the note under it) does not name its language."""
    doc = lxml_html.fragment_fromstring(output, create_parent="div") if fragment else lxml_html.fromstring(output)
    faults = []
    for el in doc.xpath("//*[@lang]"):
        code = el.get("lang")
        if el.tag == "html" or code == page_lang or any(el.xpath(x) for x in UNMARKED):
            continue
        where = f"<{el.tag} lang={code}> {el.text_content()[:40]!r}"
        if el.tag != "bdi" and el.get("dir") is None:
            faults.append("not isolated: " + where)
        block = next(iter(el.xpath("ancestor-or-self::*[" + " or ".join(f"self::{b}" for b in BLOCKS) + "][1]")), el)
        name = language_name(code, page_lang)
        notes = [n.text_content() for n in block.xpath(".//*[contains(@class, 'untranslated')]")]
        if block.tag in ("h1", "h2") and not notes:
            notes = [n.text_content() for n in block.itersiblings()][:1]   # a headline's own note under it
        if not any(name in note for note in notes):
            faults.append(f"not named ({name}): " + where)
    return faults


@pytest.mark.parametrize("lang", MAIL_LANGS)
def test_text_in_another_language_is_isolated_and_named(lang):
    for kind, output in outputs(lang).items():
        if kind in ("mail text", "mail subject", "atom", "json", "root"):
            continue
        assert unmarked_foreign_text(output, lang, fragment=kind == "entry") == [], (lang, kind)
    mail = mail_outputs(lang)
    note = LABELS[lang]["untranslated"].format(lang=language_name("en", lang))
    if lang != "en":
        # the mail's text part names it too, and the narrative's own words are the reader's
        assert f"[{note}]" in mail["mail text"]
        assert PHRASES[lang]["first_reported"].split("{")[0].strip() in mail["mail text"]


def test_the_mark_check_finds_unmarked_text():
    """It fails where it should: on the Arabic mail with its marks taken out, and with a model's
    English narrative line in a plain paragraph (no isolate)."""
    mail = mail_outputs("ar")["mail html"]
    unmarked = re.sub(r' <span class="untranslated".*?</span>', "", mail)
    assert any(f.startswith("not named") for f in unmarked_foreign_text(unmarked, "ar"))
    plain = '<html lang="ar"><body><p>ماذا حدث: <span lang="en">Talks opened.</span></p></body></html>'
    assert any(f.startswith("not isolated") for f in unmarked_foreign_text(plain, "ar"))
