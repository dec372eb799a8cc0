"""The article stage's database side and one hour of it: choose the pages, fetch them politely
(fetch.py), extract each in a worker process under a time budget (extract.py), store the outcomes.

No Dagster imports, no environment reads: settings, the feed fetcher's configuration and the
sources come from the caller.
"""

from __future__ import annotations

import asyncio
import hashlib
import multiprocessing
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path

import pebble
import psycopg

from newsdedup_dagster.shared.db import load_sql
from newsdedup_dagster.shared.db.stored_text import compressed
from newsdedup_dagster.shared.http.fetch import (
    USER_AGENT as FEED_USER_AGENT,
    FetchConfig,
    FetchRequest,
    FetchResult,
    fetch_feeds,
    run_sync,
)
from newsdedup_dagster.shared.sources import Source
from newsdedup_dagster.shared.text.language import detect_language
from newsdedup_dagster.stages.articles.extract import Extraction, ExtractLimits, extract_page
from newsdedup_dagster.stages.articles.fetch import (
    PASSING_REASONS,
    FetchRun,
    PageOutcome,
    PageRequest,
    Politeness,
    fetch_pages,
    origin_key,
)
from newsdedup_dagster.stages.articles.robots import RobotsEntry
from newsdedup_dagster.stages.articles.settings import ArticleSettings

# Seconds a worker gets beyond the extraction budget before it is stopped (start-up, hand-back).
EXTRACT_GRACE = 1.0


def user_agent(contact_url: str) -> str:
    """`newsdedup/<version> (+<contact URL>)`: names the project and whom a site can ask."""
    return f"{FEED_USER_AGENT.split(' ', 1)[0]} (+{contact_url})"


@dataclass
class ArticleReport:
    hour: datetime
    skipped: str | None = None          # why the hour fetched nothing (disabled, replayed without pages)
    replayed: bool = False              # the pages came from the recorded folder
    candidates: int = 0
    requests: int = 0
    robots_fetched: int = 0
    counts: dict[str, int] = field(default_factory=dict)     # status -> rows written
    reasons: dict[str, int] = field(default_factory=dict)    # reason -> rows written
    words: int = 0
    seconds: float = 0.0
    rows: list[PageOutcome] = field(default_factory=list)

    @property
    def extracted(self) -> int:
        return self.counts.get("ok", 0)


def excluded(sources: Sequence[Source]) -> tuple[list[str], list[str]]:
    """(source ids, outlets) the sources file excludes from article fetching (`fetch_article: false`)."""
    ids = sorted(s.id for s in sources if not s.fetch_article)
    outlets = sorted({s.own_outlet for s in sources if not s.fetch_article and s.own_outlet})
    return ids, outlets


def candidates(conn: psycopg.Connection, hour: datetime, settings: ArticleSettings, sources: Sequence[Source]
               ) -> list[PageRequest]:
    ids, outlets = excluded(sources)
    private = {s.id for s in sources if getattr(s, "allow_private", False)}
    rows = conn.execute(load_sql("articles_candidates"), {
        "hour": hour, "since": hour - timedelta(hours=settings.retry_hours), "excluded_sources": ids,
        "excluded_outlets": outlets, "passing": sorted(PASSING_REASONS), "max_attempts": settings.max_attempts,
        "limit": settings.max_pages_per_hour}).fetchall()
    return [PageRequest(item_id=item_id, url=url, language_hint=lang,
                        private_ok=bool(source_ids) and all(s in private for s in source_ids))
            for item_id, url, lang, source_ids in rows]


def load_robots(conn: psycopg.Connection, origins: Sequence[str]) -> dict[str, RobotsEntry]:
    rows = conn.execute(load_sql("articles_robots_load"), {"origins": list(origins)}).fetchall()
    return {r[0]: RobotsEntry(origin=r[0], status=r[1], body=r[2], detail=r[3], fetched_at=r[4], expires_at=r[5],
                              not_before=r[6]) for r in rows}


def save_robots(conn: psycopg.Connection, entries: Sequence[RobotsEntry]) -> None:
    if not entries:
        return
    conn.execute(load_sql("articles_robots_upsert"), {
        "origins": [e.origin for e in entries], "statuses": [e.status for e in entries],
        "bodies": [e.body for e in entries], "details": [e.detail for e in entries],
        "fetched_ats": [e.fetched_at for e in entries], "expires_ats": [e.expires_at for e in entries],
        "not_befores": [e.not_before for e in entries]})


def save_outcomes(conn: psycopg.Connection, hour: datetime, outcomes: Sequence[PageOutcome]) -> None:
    if not outcomes:
        return

    def column(name):
        return [getattr(o.payload, name, None) if isinstance(o.payload, Extraction) else None for o in outcomes]

    texts = column("text")
    conn.execute(load_sql("articles_upsert"), {
        "item_ids": [o.item_id for o in outcomes], "statuses": [o.status for o in outcomes],
        "reasons": [o.reason for o in outcomes], "details": [(o.detail or "")[:500] or None for o in outcomes],
        "urls": [o.url for o in outcomes], "final_urls": [o.final_url for o in outcomes],
        "http_statuses": [o.http_status for o in outcomes],
        "texts": [compressed(t.encode("utf-8")) if t else None for t in texts],
        "text_chars": [len(t) if t else None for t in texts], "leads": column("lead"),
        "word_counts": column("word_count"), "languages": column("language"),
        "published_ats": column("published_at"), "updated_ats": column("updated_at"), "bylines": column("byline"),
        "canonical_urls": column("canonical_url"), "encodings": column("encoding"),
        "htmls": [compressed(o.body) for o in outcomes], "attempts": [1 if o.attempted else 0 for o in outcomes],
        "fetched_hours": [hour] * len(outcomes)})


class _Extractor:
    """Extraction in worker processes (fork), each page under a hard time budget; in this
    process (a thread) where fork is not available."""

    def __init__(self, settings: ArticleSettings, workers: int = 1):
        self.limits = ExtractLimits(min_words=settings.min_words, max_text_chars=settings.max_text_chars)
        self.timeout = settings.extract_timeout
        self.pool = None
        if "fork" in multiprocessing.get_all_start_methods():
            detect_language("warm up")  # load the language model once, before forking
            import trafilatura  # noqa: F401 - imported once here, inherited by the workers

            self.pool = pebble.ProcessPool(max_workers=workers, context=multiprocessing.get_context("fork"))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.stop()
            self.pool.join()

    async def extract(self, page: PageRequest, result: FetchResult) -> Extraction:
        args = (result.body, result.content_type, result.final_url or page.url)
        kwargs = {"language_hint": page.language_hint, "limits": self.limits}
        if self.pool is None:
            return await asyncio.wait_for(asyncio.to_thread(extract_page, *args, **kwargs), self.timeout)
        future = self.pool.schedule(extract_page, args=args, kwargs=kwargs, timeout=self.timeout + EXTRACT_GRACE)
        try:
            return await asyncio.wrap_future(future)
        except FutureTimeout:
            return Extraction("extraction_failed", f"extraction took longer than {self.timeout:g}s (worker stopped)")
        except pebble.ProcessExpired as exc:
            return Extraction("extraction_failed", f"extraction worker died (exit code {exc.exitcode})")


def fetch_and_extract(pages: Sequence[PageRequest], settings: ArticleSettings, politeness: Politeness,
                      fetch_config: FetchConfig, robots: Mapping[str, RobotsEntry]):
    """Fetch and extract `pages` (synchronously, from any thread): the FetchRun."""
    extractor = _Extractor(settings)

    async def handle(page: PageRequest, result: FetchResult) -> PageOutcome:
        extraction = await extractor.extract(page, result)
        body = result.body if settings.keep_html else None
        if extraction.reason is not None:
            return PageOutcome(page.item_id, page.url, "failed", extraction.reason, extraction.detail,
                               http_status=result.http_status, final_url=result.final_url, payload=extraction,
                               body=body)
        return PageOutcome(page.item_id, page.url, "ok", http_status=result.http_status, final_url=result.final_url,
                           payload=extraction, body=body)

    try:
        return run_sync(lambda: fetch_pages(pages, politeness=politeness, page_config=fetch_config,
                                            robots_cache=dict(robots),
                                            handle=handle))
    finally:
        extractor.close()


def replay_page_name(url: str) -> str:
    """The file a replayed hour reads the page of `url` from."""
    return hashlib.sha256(url.encode("utf-8")).hexdigest()[:32] + ".html"


def replay_pages(pages: Sequence[PageRequest], settings: ArticleSettings, fetch_config: FetchConfig) -> FetchRun:
    """A replayed hour's pages, read from `settings.replay_dir` through the feed fetcher (file://
    inside that folder only) and extracted as fetched pages are; links without a recorded page
    are left out. No network: no robots.txt, no delay."""
    folder = Path(settings.replay_dir).resolve()
    present = [(page, folder / replay_page_name(page.url)) for page in pages]
    present = [(page, path) for page, path in present if path.is_file()]
    config = replace(fetch_config, allowed_file_dir=folder, max_attempts=1)
    extractor = _Extractor(settings)

    async def one(page: PageRequest, path: Path) -> PageOutcome:
        result = (await fetch_feeds([FetchRequest(source_id=page.item_id, url=path.as_uri())], config))[0]
        if result.status != "ok" or result.body is None:
            return PageOutcome(page.item_id, page.url, "failed", "fetch_error", result.error)
        extraction = await extractor.extract(page, result)
        status = "ok" if extraction.reason is None else "failed"
        return PageOutcome(page.item_id, page.url, status, extraction.reason, extraction.detail, payload=extraction,
                           body=result.body if settings.keep_html else None)

    async def all_pages() -> list[PageOutcome]:
        return list(await asyncio.gather(*(one(page, path) for page, path in present)))

    try:
        outcomes = run_sync(all_pages) if present else []
    finally:
        extractor.close()
    return FetchRun(outcomes=outcomes, robots={}, requests_made=len(outcomes))


def page_fetch_config(feed_config: FetchConfig, settings: ArticleSettings) -> FetchConfig:
    """The feed fetcher's configuration with the page size cap (never above the feed caps). Only
    pages whose every source says `allow_private` may reach the networks its policy allows."""
    return replace(feed_config, max_body_bytes=min(feed_config.max_body_bytes, settings.max_page_bytes),
                   max_decoded_bytes=min(feed_config.max_decoded_bytes, settings.max_page_bytes))


def articles_hour(conn: psycopg.Connection, hour: datetime, *, settings: ArticleSettings,
                  sources: Sequence[Source], feed_config: FetchConfig, agent: str,
                  fetch_live: bool | None = None) -> ArticleReport:
    """One hour of the stage. `fetch_live` None: fetch only when the hour's feeds were fetched live
    (a replayed hour's links name real sites and are never fetched)."""
    started = time.monotonic()
    report = ArticleReport(hour=hour)
    if not settings.enabled:
        report.skipped = "disabled (NEWSDEDUP_ARTICLES=false)"
        return report
    if fetch_live is None:
        fetch_live = bool(conn.execute(load_sql("articles_hour_fetched_live"), {"hour": hour}).fetchone()[0])
    if not fetch_live and not Path(settings.replay_dir).is_dir():
        report.skipped = "the hour's feeds were replayed and there is no folder of recorded pages"
        return report
    pages = candidates(conn, hour, settings, sources)
    report.candidates = len(pages)
    if not pages:
        conn.commit()
        report.seconds = round(time.monotonic() - started, 3)
        return report
    if not fetch_live:
        # A replayed hour's links name real sites: its pages come from the recorded folder.
        conn.commit()
        report.replayed = True
        run = replay_pages(pages, settings, page_fetch_config(feed_config, settings))
    else:
        origins = sorted({origin_key(p.url) for p in pages if _parsable(p.url)})
        robots = load_robots(conn, origins)
        conn.commit()  # no transaction stays open while pages are fetched
        politeness = Politeness(user_agent=agent, min_host_delay=settings.min_host_delay,
                                hosts_in_parallel=settings.hosts_in_parallel, page_timeout=settings.page_timeout,
                                hour_budget=settings.hour_budget,
                                robots_ttl=timedelta(hours=settings.robots_cache_hours),
                                max_robots_bytes=settings.max_robots_bytes)
        run = fetch_and_extract(pages, settings, politeness, page_fetch_config(feed_config, settings), robots)
    with conn.transaction():
        save_robots(conn, [run.robots[key] for key in sorted(run.robots_changed)])
        save_outcomes(conn, hour, run.outcomes)
    report.requests, report.robots_fetched, report.rows = run.requests_made, run.robots_fetched, run.outcomes
    for outcome in run.outcomes:
        report.counts[outcome.status] = report.counts.get(outcome.status, 0) + 1
        if outcome.reason:
            report.reasons[outcome.reason] = report.reasons.get(outcome.reason, 0) + 1
        if isinstance(outcome.payload, Extraction) and outcome.payload.word_count and outcome.status == "ok":
            report.words += outcome.payload.word_count
    report.seconds = round(time.monotonic() - started, 3)
    return report


def _parsable(url: str) -> bool:
    try:
        origin_key(url)
    except Exception:  # noqa: BLE001 - fetch_pages reports it on the page
        return False
    return True
