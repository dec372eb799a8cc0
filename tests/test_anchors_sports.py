"""The sport a text names (shared/text/sports.py): read in every language the feeds carry, an
ambiguous term standing for every sport that uses it, and a veto only where both sides name a
sport and share none."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from newsdedup_dagster.shared.text import sports


@pytest.mark.parametrize("text, expected", [
    ("프로배구 대한항공, 현대캐피탈 꺾고 3연승", {"volleyball"}),
    ("Авангард обыграл СКА в матче КХЛ", {"ice hockey"}),
    ("Футболисты сборной России проиграли", {"association football"}),   # a stem with its ending
    ("Eisbären gewinnen Eishockey-Krimi gegen Mannheim", {"ice hockey"}),
    ("Fußballspiel in Berlin abgesagt", {"association football"}),
    ("阪神が日本シリーズ制覇", {"baseball"}),
    ("辽宁男篮主场击败广东", {"basketball"}),
    ("Lakers beat Celtics in NBA opener", {"basketball"}),
    ("Ligue 1 : Lens s'impose face à Nantes", {"association football"}),
    ("Celtic beat Hibernian to return to top of Scottish Premiership", {"association football", "rugby"}),
    ("Chiefs win the Super Bowl", {"american football"}),
    ("India beat Pakistan in hockey final", {"ice hockey", "field hockey"}),
])
def test_sports_in_reads_every_language(text, expected):
    assert sports.sports_in(text) == expected


@pytest.mark.parametrize("text", [
    "シリコンバレーの新興企業が上場",          # バレー inside Silicon Valley
    "其中超过一半的居民已撤离",                # 中超 inside 其中超过
    "Navires bloqués dans le golfe Persique",  # golfe is not golf
    "Parliament passes the budget",
    "",
])
def test_no_sport_where_none_is_named(text):
    assert sports.sports_in(text) == frozenset()


def test_a_conflict_needs_both_sides_and_nothing_shared():
    football_or_rugby = sports.sports_in("Scottish Premiership")
    assert sports.sports_conflict(football_or_rugby, sports.sports_in("프로배구"))
    assert not sports.sports_conflict(football_or_rugby, sports.sports_in("Six Nations rugby"))
    assert not sports.sports_conflict(football_or_rugby, frozenset())        # one side names none: kept
    assert not sports.sports_conflict(sports.sports_in("football"), sports.sports_in("NFL"))  # ambiguous


@given(st.text(max_size=400))
def test_any_text_reads_as_a_set_of_known_sports(text):
    got = sports.sports_in(text)
    assert got <= set(sports.TERMS)
    assert sports.sports_in(text + " " + text) == got      # reading twice adds nothing


@given(st.sampled_from(sorted({t for terms in sports.TERMS.values() for t in terms})), st.text(max_size=40))
def test_every_term_is_read_inside_a_sentence(term, noise):
    word = term.replace("*", "")
    text = f"{noise} {word} ".replace("\n", " ")
    assert {s for s, terms in sports.TERMS.items() if term in terms} <= sports.sports_in(text) | _noise_sports(noise)


def _noise_sports(noise: str) -> frozenset[str]:
    # a noise string that runs into the term can change the word it is part of; then only what the
    # noise names alone may differ
    return sports.sports_in(noise)
