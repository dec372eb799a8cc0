"""SQL side of clustering: every statement the passes run, batched, vectors never leave Postgres.

All functions take a connection that is inside the clustering transaction (see passes.py).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

import psycopg
from psycopg import sql as pgsql
from psycopg.types.json import Jsonb

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.db.vectors import ModelInfo, create_index, index_build_memory

# Advisory-lock key: two clustering runs never overlap (held for the whole transaction).
CLUSTER_LOCK_KEY = 727_031


class ClusteringBusy(RuntimeError):
    """Another clustering run holds the lock longer than lock_timeout_s."""


@dataclass(frozen=True)
class Search:
    """What the store's statements take of the clustering settings: the KNN's breadth and bars, the
    time gates and window, the access path and the recent mirror's index. Built once per run from
    ClusterSettings (`Search.of`), so a value reaches the statement that uses it and nothing else."""

    knn_k: int
    story_bar: float  # pass 1 searches down to story_threshold - cross_language_margin
    item_bar: float  # pass 2 searches down to item_threshold - cross_language_margin
    max_gap_hours: float
    story_max_age_hours: float
    recent_margin_hours: float
    path: str  # "hnsw", "exact" or "auto" (the `search` setting)
    batch_size: int
    ef_search: int
    hnsw_m: int
    hnsw_ef_construction: int
    index_build_memory_mb: int

    @classmethod
    def of(cls, settings) -> Search:
        """From a ClusterSettings."""
        return cls(knn_k=settings.knn_k, story_bar=settings.story_threshold - settings.cross_language_margin,
                   item_bar=settings.item_threshold - settings.cross_language_margin,
                   max_gap_hours=float(settings.max_gap_hours), story_max_age_hours=float(settings.story_max_age_hours),
                   recent_margin_hours=float(settings.recent_margin_hours), path=settings.search,
                   batch_size=settings.batch_size, ef_search=settings.ef_search, hnsw_m=settings.hnsw_m,
                   hnsw_ef_construction=settings.hnsw_ef_construction,
                   index_build_memory_mb=settings.index_build_memory_mb)


@functools.cache
def _formatted(name: str, cast: str | None) -> pgsql.Composed:
    def expr(alias: str, column: str) -> pgsql.Composable:
        if cast is None:  # no cast: no index matches the ORDER BY, the planner must scan exactly
            return pgsql.SQL("{}").format(pgsql.Identifier(alias, column))
        return pgsql.SQL("({}::{})").format(pgsql.Identifier(alias, column), pgsql.SQL(cast))

    return pgsql.SQL(db.load_sql(name)).format(
        q_emb=expr("q", "embedding"), c_emb=expr("c", "embedding"), centroid=expr("s", "centroid"),
        # the centroid index covers searchable stories only (migration 035); an exact scan reads all
        searchable=pgsql.SQL("" if cast is None else "AND s.searchable"),
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
        db.set_local(conn, enable_sort="off")
    try:
        yield
    finally:
        if search == "hnsw":
            db.set_local(conn, enable_sort="on")


def begin_clustering(conn: psycopg.Connection, ef_search: int, lock_timeout_s: float) -> None:
    """Inside an explicit transaction: take the clustering lock, then the HNSW search settings.
    They die with the transaction (db.set_local), so a pooled connection never carries them over."""
    db.set_local(conn, lock_timeout=f"{int(lock_timeout_s * 1000)}ms")
    try:
        conn.execute(db.load_sql("advisory_xact_lock"), (CLUSTER_LOCK_KEY,))
    except psycopg.errors.LockNotAvailable as exc:
        raise ClusteringBusy(
            f"another clustering run held the lock for more than {lock_timeout_s:.0f}s; retry when it finishes"
        ) from exc
    db.set_local(conn, lock_timeout="0")
    search_settings(conn, ef_search)


def search_settings(conn: psycopg.Connection, ef_search: int) -> None:
    """The KNN statements' settings, for this transaction only."""
    db.set_local(
        conn, hnsw_ef_search=int(ef_search),
        # Time filters with HNSW otherwise silently return fewer than k rows (pgvector README,
        # "Iterative Index Scans": a filter applied after an ef_search-wide scan).
        hnsw_iterative_scan="relaxed_order",
        # Every clustering statement is index-driven. With stale statistics on the membership tables
        # (fresh database, first hours of a backfill) the planner probes `NOT EXISTS story_items` with
        # a sequential scan per candidate row: bench/clustering.py measured 0.43 s per KNN query that way.
        enable_seqscan="off")


@dataclass
class Undone:
    touched: set[str]     # stories that lost members and still exist
    deleted: set[str]     # stories deleted (no member left)
    freed: set[str]       # items whose memberships were removed


def undo_partition(conn: psycopg.Connection, info: ModelInfo, h: datetime) -> Undone:
    """Delete H's memberships and H's now-empty stories."""
    conn.execute(db.load_sql("cluster_undo_decisions"), {"h": h, "later": False})
    rows = conn.execute(db.load_sql("cluster_undo_partition"), {"h": h, "model": info.model}).fetchall()
    deleted = {r[0] for r in conn.execute(db.load_sql("cluster_undo_stories"), {"h": h, "model": info.model})}
    return Undone({r[0] for r in rows} - deleted, deleted, {r[1] for r in rows})


def undo_later_partitions(conn: psycopg.Connection, info: ModelInfo, h: datetime) -> Undone:
    """Delete the clustering effects of every partition after H (memberships, then their emptied
    stories)."""
    conn.execute(db.load_sql("cluster_undo_decisions"), {"h": h, "later": True})
    rows = conn.execute(db.load_sql("cluster_undo_later"), {"h": h, "model": info.model}).fetchall()
    deleted = {r[0] for r in conn.execute(db.load_sql("cluster_undo_later_stories"), {"h": h, "model": info.model})}
    return Undone({r[0] for r in rows} - deleted, deleted, {r[1] for r in rows})


def new_items(conn: psycopg.Connection, info: ModelInfo, h: datetime) -> dict[str, datetime]:
    """{item_id: published_at} of H's canonical embedded items not yet in a story (sorted by id)."""
    rows = conn.execute(
        db.load_sql("cluster_new_items"), {"model": info.model, "h": h, "h_end": h + timedelta(hours=1)}
    ).fetchall()
    return dict(rows)


def _batches(ids: list[str], size: int):
    for i in range(0, len(ids), max(1, size)):
        yield ids[i : i + size]


def _knn(conn, info: ModelInfo, name: str, ids: list[str], search: Search, params: dict,
         path: str | None = None) -> list[tuple]:
    """Run a KNN statement for ids (= ANY(%(ids)s) + JOIN LATERAL), batch_size ids per statement
    (the default holds an hour's items: one round trip). path: search.path unless given."""
    path = path or search.path
    statement = query(name, info, path)
    out: list[tuple] = []
    with knn_plan(conn, path):
        for chunk in _batches(ids, search.batch_size):
            out.extend(conn.execute(statement, {**params, "ids": chunk}).fetchall())
    return out


def pass1_matches(conn, info: ModelInfo, h: datetime, published: dict[str, datetime], search: Search) -> list[tuple]:
    """[(item_id, story_id, sim, gap_hours, age_hours)] best gated match per item that has one.
    published: {item_id: published_at}. Items published at least max_gap_hours after the searchable
    boundary (sync_stories) search the centroid index, which holds every story they could join;
    earlier ones (late entries, reruns of old hours) scan the stories of their gap window exactly.
    When no story could pass the time gates for any item (one btree probe), nothing is searched."""
    if not published:
        return []
    gap = timedelta(hours=search.max_gap_hours)
    candidate = conn.execute(db.load_sql("cluster_pass1_any_candidate"), {
        "model": info.model, "h": h, "lo": min(published.values()) - gap, "hi": max(published.values()) + gap,
    }).fetchone()
    if candidate is None:
        return []
    params = {
        # down to the cross-language bar: the caller keeps a match below story_threshold only for an
        # item that shares no language with the story and agrees with it (passes._anchor_check_attachments)
        "model": info.model, "h": h, "k": search.knn_k, "threshold": search.story_bar,
        "max_gap_s": search.max_gap_hours * 3600.0, "max_age_s": search.story_max_age_hours * 3600.0,
    }
    boundary = stories_boundary(conn, info)
    indexed = sorted(i for i, at in published.items() if boundary is None or at - gap >= boundary)
    late = sorted(set(published) - set(indexed))
    out = _knn(conn, info, "cluster_pass1_knn", indexed, search, params) if indexed else []
    if late:
        out += _knn(conn, info, "cluster_pass1_knn", late, search, params, path="exact")
    return sorted(out)


def stories_boundary(conn, info: ModelInfo) -> datetime | None:
    """Every story of the model whose latest item is at or after this is searchable (None: all)."""
    row = conn.execute(db.load_sql("cluster_recent_stories_from"), (info.model,)).fetchone()
    return row[0] if row else None


def sync_stories(conn, info: ModelInfo, h: datetime, search: Search) -> int:
    """Move the searchable boundary forward to H's pass-2 window minus the recent margin (never
    back: an older hour's items take the exact path in pass1_matches) and clear the flag of the
    stories behind it, so the centroid index holds the stories recent hours can join and the flag
    is a function of a story's latest time and the boundary. Returns the stories cleared."""
    target = recent_bounds(h, search)[1]
    current = stories_boundary(conn, info)
    if current is None or target > current:
        conn.execute(db.load_sql("cluster_recent_stories_from_set"), (target, info.model))
        current = target
    return conn.execute(  # stories_searchable_latest_idx: the searchable ones behind the boundary
        db.load_sql("cluster_unsearchable_behind"),
        (info.model, current)).rowcount


def window_start(h: datetime, search: Search) -> datetime:
    """First partition of the pass-2 window: max_gap_hours before H (clamped for huge gaps)."""
    hours = min(search.max_gap_hours, 24 * 365 * 50.0)
    return h - timedelta(hours=hours)


def pass2_edges(conn, info: ModelInfo, h: datetime, ids: list[str], search: Search,
                readers: list[SnapshotReader] | tuple = ()) -> list[tuple]:
    """[(item_id, neighbour_id, sim, neighbour_published_at)] KNN edges >= item_threshold minus
    cross_language_margin among the window's unassigned items (the caller keeps those below
    item_threshold only across languages, where the anchors agree: passes._anchor_check_edges),
    searched in cluster_recent_items (sync_recent must have run). With readers, the ids are shared
    out (at least KNN_SPLIT_MIN_ITEMS each) and searched at the same time."""
    params = {
        "model": info.model, "k": search.knn_k, "threshold": search.item_bar,
        "window_start": window_start(h, search), "h_end": h + timedelta(hours=1),
        "max_gap_s": search.max_gap_hours * 3600.0, "freed": [], "attached": [],
    }
    parts = min(len(readers) + 1, len(ids) // KNN_SPLIT_MIN_ITEMS)
    if parts < 2:
        return _knn(conn, info, "cluster_pass2_knn", ids, search, params)
    chunks = [ids[i::parts] for i in range(parts)]
    with ThreadPoolExecutor(max_workers=parts - 1, thread_name_prefix="pass2-knn") as pool:
        others = [pool.submit(reader.knn, info, "cluster_pass2_knn", chunk, search, params)
                  for reader, chunk in zip(readers, chunks[1:])]
        out = _knn(conn, info, "cluster_pass2_knn", chunks[0], search, params)
        for other in others:
            out += other.result()
    return out


# Fewer items than this per connection: one statement (a second connection's round trips and
# planning cost more than they save).
KNN_SPLIT_MIN_ITEMS = 32


class SnapshotReader:
    """A second connection that runs KNN statements on the snapshot the clustering transaction
    exported before its first change (so both see the same committed rows), told what that
    transaction has changed since in the membership filter: the items its undo freed and those its
    pass 1 attached. PostgreSQL runs one statement on one core; two connections use two.
    Read-only; its transaction ends with close()."""

    def __init__(self, connect: Callable[[], psycopg.Connection], snapshot: str, search: Search,
                 freed: set[str], attached: set[str]) -> None:
        self.freed, self.attached = sorted(freed), sorted(attached)
        self.conn = connect()
        try:
            self.conn.execute(db.load_sql("snapshot_reader_begin"))
            db.set_transaction_snapshot(self.conn, snapshot)
            search_settings(self.conn, search.ef_search)
        except Exception:
            self.conn.close()
            raise

    def knn(self, info: ModelInfo, name: str, ids: list[str], search: Search, params: dict) -> list[tuple]:
        changed = {**params, "freed": self.freed, "attached": self.attached}
        return _knn(self.conn, info, name, ids, search, changed)

    def close(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self.conn.rollback()
        self.conn.close()


# ------------------------------------------------------------------ the recent-vector window
def recent_bounds(h: datetime, search: Search) -> tuple[datetime, datetime]:
    """(the oldest partition H's pass 2 reads, where the mirror may be pruned to after H)."""
    start = window_start(h, search)
    return start, start - timedelta(hours=search.recent_margin_hours)


def sync_recent(conn, info: ModelInfo, h: datetime, search: Search) -> dict[str, int]:
    """Make cluster_recent_items hold every item_embeddings row of the model from H's pass-2 window
    on (migration 033 keeps later writes mirrored), then prune what the newest window no longer
    needs. Older hours are loaded only when a run reaches before the boundary (first run, or an
    out-of-order rerun); pruning only ever moves the boundary forward to H's window minus a margin,
    so re-running the last hours costs nothing. Then the mirror's HNSW index, built once in bulk."""
    need, prune_to = recent_bounds(h, search)
    row = conn.execute(db.load_sql("cluster_recent_from_lock"),
                       (info.model,)).fetchone()
    loaded = pruned = 0
    if row is None or need < row[0]:
        upper = row[0] if row else None
        conn.execute(db.load_sql("cluster_recent_state_set"), {"model": info.model, "recent_from": need})
        loaded = conn.execute(db.load_sql("cluster_recent_load"),
                              {"model": info.model, "lo": need, "hi": upper}).rowcount
    elif prune_to > row[0]:
        conn.execute(db.load_sql("cluster_recent_state_set"), {"model": info.model, "recent_from": prune_to})
        pruned = conn.execute(
            db.load_sql("cluster_recent_prune"), (info.model, prune_to)
        ).rowcount
    ensure_recent_index(conn, info, search)
    return {"loaded": loaded, "pruned": pruned}


def recent_index_name(model: str) -> str:
    return f"cluster_recent_items_hnsw_{hashlib.sha1(model.encode()).hexdigest()[:10]}"


def ensure_recent_index(conn, info: ModelInfo, search: Search) -> None:
    """Per-model partial HNSW expression index on the mirror, the same expression as item_embeddings'
    (so query() fills both). Created after the first load: a bulk build, not row-by-row inserts."""
    name = recent_index_name(info.model)
    if conn.execute(db.load_sql("index_exists"), (name,)).fetchone():
        return
    index_build_memory(conn, search.index_build_memory_mb)
    create_index(conn, info, name, "cluster_recent_items", "embedding", search.hnsw_m, search.hnsw_ef_construction)


def attach(conn, h: datetime, rows: list[tuple]) -> None:
    """rows: (item_id, story_id, pass, sim, gap_hours, age_hours, via_item_id, threshold) ->
    story_items, one statement."""
    if not rows:
        return
    cols = list(zip(*rows))
    conn.execute(
        db.load_sql("cluster_attach"),
        {
            "h": h, "item_ids": list(cols[0]), "story_ids": list(cols[1]), "passes": list(cols[2]),
            "sims": list(cols[3]), "gaps": list(cols[4]), "ages": list(cols[5]),
            "vias": list(cols[6]), "thresholds": list(cols[7]),
        },
    )


def record_decisions(conn, h: datetime, edges: list, cut_groups: list) -> None:
    """Pass-2 explanation of H (decisions.EdgeRecord / CutGroup): one story_decisions row per story."""
    by_story: dict[str, tuple[list, list]] = {}
    for e in edges:
        by_story.setdefault(e.story_id, ([], []))[0].append(
            [e.item_a, e.item_b, round(e.similarity, 6), e.directions, e.kept, e.cut_group])
    for c in cut_groups:
        by_story.setdefault(c.story_id, ([], []))[1].append([c.cut_group, list(c.item_ids), c.became_story_id])
    if not by_story:
        return
    ids = sorted(by_story)
    conn.execute(db.load_sql("cluster_record_decisions"), {
        "h": h, "story_ids": ids,
        "edges": [Jsonb(by_story[i][0]) for i in ids], "cut_groups": [Jsonb(by_story[i][1]) for i in ids],
    })


def create_stories(conn, info: ModelInfo, h: datetime, stories: list[tuple[str, list[str]]], window: int) -> set[str]:
    """stories: (story_id, member ids) founded by H, inserted with their aggregates. Returns the ids
    that already existed (a story H founded that later hours extended): recompute those."""
    if not stories:
        return set()
    rows = conn.execute(db.load_sql("cluster_create_stories"), {
        "model": info.model, "h": h, "window": int(window),
        "member_story_ids": [sid for sid, members in stories for _ in members],
        "member_ids": [m for _, members in stories for m in members],
    }).fetchall()
    return {sid for sid, existed in rows if existed}


def recompute(conn, info: ModelInfo, story_ids, window: int) -> None:
    ids = sorted(set(story_ids))
    if ids:
        conn.execute(db.load_sql("cluster_recompute"), {"model": info.model, "ids": ids, "window": int(window)})


def published_at(conn, info: ModelInfo, ids: list[str]) -> dict[str, datetime]:
    rows = conn.execute(
        db.load_sql("cluster_item_published"), (info.model, ids)
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


def item_texts(conn, ids) -> dict[str, tuple[str, str, str | None]]:
    """{item_id: (title, summary, lang)}: what the anchor check reads (shared/text/anchors.py)."""
    ids = sorted(set(ids))
    if not ids:
        return {}
    rows = conn.execute(db.load_sql("cluster_item_texts"), {"ids": ids}).fetchall()
    return {i: (title or "", summary or "", lang) for i, title, summary, lang in rows}




def record_vetoes(conn, h: datetime, vetoes: dict[str, list[list]]) -> None:
    """{story_id: [veto row, ...]} -> story_decisions.vetoes of H (migration 075)."""
    ids = sorted(s for s, rows in vetoes.items() if rows)
    if ids:
        conn.execute(db.load_sql("cluster_record_vetoes"), {
            "h": h, "story_ids": ids, "vetoes": [Jsonb(vetoes[i]) for i in ids]})
