"""parse_many: worker processes give exactly what one-by-one parsing gives, in order, and a
feed that overruns its time budget or kills its worker fails alone."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime

from feedserver import rss, rss_entries

from newsdedup_dagster.shared.http.fetch import FetchResult
from newsdedup_dagster.shared.sources import Source
from newsdedup_dagster.stages.ingest import parse_pool
from newsdedup_dagster.stages.ingest.feed_parse import parse_fetch_result
from newsdedup_dagster.stages.ingest.parse_pool import parse_many
from newsdedup_dagster.stages.ingest.parse_types import ParseConfig

FETCHED = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def _job(i, body, config=ParseConfig()):
    result = FetchResult(source_id=f"s{i}", url=f"https://s{i}.example/feed", final_url=None, status="ok",
                         http_status=200, elapsed_ms=1, etag=None, last_modified=None, body=body,
                         content_type="application/rss+xml", fetched_at=FETCHED)
    source = Source(id=f"s{i}", name=f"S{i}", feed_url=result.url, language="en", country="GB")
    return (result, source, None, config)


def _jobs(n=12):
    return [_job(i, rss(rss_entries(40, prefix=f"f{i}")) if i != 5 else b"<rss><channel><item><title>broken")
            for i in range(n)]


def test_parallel_parse_equals_sequential():
    jobs = _jobs()
    sequential = parse_many(jobs, isolate=False)
    assert sequential == [parse_fetch_result(r, s, visible_before=v, config=c) for r, s, v, c in jobs]
    parallel = parse_many(jobs, workers=2)
    assert [p.items for p in parallel] == [p.items for p in sequential]
    assert [p.bozo_error for p in parallel] == [p.bozo_error for p in sequential]
    assert sum(len(p.items) for p in parallel) == 11 * 40 + len(sequential[5].items)


def _hang(job):
    if job[0].source_id == "s1":
        while True:  # a parser stuck in a loop
            pass
    if job[0].source_id == "s2":
        os._exit(3)  # a worker killed mid-parse (segfault, OOM killer)
    return parse_fetch_result(job[0], job[1], visible_before=job[2], config=job[3])


def test_overrun_and_dead_worker_fail_only_their_feed(monkeypatch):
    # The hard budget is what matters here: the cooperative one never runs inside _hang.
    monkeypatch.setattr(parse_pool, "_parse_job", _hang)
    monkeypatch.setattr(parse_pool, "HARD_BUDGET_GRACE", 0.0)
    config = replace(ParseConfig(), time_budget=1.0)
    jobs = [_job(i, rss(rss_entries(5, prefix=f"f{i}")), config) for i in range(4)]
    results = parse_many(jobs, workers=2)
    assert [r.source_id for r in results] == ["s0", "s1", "s2", "s3"]
    assert len(results[0].items) == 5 and len(results[3].items) == 5
    assert results[1].error.startswith("parse time budget of 1s exceeded") and not results[1].items
    assert "parse worker died (exit code 3)" in results[2].error and not results[2].items
