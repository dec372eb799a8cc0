"""Every published language reads as its own: complete labels (CLDR plural forms included),
localised feed titles, no English label left on any page kind outside `en`, and embedded
text of another direction isolated (pure: rendering only, no database)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser

import pytest

from newsdedup_dagster.config import LLMSettings
from newsdedup_dagster.shared.presentation.labels import (
    KEYS,
    LABELS,
    PLURAL_KEYS,
    count,
    event_span,
    labels_for,
    locale_of,
    text_direction,
)
from newsdedup_dagster.shared.presentation.stories import EventRecord, SourceLink, StoryRecord, build_view
from newsdedup_dagster.stages.digest.render import render
from newsdedup_dagster.stages.publish.model import FeedCandidate, SourceArticle, story_views
from newsdedup_dagster.stages.publish.render import (
    EventStoryLine,
    FeedMeta,
    RootLanguage,
    build_atom,
    build_json_feed,
    render_entry_content,
    render_event,
    render_index,
    render_root,
    render_story,
)

T = datetime(2026, 11, 2, 11, 0, tzinfo=UTC)
PUBLISHED = (LLMSettings().pivot_lang, *LLMSettings().translation_langs)
OTHERS = [lang for lang in PUBLISHED if lang != "en"]
SITE_PLURAL_KEYS = {"source_count", "article_count"}

# Words an English label shares with a page in another language that are not left-over English:
# names (of the project, the formats, the time zone) and words these languages spell the same way.
PROPER_NAMES = {"newsdedup", "atom", "json", "feed", "utc"}
SAME_WORD = {
    "fr": {"sources", "source", "articles", "article", "culture", "sport", "page"},
    "de": {"artikel", "sport", "top"},
    # "Notícias": the check reads ASCII letters only, so "Not" of it.
    "es": set(), "pt": {"not"}, "ru": set(), "ar": set(), "hi": set(), "zh": set(), "ja": set(), "ko": set(),
}


def _plural_tags(lang: str) -> set[str]:
    return set(locale_of(lang).plural_form.tags) | {"other"}


def test_the_published_languages_have_site_and_digest_labels():
    assert len(PUBLISHED) == 11
    english = set(LABELS["en"])
    assert set(KEYS) < english                       # the digest's labels and the site's in one table
    for lang in PUBLISHED:
        assert set(LABELS[lang]) == english, (lang, english ^ set(LABELS[lang]))
        labels = labels_for(lang)
        for key in PLURAL_KEYS | SITE_PLURAL_KEYS:
            forms = labels[key]
            # A form for every plural category CLDR defines for the language (Arabic has six).
            assert set(forms) >= _plural_tags(lang), (lang, key, _plural_tags(lang) - set(forms))
            assert all("{n}" in text or tag in ("zero", "one", "two") for tag, text in forms.items()), (lang, key)


@pytest.mark.parametrize("lang, key, n, expected", [
    ("en", "day_count", 1, "1 day"), ("en", "day_count", 3, "3 days"),
    ("en", "story_count", 1, "1 story"),
    ("ar", "day_count", 1, "يوم واحد"), ("ar", "day_count", 2, "يومين"), ("ar", "day_count", 3, "3 أيام"),
    ("ar", "day_count", 11, "11 يومًا"), ("ar", "day_count", 100, "100 يوم"),
    ("ru", "day_count", 1, "1 день"), ("ru", "day_count", 2, "2 дня"), ("ru", "day_count", 5, "5 дней"),
    ("ru", "day_count", 21, "21 день"),
    ("fr", "source_count", 0, "0 source"), ("fr", "source_count", 2, "2 sources"),
    ("pt", "article_count", 1, "1 artigo"), ("hi", "story_count", 2, "2 खबरें"),
    ("ja", "source_count", 7, "情報源7件"), ("zh", "story_count", 3, "3篇报道"), ("ko", "article_count", 1000, "기사 1,000건"),
])
def test_counts_follow_cldr_plural_rules(lang, key, n, expected):
    assert count(lang, labels_for(lang)[key], n) == expected


def test_event_span_reads_as_a_sentence():
    assert event_span("en", labels_for("en"), 3, 1) == "3 stories over 1 day"
    assert event_span("ar", labels_for("ar"), 1, 1) == "خبر واحد خلال يوم واحد"
    assert event_span("de", labels_for("de"), 4, 2) == "4 Meldungen in 2 Tagen"


# ----------------------------------------------------------------------- every page kind
# Data text is made of symbols that are no word in any language, so every word left on a page
# is an interface label.
DATA = "Ⓓ"


def _records(lang: str) -> list[StoryRecord]:
    event = EventRecord("ev1", DATA, {"what_happened": DATA, "background": DATA, "how_it_developed": DATA,
                                      "what_to_watch": DATA}, "en", True, 2, T - timedelta(days=2), T)
    translated = StoryRecord("s1", 7.5, DATA, DATA, "en", DATA, "en", T - timedelta(hours=3),
                             sources=[SourceLink(DATA, "https://a.example/1", "en")], source_total=1,
                             translations={lang: (DATA, DATA)}, event=event)
    # No text in the page's language: the pivot headline, marked with its language.
    untranslated = StoryRecord("s2", 4.0, DATA, DATA, "en", DATA, "ja", T - timedelta(hours=2),
                               sources=[SourceLink(DATA, f"https://h{n}.example/{n}", "ja") for n in range(7)],
                               source_total=7, event=event)
    return [translated, untranslated]


def _views(lang: str):
    records = _records(lang)
    candidates = {r.story_id: FeedCandidate(r.story_id, r.significance, "ev1", r.first_published_at, T, 9,
                                            len(r.sources), ("en", "ja"), "h") for r in records}
    articles = {r.story_id: [SourceArticle(s.name, s.url, s.lang, DATA, T - timedelta(hours=1)) for s in r.sources]
                for r in records}
    views = story_views(T.date(), lang, records, candidates, articles)
    for v in views:
        v.entry_id, v.published_at, v.updated_at = f"tag:x.example,2026-11-02:story/{v.story_id}/{lang}", T, T
    # One story outside every event: it shows its topic.
    views[1].event = None
    return views


def _meta(lang: str) -> FeedMeta:
    labels = labels_for(lang)
    return FeedMeta(lang, text_direction(lang), labels["feed_title"].format(site="newsdedup"), labels["feed_subtitle"],
                    "newsdedup", "https://news.example.org/", f"tag:x.example,2026-11-02:feed/{lang}", T, labels)


def all_outputs(lang: str) -> dict[str, str]:
    """Every kind of page, feed text and digest in `lang`."""
    meta, views = _meta(lang), _views(lang)
    event = views[0].event
    lines = [EventStoryLine(v.story_id, v.headline, v.headline_lang, v.first_published_at, v.source_count, v.page, True)
             for v in views]
    digest = render(build_view(T.date(), lang, _records(lang)))
    return {
        "root": render_root("newsdedup", lang, text_direction(lang), meta.labels, [RootLanguage(lang, meta.title, 2)], T),
        "index": render_index(meta, T.date(), views, list(PUBLISHED)),
        "story": render_story(meta, views[0], list(PUBLISHED)),
        "story without event": render_story(meta, views[1], list(PUBLISHED)),
        "event": render_event(meta, event, lines, list(PUBLISHED)),
        "entry": render_entry_content(meta, views[1]),
        "atom": build_atom(meta, views).decode("utf-8"),
        "json": build_json_feed(meta, views),
        "digest html": digest.html,
        "digest text": digest.text,
        "digest subject": digest.subject,
    }


class _Text(HTMLParser):
    """Visible text plus the attributes a reader sees (title, aria-label, alt)."""

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("style", "script"):
            self._skip += 1
        self.parts.extend(v for k, v in attrs if k in ("title", "aria-label", "alt", "label") and v)

    def handle_endtag(self, tag):
        if tag in ("style", "script"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def _english_words() -> set[str]:
    words = set()
    for labels in (LABELS["en"],):
        for value in labels.values():
            for text in (value.values() if isinstance(value, dict) else [value]):
                words.update(w.lower() for w in re.findall(r"[A-Za-z]{3,}", re.sub(r"\{\w+\}", " ", text)))
    return words - PROPER_NAMES


def _reader_text(kind: str, output: str) -> str:
    if kind in ("atom", "json"):
        # Feed titles and labels: what a feed reader shows besides the entries' own text.
        return " ".join(re.findall(r'(?:<title[^>]*>|<subtitle[^>]*>|label=")([^<"]*)', output)
                        + re.findall(r'"(?:title|description)": "([^"]*)"', output)
                        + re.findall(r'"tags": \[\s*"([^"]*)"', output))
    if kind.startswith("digest text") or kind == "digest subject":
        return output
    parser = _Text()
    parser.feed(output)
    return " ".join(parser.parts)


@pytest.mark.parametrize("lang", OTHERS)
def test_no_english_label_is_left_on_any_page_kind(lang):
    english = _english_words()
    allowed = SAME_WORD[lang]
    for kind, output in all_outputs(lang).items():
        text = _reader_text(kind, output)
        left = sorted({w.lower() for w in re.findall(r"[A-Za-z]{3,}", text)} & english - allowed)
        assert not left, f"{lang} {kind}: English left: {left}\n{text[:2000]}"


def test_the_english_check_finds_english():
    """The check above fails where it should: English labels on the Arabic index are found."""
    english = _english_words()
    meta = _meta("ar")
    meta = FeedMeta(**{**meta.__dict__, "labels": labels_for("en")})
    text = _reader_text("index", render_index(meta, T.date(), _views("ar"), list(PUBLISHED)))
    assert {"stories", "significance", "sources"} <= {w.lower() for w in re.findall(r"[A-Za-z]{3,}", text)} & english


@pytest.mark.parametrize("lang", PUBLISHED)
def test_feed_titles_and_page_headings_are_in_the_language(lang):
    outputs = all_outputs(lang)
    title = labels_for(lang)["feed_title"].format(site="newsdedup")
    assert f"<title type=\"text\">{title}</title>" in outputs["atom"]
    assert f'"title": "{title}"' in outputs["json"]
    assert ("(" + lang + ")") not in title
    if lang != "en":
        assert title != "newsdedup: top stories" and "top stories" not in outputs["index"]
    # Every page kind has the language switcher with every published language, named in itself.
    for kind in ("root", "index", "story", "event"):
        switcher = re.search(r'<nav class="langs"[^>]*>(.*?)</nav>', outputs[kind], re.S)
        if kind == "root":
            assert 'lang="ar" dir="rtl"' not in outputs[kind] or switcher  # the root lists its own languages
            continue
        assert switcher, (lang, kind)
        assert switcher.group(1).count("<li>") == len(PUBLISHED)
        assert 'aria-current="page"' in switcher.group(1)
        assert ">العربية<" in switcher.group(1) and ">日本語<" in switcher.group(1)


class _Bidi(HTMLParser):
    def __init__(self, page_lang: str):
        super().__init__()
        self.page_lang = page_lang
        self.foreign: list[tuple[str, dict]] = []
        self.isolates = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "bdi" or a.get("dir") == "auto":
            self.isolates += 1
        if "lang" in a and tag != "html" and a["lang"] != self.page_lang:
            self.foreign.append((tag, a))


@pytest.mark.parametrize("kind", ["index", "story", "event"])
def test_right_to_left_pages_isolate_embedded_text(kind):
    page = all_outputs("ar")[kind]
    assert '<html lang="ar" dir="rtl">' in page
    parser = _Bidi("ar")
    parser.feed(page)
    assert parser.isolates >= 3
    # Every element in another language is its own bidi isolate: a Latin headline's full stop
    # stays at its end, and a language name keeps its own direction.
    for tag, attrs in parser.foreign:
        assert tag == "bdi" or "dir" in attrs, (tag, attrs)


def test_an_untranslated_story_shows_the_pivot_headline_with_its_language():
    views = _views("ar")
    assert views[1].headline_lang == "en" and views[1].is_original   # never the Japanese source's headline
    page = render_story(_meta("ar"), views[1], list(PUBLISHED))
    assert '<h1 dir="auto" lang="en">' in page
    assert "العنوان باللغة الإنجليزية، لا توجد ترجمة بعد" in page
