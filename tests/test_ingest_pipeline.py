"""fetch_and_parse: feeds parsed as they arrive (real HTTP server on 127.0.0.1, real worker
processes) give what fetching everything and then parsing gives; every result passes through
before_parse before it is parsed; one hostile feed among small batched ones fails alone."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest
from feedserver import FAST, rss, rss_entries

from newsdedup_dagster.shared.http.fetch import FetchRequest, fetch_feeds_sync
from newsdedup_dagster.stages.ingest import parse_pool
from newsdedup_dagster.stages.ingest.feed_parse import parse_fetch_result
from newsdedup_dagster.stages.ingest.parse_pool import ParsePool
from newsdedup_dagster.stages.ingest.parse_types import ParseConfig
from newsdedup_dagster.stages.ingest.pipeline import fetch_and_parse


@pytest.fixture()
def server(feed_server):
    feed_server.latency = 0.02
    for i in range(12):
        feed_server.add(f"/f{i}.xml", rss(rss_entries(6, prefix=f"f{i}")))
    feed_server.add("/broken.xml", b"<rss><channel><item><title>broken")
    return feed_server


def _requests(server):
    requests = [FetchRequest(f"s{i}", server.url(f"/f{i}.xml"), allow_private=True) for i in range(12)]
    return requests + [FetchRequest("broken", server.url("/broken.xml"), allow_private=True),
                       FetchRequest("missing", server.url("/missing.xml"), allow_private=True)]


def test_overlapped_equals_fetch_then_parse(server):
    requests = _requests(server)
    archived: list[str] = []
    parsed_before_archive: list[str] = []

    def before_parse(results):
        archived.extend(r.source_id for r in results)

    def job_for(result):
        if result.source_id not in archived:
            parsed_before_archive.append(result.source_id)
        return (result, None, None, ParseConfig())

    outcome = fetch_and_parse(requests, FAST, job_for, before_parse=before_parse, workers=2)
    assert sorted(archived) == sorted(r.source_id for r in requests)  # each exactly once
    assert parsed_before_archive == []
    by_id = {result.source_id: (result, parsed) for result, parsed in outcome.pairs}
    reference = {r.source_id: parse_fetch_result(r, config=ParseConfig()) for r in fetch_feeds_sync(requests, FAST)}
    assert set(by_id) == set(reference)
    for source_id, (result, parsed) in by_id.items():
        assert parsed.source_id == source_id == result.source_id
        assert [i.item_id for i in parsed.items] == [i.item_id for i in reference[source_id].items]
        assert parsed.error == reference[source_id].error
    assert len(by_id["s3"][1].items) == 6
    assert by_id["missing"][0].status == "error" and not by_id["missing"][1].items
    assert by_id["broken"][1].bozo_error


def test_archive_failure_stops_the_hour_and_is_raised(server):
    def before_parse(results):
        raise RuntimeError("database gone")

    with pytest.raises(RuntimeError, match="database gone"):
        fetch_and_parse(_requests(server), FAST, lambda r: (r, None, None, ParseConfig()),
                        before_parse=before_parse, workers=1)


def _kill_on_s2(job):
    if job[0].source_id == "s2":
        os._exit(7)  # a worker killed mid-parse, in a batch with healthy feeds
    return parse_fetch_result(job[0], job[1], visible_before=job[2], config=job[3])


def test_a_worker_death_in_a_batch_fails_only_its_feed(server, monkeypatch):
    monkeypatch.setattr(parse_pool, "_parse_job", _kill_on_s2)
    results = fetch_feeds_sync(_requests(server)[:6], FAST)
    jobs = [(r, None, None, replace(ParseConfig(), time_budget=5.0)) for r in results]
    assert len(parse_pool._batches(jobs)) == 1  # all six small feeds travel in one task
    with ParsePool(workers=2) as pool:
        pool.submit(jobs)
        parsed = pool.results()
    assert [p.source_id for p in parsed] == [r.source_id for r in results]
    for result, outcome in zip(results, parsed):
        if result.source_id == "s2":
            assert "parse worker died (exit code 7)" in outcome.error and not outcome.items
        else:
            assert outcome.error is None and len(outcome.items) == 6


def test_batches_respect_feed_and_byte_bounds():
    from newsdedup_dagster.shared.http.fetch import FetchResult

    def job(size):
        result = FetchResult(source_id="x", url="https://x.example/", final_url=None, status="ok", http_status=200,
                             elapsed_ms=0, etag=None, last_modified=None, body=b"x" * size, content_type=None)
        return (result, None, None, ParseConfig())

    big = parse_pool.BATCH_MAX_BYTES + 1
    sizes = [10] * (parse_pool.BATCH_MAX_FEEDS + 3) + [big, 10, big]
    batches = parse_pool._batches([job(s) for s in sizes])
    assert [len(b) for b in batches] == [parse_pool.BATCH_MAX_FEEDS, 3, 1, 1, 1]
    assert sum(len(b) for b in batches) == len(sizes)
    for batch in batches:
        total = sum(len(j[0].body) for j in batch)
        assert len(batch) == 1 or total <= parse_pool.BATCH_MAX_BYTES
