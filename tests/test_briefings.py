"""Briefings: the taxonomy in every published language, the offline category, the extractive
briefing (every line an article's own, cited), quotations with their speakers in several languages,
and a model's briefing checked line by line: an invented quote, a citation of another story's
article, a line in the wrong language or with a number no article holds is not published, and the
rest of the briefing is."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from newsdedup_dagster.shared.models.settings import NARRATIVE_LANGS, TRANSLATION_LANGS
from newsdedup_dagster.shared.presentation.categories import offline_category
from newsdedup_dagster.shared.presentation.taxonomy import CATEGORIES, FALLBACK, NAMES, category_name
from newsdedup_dagster.stages.briefings.briefing import Article
from newsdedup_dagster.stages.briefings.extractive import (
    MAX_POINTS,
    MAX_QUOTES,
    extractive_briefing,
    key_points,
    quotes_in,
    sentences,
)
from newsdedup_dagster.stages.briefings.verify import checked_briefing, checked_extractive, normalise, quote_in

QUAKE = [
    Article("a1", "bbc", "en", "Quake hits Iwate",
            "A magnitude 6.1 earthquake struck Iwate prefecture late on Monday, the Japan Meteorological Agency "
            "said. No tsunami warning was issued. “We are checking for damage across the region,” said Kenji "
            "Sato, the prefecture's disaster chief, adding that trains had stopped.\nThe quake was felt in Tokyo."),
    Article("a2", "reuters", "en", "Strong quake shakes northern Japan",
            "A strong earthquake of magnitude 6.1 struck Iwate prefecture in northern Japan on Monday night. "
            "Bullet trains were halted between Tokyo and Aomori. No tsunami warning was issued, the agency said."),
    Article("a3", "nhk", "ja", "岩手で震度5強",
            "岩手県で震度5強の地震がありました。気象庁の担当者は「今後1週間は同程度の揺れに注意してほしい」と述べました。"),
]
OTHER_STORY = Article("b1", "afp", "en", "Markets rally", "Stocks rose 3 percent on Monday, traders said.")


def test_every_category_is_named_in_every_published_language():
    for lang in {*NARRATIVE_LANGS, *TRANSLATION_LANGS, "en"}:
        names = [category_name(c, lang) for c in CATEGORIES]
        assert all(names) and len(set(names)) == len(CATEGORIES), lang
        assert set(NAMES[lang]) == set(CATEGORIES)
    assert FALLBACK in CATEGORIES and 12 <= len(CATEGORIES) <= 18


def test_the_offline_category_in_several_languages():
    assert offline_category(["Magnitude 6.1 earthquake strikes Iwate"]) == "disasters"
    assert offline_category(["岩手県で震度5強の地震"]) == "disasters"
    assert offline_category(["Bundestag stimmt über neue Regierung ab"]) == "politics"
    assert offline_category(["Arsenal win in the Premier League"]) == "sports"
    assert offline_category(["Paris metro line 14 extension opens"]) == "travel"
    assert offline_category(["Цены на нефть и рынок акций"]) == "business"
    assert offline_category(["A quiet day"]) == FALLBACK


def test_key_points_are_the_articles_own_sentences_and_cite_them():
    points = key_points(QUAKE, "en")
    assert 3 <= len(points) <= MAX_POINTS
    by_id = {a.id: a for a in QUAKE}
    for point in points:
        assert point.lang == "en" and point.text in sentences(by_id[point.citations[0]].text)
        assert set(point.citations) <= {"a1", "a2"}
    # "No tsunami warning was issued" is in both English articles: one point, citing both.
    tsunami = [p for p in points if "tsunami" in p.text]
    assert len(tsunami) == 1 and set(tsunami[0].citations) == {"a1", "a2"}


def test_quotes_with_their_speakers_in_several_languages():
    def one(lang, text):
        found = quotes_in(Article("x", "o", lang, "", text))
        assert len(found) == 1, (lang, found)
        assert quote_in(found[0].text, text)
        return found[0]

    q = one("en", "“We are checking for damage,” said Kenji Sato, the prefecture's disaster chief, on Monday.")
    assert (q.speaker, q.role) == ("Kenji Sato", "the prefecture's disaster chief")
    assert one("en", 'Anna Berg said: "The budget will be balanced by 2028."').speaker == "Anna Berg"
    assert one("fr", "« Nous ne céderons pas sur les retraites », a déclaré Élisabeth Martin.").speaker == "Élisabeth Martin"
    assert one("de", "„Der Streik ist unverhältnismäßig“, sagte Jana Keller am Montag.").speaker == "Jana Keller"
    assert one("ru", "«Ситуация остаётся сложной», заявил Иван Петров.").speaker == "Иван Петров"
    assert one("ja", "気象庁の担当者は「今後1週間は揺れに注意してほしい」と述べました。").speaker == "担当者"
    assert one("zh", "发言人王磊表示：“我们将继续保持沟通与合作。”").speaker.endswith("王磊")
    assert one("ko", '김민수 장관은 "추가 지원책을 마련하겠다"라고 말했다.').speaker == "김민수 장관"
    # A quotation with no named speaker is not a quote of the briefing.
    assert quotes_in(Article("x", "o", "en", "", '"This is unacceptable," he said.')) == []


def test_the_extractive_briefing_passes_its_own_checks():
    briefing = checked_extractive(extractive_briefing(QUAKE), QUAKE)
    assert briefing.dropped == {} and briefing.method == "extractive" and briefing.category == "disasters"
    assert briefing.summary is not None and briefing.summary.text not in [p.text for p in briefing.points]
    assert [q.speaker for q in briefing.quotes] == ["Kenji Sato"]
    assert len(briefing.quotes) <= MAX_QUOTES
    # Places as the articles write them (the gazetteer's keys are folded), in the briefing's language.
    assert "Tokyo" in briefing.places and "Aomori" in briefing.places
    assert all(any(p in f"{a.title} {a.text}" for a in QUAKE if a.lang == "en") for p in briefing.places)


def test_a_models_claims_that_cannot_be_checked_are_not_published():
    reply = {
        "category": "disasters",
        "summary": {"text": "A magnitude 6.1 quake struck Iwate on Monday.", "citations": ["a1", "b1"]},
        "points": [
            {"text": "No tsunami warning was issued.", "citations": ["a2"]},
            {"text": "Bullet trains were halted between Tokyo and Aomori.", "citations": ["b1"]},   # another story
            {"text": "Trains stopped.", "citations": []},                                            # uncited
            {"text": "Ein starkes Erdbeben der Stärke 6,1 hat die Präfektur Iwate im Norden Japans erschüttert.",
             "citations": ["a2"]},                                                                   # wrong language
            {"text": "The quake had a magnitude of 7.4.", "citations": ["a1"]},                    # number not there
            {"text": "Prime Minister Ishiba flew to Iwate.", "citations": ["a1", "a2"]},          # name not there
        ],
        "quotes": [
            {"text": "We are checking for damage across the region", "speaker": "Kenji Sato", "article": "a1"},
            {"text": "Everyone is safe and accounted for", "speaker": "Kenji Sato", "article": "a1"},   # invented
            {"text": "We are checking for damage", "speaker": "Taro Yamada", "article": "a1"},          # wrong speaker
            {"text": "Stocks rose 3 percent", "speaker": "traders", "article": "b1"},                   # other story
        ],
        "places": ["Iwate", "Atlantis"],
        "players": ["Kenji Sato"],
    }
    briefing = checked_briefing(reply, QUAKE, "en")
    assert briefing.summary.citations == ("a1",)
    assert [p.text for p in briefing.points] == ["No tsunami warning was issued."]
    assert [(q.speaker, q.text) for q in briefing.quotes] == [("Kenji Sato", "We are checking for damage across the region")]
    assert briefing.places == ("Iwate",) and briefing.players == ("Kenji Sato",)
    assert briefing.dropped == {"foreign_citation": 3, "uncited": 2, "wrong_language": 1, "unsupported": 2,
                                "quote_not_found": 1, "speaker_not_found": 1, "not_in_articles": 1}
    # A category outside the taxonomy is replaced by the offline one, and counted.
    other = checked_briefing({"category": "gossip"}, QUAKE, "en")
    assert other.category == "disasters" and other.dropped == {"unknown_category": 1}


def test_normalisation_is_the_same_on_both_sides():
    assert normalise("  “We  are\nchecking,” ") == normalise("we are checking")
    assert quote_in("「今後1週間は揺れに注意」", "担当者は「今後1週間は揺れに注意」と述べた")
    assert not quote_in("ok", "ok ok ok")   # too short to mean anything


JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=40),
              st.sampled_from(["a1", "a2", "a3", "b1", "disasters", "Kenji Sato", "No tsunami warning was issued."])),
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(st.sampled_from(["text", "citations", "speaker", "article", "role"]),
                                            inner, max_size=5)),
    max_leaves=30)
REPLY = st.dictionaries(st.sampled_from(["category", "summary", "points", "quotes", "places", "players",
                                         "perspectives"]), JSON, max_size=7)


@settings(max_examples=300, deadline=None)
@given(REPLY)
def test_any_reply_gives_only_checked_lines(reply):
    briefing = checked_briefing(reply, QUAKE, "en")
    by_id = {a.id: a for a in QUAKE}
    assert briefing.category in CATEGORIES
    for point in [p for p in (briefing.summary, *briefing.points) if p is not None]:
        assert point.citations and set(point.citations) <= set(by_id)
    for quote in briefing.quotes:
        assert quote_in(quote.text, by_id[quote.article_id].text)
    assert len(briefing.points) <= MAX_POINTS and len(briefing.quotes) <= MAX_QUOTES
    # The story's outlets have no known country: no line can be a country's perspective.
    assert briefing.perspectives == ()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["en", "ja", "de", None]), st.text(max_size=400)), min_size=1, max_size=4))
def test_the_extractive_briefing_of_any_text_is_its_own(texts):
    articles = [Article(f"x{i}", "o", lang, text[:30], text) for i, (lang, text) in enumerate(texts)]
    briefing = checked_extractive(extractive_briefing(articles), articles)
    assert briefing.dropped.get("uncited", 0) == 0 and briefing.dropped.get("quote_not_found", 0) == 0


def test_a_headline_repeated_in_the_page_text_is_not_a_point():
    articles = [Article("h1", "o", "en", "Paris opens new metro line",
                        "Paris opens new metro line\nLine 15 South links the southern suburbs without passing "
                        "through the centre of the capital.\nThe first trains ran on Monday morning, the operator said."),
                Article("h2", "p", "en", "Paris opens driverless metro line",
                        "Paris opens driverless metro line.\nThe driverless line links southern suburbs without "
                        "passing through the centre, the operator said.")]
    texts = [p.text for p in key_points(articles, "en")]
    assert texts and not any(t.rstrip(".") in {a.title for a in articles} for t in texts)
