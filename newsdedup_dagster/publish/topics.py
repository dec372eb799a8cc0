"""A topic for every story outside an event, offline and reproducible (pure): a small keyword
lexicon per topic, matched as whole words against the story's pivot-language headline and
summary (English by default) and its representative article's title. The topic with the most
matching keywords wins, ties go to the earlier topic in `TOPIC_KEYWORDS`; no match files the
story under "general". The lexicon is English with a few loan words; a story whose pivot text
is in another language mostly lands in "general" (documented in docs/OPERATIONS.md#feeds-and-the-reader-site)."""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["TOPIC_KEYWORDS", "story_topic"]

TOPIC_KEYWORDS: dict[str, tuple[str, ...]] = {
    "disaster": ("earthquake", "quake", "tsunami", "flood", "floods", "flooding", "hurricane", "typhoon", "cyclone",
                 "storm", "wildfire", "wildfires", "eruption", "volcano", "landslide", "drought", "heatwave",
                 "magnitude", "evacuation", "evacuated", "disaster", "tornado", "avalanche", "crash", "derailment"),
    "conflict": ("war", "military", "troops", "missile", "missiles", "airstrike", "airstrikes", "strike", "strikes",
                 "ceasefire", "attack", "attacks", "army", "drone", "drones", "shelling", "rebels", "invasion",
                 "hostages", "bombing", "clashes", "nato", "offensive"),
    "politics": ("election", "elections", "vote", "votes", "voting", "parliament", "president", "minister",
                 "government", "senate", "congress", "referendum", "coalition", "opposition", "campaign", "summit",
                 "diplomatic", "sanctions", "treaty", "talks", "party", "chancellor", "cabinet", "law", "court"),
    "economy": ("economy", "economic", "inflation", "rates", "rate", "bank", "market", "markets",
                "stocks", "shares", "trade", "tariff", "tariffs", "gdp", "growth", "recession", "jobs",
                "unemployment", "budget", "oil", "prices", "currency", "exports", "imports", "investment"),
    "health": ("health", "hospital", "hospitals", "virus", "outbreak", "vaccine", "vaccines", "disease", "cases",
               "pandemic", "epidemic", "patients", "cancer", "drug", "medical", "cholera", "measles"),
    "science": ("science", "scientists", "research", "space", "nasa", "rocket", "launch", "satellite", "climate",
                "ai", "artificial", "technology", "tech", "study", "researchers", "telescope", "moon", "mars",
                "chip", "chips", "software", "cyberattack"),
    "sport": ("football", "soccer", "match", "cup", "olympic", "olympics", "tournament", "champion", "championship",
              "league", "coach", "goal", "tennis", "cricket", "marathon", "medal", "team"),
    "culture": ("film", "festival", "museum", "music", "album", "award", "awards", "art", "artist", "book",
                "novel", "concert", "exhibition", "heritage", "prize"),
}

_WORD = re.compile(r"\w+", re.UNICODE)


@lru_cache(maxsize=1)
def _keyword_topics() -> dict[str, list[str]]:
    index: dict[str, list[str]] = {}
    for topic, words in TOPIC_KEYWORDS.items():
        for word in words:
            index.setdefault(word, []).append(topic)
    return index


def story_topic(*texts: str | None) -> str:
    """The topic of a story from its texts (headline, summary, title): see the module docstring."""
    index = _keyword_topics()
    hits = {topic: 0 for topic in TOPIC_KEYWORDS}
    for text in texts:
        for word in set(_WORD.findall((text or "").casefold())):
            for topic in index.get(word, ()):
                hits[topic] += 1
    best = max(hits.values(), default=0)
    if best == 0:
        return "general"
    return next(topic for topic in TOPIC_KEYWORDS if hits[topic] == best)
