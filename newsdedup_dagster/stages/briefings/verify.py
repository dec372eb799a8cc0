"""A briefing is a set of claims about the story's articles; each is checked against the articles it
cites before it is published, and what cannot be checked is dropped and counted by reason:

  malformed          a field of the wrong shape, or empty
  foreign_citation   a citation of an article that is not in the story (the citation is dropped)
  uncited            a summary, point, background or what-to-watch line left without a citation (of
                     the story's articles; a background or what-to-watch line may also cite the event's
                     earlier stories)
  link_or_contact    a line holding a URL, a domain name, an e-mail address or a phone number: a model
                     line never sends a reader anywhere (articles cannot make it do so)
  instruction        a line that gives orders to a model or a reader ("ignore previous instructions",
                     "log in to your bank", "click", "subscribe"), even one an article holds: an
                     article can carry a planted instruction, and a briefing states facts
  unsupported        a line naming a number or a name that its cited articles do not hold (numbers
                     by value with their magnitude, names as whole words, across scripts after
                     transliteration), or whose words no cited sentence carries (support.py: content
                     words shared with a cited sentence in the line's language, or across languages
                     the product's multilingual embedding of the line close to a cited sentence)
  wrong_language     a line whose language is not the briefing's (where the text is long enough to tell)
  quote_not_found    a quote whose words are not, at word boundaries, in the article it names
  speaker_not_found  a quote whose speaker the article does not name, as whole words, in the quote's
                     sentence or the sentence before or after it
  role_not_stated    a speaker's role that the article does not state beside that speaker (the quote
                     is kept, without the role)
  not_in_articles    a player or place no article of the story names (those kept are traced: the
                     articles naming each are stored with the briefing, `named`)
  not_a_perspective  a perspective (checked like a point first) whose cited articles are not all from
                     outlets of one known country, whose country an earlier perspective has, or the
                     only one left (a perspective is a difference: it needs another to differ from)
  wrong_country      a perspective that names a country (or its people) other than its outlets' own,
                     which its cited articles do not name either ("Brazilian outlets stress" under ES)
  foreign_story      a background or what-to-watch citation of a story that is not an earlier story of
                     the story's event given to the model (the citation is dropped)
  unknown_category   a category outside the taxonomy (the offline category is used)
  over_limit         lines beyond what a briefing shows

A quote is published as the article's own span (its apostrophes and spelling), never the model's
string. Text is compared after one normalisation on both sides (`normalise`): Unicode NFKC,
quotation marks removed, whitespace collapsed, case folded (scripts without case are unchanged by
folding)."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from anyascii import anyascii
from babel import Locale, UnknownLocaleError

from newsdedup_dagster.shared.http.canonical_url import public_suffix
from newsdedup_dagster.shared.presentation.categories import offline_category
from newsdedup_dagster.shared.presentation.taxonomy import CATEGORIES
from newsdedup_dagster.shared.text.anchors import names_agree, names_in
from newsdedup_dagster.shared.text.claims import numbers_supported
from newsdedup_dagster.shared.text.cleaning import clean_visible_line
from newsdedup_dagster.shared.text.language import detect_language
from newsdedup_dagster.shared.text.places import country_of_name
from newsdedup_dagster.shared.text.words import fold
from newsdedup_dagster.stages.briefings.briefing import (
    Article,
    Briefing,
    Context,
    EarlierStory,
    Perspective,
    Point,
    Quote,
)
from newsdedup_dagster.stages.briefings.extractive import (
    MAX_BACKGROUND,
    MAX_PERSPECTIVES,
    MAX_POINTS,
    MAX_QUOTES,
    MAX_WATCH,
)
from newsdedup_dagster.stages.briefings.support import SupportRules, line_supported

MAX_LINE_CHARS = 600
MAX_NAME_CHARS = 120
MAX_NAMES = 8
# py3langid is unreliable on a few words: shorter lines are not language-checked.
LANGUAGE_CHECK_CHARS = 40
MIN_QUOTE_CHARS = 6
_QUOTE_MARKS = re.compile(r"[\"'“”„‟«»‹›「」『』‘’‚‛〝〞＂]")
# Scripts written without spaces between words (Han, kana, Thai, Lao, Khmer, Myanmar): no word
# boundary can be read there, so a match in them is a plain substring match.
_UNSPACED = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
                       r"\uf900-\ufaff]")

# What sends a reader somewhere: a URL, an e-mail address, a host name ending in a public suffix, a
# phone number (a leading + or two separated groups after the area code; "1 200 000" stays a number).
_URL = re.compile(r"(?i)(?:\b[a-z][a-z0-9+.-]{1,15}://|\bwww\.)\S+")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_HOST = re.compile(r"(?i)(?<![\w@.-])((?:[a-z0-9\u00a1-\uffff](?:[a-z0-9\u00a1-\uffff-]{0,61}[a-z0-9\u00a1-\uffff])?"
                   r"\.)+[a-z\u00a1-\uffff][a-z0-9\u00a1-\uffff-]{1,62})(?![\w-]*\.?\w)")
_PHONE = re.compile(r"(?<![\w+])(?:\+\s?\d[\d\s().-]{6,}\d|\(?\d{2,4}\)?[\s.-]\d{3,4}[.-]\d{3,5})(?![\w])")


# What orders a model or a reader about rather than reporting a fact: the openings of prompt
# injections and the calls to action of phishing, in the briefing languages most often attacked.
# A heuristic: a news line that quotes such an order is dropped too (a quote is published apart).
_INSTRUCTION = re.compile(
    r"(?i)\b(?:ignore|disregard|forget|override)\b.{0,40}\b(?:instructions?|prompts?|rules|above|previous)\b"
    r"|\b(?:system prompt|jailbreak|as an ai\b)"
    r"|\b(?:every|all|dear) readers?\b|\breaders? (?:should|must|need to)\b"
    r"|\b(?:log|sign) ?(?:in|on) (?:to (?:your|their)|with your|here|now)\b"
    r"|\b(?:click|tap) (?:here|on|the|this)\b|\bsubscribe (?:now|here|today|to)\b"
    r"|\bverify your\b|\b(?:your|their) (?:password|login|credentials|bank details|card number)\b"
    r"|\bignorez\b|\bconnectez-vous\b|\bcliquez\b|\bignora (?:las|todas)\b|\binicia sesi[oó]n\b"
    r"|\bhaz clic\b|\bignoriere\b|\bmelden sie sich\b|\bklicken sie\b")


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "")
    text = _QUOTE_MARKS.sub("", text)
    return " ".join(text.split()).casefold().strip(" .,;:!?。、，")


def links_in(text: str) -> list[str]:
    """The URLs, e-mail addresses, host names (a dotted name whose last label is a public suffix:
    "evil-bank.com", not "U.S." or "p.m.") and phone numbers of a line."""
    text = unicodedata.normalize("NFKC", text or "")
    found = [m.group(0) for m in _URL.finditer(text)] + [m.group(0) for m in _EMAIL.finditer(text)]
    for match in _HOST.finditer(text):
        host = match.group(1).rstrip(".").lower()
        if "." in host and public_suffix(host):
            found.append(host)
    found += [m.group(0) for m in _PHONE.finditer(text) if sum(ch.isdigit() for ch in m.group(0)) >= 7]
    return found


# ------------------------------------------------------------------ text with positions
_APOSTROPHES = frozenset("'’‘")


def _folded_with_map(text: str) -> tuple[str, list[int], frozenset[int]]:
    """`text` normalised as `normalise` does (NFKC, quotation marks out, whitespace collapsed to one
    space, case folded); for each character of the result, the index in `text` it came from (a
    match is read back as the article's own span); and the places of the result where a quotation
    mark stood between two words: a word boundary, though no space is left there (Korean
    `"…하겠다"라고`: the particle follows the closing mark)."""
    out: list[str] = []
    where: list[int] = []
    marks: set[int] = set()
    space = False
    for i, ch in enumerate(text):
        piece = unicodedata.normalize("NFKC", ch)
        if _QUOTE_MARKS.fullmatch(piece or " "):
            inside_word = (ch in _APOSTROPHES and 0 < i < len(text) - 1 and text[i - 1].isalnum()
                           and text[i + 1].isalnum())
            if not inside_word:
                marks.add(len(out))
            continue
        if piece.isspace() or not piece:
            space = bool(out)
            continue
        if space:
            out.append(" ")
            where.append(i)
            space = False
        for folded in piece.casefold():
            out.append(folded)
            where.append(i)
    return "".join(out), where, frozenset(marks)


def _is_word(ch: str) -> bool:
    return ch.isalnum() and not _UNSPACED.match(ch)


def _at_word_boundaries(haystack: str, start: int, end: int, marks: frozenset[int] = frozenset()) -> bool:
    """A match [start, end) that does not begin or end inside a word (in unspaced scripts every
    character stands alone; a quotation mark that stood there is a boundary too)."""
    before = haystack[start - 1] if start > 0 else " "
    after = haystack[end] if end < len(haystack) else " "
    first, last = haystack[start], haystack[end - 1]
    return ((start in marks or not (_is_word(before) and _is_word(first)))
            and (end in marks or not (_is_word(after) and _is_word(last))))


def _find_whole(wanted: str, haystack: str, start: int = 0, marks: frozenset[int] = frozenset()) -> int:
    """The first index >= start where `wanted` stands in `haystack` at word boundaries, or -1."""
    at = haystack.find(wanted, start)
    while at >= 0:
        if _at_word_boundaries(haystack, at, at + len(wanted), marks):
            return at
        at = haystack.find(wanted, at + 1)
    return -1


_SENTENCE_END = re.compile(r"[.!?…。！？।]+[\"'”’»」』)\]]*(?=\s|$)|[。！？]+|\n+")


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        if match.end() > start:
            spans.append((start, match.end()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def _window(text: str, start: int, end: int) -> str:
    """The sentences of `text` that [start, end) overlaps, with the sentence before and after."""
    spans = _sentence_spans(text)
    inside = [n for n, (a, b) in enumerate(spans) if a < end and b > start]
    if not inside:
        return text[max(0, start - 300):end + 300]
    first, last = max(0, inside[0] - 1), min(len(spans) - 1, inside[-1] + 1)
    return text[spans[first][0]:spans[last][1]]


# ------------------------------------------------------------------ quotes, speakers, names
def quote_span(quote: str, article_text: str) -> tuple[int, int] | None:
    """Where the quote stands in the article, at word boundaries ("safe for children" is not in
    "unsafe for children"), compared after normalisation: (start, end) in the article's own text."""
    wanted = normalise(quote)
    if len(wanted) < MIN_QUOTE_CHARS:
        return None
    folded, where, marks = _folded_with_map(article_text)
    at = _find_whole(wanted, folded, marks=marks)
    if at < 0:
        return None
    return where[at], where[at + len(wanted) - 1] + 1


def quote_in(quote: str, article_text: str) -> bool:
    return quote_span(quote, article_text) is not None


def named_in(name: str, text: str) -> bool:
    """The name stands in the text as whole words (case, accents and quotation marks aside); in a
    script written without spaces, as a run of at least two characters."""
    wanted = normalise(name)
    if len(wanted) < 2:
        return False
    return _find_whole(wanted, normalise(text)) >= 0


def _surname(speaker: str) -> str | None:
    words = [w for w in normalise(speaker).split() if len(w) >= 3]
    return words[-1] if len(words) >= 2 and not _UNSPACED.search(words[-1]) else None


def speaker_beside(speaker: str, article_text: str, span: tuple[int, int]) -> bool:
    """The speaker is named, as whole words, in the quote's sentence or the one before or after it.
    A speaker of two or more words may be named there by the last of them ("Ruiz said") when the
    article gives the whole name somewhere. In scripts without spaces the name must appear in full
    in that window (no shorter piece of it counts)."""
    window = _window(article_text, *span)
    if named_in(speaker, window):
        return True
    surname = _surname(speaker)
    return bool(surname) and named_in(surname, window) and named_in(speaker, article_text)


def _role_stated(role: str, speaker: str, article_text: str) -> bool:
    """The role's words stand beside a mention of the speaker (the mention's sentence or the next or
    previous one): "said Marta Ruiz, the regional emergency chief"."""
    wanted = normalise(role).removeprefix("the ").removeprefix("a ").removeprefix("an ")
    if not wanted:
        return False
    folded, where, _marks = _folded_with_map(article_text)
    keys = [normalise(speaker)] + ([_surname(speaker)] if _surname(speaker) else [])
    for key in keys:
        at = _find_whole(key, folded)
        while at >= 0:
            window = _window(article_text, where[at], where[at + len(key) - 1] + 1)
            if named_in(wanted, window):
                return True
            at = _find_whole(key, folded, at + 1)
    return False


@functools.lru_cache(maxsize=256)
def _ascii_words(text: str) -> frozenset[str]:
    """A text's words transliterated to ASCII, lower case (the cross-script name check); an
    apostrophe that transliterates a soft sign does not split a word."""
    return frozenset(re.sub(r"[^a-z0-9]+", " ", anyascii(text).lower().replace("'", "")).split())


def _name_supported(name: str, bodies: Sequence[str]) -> bool:
    """A name (folded) of a line stands as whole words in a cited text, in its own script or, after
    both are transliterated to ASCII, in another script: each of its words spelled alike by a word
    of the text (anchors.names_agree: "kovalskiy" ~ "kovalskii", transliteration systems differ)."""
    if any(_find_whole(name, fold(body)) >= 0 for body in bodies):
        return True
    keys = sorted(_ascii_words(name))
    if not keys or max(map(len, keys)) < 2:
        return False
    for body in bodies:
        words = _ascii_words(body)
        if all(key in words or any(w[:2] == key[:2] and names_agree(key, w) for w in words if len(w) >= 3)
               for key in keys):
            return True
    return False


def _language_ok(text: str, lang: str | None) -> bool:
    if not lang or len(text) < LANGUAGE_CHECK_CHARS:
        return True
    found = detect_language(text)
    return found is None or found == lang.split("-")[0]


def _line(value, dropped: Counter) -> str | None:
    if not isinstance(value, str):
        dropped["malformed"] += 1
        return None
    text = clean_visible_line(value)[:MAX_LINE_CHARS]
    if not text:
        dropped["malformed"] += 1
        return None
    return text


def _citations(value, story_ids: set[str], dropped: Counter) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    kept = []
    for citation in value:
        cited = str(citation) if isinstance(citation, (str, int)) and not isinstance(citation, bool) else None
        if cited in story_ids:
            if cited not in kept:
                kept.append(cited)
        else:
            dropped["foreign_citation"] += 1
    return tuple(kept)


Embed = Callable[[list[str]], "object"]


class Checker:
    """What every line of one briefing is checked with: its language, the embedder for support
    across languages (None: a line is supported across languages only by shared words), the bars."""

    def __init__(self, lang: str | None, embed: Embed | None = None, rules: SupportRules | None = None):
        self.lang, self.embed, self.rules = lang, embed, rules or SupportRules()

    def reason(self, text: str, cited: Sequence[Article]) -> str | None:
        """None when `text` is supported by the `cited` articles, else the reason it is dropped."""
        if links_in(text):
            return "link_or_contact"
        if _INSTRUCTION.search(unicodedata.normalize("NFKC", text)):
            return "instruction"
        if not _language_ok(text, self.lang):
            return "wrong_language"
        material = [(f"{a.title}\n{a.text}", a.lang) for a in cited]
        if not numbers_supported(text, self.lang, material):
            return "unsupported"
        bodies = [body for body, _ in material]
        if any(not _name_supported(name, bodies) for name in names_in(text)):
            return "unsupported"
        if not line_supported(text, self.lang, material, self.embed, self.rules):
            return "unsupported"
        return None


def supported(text: str, cited: Sequence[Article], lang: str | None, embed: Embed | None = None) -> bool:
    """`text` passes every check of a line against the `cited` articles."""
    return Checker(lang, embed).reason(text, cited) is None


def _text_and_citations(value, by_id: Mapping[str, Article], dropped: Counter) -> tuple[str | None, tuple[str, ...]]:
    """A cited line's text (None when it is malformed or empty, counted) and its known citations."""
    if not isinstance(value, Mapping):
        dropped["malformed"] += 1
        return None, ()
    text = _line(value.get("text"), dropped)
    if text is None:
        return None, ()
    return text, _citations(value.get("citations"), set(by_id), dropped)


def _point(value, by_id: Mapping[str, Article], check: Checker, dropped: Counter) -> Point | None:
    text, citations = _text_and_citations(value, by_id, dropped)
    if text is None:
        return None
    if not citations:
        dropped["uncited"] += 1
        return None
    reason = check.reason(text, [by_id[c] for c in citations])
    if reason:
        dropped[reason] += 1
        return None
    return Point(text, citations, check.lang)


def _quote(value, by_id: Mapping[str, Article], dropped: Counter) -> Quote | None:
    if not isinstance(value, Mapping):
        dropped["malformed"] += 1
        return None
    text, speaker = _line(value.get("text"), dropped), _line(value.get("speaker"), dropped)
    if text is None or speaker is None:
        return None
    speaker = speaker[:MAX_NAME_CHARS]
    # "article_id" as the model is asked; "article" as earlier replies and callers name it
    cited = value.get("article_id", value.get("article"))
    article = by_id.get(cited) if isinstance(cited, str) else None
    if article is None:
        dropped["foreign_citation"] += 1
        return None
    if links_in(text):
        dropped["link_or_contact"] += 1
        return None
    if _INSTRUCTION.search(unicodedata.normalize("NFKC", text)):
        dropped["instruction"] += 1
        return None
    span = quote_span(text, article.text)
    if span is None:
        dropped["quote_not_found"] += 1
        return None
    if links_in(speaker) or not speaker_beside(speaker, article.text, span):
        dropped["speaker_not_found"] += 1
        return None
    role = value.get("role")
    role = (clean_visible_line(role)[:MAX_NAME_CHARS] or None) if isinstance(role, str) else None
    if role is not None and (links_in(role) or not _role_stated(role, speaker, article.text)):
        dropped["role_not_stated"] += 1
        role = None
    shown = article.text[span[0]:span[1]].strip()
    return Quote(shown, speaker, article.id, role, article.lang)


# ------------------------------------------------------------------ countries a perspective names
# English names of a country's people and things that do not start with the country's name
# (CLDR has no demonyms; "Brazilian" is read from "Brazil" by its stem, below).
_ENGLISH_DEMONYMS = {
    "american": "US", "americans": "US", "british": "GB", "briton": "GB", "britons": "GB", "english": "GB",
    "scottish": "GB", "welsh": "GB", "french": "FR", "frenchman": "FR", "spanish": "ES", "spaniard": "ES",
    "dutch": "NL", "swiss": "CH", "danish": "DK", "dane": "DK", "danes": "DK", "finnish": "FI", "finn": "FI",
    "polish": "PL", "pole": "PL", "poles": "PL", "irish": "IE", "thai": "TH", "filipino": "PH", "swedish": "SE",
    "swede": "SE", "swedes": "SE", "emirati": "AE", "saudi": "SA", "icelandic": "IS", "kiwi": "NZ",
    "turkish": "TR", "peruvian": "PE", "lebanese": "LB", "chinese": "CN", "japanese": "JP", "vietnamese": "VN",
    "portuguese": "PT", "greek": "GR", "czech": "CZ", "slovak": "SK", "malagasy": "MG", "argentine": "AR",
}
_STEM_CHARS = 4


@functools.lru_cache(maxsize=64)
def _country_stems(lang: str) -> dict[str, tuple[tuple[str, str], ...]]:
    """(folded stem, ISO code) of every one-word country name in `lang` (Babel's CLDR names), by
    the stem's first letters: a word that starts with the stem names the country or its people
    ("brazil" -> "Brazilian", "brésil" -> "brésiliens")."""
    try:
        territories = Locale.parse(lang.split("-")[0]).territories
    except (UnknownLocaleError, ValueError):
        return {}
    out: dict[str, list[tuple[str, str]]] = {}
    for code, name in territories.items():
        if len(code) != 2 or not code.isalpha() or code in ("EU", "EZ", "UN", "ZZ") or " " in name.strip():
            continue
        key = fold(name.strip())
        if len(key) >= _STEM_CHARS:
            stem = key[:max(_STEM_CHARS, len(key) - 1)]
            out.setdefault(stem[:_STEM_CHARS], []).append((stem, code))
    return {first: tuple(stems) for first, stems in out.items()}


@functools.lru_cache(maxsize=512)
def countries_named(text: str, lang: str | None) -> frozenset[str]:
    """The countries a text names: by a CLDR name in any language (one to three words), by an English
    demonym, or by a word that starts with a country's name in the text's language (capitalised in
    English and German, where "children" is not Chile)."""
    words = re.findall(r"[^\W\d_][\w'’-]*", unicodedata.normalize("NFKC", text or ""))
    found: set[str] = set()
    for n in range(len(words)):
        for size in (3, 2, 1):
            code = country_of_name(" ".join(words[n:n + size])) if n + size <= len(words) else None
            if code:
                found.add(code)
                break
    base = (lang or "en").split("-")[0]
    stems = _country_stems(base)
    for word in words:
        key = fold(word)
        if base == "en" and key in _ENGLISH_DEMONYMS:
            found.add(_ENGLISH_DEMONYMS[key])
            continue
        if not word[:1].isupper() and base in ("en", "de"):
            continue
        for stem, code in stems.get(key[:_STEM_CHARS], ()):
            if key.startswith(stem) and len(key) <= len(stem) + 8:
                found.add(code)
    return frozenset(found)


def _perspectives(value, by_id: Mapping[str, Article], check: Checker, dropped: Counter) -> tuple[Perspective, ...]:
    if not isinstance(value, list):
        return ()                       # none asked for, or none given (older replies have no such key)
    kept: list[Perspective] = []
    for item in value:
        point = _point(item, by_id, check, dropped)
        if point is None:
            continue
        countries = {(by_id[c].country or "").strip().upper() for c in point.citations}
        country = countries.pop() if len(countries) == 1 else ""
        if not country or any(p.country == country for p in kept):
            dropped["not_a_perspective"] += 1
            continue
        # A country other than the outlets' own, named where the cited articles name none of it: the
        # line speaks of coverage it does not cite ("Brazilian outlets stress" under Spain).
        cited_countries = frozenset().union(*(countries_named(f"{by_id[c].title}\n{by_id[c].text}", by_id[c].lang)
                                             for c in point.citations))
        if countries_named(point.text, check.lang) - {country} - cited_countries:
            dropped["wrong_country"] += 1
            continue
        kept.append(Perspective(point.text, point.citations, country, check.lang))
    if len(kept) == 1:
        dropped["not_a_perspective"] += 1
        return ()
    if len(kept) > MAX_PERSPECTIVES:
        dropped["over_limit"] += len(kept) - MAX_PERSPECTIVES
    return tuple(kept[:MAX_PERSPECTIVES])


def _context(value, by_id: Mapping[str, Article], earlier: Mapping[str, EarlierStory], check: Checker,
             dropped: Counter) -> Context | None:
    """A background or what-to-watch line: checked like a point, against the articles and earlier
    stories it cites (an earlier story read as an article titled with its headline)."""
    text, citations = _text_and_citations(value, by_id, dropped)
    if text is None:
        return None
    stories = []
    for cited in value.get("stories") if isinstance(value.get("stories"), list) else ():
        if isinstance(cited, str) and cited in earlier:
            if cited not in stories:
                stories.append(cited)
        else:
            dropped["foreign_story"] += 1
    if not citations and not stories:
        dropped["uncited"] += 1
        return None
    material = [by_id[c] for c in citations] + [
        Article(e.id, "", e.lang, e.headline, e.summary) for e in (earlier[c] for c in stories)]
    reason = check.reason(text, material)
    if reason:
        dropped[reason] += 1
        return None
    return Context(text, citations, tuple(stories), check.lang)


def _contexts(value, limit: int, by_id: Mapping[str, Article], earlier: Mapping[str, EarlierStory],
              check: Checker, dropped: Counter) -> tuple[Context, ...]:
    kept = [c for c in (_context(v, by_id, earlier, check, dropped) for v in (value if isinstance(value, list) else ()))
            if c is not None]
    if len(kept) > limit:
        dropped["over_limit"] += len(kept) - limit
    return tuple(kept[:limit])


def _names(value, articles: Sequence[Article], dropped: Counter, named: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The players or places the articles name; each one's articles into `named` (its trace)."""
    if not isinstance(value, list):
        return ()
    kept: list[str] = []
    texts = [(a.id, f"{a.title}\n{a.text}") for a in articles]
    for item in value:
        name = _line(item, dropped)
        if name is None:
            continue
        name = name[:MAX_NAME_CHARS]
        cited = tuple(dict.fromkeys(i for i, text in texts if named_in(name, text)))
        if not cited:
            dropped["not_in_articles"] += 1
        elif name not in kept:
            kept.append(name)
            named[name] = cited
    if len(kept) > MAX_NAMES:
        dropped["over_limit"] += len(kept) - MAX_NAMES
        for name in kept[MAX_NAMES:]:
            named.pop(name, None)
    return tuple(kept[:MAX_NAMES])


def checked_briefing(reply: Mapping, articles: Sequence[Article], lang: str | None,
                     earlier: Sequence[EarlierStory] = (), embed: Embed | None = None) -> Briefing:
    """The model's briefing (`reply`, parsed JSON) with every line that could not be checked
    against the story's `articles` (and, for background and what to watch, the `earlier` stories
    of its event the model was given) dropped and counted in `dropped`. `embed`: the product's
    embedder, for lines supported by an article in another language (None: by shared words only)."""
    dropped: Counter = Counter()
    check = Checker(lang, embed)
    earlier_by_id = {e.id: e for e in earlier}
    by_id = {a.id: a for a in articles}
    if not isinstance(reply, Mapping):
        reply = {}
        dropped["malformed"] += 1
    category = reply.get("category")
    if category not in CATEGORIES:
        dropped["unknown_category"] += 1
        category = offline_category([a.title for a in articles], [a.text[:2000] for a in articles])
    summary = _point(reply.get("summary"), by_id, check, dropped) if "summary" in reply else None
    points = [p for p in (_point(v, by_id, check, dropped)
                          for v in (reply.get("points") if isinstance(reply.get("points"), list) else []))
              if p is not None]
    if len(points) > MAX_POINTS:
        dropped["over_limit"] += len(points) - MAX_POINTS
    quotes = [q for q in (_quote(v, by_id, dropped)
                          for v in (reply.get("quotes") if isinstance(reply.get("quotes"), list) else []))
              if q is not None]
    if len(quotes) > MAX_QUOTES:
        dropped["over_limit"] += len(quotes) - MAX_QUOTES
    named: dict[str, tuple[str, ...]] = {}
    return Briefing(
        category=category, summary=summary, points=tuple(points[:MAX_POINTS]), quotes=tuple(quotes[:MAX_QUOTES]),
        places=_names(reply.get("places"), articles, dropped, named),
        players=_names(reply.get("players"), articles, dropped, named),
        perspectives=_perspectives(reply.get("perspectives"), by_id, check, dropped),
        background=_contexts(reply.get("background"), MAX_BACKGROUND, by_id, earlier_by_id, check, dropped),
        watch=_contexts(reply.get("watch"), MAX_WATCH, by_id, earlier_by_id, check, dropped),
        method="model", dropped=dict(dropped), named=named)


def checked_extractive(briefing: Briefing, articles: Sequence[Article]) -> Briefing:
    """The offline briefing through the same checks as a model's (its lines are the articles' own,
    so nothing should drop; a drop here is a bug, and counted like any other)."""
    reply = briefing.as_dict()
    checked = checked_briefing(reply, articles, briefing.summary.lang if briefing.summary else None)
    return Briefing(category=briefing.category, summary=checked.summary, points=checked.points,
                    quotes=checked.quotes, places=checked.places, players=checked.players,
                    perspectives=checked.perspectives, method=briefing.method, dropped=checked.dropped,
                    named=checked.named)
