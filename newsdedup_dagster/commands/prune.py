"""`newsdedup prune [--dry-run] [--json]`: apply the retention settings (NEWSDEDUP_RETENTION_*)."""

from __future__ import annotations

import argparse
import json
import sys


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "prune", help="delete or thin data older than the retention settings (feed bodies, article texts, LLM "
                      "call detail, old item vectors, unused embedding cache, archived front pages)",
        description="Retention: archived feed bodies after NEWSDEDUP_RETENTION_FEED_BODY_DAYS (the fetch row stays), "
                    "article page texts after the same age (the row stays), "
                    "llm_calls detail after NEWSDEDUP_RETENTION_LLM_CALL_DAYS (daily totals kept), item vectors after "
                    "NEWSDEDUP_RETENTION_VECTOR_DAYS, embedding cache entries no item uses, the site's archived front pages "
                    "after NEWSDEDUP_RETENTION_ARCHIVE_DAYS (0 = kept for good, the default). The daily `prune` asset "
                    "does the same.")
    parser.add_argument("--dry-run", action="store_true", help="count what would go; change nothing")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from newsdedup_dagster import config  # deferred on purpose: fast --help
    from newsdedup_dagster.shared import db  # deferred on purpose: fast --help
    from newsdedup_dagster.shared.progress import progress_bar  # deferred on purpose: fast --help
    from newsdedup_dagster.stages.retention.prune import prune, table_sizes  # deferred on purpose: fast --help

    windows = config.clustering_settings(None)
    try:
        settings = config.retention_settings()
        with db.connection() as conn, progress_bar("prune (rows)") as bar:
            def on_batch(step: str, rows: int) -> None:
                bar.set_description(f"prune {step} (rows)")
                bar.update(rows)

            report = prune(conn, settings, dry_run=args.dry_run, on_batch=on_batch,
                           longest_vector_window_hours=max(windows.story_max_age_hours, windows.max_gap_hours))
            sizes = table_sizes(conn)
    except ValueError as exc:
        print(f"newsdedup prune: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({**report.as_dict(), "table_bytes": {k: v[0] for k, v in sizes.items()}}, indent=2))
        return 0
    verb = "would remove" if report.dry_run else "removed"
    print(f"prune as of {report.now:%Y-%m-%d %H:%M} UTC{' (dry run: nothing changed)' if report.dry_run else ''}")
    for step in report.steps:
        if step.cutoff is None:
            print(f"  {step.name:16s} kept forever (retention 0)")
        else:
            print(f"  {step.name:16s} {verb} {step.rows:>9,d} rows, {step.bytes / 1e6:>9.2f} MB "
                  f"(older than {step.cutoff:%Y-%m-%d %H:%M})")
    print(f"  database tables now {sum(v[0] for v in sizes.values()) / 1e6:.1f} MB on disk "
          "(space is reused after autovacuum; VACUUM FULL returns it to the OS)")
    return 0
