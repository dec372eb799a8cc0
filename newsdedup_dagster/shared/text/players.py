"""The offline key players of a story: the people and organisations named in at least two of its
articles, found by letter case (pure; no model, no download: no named-entity library fits what is
installed, and a model that needs weights fetched at run time is not allowed here).

Only where case marks a name: Latin and Cyrillic text (an article whose letters are mostly of those
scripts), not German or Luxembourgish (every noun is capitalised), never a script without case
(Han, kana, Hangul, Arabic, Devanagari...: nothing is guessed there). A name is a run of two or
more capitalised words, possibly joined by a particle ("Bank of Japan", "Ursula von der Leyen"),
or an acronym of two to five capitals ("NATO"):

- more than five capitalised words in a row are a sentence in Title Case, not a name;
- a single capitalised word is left out: a surname alone, a demonym ("British"), a brand or a
  sentence's first word cannot be told apart by case;
- at a sentence or clause start the first words are grammar until one that never appears in lower
  case in the story's articles ("Rescue Teams" is not a name when "rescue" is written elsewhere);
- titles, number words and function words at either end are not part of the name ("President
  Joe Biden" is "Joe Biden"); a possessive ends one ("Italy's Mount Etna": "Italy", "Mount Etna");
- an acronym that is a country ("US", "UK", or an ISO code such as "AI") is not a player;
- a run the gazetteer knows as a place is a place, not a player;
- a law, treaty or other text ("AI Act", "Paris Agreement", "Ley de Amnistía") is neither a person
  nor an organisation;
- an acronym that abbreviates a longer name of the same list ("EU" beside "European Union") is
  that name again: the longer one is kept;
- the name must appear, written the same way (case included), in at least two articles of the
  story (in their title or text); the articles that name it are kept with it.

`distinct_players` applies the last two rules to any list of players, a model's included.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Protocol

from babel import Locale

from newsdedup_dagster.shared.text.places import places_in
from newsdedup_dagster.shared.text.words import fold


class Article(Protocol):
    """What key_players reads of an article (the briefing stage's Article has these)."""

    id: str
    lang: str | None
    title: str
    text: str


MIN_ARTICLES = 2
MAX_PLAYERS = 8
# More capitalised words in a row than a name has ("Ursula von der Leyen" has two, "International
# Atomic Energy Agency" four): a headline or sentence in Title Case.
MAX_NAME_WORDS = 5
# A text is read for names when at least this share of its letters are Latin or Cyrillic.
MIN_CASED_SHARE = 0.5
_NO_NAME_CASE_LANGS = frozenset({"de", "lb"})
_WORD = re.compile(r"[^\W\d_](?:[\w'’.\-]*[^\W_])?")
# Lower-case words that may join the words of one name.
_PARTICLES = frozenset("of for de da di do dos das del della der den van von la le du des al el bin ibn y".split())
# Function words and titles: never the first or last word of a name; inside a run they split it.
_NOT_NAME_WORDS = frozenset("""
a an and as at but by for from he her his i in is it its of on or our she that the their these they this
those to we with you mr mrs ms dr sir st mister madam monday tuesday wednesday thursday friday saturday
sunday january february march april may june july august september october november december
president prime minister chancellor secretary governor mayor senator judge king queen prince
princess pope sheikh spokesman spokeswoman spokesperson former acting deputy vice news report update
live breaking one two three four five six seven eight nine ten dozens hundreds thousands several many
le la les un une des et en au aux du ce il elle ils nous vous président présidente ministre premier première
el los las una y del presidente presidenta ministro ministra primer primera o os um uma e no na
il lo gli dei presidente ministro premier
в во на и по с со к о об от для из за что это как он она они мы вы
президент премьер министр глава губернатор мэр председатель директор
понедельник вторник среда четверг пятница суббота воскресенье
""".split())


_POSSESSIVE = re.compile(r"['’]s?$")
# Acronyms that are a country (a place, not a player), or an ISO code read as a word ("AI").
_COUNTRY_ACRONYMS = frozenset({"USA", "UK", "UAE", "DPRK", "PRC", "ROK"}) | frozenset(
    code for code in Locale("en").territories if len(code) == 2 and code.isalpha() and code not in ("EU", "UN"))


# The word that makes a name a text, not a player (folded, as `fold` compares): last in English
# ("AI Act", "Paris Agreement"), first in the Romance and Slavic languages ("Ley de Amnistía", "Закон о ...").
_TEXT_LAST = frozenset("act acts bill law treaty accord accords agreement protocol directive regulation charter "
                       "amendment convention".split())
_TEXT_FIRST = frozenset("ley loi lei legge decreto decret tratado traite trattato закон указ договор".split())


def is_text_name(name: str) -> bool:
    """`name` is a law, treaty or other text, not a person or an organisation."""
    words = [fold(w) for w in _WORD.findall(name)]
    return len(words) >= 2 and (words[-1] in _TEXT_LAST or words[0] in _TEXT_FIRST)


def _initials(name: str, with_particles: bool) -> str:
    return "".join(w[0] for w in _WORD.findall(name)
                   if with_particles or not (w in _PARTICLES or fold(w) in _NOT_NAME_WORDS)).upper()


def abbreviates(acronym: str, name: str) -> bool:
    """`acronym` is the initials of `name` ("EU" of "European Union", "BOJ" of "Bank of Japan")."""
    bare = acronym.replace(".", "")
    if not _acronym(bare) or " " not in name.strip():
        return False
    return bare.upper() in (_initials(name, False), _initials(name, True))


def distinct_players(names: Sequence[str]) -> list[str]:
    """`names` in their order without the texts and without an acronym of another name in the list."""
    kept = [n for n in names if not is_text_name(n)]
    return [n for n in kept if not any(other != n and abbreviates(n, other) for other in kept)]


def _letters_cased(word: str) -> bool:
    """Every letter of `word` Latin or Cyrillic (scripts whose case marks names)."""
    letters = [ch for ch in word if ch.isalpha()]
    return bool(letters) and all(unicodedata.name(ch, "").startswith(("LATIN", "CYRILLIC")) for ch in letters)


def _cased_share(text: str) -> float:
    """The share of `text`'s letters that are Latin or Cyrillic (a Japanese article quoting "NATO" is
    not read for names: its script has no case)."""
    letters = [ch for ch in text if ch.isalpha()]
    return sum(unicodedata.name(ch, "").startswith(("LATIN", "CYRILLIC")) for ch in letters) / len(letters) \
        if letters else 0.0


def _capitalised(word: str) -> bool:
    return _letters_cased(word) and word[0].isupper() and not (word.isupper() and len(word) > 5)


def _acronym(word: str) -> bool:
    bare = word.replace(".", "")
    return _letters_cased(bare) and bare.isupper() and 2 <= len(bare) <= 5 and bare.isalpha()


def lower_case_words(texts: Sequence[str]) -> frozenset[str]:
    """Every word written in lower case somewhere in `texts` (folded): a common word, not a name."""
    return frozenset(fold(w) for text in texts for w in _WORD.findall(text) if w.islower())


def runs(text: str, common: frozenset[str]) -> list[str]:
    """The candidate names of one text, in order (see the module's rules)."""
    out: list[str] = []
    words = list(_WORD.finditer(text))
    run: list[tuple[str, bool]] = []        # (word, starts a sentence or clause)

    def close() -> None:
        names = [w for w, _ in run]
        # The first word of a sentence or clause is capitalised for grammar: not a name's when the
        # story writes it in lower case elsewhere, or it is a function word or title.
        if run and run[0][1] and (fold(names[0]) in common or fold(names[0]) in _NOT_NAME_WORDS):
            names.pop(0)
        while names and (fold(names[0]) in _NOT_NAME_WORDS or names[0] in _PARTICLES):
            names.pop(0)
        while names and (fold(names[-1]) in _NOT_NAME_WORDS or names[-1] in _PARTICLES):
            names.pop()
        capitals = [w for w in names if w not in _PARTICLES]
        if len(capitals) == 1 and capitals[0] in _COUNTRY_ACRONYMS:
            pass                             # "US", "UK": a country, a place
        elif len(capitals) > MAX_NAME_WORDS:
            pass                             # a sentence in Title Case, not a name
        elif len(capitals) >= 2 or (len(capitals) == 1 and _acronym(capitals[0])):
            out.append(" ".join(names))
        run.clear()

    for k, match in enumerate(words):
        word = match.group(0).rstrip(".")
        gap = text[words[k - 1].end():match.start()] if k else ""
        joined = bool(run) and gap.strip() == ""
        if _capitalised(word) or _acronym(word):
            if not joined:
                close()
            owner = _POSSESSIVE.sub("", word)
            run.append((owner, _starts_clause(text, match.start())))
            if owner != word:
                close()                      # "Italy's Mount Etna": the owner's name ends here
        elif word in _PARTICLES and joined:
            run.append((word, False))
        else:
            close()
    close()
    return out


_CLAUSE_END = frozenset(".!?:;…。！？\"“”«»„()[]")


def _starts_clause(text: str, start: int) -> bool:
    """The word at `start` opens a sentence or clause (clustering.words.BOUNDARY's rule, read back
    from `start` only: the whole prefix each time made a long page quadratic)."""
    k = start
    while k > 0 and text[k - 1].isspace():
        k -= 1
    if k == 0 or text[k - 1] in _CLAUSE_END:
        return True
    return text[k - 1] in "-–—|" and k < start and (k == 1 or text[k - 2].isspace())


def _named(name: str, text: str) -> bool:
    """`name` written in `text` as whole words, case included."""
    return re.search(r"(?<![\w])" + re.escape(name) + r"(?![\w])", text) is not None


def key_players(articles: Sequence[Article], lang: str | None,
                limit: int = MAX_PLAYERS) -> list[tuple[str, tuple[str, ...]]]:
    """(name, the ids of the articles that name it) of the people and organisations named in at least
    MIN_ARTICLES of the story's `articles` in `lang`, the most named first; none for a language or
    script where case does not mark names."""
    code = (lang or "").split("-")[0].lower()
    same = [a for a in articles if a.lang == lang and (a.text or a.title) and _cased_share(a.text or a.title)
            >= MIN_CASED_SHARE]
    if not code or code in _NO_NAME_CASE_LANGS or not same:
        return []
    texts = {a.id: f"{a.title}\n{a.text}" for a in same}
    common = lower_case_words(list(texts.values()))
    first_seen: dict[str, int] = {}
    for article in same:
        for name in runs(article.text or "", common):
            first_seen.setdefault(name, len(first_seen))
    found = []
    for name, order in first_seen.items():
        if fold(name) in places_in(name, lang):
            continue                         # the gazetteer's: a place, not a player
        cited = tuple(a.id for a in same if _named(name, texts[a.id]))
        if len(cited) >= MIN_ARTICLES:
            found.append((name, cited, order))
    # A name inside a longer one named as often is the same player ("Central Bank" of "European Central Bank").
    kept = [f for f in found if not any(f[0] != g[0] and _named(f[0], g[0]) and len(g[1]) >= len(f[1])
                                        for g in found)]
    distinct = set(distinct_players([name for name, _, _ in kept]))
    kept = [f for f in kept if f[0] in distinct]
    kept.sort(key=lambda f: (-len(f[1]), f[2]))
    return [(name, cited) for name, cited, _ in kept[:limit]]
