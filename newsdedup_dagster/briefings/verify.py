"""A briefing is a set of claims about the story's articles; each is checked against the articles it
cites before it is published, and what cannot be checked is dropped and counted by reason:

  malformed          a field of the wrong shape, or empty
  foreign_citation   a citation of an article that is not in the story (the citation is dropped)
  uncited            a summary, point, background or what-to-watch line left without a citation (of
                     the story's articles; a background or what-to-watch line may also cite the event's
                     earlier stories)
  unsupported        a line naming a number, or a name, that none of its cited articles holds (names
                     are compared with the cited articles in the line's own language; an earlier
                     story cited is read as its headline and summary)
  wrong_language     a line whose language is not the briefing's (where the text is long enough to tell)
  quote_not_found    a quote whose text is not in the article it names
  speaker_not_found  a quote whose speaker the article does not name
  not_in_articles    a player or place no article of the story names (those kept are traced: the
                     articles naming each are stored with the briefing, `named`)
  not_a_perspective  a perspective (checked like a point first) whose cited articles are not all from
                     outlets of one known country, whose country an earlier perspective has, or the
                     only one left (a perspective is a difference: it needs another to differ from)
  foreign_story      a background or what-to-watch citation of a story that is not an earlier story of
                     the story's event given to the model (the citation is dropped)
  unknown_category   a category outside the taxonomy (the offline category is used)
  over_limit         lines beyond what a briefing shows

Text is compared after one normalisation on both sides (`normalise`): Unicode NFKC, quotation
marks removed, whitespace collapsed, case folded (scripts without case are unchanged by folding)."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence

from ..clustering.anchors import names_in
from ..clustering.words import fold
from ..ingest.language import detect_language
from ..llm.text import clean_visible_line
from .briefing import Article, Briefing, Context, EarlierStory, Perspective, Point, Quote
from .categories import offline_category
from .extractive import MAX_BACKGROUND, MAX_PERSPECTIVES, MAX_POINTS, MAX_QUOTES, MAX_WATCH
from .taxonomy import CATEGORIES

MAX_LINE_CHARS = 600
MAX_NAME_CHARS = 120
MAX_NAMES = 8
# py3langid is unreliable on a few words: shorter lines are not language-checked.
LANGUAGE_CHECK_CHARS = 40
MIN_QUOTE_CHARS = 6
_QUOTE_MARKS = re.compile(r"[\"'“”„‟«»‹›「」『』‘’‚‛〝〞＂]")


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "")
    text = _QUOTE_MARKS.sub("", text)
    return " ".join(text.split()).casefold().strip(" .,;:!?。、，")


def quote_in(quote: str, article_text: str) -> bool:
    wanted = normalise(quote)
    return len(wanted) >= MIN_QUOTE_CHARS and wanted in normalise(article_text)


def named_in(name: str, article_text: str) -> bool:
    wanted = normalise(name)
    return len(wanted) >= 2 and wanted in normalise(article_text)


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


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def supported(text: str, cited: Sequence[Article], lang: str | None) -> bool:
    """Every number of `text` is in a cited article, and every name in one of the same language."""
    bodies = [normalise(f"{a.title} {a.text}") for a in cited]
    digits = [re.sub(r"[.,]", "", n) for b in bodies for n in _NUMBER.findall(b)]
    for number in _NUMBER.findall(text):
        if re.sub(r"[.,]", "", number) not in digits:
            return False
    same = [body for a, body in zip(cited, bodies) if a.lang == lang]
    if same:
        for name in names_in(text):
            if not any(name in fold(body) for body in same):
                return False
    return True


def _point(value, by_id: Mapping[str, Article], lang: str | None, dropped: Counter) -> Point | None:
    if not isinstance(value, Mapping):
        dropped["malformed"] += 1
        return None
    text = _line(value.get("text"), dropped)
    if text is None:
        return None
    citations = _citations(value.get("citations"), set(by_id), dropped)
    if not citations:
        dropped["uncited"] += 1
        return None
    if not _language_ok(text, lang):
        dropped["wrong_language"] += 1
        return None
    if not supported(text, [by_id[c] for c in citations], lang):
        dropped["unsupported"] += 1
        return None
    return Point(text, citations, lang)


def _quote(value, by_id: Mapping[str, Article], dropped: Counter) -> Quote | None:
    if not isinstance(value, Mapping):
        dropped["malformed"] += 1
        return None
    text, speaker = _line(value.get("text"), dropped), _line(value.get("speaker"), dropped)
    if text is None or speaker is None:
        return None
    # "article_id" as the model is asked; "article" as earlier replies and callers name it
    cited = value.get("article_id", value.get("article"))
    article = by_id.get(cited) if isinstance(cited, str) else None
    if article is None:
        dropped["foreign_citation"] += 1
        return None
    if not quote_in(text, article.text):
        dropped["quote_not_found"] += 1
        return None
    if not named_in(speaker[:MAX_NAME_CHARS], article.text):
        dropped["speaker_not_found"] += 1
        return None
    role = value.get("role")
    role = clean_visible_line(role)[:MAX_NAME_CHARS] or None if isinstance(role, str) else None
    return Quote(normalise_marks(text), speaker[:MAX_NAME_CHARS], article.id, role, article.lang)


def normalise_marks(text: str) -> str:
    """A quote as shown: without the quotation marks the model may have put around it."""
    return _QUOTE_MARKS.sub("", text).strip()


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


def _perspectives(value, by_id: Mapping[str, Article], lang: str | None, dropped: Counter) -> tuple[Perspective, ...]:
    if not isinstance(value, list):
        return ()                       # none asked for, or none given (older replies have no such key)
    kept: list[Perspective] = []
    for item in value:
        point = _point(item, by_id, lang, dropped)
        if point is None:
            continue
        countries = {(by_id[c].country or "").strip().upper() for c in point.citations}
        country = countries.pop() if len(countries) == 1 else ""
        if not country or any(p.country == country for p in kept):
            dropped["not_a_perspective"] += 1
            continue
        kept.append(Perspective(point.text, point.citations, country, lang))
    if len(kept) == 1:
        dropped["not_a_perspective"] += 1
        return ()
    if len(kept) > MAX_PERSPECTIVES:
        dropped["over_limit"] += len(kept) - MAX_PERSPECTIVES
    return tuple(kept[:MAX_PERSPECTIVES])


def _context(value, by_id: Mapping[str, Article], earlier: Mapping[str, EarlierStory], lang: str | None,
             dropped: Counter) -> Context | None:
    """A background or what-to-watch line: checked like a point, against the articles and earlier
    stories it cites (an earlier story read as an article titled with its headline)."""
    if not isinstance(value, Mapping):
        dropped["malformed"] += 1
        return None
    text = _line(value.get("text"), dropped)
    if text is None:
        return None
    citations = _citations(value.get("citations"), set(by_id), dropped)
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
    if not _language_ok(text, lang):
        dropped["wrong_language"] += 1
        return None
    material = [by_id[c] for c in citations] + [
        Article(e.id, "", e.lang, e.headline, e.summary) for e in (earlier[c] for c in stories)]
    if not supported(text, material, lang):
        dropped["unsupported"] += 1
        return None
    return Context(text, citations, tuple(stories), lang)


def _contexts(value, limit: int, by_id: Mapping[str, Article], earlier: Mapping[str, EarlierStory],
              lang: str | None, dropped: Counter) -> tuple[Context, ...]:
    kept = [c for c in (_context(v, by_id, earlier, lang, dropped) for v in (value if isinstance(value, list) else ()))
            if c is not None]
    if len(kept) > limit:
        dropped["over_limit"] += len(kept) - limit
    return tuple(kept[:limit])


def checked_briefing(reply: Mapping, articles: Sequence[Article], lang: str | None,
                     earlier: Sequence[EarlierStory] = ()) -> Briefing:
    """The model's briefing (`reply`, parsed JSON) with every line that could not be checked
    against the story's `articles` (and, for background and what to watch, the `earlier` stories
    of its event the model was given) dropped and counted in `dropped`."""
    dropped: Counter = Counter()
    earlier_by_id = {e.id: e for e in earlier}
    by_id = {a.id: a for a in articles}
    if not isinstance(reply, Mapping):
        reply = {}
        dropped["malformed"] += 1
    category = reply.get("category")
    if category not in CATEGORIES:
        dropped["unknown_category"] += 1
        category = offline_category([a.title for a in articles], [a.text[:2000] for a in articles])
    summary = _point(reply.get("summary"), by_id, lang, dropped) if "summary" in reply else None
    points = [p for p in (_point(v, by_id, lang, dropped)
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
        perspectives=_perspectives(reply.get("perspectives"), by_id, lang, dropped),
        background=_contexts(reply.get("background"), MAX_BACKGROUND, by_id, earlier_by_id, lang, dropped),
        watch=_contexts(reply.get("watch"), MAX_WATCH, by_id, earlier_by_id, lang, dropped),
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
