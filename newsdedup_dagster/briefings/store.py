"""Briefings in the database: which stories of an hour need one, their articles, and the rows."""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

import psycopg

from .. import db
from ..articles.store import article_text
from .briefing import Article
from .extractive import extractive_briefing
from .verify import checked_extractive

# A page's main text is cut here for the briefing (the centrality graph is quadratic in sentences).
MAX_ARTICLE_CHARS = 6_000


@dataclass
class BriefingReport:
    briefed: int = 0
    with_points: int = 0
    with_quotes: int = 0
    from_pages: int = 0            # articles read from their page's main text (else the feed's summary)
    categories: Counter = field(default_factory=Counter)
    dropped: Counter = field(default_factory=Counter)
    seconds: float = 0.0


def story_articles(conn: psycopg.Connection, story_ids: list[str]) -> tuple[dict[str, list[Article]], Counter]:
    """Per story its articles (the page's main text where kept, else the feed's summary), and per
    story how many were read from their page."""
    out: dict[str, list[Article]] = {}
    pages: Counter = Counter()
    for story_id, item_id, source, lang, title, summary, text_gzip, country in conn.execute(
            db.load_sql("briefing_articles"), {"story_ids": story_ids}):
        page = article_text(text_gzip)
        pages[story_id] += bool(page)
        out.setdefault(story_id, []).append(Article(
            id=item_id, outlet=source or "", lang=lang, title=title or "",
            text=(page or summary or "")[:MAX_ARTICLE_CHARS], country=country))
    return out, pages


def brief_hour(conn: psycopg.Connection, hour: datetime, pivot_lang: str) -> BriefingReport:
    """Brief every story of `hour` whose articles (or their pages) changed since its briefing, offline
    (extractive), each through the same checks a model's briefing goes through. Idempotent."""
    started = time.perf_counter()
    report = BriefingReport()
    candidates = conn.execute(db.load_sql("briefing_candidates"), {"hour": hour}).fetchall()
    articles, pages = story_articles(conn, [story_id for story_id, _ in candidates]) if candidates else ({}, Counter())
    with conn.transaction():
        for story_id, material in candidates:
            story = articles.get(story_id, [])
            briefing = checked_extractive(extractive_briefing(story, pivot_lang), story)
            conn.execute(db.load_sql("briefing_upsert"), {
                "story_id": story_id, "material": material,
                "lang": briefing.summary.lang if briefing.summary else None, "method": briefing.method,
                "category": briefing.category, "briefing": json.dumps(briefing.as_dict(), ensure_ascii=False),
                "dropped": json.dumps(briefing.dropped), "hour": hour})
            report.briefed += 1
            report.with_points += bool(briefing.points)
            report.with_quotes += bool(briefing.quotes)
            report.from_pages += pages[story_id]
            report.categories[briefing.category] += 1
            report.dropped.update(briefing.dropped)
    report.seconds = time.perf_counter() - started
    return report
