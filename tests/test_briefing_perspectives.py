"""A briefing's perspectives: where the story's outlets, grouped by their country, differ in what
they stress. Offline: British and American outlets writing about one trade deal, each side stressing
its own angle, give one perspective per country, each an article's own sentence citing only that
country's articles; outlets stressing the same facts give none, and articles that differ only in
language give none. A model's perspectives go through the checks of a point and must each come from
one country's outlets, two of them from different countries. The story page shows them, with the
briefing's people and organisations and its places, in every site language."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from feed_validators import VNU_JAR, html_errors, java
from hypothesis import given, settings, strategies as st
from lxml import etree

from newsdedup_dagster.shared.presentation.labels import SITE_LANGS, labels_for, text_direction
from newsdedup_dagster.shared.presentation.stories import SourceLink, StoryRecord
from newsdedup_dagster.stages.briefings import model as briefing_model
from newsdedup_dagster.stages.briefings.briefing import Article, Briefing, Perspective
from newsdedup_dagster.stages.briefings.extractive import MAX_PERSPECTIVES, extractive_briefing, perspectives, sentences
from newsdedup_dagster.stages.briefings.verify import checked_briefing, checked_extractive
from newsdedup_dagster.stages.publish.model import FeedCandidate, SourceArticle, StoredBriefing, story_views
from newsdedup_dagster.stages.publish.render import FeedMeta, render_story

# ------------------------------------------------------------------ the articles
# One trade deal. Every article gives the same six facts; the British outlets also stress what it
# means for British farmers, the American ones what it means for Detroit's carmakers.
BBC = Article("gb1", "BBC News", "en", "UK and US sign trade deal", (
    "Britain and the United States signed a trade agreement in Washington on Thursday. "
    "The deal cuts tariffs on cars and steel over the next five years. "
    "British farmers warned that cheaper American beef could undercut their prices. "
    "Officials said the agreement would be worth about 10 billion dollars a year. "
    "The talks between the two governments had lasted almost two years. "
    "The National Farmers' Union said hill farms in Wales would be hit hardest. "
    "The agreement still has to be approved by Parliament and by Congress. "
    "Both leaders called the deal a new chapter for the special relationship."), "GB")
GUARDIAN = Article("gb2", "The Guardian", "en", "Farmers fear US beef after trade deal", (
    "The United States and Britain signed a trade agreement in Washington on Thursday. "
    "The agreement cuts tariffs on cars and steel over the next five years. "
    "Farmers in Britain fear that cheaper American beef will undercut their prices. "
    "Officials said the deal would be worth about 10 billion dollars a year. "
    "Talks between the two governments had lasted almost two years. "
    "Hill farms in Wales would be hit hardest, the National Farmers' Union said. "
    "The deal still has to be approved by Congress and by Parliament. "
    "Both leaders called the agreement a new chapter in the special relationship."), "GB")
NYT = Article("us1", "The New York Times", "en", "US and Britain strike trade pact", (
    "The United States and Britain signed a trade agreement in Washington on Thursday. "
    "The agreement cuts tariffs on cars and steel over the next five years. "
    "Detroit carmakers expect to sell more pickup trucks in Britain under the new rules. "
    "Officials said the deal would be worth about 10 billion dollars a year. "
    "Talks between the two governments had lasted almost two years. "
    "Shares of Ford rose 4 percent after the announcement. "
    "The deal still has to be approved by Congress and by Parliament. "
    "Both leaders called the agreement a new chapter in the special relationship."), "US")
AP = Article("us2", "AP", "en", "Trade deal opens Britain to Detroit trucks", (
    "Britain and the United States signed a trade agreement in Washington on Thursday. "
    "The deal cuts tariffs on cars and steel over the next five years. "
    "Carmakers in Detroit expect to sell more pickup trucks to British buyers under the new rules. "
    "Officials said the agreement would be worth about 10 billion dollars a year. "
    "The talks between the two governments had lasted almost two years. "
    "Shares of Ford rose 4 percent on the news, traders said. "
    "The agreement still has to be approved by Parliament and by Congress. "
    "Both leaders called the deal a new chapter for the special relationship."), "US")
DEAL = [BBC, GUARDIAN, NYT, AP]
GB_IDS, US_IDS = {"gb1", "gb2"}, {"us1", "us2"}

# The same deal as the American outlets tell it, but from British outlets: nothing the British
# stress is theirs alone.
SAME_GB = [Article("gb3", "Sky News", "en", "Trade deal signed", NYT.text, "GB"),
           Article("gb4", "The Times", "en", "Britain and US sign deal", AP.text, "GB")]

# German outlets on the deal, stressing its own angle (German carmakers) in German.
SPIEGEL = Article("de1", "Der Spiegel", "de", "Handelsabkommen zwischen London und Washington", (
    "Großbritannien und die Vereinigten Staaten haben am Donnerstag in Washington ein Handelsabkommen "
    "unterzeichnet. Die Zölle auf Autos und Stahl sinken in den nächsten fünf Jahren. "
    "Deutsche Autohersteller fürchten, Marktanteile in Großbritannien an Detroit zu verlieren. "
    "Das Abkommen muss noch vom Parlament und vom Kongress gebilligt werden."), "DE")
FAZ = Article("de2", "FAZ", "de", "Deutsche Autobauer in Sorge", (
    "Die Vereinigten Staaten und Großbritannien haben am Donnerstag ein Handelsabkommen unterzeichnet. "
    "Die Zölle auf Autos und Stahl werden über fünf Jahre gesenkt. "
    "Deutsche Autobauer befürchten, in Großbritannien Marktanteile an Detroit zu verlieren. "
    "Parlament und Kongress müssen dem Abkommen noch zustimmen."), "DE")

OTHER_STORY = Article("x1", "AFP", "en", "Markets rally", "Stocks rose 3 percent on Monday, traders said.", "FR")


def _sentences_of(ids: set[str]) -> set[str]:
    return {s for a in DEAL if a.id in ids for s in sentences(a.text)}


# ------------------------------------------------------------------ offline
def test_british_and_american_outlets_stressing_different_facts_give_two_perspectives():
    briefing = checked_extractive(extractive_briefing(DEAL), DEAL)
    assert briefing.dropped == {}
    assert sorted(p.country for p in briefing.perspectives) == ["GB", "US"]
    shown_points = {p.text for p in (briefing.summary, *briefing.points)}
    for view in briefing.perspectives:
        ids = GB_IDS if view.country == "GB" else US_IDS
        # An article's own sentence, held by that country's outlets only, and not a key point.
        assert set(view.citations) == ids and view.text in _sentences_of(ids) and view.lang == "en"
        assert view.text not in shown_points
    by_country = {p.country: p.text for p in briefing.perspectives}
    assert "Farmers" in by_country["GB"] and ("Detroit" in by_country["US"] or "Ford" in by_country["US"])
    # The facts every outlet gives are key points, not anyone's perspective.
    assert any("10 billion" in p for p in shown_points)


def test_outlets_stressing_the_same_facts_give_no_perspective():
    same = [NYT, AP, *SAME_GB]
    assert len({a.country for a in same}) == 2
    assert checked_extractive(extractive_briefing(same), same).perspectives == ()


def test_a_difference_of_language_is_never_a_perspective():
    # British outlets in English, German outlets in German, each stressing its own angle.
    english_and_german = [BBC, GUARDIAN, SPIEGEL, FAZ]
    assert extractive_briefing(english_and_german).perspectives == ()
    # The German articles are not compared with the English ones even when they are the briefing's language.
    assert perspectives(english_and_german, "de", []) == []
    # Two countries writing the same in English, a third in French stressing something else: none.
    french = Article("fr1", "Le Monde", "fr", "Accord commercial", (
        "Les agriculteurs français craignent l'arrivée de bœuf américain bon marché en Europe. "
        "Le Royaume-Uni et les États-Unis ont signé un accord commercial jeudi à Washington."), "FR")
    assert extractive_briefing([NYT, AP, *SAME_GB, french]).perspectives == ()


def test_an_article_of_no_known_country_holds_no_perspective_but_counts_against_one():
    unknown = Article("u1", "Wire", "en", "Deal signed", GUARDIAN.text, None)
    found = perspectives([BBC, GUARDIAN, NYT, AP, unknown], "en", [])
    # What the British outlets stress is also in an article of no known country: not Britain's own.
    assert not any("Farmers" in p.text or "Hill farms" in p.text for p in found)
    assert all(p.country in {"GB", "US"} for p in found)


def test_perspectives_are_at_most_the_limit_and_each_is_one_countrys():
    found = perspectives(DEAL, "en", [])
    assert 2 <= len(found) <= MAX_PERSPECTIVES
    countries = {a.id: a.country for a in DEAL}
    for view in found:
        assert {countries[c] for c in view.citations} == {view.country}


# ------------------------------------------------------------------ a model's perspectives
def _reply(*views) -> dict:
    return {"category": "business",
            "summary": {"text": "Britain and the United States signed a trade agreement in Washington on Thursday.",
                        "citations": ["gb1", "us1"]},
            "points": [], "quotes": [], "players": [], "places": [], "perspectives": list(views)}


# As the prompt asks: the fact those outlets stress, as they state it; the country is shown beside it.
GB_VIEW = {"text": "British farmers warned that cheaper American beef could undercut their prices.",
           "citations": ["gb1", "gb2"]}
US_VIEW = {"text": "Detroit carmakers expect to sell more pickup trucks in Britain under the new rules.",
           "citations": ["us1", "us2"]}


def test_a_models_perspectives_of_two_countries_are_kept():
    briefing = checked_briefing(_reply(GB_VIEW, US_VIEW), DEAL, "en")
    assert briefing.dropped == {}
    assert [(p.country, p.citations, p.lang) for p in briefing.perspectives] == [
        ("GB", ("gb1", "gb2"), "en"), ("US", ("us1", "us2"), "en")]


@pytest.mark.parametrize("extra, dropped", [
    # A second perspective of a country that already has one.
    ({"text": "The National Farmers' Union said hill farms in Wales would be hit hardest.", "citations": ["gb1"]},
     {"not_a_perspective": 1}),
    # One line citing outlets of two countries is no country's perspective.
    ({"text": "The deal cuts tariffs on cars and steel over the next five years.", "citations": ["gb1", "us1"]},
     {"not_a_perspective": 1}),
    # No citation at all.
    ({"text": "French outlets stress the risk for European farmers.", "citations": []}, {"uncited": 1}),
    # Only an article of another story.
    ({"text": "Markets rallied on the news of the deal.", "citations": ["x1"]},
     {"foreign_citation": 1, "uncited": 1}),
    # A number none of its cited articles holds.
    ({"text": "Shares of Ford rose 9 percent after the announcement.", "citations": ["us1"]}, {"unsupported": 1}),
    # Not the briefing's language.
    ({"text": "Die britischen Medien betonen die Sorgen der Landwirte über billiges amerikanisches Rindfleisch.",
      "citations": ["gb1"]}, {"wrong_language": 1}),
    # Words no cited sentence carries, with no name or number to catch.
    ({"text": "American outlets stress that the agreement was rushed through without debate.",
      "citations": ["us1"]}, {"unsupported": 1}),
    # Coverage of a country whose outlets it does not cite: in English the demonym is a name no cited
    # article holds (wrong_country catches the languages that write it in lower case).
    ({"text": "Brazilian outlets stress that the deal cuts tariffs on cars and steel over the next five years.",
      "citations": ["us1"]}, {"unsupported": 1}),
])
def test_a_models_perspective_that_fails_a_check_is_dropped_and_counted(extra, dropped):
    briefing = checked_briefing(_reply(GB_VIEW, US_VIEW, extra), DEAL, "en")
    assert [p.country for p in briefing.perspectives] == ["GB", "US"]
    assert briefing.dropped == dropped


def test_a_perspective_left_alone_is_not_published():
    uncited_us = {**US_VIEW, "citations": []}
    briefing = checked_briefing(_reply(GB_VIEW, uncited_us), DEAL, "en")
    assert briefing.perspectives == () and briefing.dropped == {"uncited": 1, "not_a_perspective": 1}
    # Two perspectives of one country are one perspective: none.
    twice = checked_briefing(_reply(GB_VIEW, {**GB_VIEW, "citations": ["gb1"]}), DEAL, "en")
    assert twice.perspectives == () and twice.dropped == {"not_a_perspective": 2}
    # An outlet of no known country cannot hold one.
    unknown = Article("u1", "Wire", "en", "Deal signed", NYT.text, None)
    other = checked_briefing(_reply(GB_VIEW, {**US_VIEW, "citations": ["u1"]}), [*DEAL, unknown], "en")
    assert other.perspectives == () and other.dropped == {"not_a_perspective": 2}


def test_a_reply_without_perspectives_has_none_and_drops_nothing():
    reply = _reply()
    del reply["perspectives"]
    briefing = checked_briefing(reply, DEAL, "en")
    assert briefing.perspectives == () and briefing.dropped == {}


def test_the_prompt_gives_each_outlets_country_and_maps_perspective_ids_back():
    assert "perspectives" in briefing_model.REPLY_SCHEMA["properties"]
    assert "perspectives" not in briefing_model.REPLY_SCHEMA["required"]
    assert '"perspectives"' in briefing_model.SYSTEM_PROMPT
    request = briefing_model.request_for([*DEAL, OTHER_STORY], "en")
    sent = [json.loads(line) for line in request.user.split("\n")
            if line.startswith("{")]
    assert {a["outlet"]: a["country"] for a in sent}["BBC News"] == "GB"
    ids = {v: k for k, v in request.labels.items()}
    reply = _reply({"text": GB_VIEW["text"], "citations": [ids["gb1"], ids["gb2"]]},
                   {"text": US_VIEW["text"], "citations": [ids["us1"], "4"]})   # "4": the fourth article
    reply["points"] = [{"text": "The deal cuts tariffs on cars and steel over the next five years.",
                        "citations": [ids["gb1"]]}]
    briefing = briefing_model.briefing_from_reply(reply, request, DEAL)
    assert [p.citations for p in briefing.perspectives] == [("gb1", "gb2"), ("us1", "us2")]
    with pytest.raises(briefing_model.OutputInvalid):
        briefing_model.check_shape({**reply, "perspectives": "none"})


VIEW = st.fixed_dictionaries({"text": st.sampled_from([GB_VIEW["text"], US_VIEW["text"], "", 3]),
                              "citations": st.lists(st.sampled_from(["gb1", "gb2", "us1", "us2", "x1", 7]),
                                                    max_size=3)})


@settings(max_examples=150, deadline=None)
@given(st.lists(VIEW, max_size=6))
def test_any_models_perspectives_are_none_or_two_countries_or_more(views):
    briefing = checked_briefing(_reply(*views), DEAL, "en")
    countries = {a.id: a.country for a in DEAL}
    shown = [p.country for p in briefing.perspectives]
    assert len(shown) != 1 and len(set(shown)) == len(shown) and len(shown) <= MAX_PERSPECTIVES
    for view in briefing.perspectives:
        assert view.citations and {countries[c] for c in view.citations} == {view.country}


# ------------------------------------------------------------------ the story page
T = datetime(2026, 11, 2, 11, 0, tzinfo=UTC)
OUTLETS = {"gb1": "bbc.co.uk", "gb2": "theguardian.com", "us1": "nytimes.com", "us2": "apnews.com"}
SOURCES = [SourceArticle(a.outlet, f"https://www.{OUTLETS[a.id]}/news/trade-deal", "en", a.title,
                         T - timedelta(hours=2), outlet=OUTLETS[a.id]) for a in DEAL]


def _page(lang: str, stored: dict, method: str = "extractive") -> etree._Element:
    record = StoryRecord("deal", 6.0, "UK and US sign trade deal", "Tariffs on cars and steel will fall.", "en",
                         "UK and US sign trade deal", "en", T - timedelta(hours=2))
    record.sources.extend(SourceLink(s.name, s.url, s.lang) for s in SOURCES)
    record.source_total = len(SOURCES)
    candidate = FeedCandidate("deal", 6.0, None, T - timedelta(hours=2), T - timedelta(hours=1), 4, 4, ("en",), "h")
    view = story_views(T.date(), lang, [record], {"deal": candidate}, {"deal": SOURCES},
                       {"deal": StoredBriefing("business", method, stored, OUTLETS)})[0]
    view.updated_at = T
    labels = labels_for(lang)
    meta = FeedMeta(lang, text_direction(lang), labels["feed_title"].format(site="newsdedup"),
                    labels["feed_subtitle"], "newsdedup", "https://news.example.org/",
                    f"tag:x.example,2026-11-02:feed/{lang}", T, labels)
    return render_story(meta, view, list(SITE_LANGS))


def _stored() -> dict:
    briefing = checked_extractive(extractive_briefing(DEAL), DEAL)
    stored = json.loads(json.dumps(briefing.as_dict()))             # as the row holds it
    stored["players"] = ["National Farmers' Union", "Ford"]
    return stored


def _section(html: str):
    doc = etree.fromstring(html.encode("utf-8"), etree.HTMLParser())
    return doc, doc.xpath("//section[@class='briefing']")[0]


@pytest.mark.parametrize("lang", SITE_LANGS)
def test_the_story_page_shows_perspectives_players_and_places(lang):
    stored = _stored()
    html = _page(lang, stored)
    doc, section = _section(html)
    labels = labels_for(lang)
    assert labels["perspectives"] in section.xpath("string(.//h3[2])")
    lines = section.xpath(".//ul[@class='perspectives']/li")
    assert len(lines) == 2
    number = {li.get("id"): li.xpath("string(.//bdi[1])") for li in doc.xpath("//ul[@class='sources']/li[@id]")}
    for line, held in zip(lines, stored["perspectives"]):
        text = line.xpath("./bdi")[0]
        assert text.text == held["text"]
        # The line is in the briefing's language, isolated from the page's direction; the country in the page's.
        assert text.get("lang") == (None if lang == "en" else "en")
        country = line.xpath("string(./span[@class='country'])")
        assert country and country != held["country"]
        if held["country"] == "GB" and lang in ("en", "ja", "ar"):
            assert country == {"en": "United Kingdom", "ja": "イギリス", "ar": "المملكة المتحدة"}[lang]
        # Each cited outlet by its numbered source line.
        cited = {number[a.get("href")[1:]] for a in line.xpath("./a[@class='ref']")}
        assert cited == {a.outlet for a in DEAL if a.id in held["citations"]}
    names = section.xpath(".//p[@class='meta names']")
    assert [n.xpath("string(.)").split(":")[0] for n in names] == [labels["players"], labels["places"]]
    assert [b.text for b in names[0].xpath("./bdi")] == ["National Farmers' Union", "Ford"]
    assert labels["name_separator"].strip() in names[0].xpath("string(.)")
    assert "Washington" in [b.text for b in names[1].xpath("./bdi")]


def test_an_old_briefing_without_perspectives_or_names_still_renders():
    old = {"summary": {"text": "The deal was signed.", "citations": ["gb1"], "lang": "en"},
           "points": [{"text": "Tariffs on cars and steel will be cut.", "citations": ["gb1", "us1"], "lang": "en"}],
           "quotes": []}
    _, section = _section(_page("en", old))
    assert section.xpath(".//ul[@class='points']/li") and not section.xpath(".//ul[@class='perspectives']")
    assert not section.xpath(".//p[@class='meta names']")


def test_a_single_perspective_left_on_the_page_is_not_shown():
    stored = _stored()
    stored["perspectives"][1]["citations"] = ["not-a-shown-source"]
    _, section = _section(_page("en", stored))
    assert not section.xpath(".//ul[@class='perspectives']") and section.xpath(".//ul[@class='points']/li")


def test_a_briefing_round_trips_through_its_row():
    briefing = Briefing("business", None, (), (), perspectives=(Perspective("Text.", ("gb1",), "GB", "en"),))
    assert briefing.as_dict()["perspectives"] == [
        {"text": "Text.", "citations": ["gb1"], "country": "GB", "lang": "en"}]


@pytest.mark.skipif(not VNU_JAR.exists() or not java(),
                    reason="Nu Html Checker not installed (.ci/run: npm install --prefix tests/data/vnu vnu-jar)")
def test_story_pages_with_perspectives_pass_the_nu_html_checker(tmp_path):
    pages = []
    for lang in SITE_LANGS:
        path = tmp_path / f"story-{lang}.html"
        path.write_text(_page(lang, _stored()), encoding="utf-8")
        pages.append(path)
    assert html_errors(pages) == []
