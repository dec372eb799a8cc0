"""The checkable facts of a line of text: its numbers, by value, and the names it holds (pure).

A line written or translated by a model can be checked against the lines it came from: a number
that none of them gives, or a name that none of them names, was made up or changed.

Numbers (`numbers_in`) are read as values, whatever the script's digits and the locale's marks:

  digits      any script's decimal digits ("١٢", "१२", "１２" are 12).
  marks       "1,200" = "1 200" (any space: NBSP, narrow NBSP, thin space) = "1’200"; "1.200" is 1200
              where the language groups thousands with "." (de, es, it, pt, nl, id, tr, da...) and
              1.2 where "." is its decimal mark (en, ja, zh, hi...): a single "." or "," followed by
              exactly three digits is read the locale's way (babel), and both ways when the language
              is unknown or marks with neither (a "." in French). Any other "1,5" / "1.5" is a
              decimal; "1.234.567" and "12,34,567" (Indian grouping) are grouped. Marks that fit no
              reading ("14.03.2026") leave each run of digits a number of its own.
  magnitudes  "1.2 billion" = 1200000000, "1,5 Mio." = 1500000, "120万" = 1200000, "1億2000万" =
              120000000, "3 crore" = 30000000, "$5m" = 5000000: the words of each language's table
              (_MAGNITUDES; "billion" is 10^9 in English, 10^12 in German and French, both when the
              language is unknown) and the CJK and Hangul units. The short "m", "k", "mi", "bi" only
              count written against a number with a currency sign before it ("$5m", not "5m tall").
  percent     a sign or word after a number changes nothing: "12%", "12 %", "12 per cent" are 12.
  clock       "20:30", "8:30", "20h30", "8 pm", "20 Uhr": the hour reads as itself and as the same
              hour on the other half of the day (8 and 20), as translations switch clocks.
  signs       none: "-5 °C" and "minus 5 degrees" both give 5.

Each number comes as the frozenset of its possible readings (one, unless the marks or a word are
ambiguous); two numbers agree when their readings share a value. A line's number is supported by
other lines (`numbers_supported`) when one of its readings is among theirs, or among the small
numbers they write as words ("two people" supports "2人"; words are never required of a line).

Names (`names_match`): a name occurs in a text as whole words, compared case- and accent-folded,
and else as whole words of their ASCII transliterations (anyascii), so "Москва" holds "Moskva"
and "Łódź" holds "Lodz". In scripts written without spaces (Han, kana, Thai, Lao, Khmer, Myanmar)
there are no word boundaries to find: such a name matches as a substring of at least 2 characters.
`names_in` reads the names of a Latin-script line (capitalised words inside a sentence), and
`name_carried` says whether a translation keeps one, as translations adapt names.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from decimal import Decimal
from difflib import SequenceMatcher
from typing import NamedTuple

from anyascii import anyascii
from babel import Locale, UnknownLocaleError
from babel.core import get_global
from babel.dates import get_day_names, get_month_names
from babel.numbers import get_decimal_symbol, get_group_symbol

# ------------------------------------------------------------------ number marks
_SPACES = " \u00a0\u202f\u2009\u2007"
_MARKS = ".,'’\u066b\u066c\uff0c\uff0e"
# Each mark as the kind it stands for: every space is one kind, "’" is "'", full-width marks are ASCII.
_KIND = {**{c: " " for c in _SPACES}, "’": "'", "\uff0e": "."}
_DECIMAL_ONLY = "\u066b"        # Arabic decimal separator
# Spaces, apostrophes, the Arabic thousands separator and the full-width comma (in CJK text a
# "３，４" is a list, never a decimal).
_GROUP_ONLY = " '\u066c\uff0c"
# A run of digits with marks between them; a space only joins a group of exactly three digits, so
# "in 2026 200 people" stays two numbers once the groups are read (2026 is no leading group).
_NUMBER = re.compile(rf"\d+(?:(?:[{_MARKS}]|[{_SPACES}](?=\d{{3}}(?!\d)))\d+)*")
# "20:30", "20h30", "20 h 30", and "20.30" when "Uhr", "h" or "am"/"pm" follows.
_CLOCK = re.compile(r"(\d{1,2})(?::|\s?h\s?|\.(?=\d\d\s?(?:uhr|h|[ap]\.?m)\b))([0-5]\d)(?!\d)", re.IGNORECASE)
_AM_PM = re.compile(r"[ \u00a0\u202f]?[ap]\.?m\b\.?", re.IGNORECASE)
_HOUR_WORDS = frozenset("uhr h heure heures uur hora horas ore час часа часов".split())
# After a number: an optional space or hyphen, then a word (letters, and the combining marks of
# Latin and Devanagari, which are no word characters to the re module).
_WORD_AFTER = re.compile(
    r"[ \u00a0\u202f-]?((?:[^\W\d_]|[\u0300-\u036f\u0900-\u0903\u093a-\u094f\u0951-\u0957\u0962\u0963])+)\.?")

# Magnitude words by language, as powers of ten (folded: accents and case dropped when compared).
_MAGNITUDES: dict[str, dict[int, str]] = {
    "en": {3: "thousand thousands", 5: "lakh lakhs", 6: "million millions mn mln", 7: "crore crores cr",
           9: "billion billions bn", 12: "trillion trillions tn trn"},
    "fr": {3: "mille", 6: "million millions", 9: "milliard milliards md mds mrd", 12: "billion billions"},
    "de": {3: "tausend tsd", 6: "million millionen mio", 9: "milliarde milliarden mrd", 12: "billion billionen bio"},
    "es": {3: "mil", 6: "millón millones", 12: "billón billones"},
    "pt": {3: "mil", 6: "milhão milhões milhao milhoes", 9: "bilhão bilhões", 12: "bilião biliões trilhão trilhões"},
    "it": {3: "mila mille", 6: "milione milioni mln", 9: "miliardo miliardi mld", 12: "bilione bilioni"},
    "nl": {3: "duizend", 6: "miljoen mln", 9: "miljard mld", 12: "biljoen"},
    "sv": {3: "tusen", 6: "miljon miljoner", 9: "miljard miljarder", 12: "biljon biljoner"},
    "da": {3: "tusind", 6: "million millioner mio", 9: "milliard milliarder mia mrd", 12: "billion billioner"},
    "nb": {3: "tusen", 6: "million millioner mill", 9: "milliard milliarder mrd", 12: "billion billioner"},
    "pl": {3: "tysiąc tysiące tysięcy tys", 6: "milion miliony milionów mln", 9: "miliard miliardy miliardów mld",
           12: "bilion biliony bilionów"},
    "tr": {3: "bin", 6: "milyon", 9: "milyar", 12: "trilyon"},
    "id": {3: "ribu rb", 6: "juta jt", 9: "miliar milyar", 12: "triliun"},
    "ru": {3: "тысяча тысячи тысяч тыс", 6: "миллион миллиона миллионов млн",
           9: "миллиард миллиарда миллиардов млрд", 12: "триллион триллиона триллионов трлн"},
    "uk": {3: "тисяча тисячі тисяч тис", 6: "мільйон мільйони мільйонів млн",
           9: "мільярд мільярди мільярдів млрд", 12: "трильйон трильйони трильйонів трлн"},
    # Indian English and Hindi news write "lakh" and "crore" in either language.
    "hi": {3: "हज़ार हजार", 5: "लाख lakh lakhs", 7: "करोड़ करोड crore crores", 9: "अरब", 11: "खरब"},
    "ar": {3: "ألف آلاف", 6: "مليون ملايين", 9: "مليار مليارات", 12: "تريليون"},
}
_MAGNITUDES["no"] = _MAGNITUDES["nb"]
# Short forms that are magnitudes only written against a number after a currency sign: "$5m", "R$ 3 bi".
_CURRENCY_SHORT = {"m": 6, "k": 3, "mi": 6, "bi": 9}
# CJK and Hangul units, written right after the digits (several multiply: 千万 = 10^7, 万亿 = 10^12).
_UNITS = {"万": (4,), "萬": (4,), "億": (8,), "亿": (8,), "千": (3,), "百": (2,),
          "만": (4,), "억": (8,), "조": (12,), "천": (3,), "백": (2,)}
# 兆 is 10^12 in Japanese and in Chinese money, 10^6 in Chinese units (兆瓦, megawatt).
_TRILLION_OR_MEGA = {"ja": (12,), "zh": (6, 12)}


def _fold(text: str) -> str:
    """Case- and accent-insensitive: NFKD, combining marks dropped, casefolded."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


# Codes that name no language: babel would read them as its default locale (English).
_NO_LANGUAGE = frozenset({"und", "mul", "zxx", "mis"})


def _base_lang(lang: str | None) -> str | None:
    base = lang.replace("_", "-").split("-")[0].lower() if lang else None
    return None if base in _NO_LANGUAGE else base


@functools.lru_cache(maxsize=256)
def _locale(lang: str | None) -> Locale | None:
    if _base_lang(lang) is None:
        return None
    try:
        return Locale.parse(lang.replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError):
        return None


@functools.lru_cache(maxsize=256)
def _magnitude_words(lang: str | None) -> dict[str, frozenset[int]]:
    """{folded word: its powers of ten} for `lang`; every table's words when the language is unknown
    or has no table (so "billion" is 10^9 or 10^12)."""
    base = _base_lang(lang)
    tables = [_MAGNITUDES[base]] if base in _MAGNITUDES else list(_MAGNITUDES.values())
    out: dict[str, set[int]] = {}
    for table in tables:
        for power, words in table.items():
            for word in words.split():
                out.setdefault(_fold(word), set()).add(power)
    return {word: frozenset(powers) for word, powers in out.items()}


@functools.lru_cache(maxsize=256)
def _locale_marks(lang: str | None) -> tuple[str, str] | None:
    """(group kind, decimal kind) of `lang`'s numbers (babel, Latin digits), None when babel does not
    know the language."""
    locale = _locale(lang)
    if locale is None:
        return None
    group, decimal = get_group_symbol(locale), get_decimal_symbol(locale)
    return _KIND.get(group, group), _KIND.get(decimal, decimal)


# ------------------------------------------------------------------ reading one number
class Number(NamedTuple):
    text: str                    # as written, magnitude word included
    readings: frozenset[Decimal]


def _grouped(groups: Sequence[str]) -> bool:
    """Digit groups that are one number grouped by thousands (1 234 567) or the Indian way
    (12 34 567): a leading group of 1-3 digits, not starting with 0."""
    head, rest = groups[0], groups[1:]
    if not rest or not 1 <= len(head) <= 3 or head.startswith("0"):
        return False
    if all(len(g) == 3 for g in rest):
        return True
    return len(head) <= 2 and len(rest[-1]) == 3 and all(len(g) == 2 for g in rest[:-1])


def _parts(token: str) -> tuple[list[str], list[str]]:
    """ASCII digit groups and the kinds of the marks between them."""
    groups, kinds, digits = [], [], []
    for ch in token:
        if ch.isdecimal():
            digits.append(str(unicodedata.decimal(ch)))
        else:
            groups.append("".join(digits))
            digits = []
            kinds.append(_KIND.get(ch, ch))
    groups.append("".join(digits))
    return groups, kinds


def _token_readings(token: str, lang: str | None) -> list[frozenset[Decimal]]:
    """The readings of a run of digits and marks: one number, or each group its own number when the
    marks fit no reading."""
    groups, kinds = _parts(token)
    if not kinds:
        return [frozenset({Decimal(groups[0])})]
    last, before = kinds[-1], kinds[:-1]
    as_grouped = len(set(kinds)) == 1 and last != _DECIMAL_ONLY and _grouped(groups)
    as_decimal = (last in ".,\u066b" and last not in before and len(set(before)) <= 1
                  and all(k in _GROUP_ONLY + ".," for k in before) and (not before or _grouped(groups[:-1])))
    whole = Decimal("".join(groups))
    fraction = Decimal("".join(groups[:-1]) + "." + groups[-1])
    if as_grouped and as_decimal:
        marks = _locale_marks(lang)
        if marks is not None and last == marks[1]:
            return [frozenset({fraction})]
        if marks is not None and last == marks[0]:
            return [frozenset({whole})]
        return [frozenset({whole, fraction})]
    if as_grouped:
        return [frozenset({whole})]
    if as_decimal:
        return [frozenset({fraction})]
    return [frozenset({Decimal(g)}) for g in groups]


def _hours(value: Decimal) -> frozenset[Decimal]:
    """An hour and the same hour on the other half of the day (8 and 20)."""
    if value != value.to_integral_value() or not 0 <= value <= 24:
        return frozenset({value})
    return frozenset({value, (value + 12) % 24})


def _times(values: frozenset[Decimal], powers: frozenset[int]) -> frozenset[Decimal]:
    return frozenset(v * (Decimal(10) ** p) for v in values for p in powers)


def _units_at(text: str, pos: int, lang: str | None) -> tuple[frozenset[int], int]:
    """The CJK / Hangul units written at `pos` (several multiply): their powers of ten and the end."""
    powers, end = frozenset({0}), pos
    while end < len(text):
        ch = text[end]
        unit = _UNITS.get(ch) or (ch == "兆" and _TRILLION_OR_MEGA.get(_base_lang(lang) or "", (6, 12)))
        if not unit:
            break
        powers = frozenset(p + q for p in powers for q in unit)
        end += 1
    return powers, end


def _magnitude_after(text: str, pos: int, start: int, lang: str | None) -> tuple[frozenset[int], int]:
    """The magnitude words after a number ending at `pos` (two multiply: "mil millones" = 10^9):
    their powers of ten and the end. `start`: where the number begins (a currency sign before it
    lets "m" and "k" count)."""
    words = _magnitude_words(lang)
    powers, end = frozenset({0}), pos
    for _ in range(2):
        m = _WORD_AFTER.match(text, end)
        if not m:
            break
        word = _fold(m.group(1))
        found = words.get(word)
        if found is None and word in _CURRENCY_SHORT and end == pos and _currency_before(text, start):
            found = frozenset({_CURRENCY_SHORT[word]})
        if found is None:
            break
        powers = frozenset(p + q for p in powers for q in found)
        end = m.end()
    return powers, end


def _currency_before(text: str, start: int) -> bool:
    before = text[max(0, start - 2):start].rstrip(_SPACES)
    return bool(before) and unicodedata.category(before[-1]) == "Sc"


def _read(text: str, lang: str | None) -> Iterator[Number]:
    pos = 0
    while m := _NUMBER.search(text, pos):
        start = m.start()
        clock = _CLOCK.match(text, start)
        if clock and int(clock.group(1)) <= 24:
            yield Number(clock.group(1), _hours(Decimal(int(clock.group(1)))))
            if int(clock.group(2)):      # "10:00" is the hour "10 Uhr", "10 a.m." say
                yield Number(clock.group(2), frozenset({Decimal(int(clock.group(2)))}))
            pos = clock.end()
            continue
        readings = _token_readings(m.group(), lang)
        if len(readings) > 1:    # marks that fit no reading: each group a number of its own
            yield from (Number(group, r) for group, r in zip(re.split(rf"[{_MARKS}{_SPACES}]", m.group()), readings))
            pos = m.end()
            continue
        values, end = readings[0], m.end()
        units, after_units = _units_at(text, end, lang)
        if after_units > end:
            values, end = _times(values, units), after_units
            # "1億2000万", "1万2000", "1억 2천만": a following smaller amount adds to this one
            while nxt := _NUMBER.match(text, end + (text[end:end + 1] == " ")):
                more = _token_readings(nxt.group(), lang)
                if len(more) > 1:
                    break
                next_units, next_end = _units_at(text, nxt.end(), lang)
                if next_end == nxt.end() and nxt.start() > end:
                    break                  # a bare number after a space is a number of its own
                smallest = min(units)
                added = _times(more[0], next_units)
                if max(added) >= Decimal(10) ** smallest:
                    break
                values = frozenset(a + b for a in values for b in added)
                units, end = next_units, next_end
        else:
            powers, end = _magnitude_after(text, end, start, lang)
            if end > m.end():
                values = _times(values, powers)
            elif _AM_PM.match(text, end) and all(v <= 12 for v in values):
                values = frozenset().union(*(_hours(v) for v in values))
            elif (w := _WORD_AFTER.match(text, end)) and _fold(w.group(1)) in _HOUR_WORDS \
                    or text[end:end + 1] in ("時", "시", "点", "點"):
                values = frozenset().union(*(_hours(v) for v in values))
        yield Number(text[start:end].strip(), values)
        pos = end


def read_numbers(text: str, lang: str | None = None) -> list[Number]:
    """Every number of `text` as written and with its readings (see the module docstring); `lang`
    (a language code, "de", "pt-BR") decides ambiguous marks and which magnitude words count."""
    return list(_read(text or "", lang))


def numbers_in(text: str, lang: str | None = None) -> list[frozenset[Decimal]]:
    """The readings of every number of `text`, in order: "1.2 billion" -> [{1200000000}]."""
    return [number.readings for number in read_numbers(text, lang)]


# Small numbers written as words: they support a number written in digits ("two" supports "2人")
# but are never required of a line, as translations and summaries switch between the two freely.
_SPELLED = {
    "en": "zero one two three four five six seven eight nine ten eleven twelve",
    "fr": "zéro un/une deux trois quatre cinq six sept huit neuf dix onze douze",
    "de": "null ein/eine/eins/einen/einem/einer zwei drei vier fünf sechs sieben acht neun zehn elf zwölf",
    "es": "cero un/uno/una dos tres cuatro cinco seis siete ocho nueve diez once doce",
    "it": "zero un/uno/una due tre quattro cinque sei sette otto nove dieci undici dodici",
    "pt": "zero um/uma dois/duas três quatro cinco seis sete oito nove dez onze doze",
    "nl": "nul een/één twee drie vier vijf zes zeven acht negen tien elf twaalf",
}
_HAN_NUMERALS = {"〇": 0, "零": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6,
                 "七": 7, "八": 8, "九": 9, "十": 10}
_LETTERS = re.compile(r"[^\W\d_]+")


@functools.lru_cache(maxsize=256)
def _spelled_words(lang: str | None) -> dict[str, int]:
    base = _base_lang(lang)
    tables = [_SPELLED[base]] if base in _SPELLED else list(_SPELLED.values())
    return {_fold(word): value for table in tables for value, words in enumerate(table.split())
            for word in words.split("/")}


def spelled_numbers_in(text: str, lang: str | None = None) -> frozenset[Decimal]:
    """The small numbers (0-12) `text` writes as words, and the Han numerals it holds: what supports
    a number in digits without being required of a line."""
    words = _spelled_words(lang)
    found = {words[w] for w in map(_fold, _LETTERS.findall(text or "")) if w in words}
    found |= {v for ch, v in _HAN_NUMERALS.items() if ch in (text or "")}
    return frozenset(Decimal(v) for v in found)


# The same articles are read against every line of a briefing: their values are kept for a while.
@functools.lru_cache(maxsize=512)
def _supported_values(text: str, lang: str | None) -> frozenset[Decimal]:
    """Every reading of every number of `text`, and the small numbers it spells out."""
    return frozenset().union(*numbers_in(text, lang), spelled_numbers_in(text, lang))


def unsupported_numbers(line: str, line_lang: str | None, sources: Sequence[tuple[str, str | None]]) -> list[str]:
    """The numbers of `line` (as written) with no reading among the readings of the numbers of
    `sources` ((text, lang) pairs), nor among the small numbers they spell out."""
    known = frozenset().union(*(_supported_values(text or "", lang) for text, lang in sources))
    return [number.text for number in read_numbers(line, line_lang) if not number.readings & known]


def numbers_supported(line: str, line_lang: str | None, sources: Sequence[tuple[str, str | None]]) -> bool:
    """True when every number of `line` has a reading that one of the `sources` gives."""
    return not unsupported_numbers(line, line_lang, sources)


def same_numbers(a: str, a_lang: str | None, b: str, b_lang: str | None) -> bool:
    """Each line gives every number of the other (by value): a faithful translation's numbers."""
    return numbers_supported(a, a_lang, [(b, b_lang)]) and numbers_supported(b, b_lang, [(a, a_lang)])


# ------------------------------------------------------------------ names
def _unspaced(ch: str) -> bool:
    """A character of a script written without spaces between words: Han, kana, Thai, Lao, Khmer, Myanmar."""
    name = unicodedata.name(ch, "")
    return name.startswith(("CJK ", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR")) \
        or "IDEOGRAPH" in name


def _word_char(ch: str) -> bool:
    return ch.isalnum() or unicodedata.category(ch).startswith("M")


def _squash(text: str) -> str:
    return " ".join(text.split())


def _whole_words_in(name: str, text: str) -> bool:
    """`name` in `text` with no letter, digit or mark against either end."""
    if not name:
        return False
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        if (at == 0 or not _word_char(text[at - 1]) or not _word_char(name[0])) and \
                (end == len(text) or not _word_char(text[end]) or not _word_char(name[-1])):
            return True
        at = text.find(name, at + 1)
    return False


def _ascii(text: str) -> str:
    return _squash(anyascii(_fold(text)).lower())


def names_match(name: str, text: str) -> bool:
    """`name` occurs in `text` as whole words, case- and accent-folded ("Ted" is not in "started",
    "Sao Paulo" is in "São Paulo's"), or as whole words of both sides' ASCII transliterations
    ("Moskva" is in "Москва", not in "в Москве": a case ending is another word). A name in a
    script written without spaces (Han, kana, Thai, Lao, Khmer, Myanmar) has no word boundaries to
    find: it matches as a substring, and only when it has at least 2 characters."""
    folded_name, folded_text = _squash(_fold(name or "")), _squash(_fold(text or ""))
    if not any(_word_char(ch) for ch in folded_name):
        return False
    if any(_unspaced(ch) for ch in folded_name):
        return len(folded_name) >= 2 and folded_name in folded_text
    return _whole_words_in(folded_name, folded_text) or _whole_words_in(_ascii(name), _ascii(text or ""))


# ------------------------------------------------------------------ names of a line
# Between two words, one of these begins a sentence or clause: the capital after it is grammar's.
_CLAUSE_MARK = re.compile(r"[.!?:;…。！？\"“”«»„(\[]|\s[-–—|]\s")
_NAME_WORD = re.compile(r"[^\W\d_](?:[\w'’-]*[^\W_])?")
_POSSESSIVE = re.compile(r"['’]s$")
# Lower-case words inside names: "Bank of England", "Charles de Gaulle", "Ursula von der Leyen".
_NAME_LINKS = frozenset("of de del della di da do dos das du des la le van von der den al el bin".split())
# A headline (no full stop at its end) with at least this share of its words of 4 letters or more
# capitalised, and at least 3 of them, is written in Title Case ("Quake Kills 12 in Tolosa"): its
# capitals say nothing about names. A sentence may be as full of names ("... met the Bank of
# England and NATO in Moscow.").
_TITLE_CASE_SHARE = 0.8
# Languages that capitalise every noun.
_ALL_NOUNS_CAPITALISED = frozenset({"de", "lb"})
# A translation may adapt a name's ending ("Moscou", "Ukrainien", "Parlement"): a word of at least
# this many letters whose first letters begin a word of the translation counts as carried.
_NAME_STEM = 4
# ... or spell it another language's way: a word this similar (difflib ratio of the ASCII forms) to a
# word of the translation counts as carried ("zelensky" / "selenskyj" 0.82, "khamenei" / "chamenei"
# 0.88, "hezbollah" / "hisbollah" 0.78; "starmer" / "sunak" 0.33). The anchor check's threshold for
# romanised names across languages (shared/text/anchors.py, docs/calibration/clustering.md#cross-language-anchors).
NAME_SIMILARITY = 0.7
_ASCII_WORD = re.compile(r"[a-z0-9]+")


def _latin(ch: str) -> bool:
    return unicodedata.name(ch, "").startswith("LATIN")


def latin_script(text: str) -> bool:
    """Most of the letters of `text` are Latin."""
    letters = [ch for ch in text or "" if ch.isalpha()]
    return bool(letters) and sum(map(_latin, letters)) * 2 > len(letters)


@functools.lru_cache(maxsize=64)
def _calendar_words(lang: str | None) -> frozenset[str]:
    """`lang`'s weekday and month names, wide and abbreviated (babel): translated, never names."""
    locale = _locale(lang) or Locale.parse("en")
    words = set()
    for width in ("wide", "abbreviated"):
        for context in ("format", "stand-alone"):
            words |= set(get_day_names(width, context, locale).values())
            words |= set(get_month_names(width, context, locale).values())
    return frozenset(_fold(w).rstrip(".") for w in words)


def names_in(text: str, lang: str | None = None) -> list[str]:
    """The names a line writes in Latin script: runs of capitalised words inside a sentence (not a
    sentence's or clause's first word), with the small words that link a name's parts ("Bank of
    England"), possessive "'s" dropped; not all-capital acronyms (NATO is OTAN in French), not the
    language's weekday and month names (babel). None for a headline in Title Case or a line in
    German or Luxembourgish (every noun is capitalised)."""
    text = text or ""
    if _base_lang(lang) in _ALL_NOUNS_CAPITALISED:
        return []
    words = list(_NAME_WORD.finditer(text))
    long_words = [w.group() for w in words if len(w.group()) >= 4]
    if not text.rstrip().endswith((".", "!", "?", "…", "。")) and len(long_words) >= 3 \
            and sum(w[0].isupper() for w in long_words) >= _TITLE_CASE_SHARE * len(long_words):
        return []
    calendar = _calendar_words(lang)
    names: list[str] = []
    run: list[str] = []
    links: list[str] = []
    previous_end = 0

    def close() -> None:
        if run:
            names.append(" ".join(run))
        run.clear()
        links.clear()

    for m in words:
        word = _POSSESSIVE.sub("", m.group())
        gap = text[previous_end:m.start()]
        starts_clause = previous_end == 0 or bool(_CLAUSE_MARK.search(gap))
        previous_end = m.end()
        joined = bool(run) and gap.strip() == ""
        if not joined:
            close()
        capital = len(word) > 1 and word[0].isupper() and _latin(word[0])      # not the pronoun "I"
        acronym = len(word) > 1 and word.isupper()
        if capital and not acronym and _fold(word).rstrip(".") not in calendar \
                and not (not run and starts_clause):
            run.extend(links)
            links.clear()
            run.append(word)
        elif run and word in _NAME_LINKS and not links:
            links.append(word)
        else:
            close()
    close()
    return list(dict.fromkeys(names))


@functools.lru_cache(maxsize=64)
def _known_names(lang: str | None) -> dict[str, frozenset[tuple[str, str]]]:
    """{folded name: its (kind, code)}: the territories, languages and time-zone cities babel names
    in `lang`, whose names translations adapt (Germany / Allemagne, Moscow / Moscou)."""
    locale = _locale(lang)
    if locale is None:
        return {}
    out: dict[str, set[tuple[str, str]]] = {}
    for kind, table in (("territory", locale.territories), ("language", locale.languages)):
        for code, name in table.items():
            out.setdefault(_fold(name), set()).add((kind, code))
    for zone in get_global("zone_territories"):
        out.setdefault(_fold(_city(zone, locale)), set()).add(("city", zone))
    return {name: frozenset(keys) for name, keys in out.items()}


def _city(zone: str, locale: Locale) -> str:
    city = locale.time_zones.get(zone, {}).get("city")
    return city or zone.rsplit("/", 1)[-1].replace("_", " ")


def _name_of(key: tuple[str, str], lang: str | None) -> str | None:
    locale = _locale(lang)
    if locale is None:
        return None
    kind, code = key
    if kind == "city":
        return _city(code, locale)
    return (locale.territories if kind == "territory" else locale.languages).get(code)


def _word_carried(word: str, words: set[str]) -> bool:
    """A word of a name (3 letters or more: "Leo" is "Léon" in French) that a word of the text keeps:
    with its first letters, inside a compound ("Bank" in "Zentralbank") or spelled alike."""
    return len(word) >= 3 and any(
        (len(word) >= _NAME_STEM and (w[:_NAME_STEM] == word[:_NAME_STEM] or word in w))
        or SequenceMatcher(None, word, w).ratio() >= NAME_SIMILARITY for w in words)


def name_carried(name: str, name_lang: str | None, text: str, text_lang: str | None) -> bool:
    """A name of a line in `name_lang` is carried by `text`, its translation into `text_lang`: it
    occurs there (names_match); or babel's name in `text_lang` of the country, language or city it
    names does ("Germany" / "Allemagne"); or its last word, or half its words, are kept: a word (of
    3 letters or more) is kept when a word of `text` begins with its first 4 letters, holds it (a
    compound), or is spelled like it (NAME_SIMILARITY), compared as ASCII. Translations adapt
    endings, spell names their language's way and shorten them ("Moscou" for "Moscow", "Selenskyj"
    for "Zelensky", "Starmer" for "Keir Starmer"). So a name dropped or replaced by another is
    found; a name spelled a letter apart is not, nor one a language words its own way ("White
    House" / "Maison Blanche")."""
    if names_match(name, text):
        return True
    for key in _known_names(name_lang).get(_fold(name), ()):
        other = _name_of(key, text_lang)
        if other and names_match(other, text):
            return True
    words = set(_ASCII_WORD.findall(_ascii(text)))
    parts = [word for word in _ASCII_WORD.findall(_ascii(name)) if len(word) >= 3]
    kept = [_word_carried(word, words) for word in parts]
    # The last word names the person or the thing ("Merz" of "Chancellor Friedrich Merz"); half the
    # words will do where a translation words a long name its own way ("Conseil de sécurité des
    # Nations unies").
    return bool(kept) and (kept[-1] or 2 * sum(kept) >= len(kept))
