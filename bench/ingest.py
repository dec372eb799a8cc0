"""Ingestion benchmark: N local feeds x M entries, concurrent vs sequential.

    .venv/bin/python bench/ingest.py                      # 200 feeds x 50 entries, 50 ms latency
    .venv/bin/python bench/ingest.py --feeds 200 --entries 50 --latency 0.05 --store

A separate process serves the feeds over HTTP on 20 loopback addresses
(127.0.0.1-127.0.0.20, 10 feeds per "host", so the per-host bound applies as
it would to real sites) with a fixed per-request latency modelling the
network. This process then measures, in one run:

  1. concurrent fetch (fetch_feeds, default FetchConfig), then parse_many;
  2. fetch_and_parse: each feed handed to the parse worker processes as
     soon as it arrives, parsing overlapping the slower downloads;
  3. the reference: sequential fetch (one request at a time), then each
     feed parsed in this process, one after another;
  4. the same hour with --poisoned of the feeds replaced by hostile ones (an
     entity bomb, out-of-range character references, NUL bytes, multi-KB
     links, a 1 MB title of comment openers, random bytes, a 20,000-entry feed)
     through the same fetch + parse_many path;
  5. optionally (--store) ingest_partition into PostgreSQL (embedded server
     in a temporary NEWSDEDUP_HOME unless NEWSDEDUP_DATABASE_URL is set).

It prints wall times, items/s, the ratios against the sequential reference,
the CPU seconds each way used (this process and its workers: on a loaded
machine wall time is CPU time divided by the share of the cores one gets),
and this process's peak RSS. Target: 200 feeds <= 10 s and >= 5x faster than
sequential.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime

from common import peak_rss_mb

HOSTS = [f"127.0.0.{i}" for i in range(1, 21)]


def feed_body(feed: int, entries: int) -> bytes:
    from feedserver import rss

    items = [{
        "title": f"Feed {feed} headline {i}: parliament debates the budget &amp; new taxes",
        "link": f"https://site{feed % len(HOSTS)}.example.com/feed{feed}/story-{i}?utm_source=rss",
        "guid": f"feed{feed}-story-{i}",
        "pubDate": f"Mon, 02 Nov 2026 {i // 60 + 8:02d}:{i % 60:02d}:00 +0000",
        "description": f"&lt;p&gt;Summary for story {i} of feed {feed}: ministers met on Monday to discuss "
                       f"the &lt;b&gt;budget&lt;/b&gt; and the proposed tax changes.&lt;/p&gt;",
    } for i in range(entries)]
    return rss(items, title=f"Feed {feed}")


def poisoned_bodies() -> list[bytes]:
    """One feed per kind of hostile input the ingest must survive (see tests/test_ingest_hostile.py)."""
    import random

    from feedserver import rss, rss_entries

    rng = random.Random(5)
    bomb = ('<?xml version="1.0"?>\n<!DOCTYPE rss [\n<!ENTITY a "' + "x" * 20_000 + '">\n]>\n'
            '<rss version="2.0"><channel><title>Bomb</title>'
            + "".join(f"<item><title>s{k} " + "&a;" * 200 + f"</title><link>https://bomb.example/{k}</link></item>"
                      for k in range(100)) + "</channel></rss>").encode()
    return [
        bomb,
        rss([{"title": f"bad {i} &#x110000; &#xD800; &#99999999999;", "link": f"https://refs.example/{i}"}
             for i in range(50)]),
        rss([{"title": f"nul {i}\x00\x1b", "link": f"https://nul.example/{i}\x00"} for i in range(50)]),
        rss([{"title": f"long {i}", "link": "https://long.example/" + "a" * 5000 + str(i), "guid": "g" * 8000 + str(i)}
             for i in range(50)]),
        rss([{"title": "&lt;!--" * 250_000, "link": "https://comment.example/1"}, *rss_entries(20, prefix="c")]),
        bytes(rng.getrandbits(8) for _ in range(100_000)),
        rss(rss_entries(20_000, prefix="huge")),
    ]


def serve(feeds: int, entries: int, latency: float, conn, stop) -> None:
    from feedserver import FeedServer

    server = FeedServer(hosts=HOSTS, latency=latency)
    for feed in range(feeds):
        server.add(f"/feed/{feed}.xml", feed_body(feed, entries))
    for index, body in enumerate(poisoned_bodies()):
        server.add(f"/poison/{index}.xml", body)
    server.start()
    conn.send(server.base_urls)
    stop.wait()
    server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--feeds", type=int, default=200)
    parser.add_argument("--entries", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.05, help="server latency per request, seconds")
    parser.add_argument("--store", action="store_true", help="also time ingest_partition into PostgreSQL")
    parser.add_argument("--repeat", type=int, default=2, help="alternating rounds; the best of each is reported")
    parser.add_argument("--poisoned", type=int, default=7, help="hostile feeds mixed into the poisoned hour")
    args = parser.parse_args()

    from newsdedup_dagster.shared.http.fetch import FetchConfig, FetchRequest, fetch_feeds_sync
    from newsdedup_dagster.shared.http.netguard import AddressPolicy
    from newsdedup_dagster.shared.sources import Source
    from newsdedup_dagster.stages.ingest.feed_parse import parse_fetch_result
    from newsdedup_dagster.stages.ingest.parse_pool import parse_many
    from newsdedup_dagster.stages.ingest.parse_types import ParseConfig
    from newsdedup_dagster.stages.ingest.pipeline import fetch_and_parse

    context = multiprocessing.get_context("spawn")
    parent_end, child_end = context.Pipe()
    stop = context.Event()
    server = context.Process(target=serve, args=(args.feeds, args.entries, args.latency, child_end, stop), daemon=True)
    server.start()
    try:
        if not parent_end.poll(60):
            raise SystemExit("feed server process did not start within 60 s")
        base_urls = parent_end.recv()
        sources = [Source(id=f"feed-{i}", name=f"Feed {i}", feed_url=f"{base_urls[i % len(HOSTS)]}/feed/{i}.xml",
                          language="en", country="GB", allow_private=True) for i in range(args.feeds)]
        requests = [FetchRequest(s.id, s.feed_url, allow_private=True) for s in sources]
        by_id = {s.id: s for s in sources}
        # The local feed server is on loopback: allowed explicitly, as an intranet feed would be.
        config = FetchConfig(trust_env=False, address_policy=AddressPolicy.from_entries(["127.0.0.0/8"]))
        sequential_config = replace(config, max_concurrency=1, max_per_host=1)

        # Warm-up: imports, language model, first connections (not timed).
        warm = fetch_feeds_sync(requests[:2], config)
        for result in warm:
            parse_fetch_result(result, by_id[result.source_id])

        def cpu_seconds() -> float:
            own = resource.getrusage(resource.RUSAGE_SELF)
            children = resource.getrusage(resource.RUSAGE_CHILDREN)  # parse workers, once joined
            return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

        def fetch_then_parse(cfg):
            cpu = cpu_seconds()
            started = time.monotonic()
            results = fetch_feeds_sync(requests, cfg)
            fetched = time.monotonic()
            if cfg is config:  # the product's path: parse_many (worker processes for big batches)
                parsed = parse_many([(r, by_id[r.source_id], None, ParseConfig()) for r in results])
            else:  # the sequential reference: one feed after another
                parsed = [parse_fetch_result(r, by_id[r.source_id]) for r in results]
            items = sum(len(p.items) for p in parsed)
            done = time.monotonic()
            errors = [r.error for r in results if r.status != "ok"]
            return fetched - started, done - started, items, errors, cpu_seconds() - cpu

        def overlapped():
            cpu = cpu_seconds()
            started = time.monotonic()
            outcome = fetch_and_parse(requests, config, lambda r: (r, by_id[r.source_id], None, ParseConfig()))
            total = time.monotonic() - started
            errors = [r.error for r, _ in outcome.pairs if r.status != "ok"]
            return total, sum(len(p.items) for _, p in outcome.pairs), errors, cpu_seconds() - cpu

        print(f"# ingest bench: {args.feeds} feeds x {args.entries} entries, served from a separate process on "
              f"{len(HOSTS)} loopback addresses with {args.latency * 1000:.0f} ms latency per request "
              f"(models the network); FetchConfig max_concurrency={config.max_concurrency}, "
              f"max_per_host={config.max_per_host}; {os.cpu_count()} CPUs, load average "
              f"{os.getloadavg()[0]:.1f} at start; best of {args.repeat} alternating rounds")
        best: dict[str, float] = {}
        for _round in range(args.repeat):
            c_fetch, c_total, c_items, c_errors, c_cpu = fetch_then_parse(config)
            o_total, o_items, o_errors, o_cpu = overlapped()
            s_fetch, s_total, s_items, s_errors, s_cpu = fetch_then_parse(sequential_config)
            assert c_items == s_items == o_items == args.feeds * args.entries, (c_items, s_items, o_items)
            assert not c_errors and not s_errors and not o_errors, (c_errors[:3], s_errors[:3], o_errors[:3])
            for name, value in (("c_fetch", c_fetch), ("c_total", c_total), ("o_total", o_total),
                                ("s_fetch", s_fetch), ("s_total", s_total), ("c_cpu", c_cpu), ("o_cpu", o_cpu),
                                ("s_cpu", s_cpu)):
                best[name] = min(best.get(name, value), value)
        items = args.feeds * args.entries
        print(f"concurrent fetch          : {best['c_fetch']:6.2f} s")
        print(f"concurrent fetch, parse   : {best['c_total']:6.2f} s  {items / best['c_total']:8.0f} items/s  "
              f"(fetch all, then parse_many; {best['c_cpu']:.2f} CPU s)")
        print(f"overlapped fetch + parse  : {best['o_total']:6.2f} s  {items / best['o_total']:8.0f} items/s  "
              f"(fetch_and_parse: parse each feed as it arrives; {best['o_cpu']:.2f} CPU s)")
        print(f"sequential fetch          : {best['s_fetch']:6.2f} s")
        print(f"sequential fetch, parse   : {best['s_total']:6.2f} s  {items / best['s_total']:8.0f} items/s  "
              f"(reference; {best['s_cpu']:.2f} CPU s)")
        print(f"parse alone (wall)        : {best['c_total'] - best['c_fetch']:6.2f} s "
              f"({(best['c_total'] - best['c_fetch']) / items * 1000:.2f} ms per entry)")
        print(f"speed-up fetch            : {best['s_fetch'] / best['c_fetch']:6.1f}x")
        print(f"speed-up fetch + parse    : {best['s_total'] / best['c_total']:6.1f}x "
              f"(overlapped: {best['s_total'] / best['o_total']:.1f}x)")

        # The same hour with hostile feeds in place of the first few healthy ones.
        kinds = len(poisoned_bodies())
        poisoned_ids = {f"feed-{i}" for i in range(args.poisoned)}
        poison_requests = [FetchRequest(f"feed-{i}", f"{base_urls[0]}/poison/{i % kinds}.xml", allow_private=True)
                           for i in range(args.poisoned)]
        poison_requests += [r for r in requests if r.source_id not in poisoned_ids]
        started = time.monotonic()
        outcome = fetch_and_parse(poison_requests, config, lambda r: (r, by_id[r.source_id], None, ParseConfig()))
        p_total = time.monotonic() - started
        results = [r for r, _ in outcome.pairs]
        parsed = [p for _, p in outcome.pairs]
        healthy = sum(len(p.items) for p in parsed if p.source_id not in poisoned_ids)
        assert healthy == (args.feeds - args.poisoned) * args.entries, healthy
        failed = sum(1 for r, p in zip(results, parsed) if r.status != "ok" or p.error)
        skipped: dict[str, int] = {}
        for p in parsed:
            for reason, count in p.skipped_counts.items():
                skipped[reason] = skipped.get(reason, 0) + count
        print(f"poisoned hour ({args.poisoned} hostile): {p_total:6.2f} s  ({p_total / best['o_total']:.2f}x the clean "
              f"hour; every healthy feed complete, {failed} hostile sources failed, "
              f"{sum(len(p.items) for p in parsed if p.source_id in poisoned_ids)} hostile items kept, skipped {skipped})")

        if args.store:
            if not os.environ.get("NEWSDEDUP_DATABASE_URL"):
                os.environ.setdefault("NEWSDEDUP_HOME", tempfile.mkdtemp(prefix="newsdedup-bench-"))
            from newsdedup_dagster.shared import db
            from newsdedup_dagster.stages.ingest.store import ingest_partition

            url = db.ensure_ready()
            hour = datetime(2026, 11, 2, 10, tzinfo=UTC)
            with db.connection(url) as conn:
                conn.execute("DELETE FROM item_sources WHERE partition_hour = %s", (hour,))
                conn.execute("DELETE FROM items WHERE partition_hour = %s", (hour,))
                conn.execute("DELETE FROM feed_fetches WHERE partition_hour = %s", (hour,))
                conn.commit()
                started = time.monotonic()
                report = ingest_partition(conn, sources, hour, mode="live", fetch_config=config)
                total = time.monotonic() - started
                print(f"ingest_partition (live)   : {total:6.2f} s  {report.items_seen / total:8.0f} items/s  "
                      f"(fetch {report.fetch_seconds:.2f} s, parse {report.parse_seconds:.2f} s, "
                      f"store {report.store_seconds:.2f} s, {report.new_items} new items)")
                started = time.monotonic()
                rerun = ingest_partition(conn, sources, hour, mode="live", fetch_config=config)
                total = time.monotonic() - started
                print(f"ingest_partition (rerun)  : {total:6.2f} s  from archive, {rerun.new_items} new items")
            db.stop_embedded_server()
        print(f"peak RSS (this process)   : {peak_rss_mb():6.0f} MB")
        print(f"load average at the end   : {os.getloadavg()[0]:6.1f} ({os.cpu_count()} CPUs)")
        total = min(best["c_total"], best["o_total"])
        print(f"target 200 feeds <= 10 s (fetch + parse): {'met' if total <= 10 else 'NOT met'}; "
              f">= 5x sequential: fetch {'met' if best['s_fetch'] / best['c_fetch'] >= 5 else 'NOT met'}, "
              f"fetch + parse {'met' if best['s_total'] / total >= 5 else 'NOT met'}")
    finally:
        stop.set()
        server.join(timeout=10)
        if server.is_alive():
            server.terminate()


if __name__ == "__main__":
    main()
