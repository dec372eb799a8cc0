"""Fetch and parse one hour's feeds at once: each feed is parsed as soon as it arrives.

Fetching is network-bound and parsing CPU-bound, so they overlap: the fetcher
(an asyncio loop in a helper thread) hands each finished FetchResult to this
thread, which passes every batch of arrivals to `before_parse` (storage
archives them there, committed, so that a body that then fails to parse is
kept) and then to the ParsePool's worker processes. Parsing is thus done
while slower feeds are still downloading instead of after the last one.

No Dagster, no environment reads.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from newsdedup_dagster.shared.http.fetch import FetchConfig, FetchRequest, FetchResult, iter_fetch_feeds
from newsdedup_dagster.stages.ingest.parse_pool import ParsePool
from newsdedup_dagster.stages.ingest.parse_types import ParseResult

ParseJob = tuple  # (FetchResult, Source | None, visible_before | None, ParseConfig)


@dataclass(frozen=True)
class FetchedAndParsed:
    pairs: tuple[tuple[FetchResult, ParseResult], ...]  # in the order the fetches finished
    fetch_seconds: float  # until the last fetch finished
    parse_seconds: float  # parsing left after the last fetch (the rest overlapped the fetch)


_DONE = object()


class _FetchCrashed:
    def __init__(self, exc: BaseException):
        self.exc = exc


def _fetch_in_thread(requests: list[FetchRequest], config: FetchConfig | None, arrivals: queue.SimpleQueue,
                     stop: threading.Event) -> None:
    async def run() -> None:
        async for result in iter_fetch_feeds(requests, config):
            if stop.is_set():  # the caller failed (e.g. the archive's database is gone): fetch no more
                break
            arrivals.put(result)

    try:
        asyncio.run(run())
    except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
        arrivals.put(_FetchCrashed(exc))
    finally:
        arrivals.put(_DONE)


def fetch_and_parse(requests: Sequence[FetchRequest], fetch_config: FetchConfig | None,
                    job_for: Callable[[FetchResult], ParseJob], *,
                    before_parse: Callable[[list[FetchResult]], None] | None = None,
                    pool: ParsePool | None = None, workers: int | None = None,
                    isolate: bool = True) -> FetchedAndParsed:
    """Fetch `requests` concurrently and parse each result as it arrives.

    `job_for(result)` gives its parse job; `before_parse(results)` runs in
    this thread on each batch of arrivals before any of them is parsed. Jobs
    go to `pool` when given (it may already hold other jobs; only this call's
    results are returned), else to a pool of `workers` made for this call."""
    requests = list(requests)
    if pool is None:
        with ParsePool(workers=workers, isolate=isolate) as own_pool:
            return fetch_and_parse(requests, fetch_config, job_for, before_parse=before_parse, pool=own_pool)
    started = time.monotonic()
    first_slot = pool.submitted
    arrivals: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()
    fetcher = threading.Thread(target=_fetch_in_thread, args=(requests, fetch_config, arrivals, stop),
                               name="newsdedup-fetch", daemon=True)
    fetcher.start()
    fetched: list[FetchResult] = []
    crashed: _FetchCrashed | None = None
    done = False
    try:
        while not done:
            batch = [arrivals.get()]
            while True:  # whatever else has arrived meanwhile goes with it
                try:
                    batch.append(arrivals.get_nowait())
                except queue.Empty:
                    break
            results = []
            for entry in batch:
                if entry is _DONE:
                    done = True
                elif isinstance(entry, _FetchCrashed):
                    crashed = entry
                else:
                    results.append(entry)
            if results:
                if before_parse is not None:
                    before_parse(results)
                fetched.extend(results)
                pool.submit(job_for(result) for result in results)
    finally:
        stop.set()  # no-op once every fetch has arrived
        fetcher.join()
    if crashed is not None:
        raise crashed.exc
    fetch_seconds = time.monotonic() - started
    parsed = pool.results()[first_slot:]
    return FetchedAndParsed(pairs=tuple(zip(fetched, parsed)), fetch_seconds=fetch_seconds,
                            parse_seconds=time.monotonic() - started - fetch_seconds)
