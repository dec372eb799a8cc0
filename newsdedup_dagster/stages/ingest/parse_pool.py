"""Many feeds parsed in worker processes, each under a hard time budget."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import pebble

from newsdedup_dagster.shared.text.language import detect_language
from newsdedup_dagster.stages.ingest.feed_parse import one_line, parse_fetch_result
from newsdedup_dagster.stages.ingest.parse_types import ParseResult

# feedparser is pure Python (~0.3-0.5 ms per entry here): with hundreds of feeds, parsing, not
# the network, bounds an hourly run. Feeds are independent, so they are parsed in worker
# processes: in parallel on several cores, and each under a hard time budget (a worker that
# overruns is stopped and replaced; a worker that dies takes only its task with it).
# Seconds a worker gets beyond the feed's own cooperative budget before it is stopped.
HARD_BUDGET_GRACE = 2.0
# Small feeds travel to a worker several to a task: one task per feed cost more in dispatch and
# result hand-back than the parse itself under load. A batch that overruns or kills its worker
# is parsed again one feed per task, so each feed still gets its whole budget alone and a
# hostile feed fails by itself. Typical news feeds are 10-300 KB.
BATCH_MAX_BYTES = 256 * 1024
BATCH_MAX_FEEDS = 8


def _parse_job(job):
    result, source, visible_before, config = job
    return parse_fetch_result(result, source, visible_before=visible_before, config=config)


def _parse_batch(jobs):
    return [_parse_job(job) for job in jobs]


def _failed(job, error: str) -> ParseResult:
    return ParseResult(source_id=job[0].source_id, error=error)


def _needs_parsing(job) -> bool:
    result = job[0]
    return result.status == "ok" and result.body is not None


def _batches(jobs: list) -> list[list]:
    """Consecutive small jobs grouped (at most BATCH_MAX_FEEDS feeds and BATCH_MAX_BYTES body bytes);
    a job above the byte bound travels alone."""
    batches: list[list] = []
    current: list = []
    size = 0
    for job in jobs:
        body = len(job[0].body or b"")
        if current and (size + body > BATCH_MAX_BYTES or len(current) >= BATCH_MAX_FEEDS):
            batches.append(current)
            current, size = [], 0
        current.append(job)
        size += body
    if current:
        batches.append(current)
    return batches


class ParsePool:
    """Worker processes that parse feeds as they are handed in, each feed under
    its config's time budget (cooperative, plus a hard stop at budget +
    HARD_BUDGET_GRACE). `submit(jobs)` returns at once; `results()` waits and
    returns every submitted job's ParseResult in submission order. A feed that
    overruns, crashes its worker or raises comes back with `error` set; the
    others are unaffected.

    Without `isolate` (or without fork), jobs are parsed in this process at submit."""

    def __init__(self, workers: int | None = None, *, isolate: bool = True):
        self._isolated = isolate and "fork" in multiprocessing.get_all_start_methods()
        self._workers = max(1, workers or os.cpu_count() or 1)
        self._pool = None
        self._slots: list[ParseResult | None] = []
        self._pending: list[tuple[list[int], list, Any]] = []  # (slot indices, jobs, future)

    def __enter__(self) -> ParsePool:
        if self._isolated:
            detect_language("warm up")  # load the language model once, before forking
            # fork: workers inherit the imported modules (no re-import); they only run pure parsing.
            self._pool = pebble.ProcessPool(max_workers=self._workers, context=multiprocessing.get_context("fork"))
            # Start the workers now, while this process has no other threads of ours running.
            self._pool.schedule(len, args=((),)).result()
        return self

    def __exit__(self, *exc_info) -> None:
        if self._pool is not None:
            if exc_info[0] is None:
                self._pool.close()
            else:
                self._pool.stop()
            self._pool.join()
            self._pool = None

    @property
    def submitted(self) -> int:
        """How many jobs were submitted so far (the next job's position in results())."""
        return len(self._slots)

    def _schedule(self, slots: list[int], jobs: list) -> None:
        budget = max(job[3].time_budget for job in jobs) + HARD_BUDGET_GRACE
        future = self._pool.schedule(_parse_batch, args=(jobs,), timeout=budget)
        self._pending.append((slots, jobs, future))

    def submit(self, jobs) -> None:
        """Queue (result, source, visible_before, config) jobs for parsing."""
        to_schedule: list[tuple[int, Any]] = []
        for job in jobs:
            slot = len(self._slots)
            self._slots.append(None)
            if self._pool is None or not _needs_parsing(job):
                self._slots[slot] = _parse_job(job)  # nothing to parse (304, error) or not isolated
            else:
                to_schedule.append((slot, job))
        for batch in _batches([job for _, job in to_schedule]):
            slots = [slot for slot, _ in to_schedule[:len(batch)]]
            to_schedule = to_schedule[len(batch):]
            self._schedule(slots, batch)

    def results(self) -> list[ParseResult]:
        """Wait for every submitted job; their results in submission order."""
        while self._pending:
            pending, self._pending = self._pending, []
            for slots, jobs, future in pending:
                try:
                    for slot, parsed in zip(slots, future.result()):
                        self._slots[slot] = parsed
                    continue
                except FutureTimeout:
                    error = "parse time budget of {budget:g}s exceeded (worker stopped)"
                except pebble.ProcessExpired as exc:
                    error = (f"parse worker died (exit code {exc.exitcode}): "
                             "the feed is archived and is parsed again on a rerun")
                except Exception as exc:  # noqa: BLE001 - one feed's failure stays with that feed
                    error = one_line(f"parse failed: {type(exc).__name__}: {exc}")
                if len(jobs) > 1:  # which feed of the batch it was is unknown: each again, alone
                    for slot, job in zip(slots, jobs):
                        self._schedule([slot], [job])
                else:
                    self._slots[slots[0]] = _failed(jobs[0], error.format(budget=jobs[0][3].time_budget))
        assert all(slot is not None for slot in self._slots)
        return list(self._slots)  # type: ignore[arg-type]


def parse_many(jobs, *, workers: int | None = None, isolate: bool = True) -> list[ParseResult]:
    """parse_fetch_result over (result, source, visible_before, config) jobs, in order.

    With `isolate` (and fork available), feeds are parsed in worker processes
    (see ParsePool): a feed that overruns its time budget, crashes its worker
    or raises comes back as a ParseResult with `error` set; the others are
    unaffected."""
    jobs = list(jobs)
    if not jobs:
        return []
    if not isolate or not any(_needs_parsing(job) for job in jobs):
        return [_parse_job(job) for job in jobs]
    with ParsePool(workers=min(len(jobs), workers or _cpu_count()), isolate=isolate) as pool:
        pool.submit(jobs)
        return pool.results()


def _cpu_count() -> int:
    return os.cpu_count() or 1
