"""Places across languages (shared/text/places.py, the "places" kind of shared/text/anchors.py) on
real headline pairs: two items in different languages that name places in different countries
conflict; two reports of one event in two languages do not. The sample day's first-snow items
(Denver, Asahikawa, Zugspitze) are the case the kind was made for; the rest are composed from
public reporting of the named events, in English, Japanese, German, French, Spanish, Russian and
Chinese."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st

from newsdedup_dagster.shared.text import anchors as an, places

DENVER = ("en", "First snow of the season blankets Denver, snarling evening commute",
          "Up to 6 inches fell across the metro area, and Denver International Airport reported de-icing delays.")
ASAHIKAWA = ("ja", "北海道 旭川で初雪 平年より遅く", "北海道の旭川市で2日夜、初雪が観測されました。平年より11日遅い観測です。")
ZUGSPITZE = ("de", "Zugspitze: Erster Schnee lockt Skifahrer – Saisonstart verschoben",
             "Auf Deutschlands höchstem Berg liegen 40 Zentimeter Schnee, für den Liftbetrieb reicht das noch nicht.")
MOSCOW = ("ru", "В Москве на этой неделе может выпасть первый снег",
          "Синоптики прогнозируют мокрый снег и похолодание до минус трех градусов к четвергу.")

# (item A, item B): two events of one kind, in two languages and two countries
SPLIT = [
    (DENVER, ASAHIKAWA),                       # en-ja: US | JP
    (DENVER, ZUGSPITZE),                       # en-de: US | DE (a German noun is a place only if the gazetteer knows it)
    (ASAHIKAWA, ZUGSPITZE),                    # ja-de
    (MOSCOW, DENVER),                          # ru-en: the locative Москве is Москва
    (("fr", "Séisme en Équateur : au moins 77 morts",
      "Un séisme de magnitude 7,8 a frappé samedi la côte de l'Équateur, selon l'Institut géophysique de Quito."),
     ("ja", "メキシコ中部で地震 200人以上死亡", "メキシコ中部のプエブラ州を震源とする地震で、首都メキシコシティーでも建物が倒壊しました。")),
    (("es", "Madrid amanece con niebla y temperaturas bajo cero en la sierra",
      "La niebla obligó a desviar varios vuelos en Barajas a primera hora del lunes."),
     ("de", "Dichter Nebel legt den Flughafen Hamburg lahm", "In Hamburg fielen am Montagmorgen zahlreiche Flüge aus.")),
]

# (item A, item B): one event reported in two languages
KEPT = [
    (("en", "Paris opens driverless orbital metro line, first leg of Grand Paris Express",
      "The first section of Line 15 links Pont de Sèvres with Noisy-Champs."),
     ("ja", "パリ郊外結ぶ新たな地下鉄が開業 「グラン・パリ・エクスプレス」", "フランスの首都パリで、郊外を環状に結ぶ新たな地下鉄の一部区間が開業しました。")),
    (("ja", "東京都心 今シーズン一番の冷え込み 各地で初霜", "東京の都心でも今シーズン一番の冷え込みとなりました。"),
     ("en", "Tokyo shivers through its coldest morning of the season", "Frost was reported across the Kanto plain.")),
    (("de", "Schweres Erdbeben erschüttert die Türkei", "Die Zahl der Toten in der Türkei steigt auf mehr als 20.000."),
     ("en", "Earthquake death toll in Syria passes 3,000", "Rescuers in Aleppo are still searching the rubble.")),  # neighbours
    (("es", "Estados Unidos llega a las elecciones de medio mandato", "Los votantes eligen a la Cámara de Representantes."),
     ("ru", "В США завершается кампания перед промежуточными выборами", "Американцы выберут состав палаты представителей.")),
    (("zh", "欧盟就人工智能法案达成协议", "欧洲议会和成员国在布鲁塞尔达成协议。"),
     ("fr", "Accord sur la loi européenne sur l'intelligence artificielle", "Le Parlement européen et les États membres se sont accordés à Bruxelles.")),
]

RULES = an.AnchorRules(years=False, min_names=0, places=True)


def item(spec) -> an.Anchors:
    lang, title, lead = spec
    return an.extract(title, lead, lang)


@pytest.mark.parametrize("a,b", SPLIT, ids=[f"{a[0]}-{b[0]}:{a[1][:18]}" for a, b in SPLIT])
def test_places_in_two_countries_conflict_across_languages(a, b):
    x, y = item(a), item(b)
    clash = an.conflict(x, y, RULES)
    assert clash is not None and clash.kinds == ("places",), (x.shown("places"), y.shown("places"))
    assert clash.a["places"] and clash.b["places"]
    assert an.conflict(y, x, RULES) is not None  # either order


@pytest.mark.parametrize("a,b", KEPT, ids=[f"{a[0]}-{b[0]}:{a[1][:18]}" for a, b in KEPT])
def test_one_event_in_two_languages_does_not_conflict(a, b):
    assert an.conflict(item(a), item(b)) is None


def test_what_the_snow_items_resolve_to():
    assert item(DENVER).places == {"US"}
    assert item(ASAHIKAWA).places == {"JP"} and "旭川 JP" in item(ASAHIKAWA).place_names
    assert item(ZUGSPITZE).places == {"DE"}
    assert item(MOSCOW).places == {"RU"}


def test_places_only_veto_across_languages():
    # within one language names do the work (German has none): two German items never conflict on places
    berlin = an.extract("Erster Schnee in Berlin", "Die Stadt meldet Glätte.", "de")
    vienna = an.extract("Erster Schnee in Wien", "Österreichs Hauptstadt meldet Glätte.", "de")
    assert berlin.places == {"DE"} and vienna.places == {"AT"}
    assert an.conflict(berlin, vienna, RULES) is None
    assert an.conflict(berlin, an.extract("First snow in Madrid", "", "en"), RULES).kinds == ("places",)
    assert an.conflict(item(DENVER), item(ASAHIKAWA), an.AnchorRules(places=False)) is None


def test_what_counts_as_a_place():
    assert places.countries_in("北海道の旭川市で", "ja") == {"JP"}
    assert places.countries_in("本·伯南克、道格拉斯·戴蒙德", "zh") == frozenset()  # 格拉 inside a transliteration
    assert places.countries_in("Rishi Sunak sucede Liz Truss como primeiro-ministro do Reino Unido", "pt") == {"GB"}
    assert places.countries_in("Paris Saint-Germain beat Lens", "en") == frozenset()  # part of a longer name
    assert places.countries_in("Nowa linia metra w Berlinie", "pl") == {"DE"}
    assert places.countries_in("Ceremony in Paris", "en") >= {"FR"}
    assert places.countries_in("the mobile phone", "en") == frozenset()
    assert places.apart(frozenset({"TR"}), frozenset({"SY"})) is False  # neighbours
    assert places.apart(frozenset({"US"}), frozenset({"JP"})) is True
    assert places.apart(frozenset(), frozenset({"JP"})) is False


def test_a_story_is_compared_across_languages_only_when_none_of_its_members_is_in_the_items():
    story = [item(ASAHIKAWA), an.extract("Tokyo shivers through its coldest morning", "", "en")]
    held = an.story_anchors(item(ZUGSPITZE), story)
    assert held.lang == "" and held.places == {"JP"}
    assert an.conflict(item(ZUGSPITZE), held, RULES).kinds == ("places",)
    # an English item is compared with the story's English members in English: by names where both
    # sides carry enough of them, else by places (every member's: Denver US | Tokyo, 旭川 JP)
    assert an.story_anchors(item(DENVER), story).lang == "en"
    in_english = an.story_anchors(item(DENVER), story)
    assert an.conflict(item(DENVER), in_english, RULES).kinds == ("places",)
    assert an.conflict(item(DENVER), in_english, replace(RULES, places_one_language=False)) is None
    named = an.extract("First snow blankets the city", "Mayor Mike Johnston said crews in Denver worked overnight.", "en")
    tokyo_named = an.extract("A cold morning for the capital", "Governor Yuriko Koike said Tokyo had its coldest day.",
                             "en")
    assert len(named.names) >= 2 and len(tokyo_named.names) >= 2
    assert an.conflict(named, tokyo_named, replace(RULES, min_names=2)).kinds == ("names",)  # not the places


_WORDS = st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=9), max_size=8)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["en", "de", "fr", "ja", "zh", "ru", "pl", "ko", "ar", "", None]))
def test_places_in_takes_any_text(text, lang):
    found = places.places_in(text, lang)
    for name, countries in found.items():
        assert isinstance(name, str) and name
        assert countries and all(len(c) == 2 and c.isupper() for c in countries)
    assert places.countries_in(text, lang) == frozenset().union(*found.values())


@settings(max_examples=100, deadline=None)
@given(_WORDS, _WORDS, st.sampled_from(["en", "fr", "es", "pt", "it"]))
def test_a_named_city_is_found_among_any_lower_case_words(before, after, lang):
    text = " ".join(before + ["Denver,"] + after)
    assert "US" in places.countries_in(text, lang)
    assert places.countries_in(" ".join(before + after), lang) == frozenset()  # lower-case words name no place


@settings(max_examples=100, deadline=None)
@given(st.frozensets(st.sampled_from(["US", "JP", "DE", "FR", "TR", "SY", "CA", "AT"]), max_size=3),
       st.frozensets(st.sampled_from(["US", "JP", "DE", "FR", "TR", "SY", "CA", "AT"]), max_size=3))
def test_apart_is_symmetric_and_false_when_a_country_is_shared(a, b):
    assert places.apart(a, b) == places.apart(b, a)
    if a & b or not a or not b:
        assert not places.apart(a, b)


def test_building_the_gazetteer_leaves_babels_locales_whole():
    from babel.numbers import format_decimal
    places.gazetteer.cache_clear()
    places.gazetteer()
    assert format_decimal(1234.5, locale="zh") == "1,234.5"   # the digest formats numbers after clustering
    assert format_decimal(1234.5, locale="de") == "1.234,5"
