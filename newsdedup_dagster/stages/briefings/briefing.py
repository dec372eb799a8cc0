"""What a briefing is made of: the story's articles as the briefing reads them, and the lines it
publishes, each with the articles it comes from.

A briefing stored before perspectives (or background and what to watch) existed has no such key:
readers take it as none."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Article:
    """One article of the story: its page's main text where the article stage kept one, else the
    feed's summary."""

    id: str
    outlet: str
    lang: str | None
    title: str
    text: str
    country: str | None = None


@dataclass(frozen=True)
class Point:
    text: str
    citations: tuple[str, ...]          # ids of articles of the story
    lang: str | None = None


@dataclass(frozen=True)
class Quote:
    text: str                           # as the article has it, without the quotation marks
    speaker: str
    article_id: str
    role: str | None = None
    lang: str | None = None


@dataclass(frozen=True)
class Perspective:
    """What the outlets of one country stress and the others' articles do not say."""

    text: str
    citations: tuple[str, ...]          # ids of articles of the story, all from outlets of `country`
    country: str                        # ISO 3166-1 alpha-2 of the cited outlets
    lang: str | None = None


@dataclass(frozen=True)
class EarlierStory:
    """A story of the same event first reported on an earlier day: what a background line may cite
    besides the articles (its scored headline and summary are what the model reads of it)."""

    id: str
    headline: str
    summary: str
    lang: str | None
    first_published_at: datetime


@dataclass(frozen=True)
class Context:
    """A background or what-to-watch line: citing articles of the story, earlier stories of its
    event, or both (at least one)."""

    text: str
    citations: tuple[str, ...]          # ids of articles of the story
    stories: tuple[str, ...]            # ids of earlier stories of the story's event
    lang: str | None = None

    def as_dict(self) -> dict:
        return {"text": self.text, "citations": list(self.citations), "stories": list(self.stories),
                "lang": self.lang}


@dataclass(frozen=True)
class Briefing:
    category: str
    summary: Point | None
    points: tuple[Point, ...]
    quotes: tuple[Quote, ...]
    places: tuple[str, ...] = ()
    players: tuple[str, ...] = ()
    perspectives: tuple[Perspective, ...] = ()   # none, or two or more of different countries
    background: tuple[Context, ...] = ()  # a model's only: offline, publishing lists the earlier stories
    watch: tuple[Context, ...] = ()       # what comes next, as an article states it (a model's only)
    method: str = "extractive"          # extractive (offline) | model
    dropped: dict[str, int] = field(default_factory=dict)   # lines not published, by reason
    # each player and place -> the ids of the story's articles that name it (set by the checks)
    named: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def as_dict(self) -> dict:
        def point(p: Point | None):
            return None if p is None else {"text": p.text, "citations": list(p.citations), "lang": p.lang}
        return {
            "category": self.category, "summary": point(self.summary), "points": [point(p) for p in self.points],
            "quotes": [{"text": q.text, "speaker": q.speaker, "role": q.role, "article_id": q.article_id,
                        "lang": q.lang} for q in self.quotes],
            "places": list(self.places), "players": list(self.players),
            "perspectives": [{"text": p.text, "citations": list(p.citations), "country": p.country, "lang": p.lang}
                             for p in self.perspectives],
            "background": [c.as_dict() for c in self.background], "watch": [c.as_dict() for c in self.watch],
            "method": self.method,
            "dropped": dict(self.dropped),
            "named": {name: list(ids) for name, ids in self.named.items()},
        }
