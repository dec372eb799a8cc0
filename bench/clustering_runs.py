"""The timed clustering runs of bench/clustering.py, the same for both paths it compares.

The current path calls hour_runs in bench/clustering.py's process. The baseline path runs this
file as a script with a worktree of the baseline revision first on PYTHONPATH, so that
`newsdedup_dagster` (clustering, settings, guard, SQL files) is that revision's own code:

    PYTHONPATH=TREE python bench/clustering_runs.py --tree TREE --url URL --hour ISO MODE ...

It prints one JSON line. This file imports no `newsdedup_dagster` at module level and puts
nothing on sys.path, so the package it runs is whichever PYTHONPATH names.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from psycopg import sql as pgsql


def vacuum(conn) -> None:
    conn.autocommit = True
    try:
        conn.execute("VACUUM ANALYZE stories, story_items, story_decisions")
    finally:
        conn.autocommit = False


def reindex(conn, index: str) -> None:
    """Rebuild the centroid HNSW index in bulk, so each path starts from the same index (ANN results
    depend on the graph, and every run's inserts and deletes change it)."""
    conn.autocommit = True
    try:
        conn.execute(pgsql.SQL("REINDEX INDEX {}").format(pgsql.Identifier(index)))
    finally:
        conn.autocommit = False


def hour_runs(conn, run: Callable[[], object], undo: Callable[[], None], centroid_index: str, h: datetime,
              repeat: int) -> dict:
    """One warm-up run, then `repeat` timed first runs of H (undone in between, untimed) and one
    timed re-materialisation (undo + redo in the run's own transaction). `undo` takes H's
    clustering back out and commits, so the next run is a first run of the hour, as the hourly
    schedule makes it."""
    def first_run_state() -> None:
        undo()
        vacuum(conn)

    first_run_state()
    reindex(conn, centroid_index)
    first = run()
    seconds, details = [], []
    result = first
    for _ in range(repeat):
        first_run_state()
        t0 = time.perf_counter()
        result = run()
        seconds.append(time.perf_counter() - t0)
        details.append(result.timings)
    vacuum(conn)
    t0 = time.perf_counter()
    run()
    rerun = time.perf_counter() - t0
    members = conn.execute("SELECT item_id, story_id FROM story_items WHERE partition_hour = %s ORDER BY 1",
                           (h,)).fetchall()
    conn.commit()
    detail = {k: round(statistics.median(d.get(k, 0.0) for d in details), 3) for k in details[0]} if details else {}
    return {"seconds": round(statistics.median(seconds), 3) if seconds else None,
            "runs": [round(s, 3) for s in seconds], "detail": detail,
            "rerun_seconds": round(rerun, 3), "members": [list(m) for m in members],
            "first_run_seconds": round(first.seconds, 3),
            "stories": {"new": len(result.new_stories), "attached_pass1": result.attached,
                        "pass2_items": result.clustered_in_pass2, "pass3_items": result.attached_pass3,
                        "single": result.left_single, "edges": result.edges}}


# ------------------------------------------------------------------ the baseline revision's process
def revision_settings(model: str, current: dict) -> tuple[object, list[str]]:
    """The revision's ClusterSettings for `model` with every value it shares with the current
    settings (`current`: ClusterSettings.as_dict()) set to the current one, so both paths cluster
    with the same thresholds, k and gates. Returns (settings, current keys the revision lacks)."""
    from newsdedup_dagster.stages.clustering.settings import ClusterSettings, guard_defaults, settings_for

    known = {f.name for f in dataclasses.fields(ClusterSettings)} - {"guard"} | set(guard_defaults())
    shared = {k: v for k, v in current.items() if k in known}
    return settings_for(model, shared, env=False), sorted(set(current) - known)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("pass2_edges", "hour_runs"))
    parser.add_argument("--tree", type=Path, required=True, help="the worktree whose package must be imported")
    parser.add_argument("--url", required=True)
    parser.add_argument("--hour", required=True, type=datetime.fromisoformat)
    parser.add_argument("--settings", required=True, help="the current ClusterSettings.as_dict(), as JSON")
    parser.add_argument("--centroid-index", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    import newsdedup_dagster

    package = Path(newsdedup_dagster.__file__).resolve()
    if not package.is_relative_to(args.tree.resolve()):
        raise SystemExit(f"newsdedup_dagster was imported from {package.parent}, not from {args.tree}: "
                         "the baseline worktree must come first on PYTHONPATH")
    from pgvector.psycopg import register_vector

    from newsdedup_dagster.shared import db
    from newsdedup_dagster.stages.clustering import passes, store
    from newsdedup_dagster.stages.embeddings.store import active_model

    h = args.hour
    with db.connect(args.url) as conn:
        register_vector(conn)
        info = active_model(conn)
        conn.commit()
        settings, not_carried = revision_settings(info.model, json.loads(args.settings))
        out: dict = {"settings_the_revision_lacks": not_carried}
        if args.mode == "pass2_edges":  # H's pass-2 KNN edges before clustering H: a warm-up, then timed
            for _ in range(2):
                t0 = time.perf_counter()
                with conn.transaction():
                    store.begin_clustering(conn, settings.ef_search, 60)
                    rows = store.pass2_edges(conn, info, h, list(store.new_items(conn, info, h)), settings)
                out["seconds"] = round(time.perf_counter() - t0, 3)
            out["edges"] = sorted({(r[0], r[1]) for r in rows})
        else:
            def undo() -> None:
                with conn.transaction():
                    touched, _deleted = store.undo_partition(conn, info, h)
                    store.recompute(conn, info, touched, settings.centroid_window)

            out.update(hour_runs(conn, lambda: passes.cluster_partition(conn, info, h, settings), undo,
                                 args.centroid_index, h, args.repeat))
    print(json.dumps(out, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
