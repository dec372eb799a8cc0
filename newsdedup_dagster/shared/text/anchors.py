"""Anchors: what tells two look-alike events apart (pure, no DB, no environment).

Embeddings of one kind of event sit close whatever the place, the year or the people: two
earthquakes, two shootings, two first snows. What differs between them is in the text: the
names of places and people, the years, the magnitudes. An *anchor* is such a detail taken from
an item's headline and lead, in a form that survives translation into another language:

  years   four-digit years 1900-2099 in any script's digits (Unicode decimal digits fold to
          ASCII with int()), e.g. "2008", "２０１１年"
  names   Latin-, Greek- and Cyrillic-script words written with a capital inside a sentence
          (not the first word, not a headline written in Title Case, not German or
          Luxembourgish, whose nouns are all capitalised), plus all-capital acronyms of 2-5
          letters; compared case- and accent-folded (NFKD without combining marks), so
          "São Paulo" and "Sao Paulo" agree. Chinese and Japanese names have no capital to find
          and are left out here (see places).
  places  the countries of the places the headline and lead name, resolved through a gazetteer
          of country and city names in every script (places.py): "Denver" and "デンバー" are
          US, "旭川" is JP, "Deutschlands" is DE. Only used across languages.
  magnitudes  earthquake magnitudes in any language's way of writing them (numbers.py): "M6.1",
          "magnitude 6.1", "6.1 quake", "6.1級", "규모 6.1", "магнитудой 6,1", "Stärke 6,1".
  intensities  the seismic intensity (震度 5強, 진도 5강): another scale (one quake, one intensity per
          town), read to be shown and never compared: a side that gives only an intensity has no
          magnitude, so it cannot conflict on magnitudes.
  scores  match results "2-1", "3:2", "102比95", "3대1", "3 à 1" (numbers.py), order-free (2-1 = 1-2); clock
          times ("20:30") are not scores.
  sports  the sports the text names or whose leagues it names (sports.py): "프로배구" is volleyball,
          "Scottish Premiership" football or rugby, "КХЛ" ice hockey.
  romanised names  the names above, the acronyms, the names in «guillemets» and the Latin-script
          words inside Han, kana or Hangul text, transliterated to ASCII (anyascii), minus the
          places the gazetteer knows (the place check compares those): "СКА" is "ska", "Fulham"
          "fulham". Only used across languages.

Two items *conflict* when both carry anchors of a kind and share none of them:
  years   both name at least one year and no year is shared (the ECB+ topics' second events
          happened in other years than the first);
  names   both carry at least `min_names` names, share none, and are written in the same
          language (across languages the same place is spelled differently: Moskau, Moscow,
          Moscou; so names only ever veto within one language);
  places  both name a place the gazetteer knows, the two are written in different languages or
          (rules.places_one_language) one side carries fewer than `min_names` names, and no
          country is shared or borders one of the other side's (a name several countries hold
          stands for all of them, so a wrong reading of an ambiguous name can only keep a pair,
          not split it).
  magnitudes  both name a magnitude and no two are within MAGNITUDE_TOLERANCE (agencies give one
          quake's magnitude 0.1-0.3 apart);
  scores  both give a result and share none;
  sports  both name a sport and share none (a term several sports use stands for all of them);
  romanised names  the two are written in different languages, both carry at least `min_cross_names`
          romanised names, and none of one side's is close to one of the other's (equal, one a
          prefix of the other, or similar in spelling: transliterations differ, "teysheyra" and
          "teixeira"), so that a doubtful transliteration keeps a pair together.
A pair that shares a name or a year does not conflict on that kind. Method: the idea of
Cybulska & Vossen (LREC 2014, ECB+) that event coreference rests on the time, place and
participants of an event, applied as a cheap veto on top of vector similarity.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher

from anyascii import anyascii

from newsdedup_dagster.shared.text import numbers, places as gazetteer, sports as sport_terms
from newsdedup_dagster.shared.text.item_text import lead_of, normalise_space
from newsdedup_dagster.shared.text.words import BOUNDARY as _BOUNDARY, fold

# Decimal digits of any script (\d is Unicode-aware): a year is four of them, not part of a longer number.
_YEAR = re.compile(r"(?<![\d.,])(\d{4})(?![\d]|[.,]\d)")
_WORD = re.compile(r"[^\W\d_](?:[\w'’\-]*[^\W_])?")
# French / Italian / Catalan elision: "l'Équateur", "d'Amatrice", "dell'Aquila" name Équateur, Amatrice, Aquila
_ELISION = re.compile(r"^(?:[lLdDjJmMnNsStTcC]|[qQ]u|[dDaAnNsS]ell|[aA]ll|[dD]all)['’](?=[^\W\d_])")
_POSSESSIVE = re.compile(r"['’]s$")
_TITLE_CASE_SHARE = 0.8
# characters of a summary read for its lead (room for a repeated headline, bylines and datelines)
_SUMMARY_CHARS_READ = 400
_NO_NAME_CASE_LANGS = frozenset({"de", "lb"})
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
# Cross names: the Latin-script runs inside Han, kana or Hangul text (CBA, JR, NHK), and names in
# guillemets («Авангард»), whatever the language's capitals say.
_LATIN_RUN = re.compile(r"(?<![A-Za-z])[A-Z][A-Za-z]{1,}(?![A-Za-z])")
_QUOTED = re.compile(r"«([^»]{2,40})»")
_UNCASED_TEXT = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
# Two transliterated names are one when their spelling is at least this similar (difflib ratio):
# "teysheyra" / "teixeira" 0.71, "avangard" / "avanhard" 0.88, "fulham" / "getafe" 0.17.
# ITN dev, cross-language pairs: docs/calibration/clustering.md#cross-language-anchors
CROSS_NAME_SIMILARITY = 0.7
_CROSS_NAME_PREFIX = 3
# JMA, USGS and EMSC give one quake magnitudes up to 0.3 apart: docs/calibration/clustering.md#cross-language-anchors
MAGNITUDE_TOLERANCE = 0.3
# Capitalised words that name no place or person: weekdays, months, time zones, honorifics and
# the function words that headlines and quotes capitalise.
_NOT_NAMES = frozenset("""
a an and as at but by for from he her his i in is it its of on or our she that the their these
they this those to we with you mr mrs ms dr sir st am pm est edt cst pst gmt utc ist cet bst
monday tuesday wednesday thursday friday saturday sunday january february march april may june
july august september october november december jan feb mar apr jun jul aug sep sept oct nov dec
report update updated breaking video photos photo watch live news exclusive opinion analysis
""".split())


@dataclass(frozen=True)
class Anchors:
    lang: str
    years: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    places: frozenset[str] = frozenset()          # country codes
    place_names: frozenset[str] = frozenset()     # what was read, "denver US", for explanations
    magnitudes: frozenset[float] = frozenset()
    scores: frozenset[tuple[int, int]] = frozenset()   # (low, high)
    cross_names: frozenset[str] = frozenset()     # transliterated, for other languages
    text: str = ""                                # headline and lead (romanised names search it)
    sports: frozenset[str] = frozenset()          # sports.py
    intensities: frozenset[str] = frozenset()     # 震度 / 진도, "5+": shown, never compared (numbers.py)
    # countries of the places named inside longer names ("Grand Paris Express"): where a side names
    # no place, they stand for its places across languages (places.names_places)
    name_places: frozenset[str] = frozenset()

    def as_dict(self) -> dict:
        out = {"years": sorted(self.years), "names": sorted(self.names), "places": self.shown("places")}
        for kind in ("magnitudes", "intensities", "scores", "sports", "romanised"):
            if self.shown(kind):
                out[kind] = self.shown(kind)
        return out

    def shown(self, kind: str) -> list:
        if kind == "places":
            return sorted(self.place_names) or sorted(self.places) or [f"{c} (in a name)" for c in sorted(self.name_places)]
        if kind == "magnitudes":
            return [f"M{m:.1f}" for m in sorted(self.magnitudes)]
        if kind == "scores":
            return [f"{a}-{b}" for a, b in sorted(self.scores)]
        if kind == "romanised":
            return sorted(self.cross_names)
        return sorted(getattr(self, kind))


@dataclass(frozen=True)
class Conflict:
    """Why two items' anchors say they are different events: per kind, each side's anchors."""
    kinds: tuple[str, ...]
    a: dict
    b: dict

    def as_dict(self) -> dict:
        return {"kinds": list(self.kinds), "a": self.a, "b": self.b}


def years_in(text: str) -> set[str]:
    out = set()
    for match in _YEAR.finditer(text):
        year = int(match.group(1))  # int() reads any script's decimal digits
        if 1900 <= year <= 2099:
            out.add(str(year))
    return out


def _cased(word: str) -> bool:
    """A word of a script with letter case (Latin, Greek, Cyrillic, ...)."""
    return word.upper() != word.lower()


def _title_case(text: str) -> bool:
    """A headline written in Title Case (or all capitals): its capitals say nothing about names."""
    words = [w for w in _WORD.findall(text) if _cased(w) and fold(w) not in _NOT_NAMES]
    if len(words) < 3:
        return False
    capitalised = sum(1 for w in words if w[0].isupper())
    return capitalised / len(words) >= _TITLE_CASE_SHARE


def names_in(text: str, acronyms_only: bool = False) -> set[str]:
    """Folded capitalised words not at a sentence or clause start, and acronyms (2-5 capitals);
    acronyms_only: the acronyms alone (German, whose nouns are all capitalised)."""
    out = set()
    shouting = text.upper() == text
    for match in _WORD.finditer(text):
        word = _POSSESSIVE.sub("", _ELISION.sub("", match.group(0)))
        if not _cased(word) or not word[0].isupper():
            continue
        key = fold(word)
        if key in _NOT_NAMES or len(key) < 2:
            continue
        if word.isupper():
            if not shouting and 2 <= len(word) <= 5:
                out.add(key)
            continue
        if acronyms_only or _BOUNDARY.search(text[:match.start()]):
            continue
        out.add(key)
    return out


def transliterated(name: str) -> str:
    """A name's ASCII key for comparison across scripts: anyascii, lower case, letters and digits."""
    return _NOT_ALNUM.sub("", anyascii(name).lower())


@functools.lru_cache(maxsize=4096)
def transliterated_text(text: str) -> str:
    """Headline and lead in ASCII, lower case, words run together (what _named_in searches); read
    only for the pairs the romanised names would otherwise refuse."""
    return transliterated(text)


def cross_names_in(text: str, names: Iterable[str], place_keys: Iterable[str]) -> set[str]:
    """The romanised names of a text whose own names (names_in) are `names`: those names, the names in
    guillemets, and the Latin-script runs of Han, kana and Hangul text; transliterated, places
    (the gazetteer's matches, `place_keys`) left out."""
    raw = set(names)
    raw |= {m.group(1) for m in _QUOTED.finditer(text)}
    if _UNCASED_TEXT.search(text):
        raw |= {m.group(0) for m in _LATIN_RUN.finditer(text)}
    places = {transliterated(p) for p in place_keys}
    out = set()
    for name in raw:
        key = transliterated(name)
        if len(key) >= 2 and key not in places and fold(name) not in _NOT_NAMES:
            out.add(key)
    return out


def _named_in(name: str, ascii_text: str) -> bool:
    """A transliterated name the other side's transliterated text holds: its first
    _CROSS_NAME_PREFIX + 1 letters, anywhere (a translated compound "Europarlament" holds
    "parl(amento)", a case ending "Тейшейре" holds "teys(heyra)")."""
    return len(name) >= _CROSS_NAME_PREFIX and name[:_CROSS_NAME_PREFIX + 1] in ascii_text


def names_agree(a: str, b: str) -> bool:
    """Two transliterated names that may be one: equal, a prefix (Vallecano / Vallecanos), or
    spelled alike (difflib ratio >= CROSS_NAME_SIMILARITY)."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) >= _CROSS_NAME_PREFIX and long_.startswith(short):
        return True
    return SequenceMatcher(None, a, b).ratio() >= CROSS_NAME_SIMILARITY


def extract(title: str | None, summary: str | None, lang: str | None, lead_chars: int = 200,
            places: bool = True) -> Anchors:
    """The anchors of one item: its headline and the lead the embedder sees (shared/text/item_text.py)."""
    head = normalise_space(title)
    # the lead is at most lead_chars of the summary's start: cleaning a whole article costs ~7 ms
    lead = lead_of(head, (summary or "")[:_SUMMARY_CHARS_READ + len(head)], lead_chars)
    years = years_in(head) | years_in(lead)
    code = (lang or "").split("-")[0].lower()
    names: set[str] = set()
    if code not in _NO_NAME_CASE_LANGS:
        if not _title_case(head):
            names |= names_in(head)
        names |= names_in(lead)
    text = head + "\n" + lead
    found, inside = gazetteer.places_and_names_places(text, code) if places else ({}, {})
    inside = {} if found else inside   # a side's own places come first
    # German capitalises every noun: across languages its acronyms and quoted names still count
    own = names if code not in _NO_NAME_CASE_LANGS else names_in(text, acronyms_only=True)
    return Anchors(code, frozenset(years), frozenset(names),
                   frozenset().union(*found.values()),
                   frozenset(f"{name} {'/'.join(sorted(cc))}" for name, cc in found.items()),
                   frozenset(numbers.magnitudes_in(text)), frozenset(numbers.scores_in(text)),
                   frozenset(cross_names_in(text, own, found)), text, sport_terms.sports_in(text),
                   frozenset(numbers.intensities_in(text)),
                   frozenset().union(*inside.values()))


@dataclass(frozen=True)
class AnchorRules:
    """When two items' anchors veto a merge (clustering settings anchor_years, anchor_min_names)."""
    years: bool = True
    min_names: int = 2     # 0 = names never veto
    places: bool = True    # places veto across languages
    numbers: bool = True   # magnitudes and scores veto
    sports: bool = True    # sports veto (sports.py)
    # 0 = names never veto across languages; 3: ITN dev, docs/calibration/clustering.md#cross-language-anchors
    min_cross_names: int = 3
    # places veto within one language too where the names cannot decide (a side has fewer than
    # min_names); ECB+ dev: docs/calibration/clustering.md#places-within-one-language
    places_one_language: bool = True


def conflict(a: Anchors, b: Anchors, rules: AnchorRules = AnchorRules()) -> Conflict | None:
    """The kinds on which a and b disagree (see the module's docstring), or None."""
    kinds = []
    if rules.years and a.years and b.years and not (a.years & b.years):
        kinds.append("years")
    if (rules.min_names > 0 and a.lang and a.lang == b.lang
            and len(a.names) >= rules.min_names and len(b.names) >= rules.min_names
            and not (a.names & b.names)):
        kinds.append("names")
    one_language = bool(a.lang) and a.lang == b.lang
    names_undecided = rules.min_names <= 0 or min(len(a.names), len(b.names)) < rules.min_names
    if (rules.places and a.places and b.places
            and (not one_language or (rules.places_one_language and names_undecided))
            and gazetteer.apart(a.places, b.places)):
        kinds.append("places")
    elif (rules.places and not one_language and (a.places or a.name_places) and (b.places or b.name_places)
            and (a.places or b.places) and gazetteer.apart(a.places or a.name_places, b.places or b.name_places)):
        # across languages, a side that names no place is read by the places inside its names
        kinds.append("places")
    if rules.numbers and a.magnitudes and b.magnitudes and not any(
            abs(x - y) <= MAGNITUDE_TOLERANCE + 1e-9 for x in a.magnitudes for y in b.magnitudes):
        kinds.append("magnitudes")
    if rules.numbers and a.scores and b.scores and not (a.scores & b.scores):
        kinds.append("scores")
    if rules.sports and sport_terms.sports_conflict(a.sports, b.sports):
        kinds.append("sports")
    if (rules.min_cross_names > 0 and not (a.lang and a.lang == b.lang)
            and len(a.cross_names) >= rules.min_cross_names and len(b.cross_names) >= rules.min_cross_names
            and not any(names_agree(x, y) for x in a.cross_names for y in b.cross_names)
            and not any(_named_in(x, transliterated_text(b.text)) for x in a.cross_names)
            and not any(_named_in(y, transliterated_text(a.text)) for y in b.cross_names)):
        kinds.append("romanised")
    if not kinds:
        return None
    return Conflict(tuple(kinds), {k: a.shown(k) for k in kinds}, {k: b.shown(k) for k in kinds})


def agreement(a: Anchors, b: Anchors) -> tuple[str, ...]:
    """The kinds on which a and b positively agree: both name the same earthquake magnitude (to
    its one decimal: a number with a unit, "M6.1" = "6.1級" = "규모 6.1"). Evidence that two texts in
    two languages tell one event, where the embedding's cross-language cosines are low; shared
    countries, years and common names are too frequent to count (every Japanese story shares JP)."""
    kinds = []
    if a.magnitudes and b.magnitudes and any(abs(x - y) < 0.05 for x in a.magnitudes for y in b.magnitudes):
        kinds.append("magnitudes")
    return tuple(kinds)


def joins_across_languages(a: Anchors, b: Anchors, rules: AnchorRules = AnchorRules()) -> tuple[str, ...]:
    """The agreeing kinds that let two items in two languages join below the threshold (by the
    clustering setting cross_language_margin): a and b are written in different languages, both
    known, they agree on at least one kind (agreement) and conflict on none; () otherwise."""
    if not a.lang or not b.lang or a.lang == b.lang:
        return ()
    kinds = agreement(a, b)
    if not kinds or conflict(a, b, rules) is not None:
        return ()
    return kinds


def story_anchors(item: Anchors, members: Iterable[Anchors]) -> Anchors:
    """The anchors a story holds against `item`: every member's years, and the names of the
    members written in the item's language (the union: a story conflicts only with what none of
    its members says). A story with members in the item's language is compared in it (names);
    one without, across languages (places, every member's)."""
    members = list(members)
    same = [m for m in members if m.lang and m.lang == item.lang]
    return _merged(item.lang if same else "", members, same)


def group_anchors(members: Iterable[Anchors]) -> Anchors:
    """The anchors of a group of items written in other languages than the group it is compared
    with: every member's, with no language (so names do not veto, places and romanised names do)."""
    members = list(members)
    return _merged("", members, members)


def _merged(lang: str, members: list[Anchors], named: list[Anchors]) -> Anchors:
    """The union of `members`' anchors, with the names of `named` only, as written in `lang`."""
    return Anchors(lang,
                   frozenset().union(*(m.years for m in members)),
                   frozenset().union(*(m.names for m in named)),
                   frozenset().union(*(m.places for m in members)),
                   frozenset().union(*(m.place_names for m in members)),
                   frozenset().union(*(m.magnitudes for m in members)),
                   frozenset().union(*(m.scores for m in members)),
                   frozenset().union(*(m.cross_names for m in members)),
                   "\n".join(m.text for m in members),
                   frozenset().union(*(m.sports for m in members)),
                   frozenset().union(*(m.intensities for m in members)),
                   frozenset().union(*(m.name_places for m in members)))


def joins_story_across_languages(item: Anchors, members: Iterable[Anchors],
                                 rules: AnchorRules = AnchorRules()) -> tuple[str, ...]:
    """joins_across_languages for an item and a story: the story has members, none in the item's
    language (every language known), and the item agrees with their anchors (group_anchors) and
    conflicts with them on nothing; () otherwise."""
    members = list(members)
    if not item.lang or not members or any(not m.lang or m.lang == item.lang for m in members):
        return ()
    story = group_anchors(members)
    kinds = agreement(item, story)
    if not kinds or conflict(item, story, rules) is not None:
        return ()
    return kinds


def name_weights(anchors: Iterable[Anchors]) -> dict[str, float]:
    """Inverse document frequency of each name over these items (the hour's pass-2 graph): a name
    most items carry ("Navy" in a piracy topic) tells little, a rare one ("Sukanya") a lot."""
    items = list(anchors)
    counts: dict[str, int] = {}
    for x in items:
        for name in x.names:
            counts[name] = counts.get(name, 0) + 1
    return {name: max(0.0, math.log(len(items) / (1 + c))) for name, c in counts.items()}


def name_cosine(a: Anchors, b: Anchors, weights: dict[str, float]) -> float | None:
    """Cosine of the two items' IDF-weighted name sets; None when they cannot be compared (another
    language, or one side names nobody)."""
    if not a.names or not b.names or not a.lang or a.lang != b.lang:
        return None
    shared = sum(weights.get(n, 0.0) ** 2 for n in a.names & b.names)
    norm = math.sqrt(sum(weights.get(n, 0.0) ** 2 for n in a.names) * sum(weights.get(n, 0.0) ** 2 for n in b.names))
    return shared / norm if norm > 0 else None
