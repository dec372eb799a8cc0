"""Offline key players: the people and organisations named (by letter case, in Latin and Cyrillic
text) in at least two of a story's articles, each traced to the articles that name it; nothing
guessed where case does not mark names (German nouns, scripts without case). Places that are
countries are named in the reader's language on the story page (CLDR), other names as written."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings, strategies as st
from lxml import etree

from newsdedup_dagster.shared.models.translation import briefing_fields, translated_briefing
from newsdedup_dagster.shared.presentation.labels import SITE_LANGS, labels_for, text_direction
from newsdedup_dagster.shared.presentation.stories import SourceLink, StoryRecord
from newsdedup_dagster.shared.text.places import country_of_name
from newsdedup_dagster.shared.text.players import key_players, lower_case_words, runs
from newsdedup_dagster.stages.briefings.briefing import Article
from newsdedup_dagster.stages.briefings.extractive import extractive_briefing
from newsdedup_dagster.stages.briefings.verify import checked_extractive
from newsdedup_dagster.stages.publish.model import FeedCandidate, SourceArticle, StoredBriefing, story_views
from newsdedup_dagster.stages.publish.render import FeedMeta, render_story

SUMMIT = [
    Article("r1", "Reuters", "en", "Leaders meet on trade",
            "President Joe Biden met Prime Minister Keir Starmer in Washington on Tuesday. "
            "The World Health Organization and NATO were not at the talks. "
            "Officials said the European Central Bank would watch closely."),
    Article("b1", "BBC News", "en", "Biden and Starmer talk trade",
            "Joe Biden and Keir Starmer discussed tariffs. Rescue teams were not needed, a joke went. "
            "Analysts at the European Central Bank and at NATO read the statement. "
            "Germany and New York were mentioned."),
    Article("g1", "The Guardian", "en", "Summit ends",
            "Keir Starmer left after two hours. Marta Ruiz of the Tolosa Council was not there. "
            "Germany said nothing."),
]


def test_names_are_runs_of_capitalised_words_without_titles_or_sentence_grammar():
    text = ("On Tuesday Marta Ruiz said the World Health Organization would help. President Joe Biden met "
            "Prime Minister Keir Starmer. Rescue Teams reached the valley. Ursula von der Leyen and the "
            "Bank of Japan agreed with NATO. British officials spoke to Biden.")
    assert runs(text, lower_case_words([text, "rescue teams"])) == [
        "Marta Ruiz", "World Health Organization", "Joe Biden", "Keir Starmer", "Ursula von der Leyen",
        "Bank of Japan", "NATO"]


def test_possessives_number_words_and_country_acronyms_are_not_players():
    text = ("Lava flowed from Italy's Mount Etna. Two European Parliament committees met. The EU's AI Act "
            "and the US Congress were named, and the US and the UK.")
    assert runs(text, lower_case_words([text])) == ["Mount Etna", "European Parliament", "EU", "AI Act",
                                                    "US Congress"]


def test_cyrillic_names_are_found_and_scripts_without_case_give_none():
    text = "Президент Владимир Путин встретился с Сергеем Лавровым. «Мы готовы», — сказал Владимир Путин."
    assert runs(text, lower_case_words([text])) == ["Владимир Путин", "Сергеем Лавровым", "Владимир Путин"]
    assert runs("岸田文雄首相は東京で記者会見した。", frozenset()) == []
    assert runs("قال الرئيس جو بايدن إن المحادثات مستمرة", frozenset()) == []


def test_players_are_named_in_two_articles_and_traced_to_them():
    players = dict(key_players(SUMMIT, "en"))
    assert players == {"Keir Starmer": ("r1", "b1", "g1"), "Joe Biden": ("r1", "b1"), "NATO": ("r1", "b1"),
                       "European Central Bank": ("r1", "b1")}
    # The order: the most named first.
    assert [name for name, _ in key_players(SUMMIT, "en")][0] == "Keir Starmer"
    # Marta Ruiz and the World Health Organization are named once; New York and Germany are places.
    assert key_players(SUMMIT[:1], "en") == []


@pytest.mark.parametrize("lang, text", [
    ("de", "Die Bundesregierung und Friedrich Merz berieten im Bundestag. Die Deutsche Bahn streikt."),
    ("ja", "岸田文雄首相は東京で記者会見し、NATOとの協力を述べた。"),
    ("ar", "قال الرئيس جو بايدن إن المحادثات مع Joe Biden مستمرة في واشنطن وإن الوفد سيعود غدا"),
    ("hi", "प्रधानमंत्री नरेंद्र मोदी ने दिल्ली में बैठक की।"),
    (None, "Joe Biden met Keir Starmer."),
])
def test_no_player_is_guessed_where_case_does_not_mark_names(lang, text):
    articles = [Article(f"x{i}", "X", lang, "", text) for i in range(3)]
    assert key_players(articles, lang) == []


def test_a_sentence_in_title_case_is_not_a_name():
    text = "Officials Say The Storm Will Reach The Coast Tonight. Joe Biden spoke."
    assert runs(text, lower_case_words([text])) == ["Joe Biden"]


def test_the_extractive_briefing_lists_the_players_and_the_checks_trace_them():
    briefing = checked_extractive(extractive_briefing(SUMMIT), SUMMIT)
    assert briefing.players[:2] == ("Keir Starmer", "Joe Biden")
    assert briefing.named["Keir Starmer"] == ("r1", "b1", "g1")
    assert briefing.named["NATO"] == ("r1", "b1")
    assert "Germany" in briefing.places and briefing.named["Germany"] == ("b1", "g1")
    assert not briefing.dropped
    stored = json.loads(json.dumps(briefing.as_dict()))
    assert stored["named"]["Joe Biden"] == ["r1", "b1"]


WORDS = ["Anna", "Berg", "Nord", "Bank", "of", "the", "said", "met", "and", "UNO", "Carl", "Dahl", "Eva", "in", "."]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=3, max_size=25), min_size=1, max_size=4))
def test_a_player_is_always_written_in_two_articles_or_more(texts):
    articles = [Article(f"a{i}", "X", "en", "", " ".join(words)) for i, words in enumerate(texts)]
    for name, cited in key_players(articles, "en"):
        assert len(cited) >= 2 and len(set(cited)) == len(cited)
        assert all(name in next(a.text for a in articles if a.id == i) for i in cited)


# ------------------------------------------------------------------ country names in the reader's language
def test_country_names_are_known_in_every_language_and_cities_are_not():
    assert {country_of_name(n) for n in ("Germany", "Allemagne", "Deutschland", "ドイツ", "Германия")} == {"DE"}
    assert country_of_name("Tolosa") is None and country_of_name("Washington") is None


T = datetime(2026, 11, 3, 9, tzinfo=UTC)
OUTLETS = {"r1": "reuters.com", "b1": "bbc.co.uk", "g1": "theguardian.com"}


def _page(lang: str, stored: dict):
    record = StoryRecord("summit", 5.0, "Leaders meet on trade", "", "en", "Leaders meet on trade", "en", T)
    sources = [SourceArticle(a.outlet, f"https://www.{OUTLETS[a.id]}/summit", "en", a.title, T,
                             outlet=OUTLETS[a.id]) for a in SUMMIT]
    record.sources.extend(SourceLink(s.name, s.url, s.lang) for s in sources)
    candidate = FeedCandidate("summit", 5.0, None, T, T, 3, 3, ("en",), "h")
    view = story_views(T.date(), lang, [record], {"summit": candidate}, {"summit": sources},
                       {"summit": StoredBriefing("politics", "extractive", stored, OUTLETS)})[0]
    view.updated_at = T
    labels = labels_for(lang)
    meta = FeedMeta(lang, text_direction(lang), "newsdedup", "", "newsdedup", "https://news.example.org/",
                    f"tag:x.example,2026-11-03:feed/{lang}", T - timedelta(days=1), labels)
    doc = etree.fromstring(render_story(meta, view, list(SITE_LANGS)).encode("utf-8"), etree.HTMLParser())
    return doc.xpath("//section[@class='briefing']//p[@class='meta names']")


@pytest.mark.parametrize("lang", ["en", "ja", "fr", "ar"])
def test_the_page_names_each_player_and_place_with_its_sources(lang):
    stored = json.loads(json.dumps(checked_extractive(extractive_briefing(SUMMIT), SUMMIT).as_dict()))
    players, places = _page(lang, stored)
    names = [(b.text, b.get("lang")) for b in players.xpath("./bdi")]
    assert names[:2] == [("Keir Starmer", None if lang == "en" else "en"), ("Joe Biden", None if lang == "en" else "en")]
    refs = [a.get("href") for a in players.xpath("./a[@class='ref']")]
    assert refs[:3] == ["#src-1", "#src-2", "#src-3"]          # Keir Starmer: all three outlets
    shown = {b.text: b.get("lang") for b in places.xpath("./bdi")}
    germany = {"en": "Germany", "ja": "ドイツ", "fr": "Allemagne", "ar": "ألمانيا"}[lang]
    assert shown[germany] is None                                 # a country: in the page's own language
    assert shown["Washington"] == (None if lang == "en" else "en")   # a city: as the articles write it
    assert places.xpath("string(.)").startswith(labels_for(lang)["places"])


def test_a_translated_briefing_keeps_its_names_in_the_briefings_language():
    stored = json.loads(json.dumps(checked_extractive(extractive_briefing(SUMMIT), SUMMIT).as_dict()))
    ja = translated_briefing(stored, {k: f"[ja] {v}" for k, v in briefing_fields(stored).items()}, "ja")
    assert ja["names_lang"] == "en" and ja["summary"]["lang"] == "ja"
    players, _ = _page("ja", ja)
    assert players.xpath("./bdi")[0].get("lang") == "en"
