"""Publishing hour H in a process of its own while a run over many hours computes hour H+1. No
Dagster imports.

Publishing is the hourly chain's longest stage and almost all Python (rendering pages and feeds),
while the next hour's stages mostly wait on the database, the embedding model and the page
extractor: in a run over a range of hours (every backfill) the two can share the machine's cores.
Hour H is published from the database exactly as the run left it when hour H's other stages
ended: the run exports that snapshot (`pg_export_snapshot`) and keeps its transaction open until
the hour is published, and the worker reads through it (`SET TRANSACTION SNAPSHOT`), so nothing
hour H+1 writes is visible to it. Hour H+1 is handed over only once hour H is published, so the
publishing tables change hour after hour as in hourly runs.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime

import psycopg

from .. import db
from ..crashpoints import crash_point
from .build import PublishResult, publish_hour
from .settings import PublishSettings

log = logging.getLogger(__name__)

__all__ = ["BackgroundPublisher", "PendingPublish", "publish_at_snapshot"]


def publish_at_snapshot(database_url: str, hour: datetime, settings: PublishSettings, langs: Sequence[str],
                        now: datetime, force: bool, snapshot: str) -> tuple[PublishResult, float]:
    """`publish_hour` on a connection of its own, reading through `snapshot`. Returns the result
    and the seconds it took. Runs in the worker process (or in the run's, when the worker failed)."""
    started = time.perf_counter()
    with db.connect(database_url) as conn:
        result = publish_hour(conn, hour, settings, list(langs), now=now, force=force, snapshot=snapshot)
    return result, round(time.perf_counter() - started, 3)


def _exit_with(parent_pid: int) -> None:
    """The worker ends when the run's process does (a killed run would leave it waiting forever:
    a process pool's worker outlives a parent that dies without shutting the pool down)."""
    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-run", daemon=True).start()


def _publish_in_worker(*call) -> tuple[PublishResult, float]:
    crash_point("story_feeds.background_worker")   # test-only: the worker dies here
    return publish_at_snapshot(*call)


@dataclass
class PendingPublish:
    """An hour being published in the worker; `result()` waits for it."""

    future: Future
    holder: psycopg.Connection          # the open transaction whose snapshot the worker reads
    call: tuple

    def result(self) -> tuple[PublishResult, float]:
        """The hour's result and seconds. When the worker failed or died, the hour is published
        once more here, at the same snapshot; an error then is the hour's error."""
        try:
            try:
                return self.future.result()
            except Exception as exc:  # the worker's error, or BrokenProcessPool when it died
                log.warning("publishing %s in the background failed (%s: %s); publishing it here",
                            self.call[1], type(exc).__name__, exc)
                return publish_at_snapshot(*self.call)
        finally:
            self.holder.close()


class BackgroundPublisher:
    """One worker process (started at the first hour) that publishes an hour at the snapshot the
    run exported when the hour's other stages ended."""

    def __init__(self, database_url: str):
        self.database_url = database_url
        self._pool: ProcessPoolExecutor | None = None

    def submit(self, hour: datetime, settings: PublishSettings, langs: Sequence[str], now: datetime,
               force: bool) -> PendingPublish:
        holder = db.connect(self.database_url)
        try:
            holder.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            snapshot = holder.execute(db.load_sql("snapshot_export")).fetchone()[0]
            call = (self.database_url, hour, settings, tuple(langs), now, force, snapshot)
            try:
                future = self.worker_pool().submit(_publish_in_worker, *call)
            except BrokenProcessPool:     # the worker died with the previous hour: a new one
                self._pool = None
                future = self.worker_pool().submit(_publish_in_worker, *call)
        except BaseException:
            holder.close()
            raise
        return PendingPublish(future, holder, call)

    def worker_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # spawn, not fork: the run's process holds threads and open connections.
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_exit_with, initargs=(os.getpid(),))
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
