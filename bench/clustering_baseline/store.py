"""SQL side of clustering: every statement the passes run, batched, vectors never leave Postgres.

All functions take a connection that is inside the clustering transaction (see passes.py).
"""

from __future__ import annotations

import contextlib
import functools
from datetime import datetime, timedelta

import psycopg
from psycopg import sql as pgsql

from pathlib import Path

from newsdedup_dagster.embeddings.store import ModelInfo

_SQL = Path(__file__).resolve().parent / "sql"


class db:  # noqa: N801 - the named-query loader, reading this directory's copies
    @staticmethod
    @functools.cache
    def load_sql(name: str) -> str:
        return (_SQL / f"{name}.sql").read_text()

# Advisory-lock key: two clustering runs never overlap (held for the whole transaction).
CLUSTER_LOCK_KEY = 727_031


class ClusteringBusy(RuntimeError):
    """Another clustering run holds the lock longer than lock_timeout_s."""


@functools.cache
def _formatted(name: str, cast: str | None) -> pgsql.Composed:
    def expr(alias: str, column: str) -> pgsql.Composable:
        if cast is None:  # no cast: no index matches the ORDER BY, the planner must scan exactly
            return pgsql.SQL("{}").format(pgsql.Identifier(alias, column))
        return pgsql.SQL("({}::{})").format(pgsql.Identifier(alias, column), pgsql.SQL(cast))

    return pgsql.SQL(db.load_sql(name)).format(
        q_emb=expr("q", "embedding"), c_emb=expr("c", "embedding"), centroid=expr("s", "centroid")
    )


def query(name: str, info: ModelInfo, search: str = "hnsw") -> pgsql.Composed:
    """Named SQL with the model's index expression filled in (so the per-model HNSW index is used),
    or, with search="exact", plain expressions that no index serves (exact scan, for the bench)."""
    return _formatted(name, None if search == "exact" else info.cast)


@contextlib.contextmanager
def knn_plan(conn: psycopg.Connection, search: str):
    """search="hnsw": make every sort-based KNN plan a disabled one, so the planner walks the HNSW
    index (ordered scan + iterative scan) instead of a btree range + sort; its row estimates for
    per-item time windows are guesses (EXPLAIN on gnews: 56 estimated vs 11,108 actual) and it then
    picked a 141 ms exact scan per item. "auto" leaves the choice to the planner."""
    if search == "hnsw":
        conn.execute("SET LOCAL enable_sort = off")
    try:
        yield
    finally:
        if search == "hnsw":
            conn.execute("SET LOCAL enable_sort = on")


def begin_clustering(conn: psycopg.Connection, ef_search: int, lock_timeout_s: float) -> None:
    """Inside an explicit transaction: take the clustering lock, then the HNSW search settings.
    SET LOCAL dies with the transaction, so a pooled connection never carries them over."""
    conn.execute(pgsql.SQL("SET LOCAL lock_timeout = {}").format(pgsql.Literal(f"{int(lock_timeout_s * 1000)}ms")))
    try:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (CLUSTER_LOCK_KEY,))
    except psycopg.errors.LockNotAvailable as exc:
        raise ClusteringBusy(
            f"another clustering run held the lock for more than {lock_timeout_s:.0f}s; retry when it finishes"
        ) from exc
    conn.execute("SET LOCAL lock_timeout = 0")
    conn.execute(pgsql.SQL("SET LOCAL hnsw.ef_search = {}").format(pgsql.Literal(int(ef_search))))
    # Time filters with HNSW otherwise silently return fewer than k rows (design notes: 3.3 of 10).
    conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
    # Every clustering statement is index-driven. With stale statistics on the membership tables
    # (fresh database, first hours of a backfill) the planner probes `NOT EXISTS story_items` with a
    # sequential scan per candidate row: bench/clustering.py measured 0.43 s per KNN query that way.
    conn.execute("SET LOCAL enable_seqscan = off")


def undo_partition(conn: psycopg.Connection, info: ModelInfo, h: datetime) -> tuple[set[str], set[str]]:
    """Delete H's memberships and H's now-empty stories. Returns (stories that lost members and
    still exist, stories deleted)."""
    touched = {r[0] for r in conn.execute(db.load_sql("cluster_undo_partition"), {"h": h, "model": info.model})}
    deleted = {r[0] for r in conn.execute(db.load_sql("cluster_undo_stories"), {"h": h, "model": info.model})}
    return touched - deleted, deleted


def undo_later_partitions(conn: psycopg.Connection, info: ModelInfo, h: datetime) -> tuple[set[str], set[str]]:
    """Delete the clustering effects of every partition after H (memberships, then their emptied
    stories). Returns (stories that lost members and still exist, stories deleted)."""
    touched = {r[0] for r in conn.execute(db.load_sql("cluster_undo_later"), {"h": h, "model": info.model})}
    deleted = {r[0] for r in conn.execute(db.load_sql("cluster_undo_later_stories"), {"h": h, "model": info.model})}
    return touched - deleted, deleted


def new_items(conn: psycopg.Connection, info: ModelInfo, h: datetime) -> list[str]:
    rows = conn.execute(
        db.load_sql("cluster_new_items"), {"model": info.model, "h": h, "h_end": h + timedelta(hours=1)}
    ).fetchall()
    return [r[0] for r in rows]


def _batches(ids: list[str], size: int):
    for i in range(0, len(ids), max(1, size)):
        yield ids[i : i + size]


def _knn(conn, info: ModelInfo, name: str, ids: list[str], settings, params: dict) -> list[tuple]:
    """Run a KNN statement for ids in batches of batch_size (= ANY(%(ids)s) + JOIN LATERAL)."""
    statement = query(name, info, settings.search)
    out: list[tuple] = []
    with knn_plan(conn, settings.search):
        for chunk in _batches(ids, settings.batch_size):
            out.extend(conn.execute(statement, {**params, "ids": chunk}).fetchall())
    return out


def pass1_matches(conn, info: ModelInfo, h: datetime, ids: list[str], settings) -> list[tuple]:
    """[(item_id, story_id, sim, gap_hours, age_hours)] best gated match per item that has one."""
    return _knn(conn, info, "cluster_pass1_knn", ids, settings, {
        "model": info.model, "h": h, "k": settings.knn_k, "threshold": settings.story_threshold,
        "max_gap_s": settings.max_gap_hours * 3600.0, "max_age_s": settings.story_max_age_hours * 3600.0,
    })


def window_start(h: datetime, settings) -> datetime:
    """First partition of the pass-2 window: max_gap_hours before H (clamped for huge gaps)."""
    hours = min(float(settings.max_gap_hours), 24 * 365 * 50.0)
    return h - timedelta(hours=hours)


def pass2_edges(conn, info: ModelInfo, h: datetime, ids: list[str], settings) -> list[tuple[str, str, float]]:
    """[(item_id, neighbour_id, sim)] KNN edges >= item_threshold among the window's unassigned items."""
    return _knn(conn, info, "cluster_pass2_knn", ids, settings, {
        "model": info.model, "k": settings.knn_k, "threshold": settings.item_threshold,
        "window_start": window_start(h, settings), "h_end": h + timedelta(hours=1),
        "max_gap_s": settings.max_gap_hours * 3600.0,
    })


def attach(conn, h: datetime, rows: list[tuple]) -> None:
    """rows: (item_id, story_id, pass, sim, gap_hours, age_hours) -> story_items, one statement."""
    if not rows:
        return
    cols = list(zip(*rows))
    conn.execute(
        db.load_sql("cluster_attach"),
        {
            "h": h, "item_ids": list(cols[0]), "story_ids": list(cols[1]), "passes": list(cols[2]),
            "sims": list(cols[3]), "gaps": list(cols[4]), "ages": list(cols[5]),
        },
    )


def create_stories(conn, info: ModelInfo, h: datetime, stories: list[tuple[str, str]]) -> None:
    """stories: (story_id, founder_item_id)."""
    if not stories:
        return
    conn.execute(
        db.load_sql("cluster_create_stories"),
        {"model": info.model, "h": h, "story_ids": [s for s, _ in stories], "founders": [f for _, f in stories]},
    )


def recompute(conn, info: ModelInfo, story_ids, window: int) -> None:
    ids = sorted(set(story_ids))
    if ids:
        conn.execute(db.load_sql("cluster_recompute"), {"model": info.model, "ids": ids, "window": int(window)})


def published_at(conn, info: ModelInfo, ids: list[str]) -> dict[str, datetime]:
    rows = conn.execute(
        "SELECT item_id, published_at FROM item_embeddings WHERE model = %s AND item_id = ANY(%s)", (info.model, ids)
    ).fetchall()
    return dict(rows)


def nearest_centroids(conn, info: ModelInfo, ids: list[str], groups, batch_size: int) -> dict[str, tuple[int, float]]:
    """Pass 3's callback: {item_id: (index of the group whose centroid = avg of ALL its members is
    nearest, cosine)}; ties -> lowest index. Groups are this partition's new stories (few): the
    centroids are one materialised CTE, each item scans them."""
    if not ids or not groups:
        return {}
    gidx = [g for g, members in enumerate(groups) for _ in members]
    mids = [m for members in groups for m in members]
    out: dict[str, tuple[int, float]] = {}
    statement = db.load_sql("cluster_pass3_nearest")
    for chunk in _batches(sorted(ids), batch_size):
        rows = conn.execute(statement, {"model": info.model, "groups": gidx, "members": mids, "ids": chunk})
        for item, g, sim in rows:
            out[item] = (int(g), float(sim))
    return out
