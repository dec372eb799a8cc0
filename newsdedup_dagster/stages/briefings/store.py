"""Briefings in the database: which stories of an hour need one, their articles, and the rows.

With a model client, each story to brief gets one request (stages/briefings/model.py) per change of its
articles, with the earlier stories of its event (as grouped by then) for its background; the reply
is checked line by line and stored with method "model". A story whose call
fails (invalid output, refused, unavailable, an unexpected error handling the reply), whose reply
keeps no line, or beyond the run's cap of calls gets the extractive briefing, and the reason is
counted: one story's failure never fails the hour. Without a client every story is extractive."""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.db.stored_text import article_text
from newsdedup_dagster.shared.models.client import (
    LLMClient,
    LLMConfigError,
    LLMError,
    LLMUnavailable,
    OutputInvalid,
    ReplyUnhandled,
    RequestRejected,
    Usage,
    note_error,
)
from newsdedup_dagster.stages.briefings import model as briefing_model
from newsdedup_dagster.stages.briefings.briefing import Article, Briefing, EarlierStory
from newsdedup_dagster.stages.briefings.extractive import briefing_language, extractive_briefing
from newsdedup_dagster.stages.briefings.support import memoised
from newsdedup_dagster.stages.briefings.verify import checked_extractive

log = logging.getLogger(__name__)

# A page's main text is cut here for the briefing (the centrality graph is quadratic in sentences).
MAX_ARTICLE_CHARS = 6_000
# Model calls per run when the caller names no cap: a backlog is worked off extractively rather
# than in a run that outlives its hour (about $0.003 a story at deepseek-chat's list price).
MAX_MODEL_BRIEFINGS_PER_RUN = 200

# Why a story that was to get a model's briefing got the extractive one.
FALLBACK_REASONS = {OutputInvalid: "invalid_output", RequestRejected: "refused", LLMUnavailable: "unavailable",
                    ReplyUnhandled: "unhandled"}


@dataclass
class BriefingReport:
    briefed: int = 0
    with_points: int = 0
    with_quotes: int = 0
    from_pages: int = 0            # articles read from their page's main text (else the feed's summary)
    categories: Counter = field(default_factory=Counter)
    dropped: Counter = field(default_factory=Counter)
    methods: Counter = field(default_factory=Counter)       # briefings stored, by method
    model_requests: int = 0        # stories a model was asked about (answered, reused or failed)
    fallbacks: Counter = field(default_factory=Counter)     # extractive instead of the model's, by reason
    usage: Usage = field(default_factory=Usage)
    errors: list[str] = field(default_factory=list)         # redacted by the client, the first few (note_error)
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


def earlier_stories(conn: psycopg.Connection, story_ids: list[str]) -> dict[str, list[EarlierStory]]:
    """Per story the scored stories of its event first reported on an earlier day (oldest first), as
    far as events are grouped when the story is briefed."""
    out: dict[str, list[EarlierStory]] = {}
    if story_ids:
        for story_id, earlier_id, headline, summary, lang, first in conn.execute(
                db.load_sql("briefing_earlier_stories"), {"story_ids": story_ids}):
            out.setdefault(story_id, []).append(EarlierStory(earlier_id, headline or "", summary or "",
                                                             None if lang in (None, "und") else lang, first))
    return out


def _save(conn: psycopg.Connection, report: BriefingReport, story_id: str, material: str, briefing: Briefing,
          pages: int, hour: datetime) -> None:
    conn.execute(db.load_sql("briefing_upsert"), {
        "story_id": story_id, "material": material,
        "lang": next((line.lang for line in (briefing.summary, *briefing.points) if line is not None), None),
        "method": briefing.method,
        "category": briefing.category, "briefing": json.dumps(briefing.as_dict(), ensure_ascii=False),
        "dropped": json.dumps(briefing.dropped), "hour": hour})
    report.briefed += 1
    report.with_points += bool(briefing.points)
    report.with_quotes += bool(briefing.quotes)
    report.from_pages += pages
    report.categories[briefing.category] += 1
    report.methods[briefing.method] += 1
    report.dropped.update(briefing.dropped)


def _extractive(story: list[Article], pivot_lang: str) -> Briefing:
    return checked_extractive(extractive_briefing(story, pivot_lang), story)


def brief_hour(conn: psycopg.Connection, hour: datetime, pivot_lang: str, client: LLMClient | None = None, *,
               model: str | None = None, max_calls: int = MAX_MODEL_BRIEFINGS_PER_RUN,
               embed: Callable[[list[str]], Any] | None = None) -> BriefingReport:
    """Brief every story of `hour` whose articles (or their pages) changed since its briefing: by
    `model` through `client` (at most `max_calls` stories, the largest first), else extractively;
    every briefing through the same checks (`embed`, the product's embedder, checks a model's line
    against cited articles in other languages). Idempotent.

    An LLMConfigError (bad key, unknown model) is raised after the stories answered so far are
    stored: a configuration problem fails the run, as it does for scoring."""
    started = time.perf_counter()
    report = BriefingReport()
    candidates = conn.execute(db.load_sql("briefing_candidates"), {"hour": hour}).fetchall()
    articles, pages = story_articles(conn, [story_id for story_id, _ in candidates]) if candidates else ({}, Counter())
    if client is None or not model:
        with conn.transaction():
            for story_id, material in candidates:
                story = articles.get(story_id, [])
                _save(conn, report, story_id, material, _extractive(story, pivot_lang), pages[story_id], hour)
    else:
        conn.commit()   # each model briefing commits on its own as it returns
        _brief_with_model(conn, hour, pivot_lang, client, model, max_calls, candidates, articles, pages, report,
                          embed)
    report.seconds = time.perf_counter() - started
    return report


def _brief_with_model(conn: psycopg.Connection, hour: datetime, pivot_lang: str, client: LLMClient, model: str,
                      max_calls: int, candidates: list, articles: dict[str, list[Article]], pages: Counter,
                      report: BriefingReport, embed: Callable[[list[str]], Any] | None = None) -> None:
    requests: dict[str, briefing_model.Request] = {}
    earlier = earlier_stories(conn, [story_id for story_id, _ in candidates])
    for story_id, _ in sorted(candidates, key=lambda c: (-len(articles.get(c[0], [])), c[0])):
        story = articles.get(story_id, [])
        request = briefing_model.request_for(story, briefing_language(story, pivot_lang), earlier.get(story_id, ()))
        if request is None:
            continue                    # no text to brief from: the extractive briefing (empty) says so
        if len(requests) >= max(0, max_calls):
            report.fallbacks["budget"] += 1
            continue
        requests[story_id] = request
    material = dict(candidates)
    with conn.transaction():            # the stories no model is asked about
        for story_id, _ in candidates:
            if story_id not in requests:
                story = articles.get(story_id, [])
                _save(conn, report, story_id, material[story_id], _extractive(story, pivot_lang), pages[story_id],
                      hour)
    if not requests:
        return

    def work(story_id: str):
        request, story = requests[story_id], articles[story_id]
        # One story's cited sentences are embedded once, whatever the number of its lines.
        story_embed = memoised(embed) if embed is not None else None
        return client.complete_json(
            briefing_model.TASK, model, briefing_model.SYSTEM_PROMPT, request.user,
            lambda reply: briefing_model.briefing_from_reply(reply, request, story, story_embed),
            story_id=story_id, partition_hour=hour, prompt_version=briefing_model.PROMPT_VERSION,
            target_langs=(request.lang or "",), max_tokens=briefing_model.MAX_REPLY_TOKENS)

    config_error: LLMConfigError | None = None
    workers = max(1, client.settings.concurrency)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm-briefing") as pool:
        futures = {pool.submit(work, story_id): story_id for story_id in requests}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                story_id = futures[future]
                report.model_requests += 1
                briefing = _answer(future, story_id, report)
                if isinstance(briefing, LLMConfigError):
                    config_error = config_error or briefing
                    for other in pending:
                        other.cancel()
                    continue
                if briefing is None:
                    briefing = _extractive(articles[story_id], pivot_lang)
                with conn.transaction():
                    _save(conn, report, story_id, material[story_id], briefing, pages[story_id], hour)
            if config_error is not None:
                pending = {f for f in pending if not f.cancelled()}
    if config_error is not None:
        raise config_error


def _answer(future, story_id: str, report: BriefingReport) -> Briefing | LLMConfigError | None:
    """The model's checked briefing, or None (fall back, the reason counted), or the configuration
    error that stops the run."""
    try:
        briefing, usage = future.result()
    except LLMConfigError as exc:
        report.usage.add(exc.usage)
        return exc
    except LLMError as exc:
        report.usage.add(exc.usage)
        report.fallbacks[next((reason for kind, reason in FALLBACK_REASONS.items() if isinstance(exc, kind)),
                              "error")] += 1
        note_error(report.errors, f"{story_id}: {exc}")
        return None
    except Exception as exc:   # not the model's reply (that is ReplyUnhandled): this story only
        log.exception("briefing of story %s failed", story_id)
        report.fallbacks["unexpected"] += 1
        note_error(report.errors, f"{story_id}: unexpected {type(exc).__name__}")
        return None
    report.usage.add(usage)
    if not briefing_model.publishable(briefing):
        # Every line failed its checks: the drops are counted, the articles' own lines are shown.
        report.dropped.update(briefing.dropped)
        report.fallbacks["nothing_checked"] += 1
        return None
    return briefing

