"""`newsdedup ingest`: fetch one hour's feeds into raw_items outside Dagster (nothing is recorded in
the instance) and summarise per source."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.progress import progress_bar

# How often the progress thread reads the hour's fetch rows.
PROGRESS_POLL_S = 1.0


def register(subparsers) -> None:
    p = subparsers.add_parser("ingest", help="materialise raw_items for one hourly partition (default: current hour)")
    p.add_argument("--sources", required=True, help="sources YAML file")
    p.add_argument("--partition", help="YYYY-MM-DD-HH:00 (UTC); default the current hour")
    p.add_argument("--mode", choices=["auto", "live", "replay"], default=None,
                   help="fetch mode (default $NEWSDEDUP_FETCH_MODE or auto)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_ingest)


def cmd_ingest(args) -> int:
    from newsdedup_dagster.assets.ingest import raw_items_metadata, run_ingest  # deferred on purpose: fast --help
    from newsdedup_dagster.partitions import hour_key  # deferred on purpose: fast --help
    from newsdedup_dagster.shared.sources import SourcesConfigError, load_sources  # deferred on purpose: fast --help

    sources_path = Path(args.sources).expanduser().resolve()
    try:
        sources = load_sources(sources_path)  # validate before starting anything
    except (SourcesConfigError, OSError) as exc:
        print(f"newsdedup: error: {exc}")
        return 2
    partition = args.partition or hour_key(datetime.now(UTC))
    db.ensure_ready()
    # The hour's raw_items, computed as the hourly asset computes them but outside Dagster (the
    # next hourly run of this hour finds the fetched bodies archived and re-parses them).
    try:
        with _fetch_progress(partition, sum(1 for s in sources if s.enabled)), db.connection() as conn:
            report = run_ingest(conn, partition, sources_file=str(sources_path), fetch_mode=args.mode)
    except Exception as exc:  # noqa: BLE001 (one line for the operator, not a traceback)
        message = str(exc).strip()
        print(f"newsdedup: error: ingest of {partition} failed: {message.splitlines()[0] if message else type(exc).__name__}")
        return 1
    meta = raw_items_metadata(report)
    rows = meta["per_source_json"].value
    summary = {
        "partition": partition,
        "sources": rows,
        "new_items": meta["new_items"],
        # a source failed when its fetch failed or nothing of its body could be parsed
        "errors": sum(1 for r in rows if r["status"] == "error" or r.get("parse_status") == "failed"),
        "skipped": meta["skipped_entries"].value,
        "repairs": meta["repairs"].value,
    }
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
        return 0
    print(f"partition {partition} (mode {meta['mode']}): {summary['new_items']} new items, "
          f"{summary['errors']} failed sources of {len(rows)}")
    if summary["skipped"]:
        print("skipped entries: " + ", ".join(f"{reason} {count}" for reason, count in summary["skipped"].items()))
    print(f"{'source':<28} {'status':<13} {'http':>4} {'new':>5}  error")
    for r in rows:
        print(f"{r['id']:<28} {r['status']:<13} {r['http_status'] or '':>4} {r['new_items']:>5}  {(r['error'] or '')[:80]}")
    return 0


@contextmanager
def _fetch_progress(partition: str, total: int):
    """Sources fetched so far (read from the hour's fetch rows by a thread), on stderr."""
    from newsdedup_dagster.partitions import hour_window  # deferred on purpose: fast --help

    hour, _end = hour_window(partition)
    stop = threading.Event()
    with db.connection() as conn:
        since = conn.execute(db.load_sql("server_now")).fetchone()[0]
        conn.commit()

    def poll(bar) -> None:
        query = db.load_sql("ingest_fetches_since")
        with db.connection() as conn:
            while not stop.wait(PROGRESS_POLL_S):
                done = conn.execute(query, {"hour": hour, "since": since}).fetchone()[0]
                conn.commit()
                if done > bar.n:
                    bar.update(done - bar.n)

    with progress_bar(f"ingest {partition} (sources)", total) as bar:
        thread = threading.Thread(target=poll, args=(bar,), name="ingest-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=5)
