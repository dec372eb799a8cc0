"""claims.py: the numbers of a line by value, whatever the script and the locale, and names as whole words."""

from __future__ import annotations

import unicodedata
from decimal import Decimal

import pytest
from anyascii import anyascii
from babel.numbers import format_decimal
from hypothesis import given, settings, strategies as st

from newsdedup_dagster.shared.text.claims import (
    latin_script,
    name_carried,
    names_in,
    names_match,
    numbers_in,
    numbers_supported,
    read_numbers,
    same_numbers,
    spelled_numbers_in,
    unsupported_numbers,
)


def values(text: str, lang: str | None = None) -> list[set[Decimal]]:
    return [set(readings) for readings in numbers_in(text, lang)]


def d(*numbers) -> set[Decimal]:
    return {Decimal(str(n)) for n in numbers}


# ------------------------------------------------------------------ examples
def test_a_magnitude_word_multiplies_and_the_decimal_point_counts():
    assert values("1.2 billion", "en") == [d(1200000000)]
    assert values("12 billion", "en") == [d(12000000000)]
    assert not same_numbers("1.2 billion", "en", "12 billion", "en")


@pytest.mark.parametrize("text,lang", [
    ("1,200", "en"), ("1 200", "fr"), ("1\u00a0200", "ru"), ("1\u202f200", "fr"), ("1.200", "de"),
    ("1.200", "es"), ("1.200", "it"), ("1.200", "pt"), ("1.200", "nl"), ("1.200", "id"), ("1.200", "tr"),
    ("1.200", "da"), ("1’200", "de-CH"), ("1200", None), ("１２００", "ja"), ("١٢٠٠", "ar"), ("१२००", "hi"),
])
def test_twelve_hundred_in_every_locale(text, lang):
    assert values(text, lang) == [d(1200)]


def test_a_single_mark_before_three_digits_is_read_the_locale_way_and_both_ways_without_one():
    assert values("1.200", "en") == [d("1.2")]
    assert values("1,200", "de") == [d("1.2")]
    assert values("1,200", None) == [d(1200, "1.2")]
    assert values("1.200", "und") == [d(1200, "1.2")]
    assert values("1.200", "fr") == [d(1200, "1.2")]        # French groups with a space: "." says neither
    assert values("0.125", None) == [d("0.125")]             # no group starts with 0
    assert values("1,5", "en") == [d("1.5")]                 # not three digits: a decimal anywhere


def test_the_same_million_in_several_languages():
    million = [d(1500000)]
    assert values("1,5 Millionen", "de") == million
    assert values("1.5 million", "en") == million
    assert values("1,5 Mio. Euro", "de") == million
    assert values("1,5 million", "fr") == million
    assert values("150万", "ja") == million
    assert values("150만 명", "ko") == million
    assert values("15 लाख", "hi") == million
    assert values("15 lakh", "en") == million
    assert values("1,5 млн", "ru") == million
    assert values("$1.5m", "en") == million
    assert same_numbers("1.5 million people", "en", "1,5 Millionen Menschen", "de")


def test_cjk_units_multiply_and_add_up():
    assert values("120万", "ja") == [d(1200000)]
    assert values("120万", "zh") == values("1.2 million", "en")
    assert values("1億2000万円", "ja") == [d(120000000)]
    assert values("1万2000人", "ja") == [d(12000)]
    assert values("1.2万亿", "zh") == [d(1200000000000)]
    assert values("1억 2천만 원", "ko") == [d(120000000)]
    assert values("2024年3月", "ja") == [d(2024), d(3)]


def test_billion_is_a_thousand_million_in_english_and_a_million_million_in_german_and_french():
    assert values("5 billion", "en") == [d(5 * 10**9)]
    assert values("5 Billionen", "de") == [d(5 * 10**12)]
    assert values("5 billions", "fr") == [d(5 * 10**12)]
    assert values("5 billion", None) == [d(5 * 10**9, 5 * 10**12)]
    assert values("5 mil millones", "es") == [d(5 * 10**9)]
    assert not same_numbers("5 billion dollars", "en", "5 billions de dollars", "fr")
    assert same_numbers("5 billion dollars", "en", "5 milliards de dollars", "fr")


def test_short_magnitudes_need_a_currency_sign():
    assert values("$5m", "en") == [d(5000000)]
    assert values("£3bn", "en") == [d(3000000000)]
    assert values("R$ 3 bi", "pt") == [d(3000000000)]
    assert values("5m tall", "en") == [d(5)]
    assert values("a 5km run", "en") == [d(5)]


def test_percent_years_dates_and_clocks():
    assert values("12%", "en") == values("12 %", "fr") == values("12 per cent", "en") == [d(12)]
    assert values("2,5 %", "fr") == [d("2.5")]
    assert values("in 2026", "en") == [d(2026)]
    assert values("14.03.2026", "de") == [d(14), d(3), d(2026)]
    assert same_numbers("March 14, 2026", "en", "14. März 2026", "de")
    assert values("in 2026 200 people", "en") == [d(2026), d(200)]
    assert same_numbers("at 8 pm", "en", "à 20 h", "fr")
    assert same_numbers("at 8:30 pm", "en", "um 20:30 Uhr", "de")
    assert same_numbers("at 20h30", "fr", "at 8:30", "en")
    assert same_numbers("at 10:00", "en", "um 10 Uhr", "de")              # no minutes to require
    assert same_numbers("um 10.30 Uhr", "de", "at 10:30 am", "en")
    assert values("午後8時", "ja") == [d(8, 20)]


def test_marks_that_fit_no_number_leave_each_group_a_number():
    assert values("3，4", "zh") == [d(3), d(4)]
    assert values("version 1.2.3", "en") == [d(1), d(2), d(3)]
    assert values("12,34,567", "hi") == [d(1234567)]          # Indian grouping


def test_the_changed_number_of_a_translation_is_found():
    source = "At least 12 people died in the flood on Monday"
    assert unsupported_numbers("Au moins 1 200 personnes sont mortes lundi", "fr", [(source, "en")]) == ["1 200"]
    assert numbers_supported("Au moins 12 personnes sont mortes lundi", "fr", [(source, "en")])
    assert not same_numbers(source, "en", "Au moins personnes sont mortes lundi", "fr")


def test_numbers_as_words_support_digits_without_being_required():
    assert spelled_numbers_in("two people and 三人", None) == d(2, 3)
    assert numbers_supported("2人が死亡", "ja", [("Two people died", "en")])
    assert numbers_supported("Deux personnes sont mortes", "fr", [("2 people died", "en")])
    assert not numbers_supported("3人が死亡", "ja", [("Two people died", "en")])


def test_read_numbers_keeps_what_was_written():
    assert [n.text for n in read_numbers("Ils étaient 1 200 et 3,5 millions", "fr")] == ["1 200", "3,5 millions"]


def test_names_are_whole_words_folded():
    assert not names_match("Ted", "It started on Monday")
    assert names_match("Ted", "Ted's talk")
    assert names_match("ted", "TED said")
    assert names_match("Sao Paulo", "in São  Paulo today")
    assert names_match("Łódź", "near Lodz")
    assert names_match("Moskva", "Москва")
    assert not names_match("Moskva", "Москве")
    assert not names_match("", "anything")
    assert not names_match("-", "a - b")


def test_names_in_scripts_without_spaces_match_as_substrings_of_two_characters():
    assert names_match("東京", "東京都で地震")
    assert not names_match("東", "東京都")
    assert names_match("กรุงเทพ", "ที่กรุงเทพมหานคร")


def test_names_of_a_line():
    assert names_in("At least 12 people died, Prime Minister Keir Starmer said on Monday.", "en") == [
        "Prime Minister Keir Starmer"]
    assert names_in("Leaders met the Bank of England and NATO in Moscow.", "en") == ["Bank of England", "Moscow"]
    assert names_in("Prime Minister Resigns After Budget Vote", "en") == []      # Title Case
    assert names_in("Quake Kills 12 in Tolosa", "en") == []
    assert names_in("Yesterday I met Ruiz. Then “Rescue teams arrived”, said Marta Ruiz.", "en") == [
        "Ruiz", "Marta Ruiz"]
    assert names_in("Der Bundestag stimmte am Montag ab.", "de") == []


def test_a_translation_carries_a_name_its_language_adapts():
    assert name_carried("Germany", "en", "l'Allemagne a voté", "fr")             # babel's country names
    assert name_carried("Vienna", "en", "in Wien", "de")                         # babel's city names
    assert name_carried("Moscow", "en", "à Moscou", "fr")
    assert name_carried("Keir Starmer", "en", "Starmer a dit", "fr")
    assert not name_carried("Scholz", "en", "Merz a dit", "fr")
    assert name_carried("Zelensky", "en", "Selenskyj sagte", "de")                # spelled alike
    assert name_carried("European Central Bank", "en", "die Europäische Zentralbank", "de")   # a compound
    assert not name_carried("Chancellor Friedrich Merz", "en", "le chancelier Olaf Scholz", "fr")
    assert latin_script("Au moins 1 200") and not latin_script("至少12人")


# ------------------------------------------------------------------ properties
LOCALES = ["en", "de", "fr", "es", "it", "pt", "pt_PT", "nl", "ru", "pl", "hi", "ja", "zh", "ko", "ar",
           "sv", "tr", "id", "da", "en_IN"]
amounts = st.decimals(min_value=0, max_value=Decimal("1e15"), allow_nan=False, allow_infinity=False, places=None)


@settings(max_examples=300, deadline=None)
@given(amount=amounts.filter(lambda x: x == x.quantize(Decimal("1e-6")) if x.is_finite() else False),
       locale=st.sampled_from(LOCALES))
def test_a_number_babel_formats_reads_back_as_its_value(amount, locale):
    text = format_decimal(amount, locale=locale, decimal_quantization=False)
    assert values(text, locale) == [{amount}], text


@settings(max_examples=200, deadline=None)
@given(amount=amounts.filter(lambda x: x == x.quantize(Decimal("1e-3"))), locale=st.sampled_from(LOCALES))
def test_without_a_language_the_value_is_among_the_readings(amount, locale):
    text = format_decimal(amount, locale=locale, decimal_quantization=False)
    assert amount in set().union(*values(text, None)), text


@settings(max_examples=200, deadline=None)
@given(n=st.integers(min_value=1, max_value=999), word=st.sampled_from(["million", "billion", "thousand"]))
def test_a_magnitude_word_after_any_number(n, word):
    power = {"thousand": 3, "million": 6, "billion": 9}[word]
    assert values(f"{n} {word}", "en") == [{Decimal(n) * 10**power}]


@settings(max_examples=500, deadline=None)
@given(text=st.text(), lang=st.sampled_from([None, "en", "de", "fr", "ja", "zh", "ko", "hi", "ar", "und", "xx-YY"]))
def test_reading_numbers_never_raises(text, lang):
    for readings in numbers_in(text, lang):
        assert readings
    numbers_supported(text, lang, [(text, lang)])
    names_in(text, lang)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_a_line_supports_its_own_numbers(text):
    assert numbers_supported(text, "en", [(text, "en")])


def _squashed(text: str) -> str:
    return "".join(names_key(text).split())


def names_key(text: str) -> str:
    """The property's own folding, written apart from claims.py's."""
    decomposed = unicodedata.normalize("NFKD", text)
    folded = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()
    return anyascii(folded).lower()


@settings(max_examples=500, deadline=None)
@given(name=st.text(min_size=1, max_size=8), text=st.text(max_size=40))
def test_a_name_that_is_not_a_substring_never_matches(name, text):
    if _squashed(name) not in _squashed(text):
        assert not names_match(name, text)


@settings(max_examples=300, deadline=None)
@given(name=st.from_regex(r"[A-Z][a-z]{2,8}", fullmatch=True), before=st.from_regex(r"[a-z]{1,5}", fullmatch=True))
def test_a_name_inside_a_longer_word_never_matches(name, before):
    assert not names_match(name, f"{before}{name.lower()} and {name.lower()}{before}")
    assert names_match(name, f"{before} {name.lower()}, {before}")
