"""Benchmark: the near-duplicate stage's banded candidates against whole-window matching.

    .venv/bin/python bench/neardup_bands.py [PATH] [--size 100000] [--hours 10] [--seed 7]
        [--sample-day] [--lookback 36] [--band-grams 8] [--work DIR]

bench/neardup.py's headline set of `--size` (real Google News titles, synthetic filler and 10%
injected rewrites; PATH as there) is spread evenly over `--hours` hours as the items of one English
source, stored on the embedded PostgreSQL, and every hour is decided in time order twice by
stages/neardup/store.dedup_partition: `candidates="window"` (the reference: the look-back window read
and shingled each hour) and `candidates="bands"` (migration 121). Printed: pair recall and precision
of the banded decisions against the reference (a pair = a duplicate and the anchor it points at),
each path's total and last-hour seconds, and the kept tables' size. `--sample-day`: the bundled
sample day instead (its 243 items in their own hours and languages).
Figures: docs/calibration/neardup.md#banded-candidates.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import common  # noqa: F401  (this checkout's package first on sys.path)
from neardup import DEFAULT_PATH, build_set, load_titles

START = datetime(2026, 11, 2, 0, tzinfo=UTC)


def headline_set(path: str, size: int, hours: int, seed: int) -> tuple[list[dict], list[dict]]:
    items = build_set(load_titles(path), size, random.Random(seed + size))
    per_hour = -(-len(items) // hours)
    rows = [{"id": f"b{i:06d}", "url": f"https://bench.example/{i}", "title": title, "lang": "en",
             "published_at": START + timedelta(hours=i // per_hour, minutes=(i % per_hour) * 60 // per_hour),
             "source": "bench-en"} for i, (title, _, _) in enumerate(items)]
    return [{"id": "bench-en", "lang": "en", "syndicator": False}], rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("path", nargs="?", default=DEFAULT_PATH)
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--hours", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sample-day", action="store_true")
    ap.add_argument("--lookback", type=int, default=36)
    ap.add_argument("--band-grams", type=int, default=8)
    ap.add_argument("--work", default=None, help="directory of the embedded server (default: a temporary one)")
    args = ap.parse_args(argv)
    work = Path(args.work or tempfile.mkdtemp(prefix="neardup-bands-"))
    os.environ.update({"NEWSDEDUP_HOME": str(work / "home"), "DAGSTER_HOME": str(work / "home" / "dagster")})
    os.environ.pop("NEWSDEDUP_DATABASE_URL", None)

    from newsdedup_dagster.evaluation.neardup_candidates import agreement, decide, sample_day, seed
    from newsdedup_dagster.shared import db

    admin = db.ensure_ready()
    db._ensure_database(admin, "bench_neardup_bands")
    url = db.with_database(admin, "bench_neardup_bands")
    db.migrate(url)
    sources, items = sample_day() if args.sample_day else headline_set(args.path, args.size, args.hours, args.seed)
    try:
        with db.connect(url) as conn:
            hours = seed(conn, sources, items)
            print(f"{len(items)} items over {len(hours)} hours, look-back {args.lookback} h", flush=True)
            results, seconds = {}, {}
            for path in ("window", "bands"):
                timings: list[float] = []
                start = time.perf_counter()
                results[path] = decide(conn, hours, path, lookback_hours=args.lookback, band_grams=args.band_grams,
                                       timings=timings)
                seconds[path] = (time.perf_counter() - start, timings[-1])
                print(f"  {path:7s} {seconds[path][0]:7.1f} s in all, last hour {seconds[path][1]:6.2f} s, "
                      f"{len(results[path])} duplicates", flush=True)
            sizes = conn.execute(
                "SELECT relname, pg_total_relation_size(oid) FROM pg_class "
                "WHERE relname IN ('neardup_bands', 'neardup_df', 'neardup_df_docs') ORDER BY 1").fetchall()
        figures = agreement(results["window"], results["bands"])
        print(f"bands vs window: recall {figures['recall']:.4f}  precision {figures['precision']:.4f}  "
              f"(reference pairs {figures['reference_pairs']}, banded {figures['pairs']}; "
              f"missed {len(figures['missed'])}, extra {len(figures['extra'])})")
        print("kept tables: " + ", ".join(f"{name} {size / 1e6:.1f} MB" for name, size in sizes))
        titles = {i["id"]: i["title"] for i in items}
        for a, b in figures["missed"][:5] + figures["extra"][:5]:
            print(f"  differs: {titles[a]!r} -> {titles[b]!r}")
    finally:
        db.stop_embedded_server()
    return 0


if __name__ == "__main__":
    sys.exit(main())
