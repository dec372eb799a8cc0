"""Digest rendering: hostile feed text is escaped in every language; the original-language
headline stands in where no translation exists; the text part is plain."""

from __future__ import annotations

from datetime import UTC, date, datetime
from html.parser import HTMLParser

import pytest

from newsdedup_dagster.config import LLMSettings
from newsdedup_dagster.shared.presentation.labels import LABELS, long_date
from newsdedup_dagster.shared.presentation.stories import EventRecord, SourceLink, StoryRecord, build_view, safe_url
from newsdedup_dagster.stages.digest.render import render

DAY = date(2026, 11, 2)
T = datetime(2026, 11, 2, 8, tzinfo=UTC)
HOSTILE = [
    "<script>alert('x')</script>",
    '"><img src=x onerror=alert(1)>',
    "</title><svg onload=alert(2)>",
    "' onmouseover='alert(3)",
]
NARRATIVE_LANGS = LLMSettings().narrative_langs  # the 16 languages


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)
        self.hrefs.extend(v for k, v in attrs if k == "href")


def hostile_story(n: int, langs) -> StoryRecord:
    bad = HOSTILE[n % len(HOSTILE)]
    event = EventRecord(
        f"ev{n}", f"Event {bad}", {k: f"{k} {bad}" for k in ("what_happened", "background", "how_it_developed", "what_to_watch")},
        "en", True, 3, T, T, translations={lang: (f"T[{lang}] {bad}", {"what_happened": f"W[{lang}] {bad}"}) for lang in langs})
    return StoryRecord(
        f"s{n}", 9.0 - n, f"Headline {bad}", f"Summary {bad}", "en", f"Original {bad}", "ja", T,
        sources=[SourceLink(f"Source {bad}", "javascript:alert(1)", "en"),
                 SourceLink("Good", "https://example.com/a?x=1&y=\"2\"", "en")],
        source_total=7,
        translations={lang: (f"H[{lang}] {bad}", f"S[{lang}] {bad}") for lang in langs},
        event=event)


@pytest.mark.parametrize("lang", NARRATIVE_LANGS)
def test_hostile_titles_are_escaped_in_every_language(lang):
    stories = [hostile_story(i, [lang]) for i in range(len(HOSTILE))]
    # and a story without a translation into this language (original headline path)
    stories.append(hostile_story(9, []))
    out = render(build_view(DAY, lang, stories))
    parsed = _Collector()
    parsed.feed(out.html)
    assert "script" not in parsed.tags and "img" not in parsed.tags and "svg" not in parsed.tags
    assert not [k for k, _ in parsed.attrs if k.startswith("on")]
    assert all(h.startswith("https://") for h in parsed.hrefs)
    assert "javascript:" not in out.html
    assert "&lt;script&gt;" in out.html and "&#34;&gt;&lt;img" in out.html
    assert f'<html lang="{lang}" dir="{"rtl" if lang == "ar" else "ltr"}">' in out.html
    assert LABELS[lang]["sources"] in out.html
    # plain text is not HTML-escaped
    assert "<script>alert('x')</script>" in out.text and "&lt;" not in out.text
    # the markdown preview (asset metadata) carries no raw HTML either
    assert "<script>" not in out.markdown and "<img" not in out.markdown
    assert "\n" not in out.subject and " ".join(long_date(lang, DAY).split()) in out.subject


def test_original_language_headline_where_no_translation():
    story = StoryRecord("s1", 7.0, "Quake hits Japan", "A strong quake.", "en", "日本で地震", "ja", T,
                        translations={"fr": ("Séisme au Japon", "Un fort séisme.")})
    fr = build_view(DAY, "fr", [story]).stories[0]
    assert (fr.headline, fr.headline_lang, fr.is_original) == ("Séisme au Japon", "fr", False)
    en = build_view(DAY, "en", [story]).stories[0]
    assert (en.headline, en.is_original) == ("Quake hits Japan", False)
    # No German text: the pivot-language (English) headline, never the Japanese one a source wrote.
    de_view = build_view(DAY, "de", [story])
    de = de_view.stories[0]
    assert (de.headline, de.headline_lang, de.is_original, de.summary_lang) == ("Quake hits Japan", "en", True, "en")
    html = render(de_view).html
    assert '<bdi lang="en">Quake hits Japan</bdi>' in html
    assert "Schlagzeile auf Englisch, noch nicht übersetzt" in html
    # Without pivot text the representative article's own headline is the fallback.
    story.pivot_lang = "und"
    de = build_view(DAY, "de", [story]).stories[0]
    assert (de.headline, de.headline_lang, de.is_original) == ("日本で地震", "ja", True)
    # a reader of the original language sees it as a normal headline
    assert build_view(DAY, "ja", [story]).stories[0].is_original is False


def test_story_article_in_reader_language_beats_a_foreign_original():
    # Offline: no translations, the representative is Spanish, but the story has an English article.
    story = StoryRecord("s1", 7.0, "La UE reforma su ley de IA", "Resumen.", "es", "La UE reforma su ley de IA", "es", T,
                        native={"en": ("EU agrees to revise AI rules", "Brussels eased the rules."),
                                "es": ("La UE reforma su ley de IA", "Resumen.")})
    en = build_view(DAY, "en", [story]).stories[0]
    assert (en.headline, en.headline_lang, en.is_original, en.summary) == (
        "EU agrees to revise AI rules", "en", False, "Brussels eased the rules.")
    de = build_view(DAY, "de", [story]).stories[0]  # no German article: the original, marked
    assert (de.headline, de.is_original) == ("La UE reforma su ley de IA", True)
    # A finished translation still wins over a native article.
    story.translations["en"] = ("EU revises AI act", "Translated summary.")
    assert build_view(DAY, "en", [story]).stories[0].headline == "EU revises AI act"


def test_event_narrative_translation_and_offline_note():
    event = EventRecord("ev", "Talks", {"what_happened": "Talks opened.", "background": "B."}, "en", True, 2, T,
                        datetime(2026, 11, 4, tzinfo=UTC))
    story = StoryRecord("s", 5.0, "H", "S", "en", "H", "en", T, event=event)
    en = render(build_view(DAY, "en", [story]))
    assert "What happened:</strong> Talks opened." in en.html
    assert "Automatic extractive summary" in en.html and "2 stories over 3 days" in en.html
    event.translations["fr"] = ("Pourparlers", {"what_happened": "Les pourparlers ont commencé."})
    fr = render(build_view(DAY, "fr", [story]))
    assert "Ce qui s&#39;est passé:</strong> Les pourparlers ont commencé." in fr.html
    # only LLM narratives get translated (offline ones are status 2), so a translation carries no offline note
    assert "Résumé extractif" not in fr.html
    assert "Pourparlers" in fr.html


def test_one_story_event_shows_no_event_panel():
    event = EventRecord("ev", "Talks", {"what_happened": "Talks opened."}, "en", True, 1, T, T)
    story = StoryRecord("s", 5.0, "H", "S", "en", "H", "en", T, event=event)
    view = build_view(DAY, "en", [story])
    assert view.stories[0].event is None
    assert "Talks opened." not in render(view).html


def test_safe_url():
    assert safe_url("https://a.example/x") == "https://a.example/x"
    assert safe_url("javascript:alert(1)") is None
    assert safe_url("data:text/html,x") is None
    assert safe_url("/relative") is None
    assert safe_url(None) is None


def test_empty_day_renders():
    out = render(build_view(DAY, "ko", []))
    assert "이 날의 뉴스가 없습니다." in out.html and out.story_ids == []
