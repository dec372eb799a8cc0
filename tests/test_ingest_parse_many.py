"""parse_many: the worker-process path gives exactly what one-by-one parsing gives, in order."""

from __future__ import annotations

from datetime import datetime, timezone

from feedserver import rss, rss_entries

from newsdedup_dagster.ingest import parse as parse_module
from newsdedup_dagster.ingest.fetch import FetchResult
from newsdedup_dagster.ingest.parse import ParseConfig, parse_fetch_result, parse_many
from newsdedup_dagster.ingest.sources import Source

FETCHED = datetime(2026, 11, 2, 12, 0, tzinfo=timezone.utc)


def _jobs(n=12):
    jobs = []
    for i in range(n):
        body = rss(rss_entries(40, prefix=f"f{i}")) if i != 5 else b"<rss><channel><item><title>broken"
        result = FetchResult(source_id=f"s{i}", url=f"https://s{i}.example/feed", final_url=None, status="ok",
                             http_status=200, elapsed_ms=1, etag=None, last_modified=None, body=body,
                             content_type="application/rss+xml", fetched_at=FETCHED)
        source = Source(id=f"s{i}", name=f"S{i}", feed_url=result.url, language="en", country="GB")
        jobs.append((result, source, None, ParseConfig()))
    return jobs


def test_parallel_parse_equals_sequential(monkeypatch):
    jobs = _jobs()
    sequential = [parse_fetch_result(r, s, visible_before=v, config=c) for r, s, v, c in jobs]
    monkeypatch.setattr(parse_module, "PARALLEL_PARSE_MIN_BYTES", 1)  # force the process pool
    parallel = parse_many(jobs, workers=2)
    assert [p.items for p in parallel] == [p.items for p in sequential]
    assert [p.bozo_error for p in parallel] == [p.bozo_error for p in sequential]
    assert sum(len(p.items) for p in parallel) == 11 * 40 + len(sequential[5].items)
