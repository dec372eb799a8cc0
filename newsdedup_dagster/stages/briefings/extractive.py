"""The offline briefing: built only from the articles' own sentences and quotations, so every line
is in an article of the story by construction (and still goes through `verify`, like a model's).

Key points: the most central sentences across the story's articles (degree centrality of the
sentences' TF-IDF cosine graph, LexRank's idea: Erkan & Radev, "LexRank: Graph-based Lexical
Centrality as Salience in Text Summarization", JAIR 22, 2004), a sentence counting what the other
articles agree with more than what its own article repeats; one language (the pivot's when an
article is in it, else the story's most common), redundant sentences skipped. Each point cites its
article and every other article holding a sentence that close to it. Character n-grams within word
boundaries make the vectors work in every script without a tokenizer.

Perspectives: where the story's outlets differ in what they stress, by the outlets' country. Only
articles in the briefing's language are compared (character n-grams do not match across
languages, and a difference of language is not one of stress). Each country's most central
sentence (centrality among its own outlets' articles) that no other article has a sentence that
close to, and that is not a key point, is that country's perspective, citing its articles that hold
it; published only when two countries or more have one.

Key players: the people and organisations named in at least two articles (`players`: by letter
case, Latin and Cyrillic text only); places: the gazetteer's, as the articles write them.

Quotations: quoted speech with a speaker the sentence names (a capitalised name and a verb of
saying, per language; Japanese 「…」と述べた, Chinese 表示：“…”, Korean "…"라고 말했다). A quote
without a speaker is not used.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from newsdedup_dagster.shared.presentation.categories import offline_category
from newsdedup_dagster.shared.text.item_text import sentence_ends
from newsdedup_dagster.shared.text.places import places_in
from newsdedup_dagster.shared.text.players import key_players
from newsdedup_dagster.shared.text.words import fold
from newsdedup_dagster.stages.briefings.briefing import Article, Briefing, Perspective, Point, Quote

MAX_POINTS = 5
MIN_POINTS = 3
MAX_QUOTES = 3
MAX_PERSPECTIVES = 4
# A model's background and what-to-watch lines (offline there are none: publishing lists the event's
# earlier stories as the background, and nothing checkable says what comes next).
MAX_BACKGROUND = 3
MAX_WATCH = 2
# A sentence this close (TF-IDF cosine) to a chosen one says the same: not another point; an
# article with a sentence this close to a point is cited for it.
SAME_SENTENCE = 0.5
MIN_SENTENCE_CHARS = 25
MIN_CJK_SENTENCE_CHARS = 10
MAX_SENTENCE_CHARS = 400
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def sentences(text: str) -> list[str]:
    """The sentences of a text (paragraphs on their own lines), too short or too long ones left out."""
    out = []
    for paragraph in (text or "").splitlines():
        paragraph = " ".join(paragraph.split())
        start = 0
        for end in sentence_ends(paragraph):
            sentence = paragraph[start:end].strip()
            start = end
            shortest = MIN_CJK_SENTENCE_CHARS if _CJK.search(sentence) else MIN_SENTENCE_CHARS
            if shortest <= len(sentence) <= MAX_SENTENCE_CHARS:
                out.append(sentence)
    return out


def _similarities(texts: list[str]) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer  # deferred: scikit-learn loads slowly

    matrix = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True).fit_transform(texts)
    return (matrix @ matrix.T).toarray()


def _bare(text: str) -> str:
    return "".join(ch for ch in (text or "").casefold() if ch.isalnum())


def key_points(articles: Sequence[Article], lang: str | None, limit: int = MAX_POINTS) -> list[Point]:
    """Up to `limit` central sentences in `lang`, each citing the articles that hold it."""
    # A page's text often repeats its headline: a headline is not a point.
    headlines = {_bare(a.title) for a in articles}
    rows = [(a, i, s) for a in articles for i, s in enumerate(x for x in sentences(a.text) if _bare(x) not in headlines)]
    if not rows:
        return []
    sims = _similarities([s for _, _, s in rows])
    owners = np.array([a.id for a, _, _ in rows])
    scores = []
    for k, (article, position, _) in enumerate(rows):
        others = owners != article.id
        own = ~others
        own[k] = False
        centrality = sims[k, others].sum() + 0.5 * sims[k, own].sum()
        scores.append(centrality * (1 + 0.5 / (1 + position)))   # news puts what matters first
    candidates = [k for k in np.argsort(scores)[::-1] if rows[k][0].lang == lang or lang is None]
    chosen: list[int] = []
    for k in candidates:
        if len(chosen) >= limit:
            break
        if any(sims[k, c] >= SAME_SENTENCE for c in chosen):
            continue
        chosen.append(int(k))
    points = []
    for k in chosen:
        article = rows[k][0]
        cited = [article.id] + sorted({rows[j][0].id for j in range(len(rows))
                                       if rows[j][0].id != article.id and sims[k, j] >= SAME_SENTENCE})
        points.append(Point(rows[k][2], tuple(cited), article.lang))
    return points


def _country(article: Article) -> str | None:
    return (article.country or "").strip().upper() or None


def perspectives(articles: Sequence[Article], lang: str | None, points: Sequence[Point],
                 limit: int = MAX_PERSPECTIVES) -> list[Perspective]:
    """Per country of the outlets writing in `lang`, the sentence its articles stress that no other
    article says and no key point of `points` says; none unless two countries or more have one."""
    same = [a for a in articles if a.lang == lang and lang is not None]
    if len({_country(a) for a in same} - {None}) < 2:
        return []
    headlines = {_bare(a.title) for a in same}
    rows = [(a, i, s) for a in same for i, s in enumerate(x for x in sentences(a.text) if _bare(x) not in headlines)]
    if not rows:
        return []
    # Another outlet's headline saying the same also means the sentence is not one country's own.
    titles = [(a, a.title) for a in same if a.title.strip()]
    n, m = len(rows), len(titles)
    sims = _similarities([s for _, _, s in rows] + [t for _, t in titles] + [p.text for p in points])
    countries = np.array([_country(a) or "" for a, _, _ in rows] + [_country(a) or "" for a, _ in titles])
    owners = np.array([a.id for a, _, _ in rows])
    found: list[tuple[int, str, Perspective]] = []
    for country in sorted(set(countries[:n]) - {""}):
        group = countries == country
        best: tuple[float, int] | None = None
        for k in np.flatnonzero(group[:n]):
            # An article of no known country is another outlet too: only what this country's alone say counts.
            if (sims[k, :n + m][~group] >= SAME_SENTENCE).any() or (sims[k, n + m:] >= SAME_SENTENCE).any():
                continue
            article, position, _ = rows[k]
            others = group[:n] & (owners != article.id)
            own = owners == article.id
            own[k] = False
            score = (sims[k, :n][others].sum() + 0.5 * sims[k, :n][own].sum()) * (1 + 0.5 / (1 + position))
            if best is None or score > best[0]:
                best = (score, int(k))
        if best is None:
            continue
        k = best[1]
        article = rows[k][0]
        cited = [article.id] + sorted({rows[j][0].id for j in np.flatnonzero(group[:n])
                                       if rows[j][0].id != article.id and sims[k, j] >= SAME_SENTENCE})
        found.append((len({a.id for a in same if _country(a) == country}), country,
                      Perspective(rows[k][2], tuple(cited), country, article.lang)))
    if len(found) < 2:
        return []
    # The countries with most articles first (a perspective held by more outlets says more).
    return [p for _, _, p in sorted(found, key=lambda f: (-len(f[2].citations), -f[0], f[1]))[:limit]]


# ------------------------------------------------------------------ quotations
_NAME = r"(?P<name>(?:[A-ZÀ-ÖØ-ÞА-ЯЁ][\w'’.-]+)(?:\s+(?:(?:de|da|van|von|der|del|la|le|al|bin)\s+)?[A-ZÀ-ÖØ-ÞА-ЯЁ][\w'’.-]+){0,3})"
_ROLE = r"(?:,\s*(?P<role>(?:the|a|an|la|le|der|die|el|o)?\s*[^,.;:\"“”«»]{3,80}?)(?:,|\.(?:\s|$)|$))?"
_QUOTE = r"(?P<q>[^\"“”«»„]{12,300})"
_SAY_AFTER = (r"said|says|told|added|explained|warned|stressed|a déclaré|a dit|a affirmé|a expliqué|sagte|erklärte|"
              r"betonte|dijo|afirmó|declaró|explicó|disse|afirmou|declarou|сказал|сказала|заявил|заявила|сообщил|"
              r"сообщила|отметил|отметила")
_ACCORDING = r"according to|selon|laut|según|segundo|по словам"
_QUOTE_PATTERNS = [
    # “…,” said Name(, role,)  |  “…,” Name said
    re.compile(r"[\"“«„]" + _QUOTE + r"[\"”»“]\s*,?\s*(?:" + _SAY_AFTER + r")\s+" + _NAME + _ROLE),
    re.compile(r"[\"“«„]" + _QUOTE + r"[\"”»“]\s*,?\s*" + _NAME + r"\s+(?:" + _SAY_AFTER + r")"),
    # Name(, role,) said: “…”  |  according to Name, “…”
    re.compile(_NAME + _ROLE + r"\s+(?:" + _SAY_AFTER + r")\s*[:,]?\s*[\"“«„]" + _QUOTE + r"[\"”»“]"),
    re.compile(r"(?:" + _ACCORDING + r")\s+" + _NAME + r"\s*[:,]\s*[\"“«„]" + _QUOTE + r"[\"”»“]"),
    # Japanese: 田中首相は「…」と述べた
    re.compile(r"(?P<name>[\u30a0-\u30ff\u4e00-\u9fff]{2,8}(?:氏|さん|首相|大臣|長官|社長|知事|市長|会長|議長)?)は、?"
               r"「(?P<q>[^「」]{6,200})」と(?:述べ|話し|語っ|強調し|説明し|明らかにし)"),
    # Chinese: 王某表示：“…”
    re.compile(r"(?P<name>[\u4e00-\u9fff·]{2,8})(?:表示|说|指出|称|强调)[:：，,]\s*[“\"](?P<q>[^“”\"]{6,200})[”\"]"),
    # Korean: 김 장관은 "…"라고 말했다
    re.compile(r"(?P<name>[\uac00-\ud7af]{2,4}(?:\s?[\uac00-\ud7af]{1,4})?)(?:은|는|이|가)\s*[\"“](?P<q>[^\"“”]{6,200})[\"”]\s*(?:이?라고|고)\s*"
               r"(?:말했|밝혔|강조했|설명했)"),
]
_NOT_SPEAKERS = {"He", "She", "They", "It", "We", "I", "The", "This", "Il", "Elle", "Er", "Sie", "Él", "Ella",
                 "Он", "Она"}


def quotes_in(article: Article) -> list[Quote]:
    """The quotations of one article whose speaker it names, in the order they appear."""
    found: list[tuple[int, Quote]] = []
    seen: set[str] = set()
    text = " ".join((article.text or "").split())
    for pattern in _QUOTE_PATTERNS:
        for match in pattern.finditer(text):
            quote = " ".join(match.group("q").split()).strip(" ,")
            speaker = (match.group("name") or "").strip(" ,.")
            role = (match.groupdict().get("role") or "").strip() or None
            if not speaker or speaker in _NOT_SPEAKERS or quote in seen:
                continue
            seen.add(quote)
            found.append((match.start(), Quote(quote, speaker, article.id, role, article.lang)))
    return [q for _, q in sorted(found, key=lambda pair: pair[0])]


# Words as the gazetteer reads them (shared/text/places.py), and the elided article it drops (l'Iran).
_PLACE_WORD = re.compile(r"[^\W\d_](?:[\w'’\-]*[^\W_])?")
_ELIDED = re.compile(r"^(?:[lLdD]|[dD]ell|[aA]ll|[dD]all)['’]")


def _as_written(key: str, text: str) -> str:
    """A place the gazetteer found, as the text writes it: its keys are folded ("washington"), and a
    page shows "Washington". Scripts without case are keyed as written."""
    size = len(key.split())
    words = list(_PLACE_WORD.finditer(text))
    for i in range(len(words) - size + 1):
        span = [_ELIDED.sub("", words[i].group(0))] + [w.group(0) for w in words[i + 1:i + size]]
        if fold(" ".join(span)) == key:
            return " ".join(span)
    return key


def normalised(text: str) -> str:
    return " ".join(text.split()).casefold()


def briefing_language(articles: Sequence[Article], pivot: str) -> str | None:
    """The pivot language when an article is in it, else the story's most common language."""
    langs = Counter(a.lang for a in articles if a.text)
    if not langs:
        return None
    return pivot if pivot in langs else langs.most_common(1)[0][0]


def extractive_briefing(articles: Sequence[Article], pivot: str = "en") -> Briefing:
    """The offline briefing of a story."""
    lang = briefing_language(articles, pivot)
    points = key_points(articles, lang, MAX_POINTS + 1)
    summary, points = (points[0], points[1:]) if points else (None, [])
    quotes: list[Quote] = []
    for quote in (q for a in articles if a.lang == lang for q in quotes_in(a)):
        if len(quotes) < MAX_QUOTES and all(normalised(quote.text) != normalised(q.text) for q in quotes):
            quotes.append(quote)   # the same quotation in two articles is one quote (the first article's)
    places: Counter = Counter()
    written: dict[str, str] = {}
    for article in (a for a in articles if a.lang == lang):
        text = f"{article.title}\n{article.text[:2000]}"
        for name in places_in(text, article.lang):
            places[name] += 1
            written.setdefault(name, _as_written(name, text))
    points = points[:MAX_POINTS]
    players = [name for name, _ in key_players(articles, lang)]
    return Briefing(
        category=offline_category([a.title for a in articles], [a.text[:2000] for a in articles]),
        summary=summary, points=tuple(points), quotes=tuple(quotes),
        places=tuple(dict.fromkeys(written[name] for name, _ in places.most_common(5))), players=tuple(players),
        perspectives=tuple(perspectives(articles, lang, [p for p in (summary, *points) if p is not None])),
        method="extractive")
