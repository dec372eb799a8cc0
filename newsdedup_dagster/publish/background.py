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
import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from multiprocessing.connection import Connection
from pathlib import Path

import psycopg

from .. import db
from ..crashpoints import crash_point
from .build import PublishResult, publish_hour
from .settings import PublishSettings

log = logging.getLogger(__name__)

# The folder holding the newsdedup_dagster package: the worker imports it from where the run did.
PACKAGE_ROOT = Path(__file__).resolve().parents[2]

__all__ = ["BackgroundPublisher", "PendingPublish", "WorkerError", "publish_at_snapshot"]


def publish_at_snapshot(database_url: str, hour: datetime, settings: PublishSettings, langs: Sequence[str],
                        now: datetime, force: bool, snapshot: str) -> tuple[PublishResult, float]:
    """`publish_hour` on a connection of its own, reading through `snapshot`. Returns the result
    and the seconds it took. Runs in the worker process (or in the run's, when the worker failed)."""
    started = time.perf_counter()
    with db.connect(database_url) as conn:
        result = publish_hour(conn, hour, settings, list(langs), now=now, force=force, snapshot=snapshot)
    return result, round(time.perf_counter() - started, 3)


def _publish_in_worker(*call) -> tuple[PublishResult, float]:
    crash_point("story_feeds.background_worker")   # test-only: the worker dies here
    return publish_at_snapshot(*call)


class WorkerError(RuntimeError):
    """What publishing raised in the worker (its type and message)."""


class _Worker:
    """A worker process of its own (`python -m newsdedup_dagster.publish.background FD`), not a
    multiprocessing child: those re-run the main script of the run's process when it lacks an
    `if __name__ == "__main__"` guard. One call at a time over a socket pair; it ends when the
    run's end of the socket closes (the run ended, or was killed)."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")) if p)}
        try:
            # -P: the run's working directory is not put on the worker's path (a psycopg.py there would be
            # imported). Not -I, which would also drop the PYTHONPATH above that finds the package.
            self.process = subprocess.Popen([sys.executable, "-P", "-m", __name__, str(theirs.fileno())],
                                            pass_fds=(theirs.fileno(),), env=env, stdin=subprocess.DEVNULL)
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, call: tuple) -> None:
        self.conn.send(call)

    def receive(self) -> tuple[PublishResult, float]:
        status, payload = self.conn.recv()     # EOFError when the worker died
        if status == "error":
            raise WorkerError(payload)
        return payload

    def close(self) -> None:
        self.conn.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@dataclass
class PendingPublish:
    """An hour being published in the worker; `result()` waits for it."""

    worker: _Worker
    holder: psycopg.Connection          # the open transaction whose snapshot the worker reads
    call: tuple

    def result(self) -> tuple[PublishResult, float]:
        """The hour's result and seconds. When the worker failed or died, the hour is published
        once more here, at the same snapshot; an error then is the hour's error."""
        try:
            try:
                return self.worker.receive()
            except (WorkerError, EOFError, OSError) as exc:
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
        self._worker: _Worker | None = None

    def submit(self, hour: datetime, settings: PublishSettings, langs: Sequence[str], now: datetime,
               force: bool) -> PendingPublish:
        holder = db.connect(self.database_url)
        try:
            holder.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            snapshot = db.export_snapshot(holder)
            call = (self.database_url, hour, settings, tuple(langs), now, force, snapshot)
            worker = self.worker()
            try:
                worker.send(call)
            except OSError:               # it died since its last hour: a new one
                worker = self.worker(replace=True)
                worker.send(call)
        except BaseException:
            holder.close()
            raise
        return PendingPublish(worker, holder, call)

    def worker(self, replace: bool = False) -> _Worker:
        if self._worker is not None and (replace or not self._worker.alive):
            self._worker.close()
            self._worker = None
        if self._worker is None:
            self._worker = _Worker()
        return self._worker

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None


def _serve(fd: int) -> None:
    """The worker's loop: publish each hour sent, answer with its result or its error."""
    conn = Connection(fd)
    while True:
        try:
            call = conn.recv()
        except EOFError:                 # the run ended (or was killed)
            return
        try:
            answer = ("ok", _publish_in_worker(*call))
        except Exception as exc:  # the run publishes the hour itself and reports its own error
            answer = ("error", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(answer)
        except OSError:                  # the run is gone
            return


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
