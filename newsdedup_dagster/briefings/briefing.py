"""What a briefing is made of: the story's articles as the briefing reads them, and the lines it
publishes, each with the articles it comes from.

A briefing stored before perspectives existed has no "perspectives" key: readers take it as none."""

from __future__ import annotations

from dataclasses import dataclass, field


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
class Briefing:
    category: str
    summary: Point | None
    points: tuple[Point, ...]
    quotes: tuple[Quote, ...]
    places: tuple[str, ...] = ()
    players: tuple[str, ...] = ()
    perspectives: tuple[Perspective, ...] = ()   # none, or two or more of different countries
    method: str = "extractive"          # extractive (offline) | model
    dropped: dict[str, int] = field(default_factory=dict)   # lines not published, by reason

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
            "method": self.method,
            "dropped": dict(self.dropped),
        }
