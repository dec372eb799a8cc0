"""The clustering path before the single-statement KNN, recent-window table and merge explanations:
kept verbatim (SQL in ./sql) so bench/clustering.py can time it against the current code in the same
run. Not used by the pipeline.

Two-pass story clustering of one hourly partition H (the published method, in SQL, batched).

  undo    H's earlier effects (idempotent re-materialisation), same transaction
  pass 1  H's new canonical items -> KNN on story centroids, gated by similarity, gap and age
  pass 2  still-unassigned items of H -> KNN among the window's unassigned items (edges >=
          item_threshold), UnionFind + chaining guard (Louvain split, clustering/guard.py) on the
          raw directed KNN triples, components >= 2 with an item of H -> stories
  pass 3  H's items still alone -> the best story founded in pass 2 of H, if cosine to the centroid
          of all its members >= story_threshold (and the pass-1 time gates hold)
  after   centroid (avg of the 3 most recent members), first/latest published, representative, in SQL

Everything runs in one transaction under an advisory lock; Python sees ids and similarities only.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

import psycopg

from newsdedup_dagster.clustering.settings import ClusterSettings
from newsdedup_dagster.clustering.unionfind import UnionFind
from newsdedup_dagster.embeddings.store import ModelInfo

from . import store

log = logging.getLogger(__name__)

Edge = tuple[str, str, float]


# ------------------------------------------------------------------ pure helpers
def story_id_for(model: str, founder_item_id: str) -> str:
    """Deterministic story id derived from the founding item (and the model: two models' stories
    never collide)."""
    return "st_" + hashlib.sha256(f"{model}\x1f{founder_item_id}".encode()).hexdigest()[:24]


def undirected(edges: Iterable[Edge]) -> dict[tuple[str, str], float]:
    """{(a, b) with a < b: best similarity} -- KNN returns each pair from both ends."""
    out: dict[tuple[str, str], float] = {}
    for a, b, sim in edges:
        if a == b:
            continue
        key = (a, b) if a < b else (b, a)
        if sim > out.get(key, -2.0):
            out[key] = float(sim)
    return out


def plain_components(nodes: Iterable[str], edges, params: dict) -> list[list[str]]:
    """The published method's pass 2: UnionFind over every edge (single linkage, no guard). edges: directed
    triples (a, b, sim) or {(a, b): sim}."""
    pairs = edges if isinstance(edges, dict) else undirected(edges)
    uf: UnionFind[str] = UnionFind(nodes)
    for (a, b) in sorted(pairs):
        uf.union(a, b)
    return uf.components(min_size=1)


def guarded_components_fn() -> Callable[[list[str], list[Edge], dict], list[list[str]]]:
    """The chaining guard from clustering/guard.py when present, else plain UnionFind."""
    try:
        from newsdedup_dagster.clustering import guard
    except ImportError:
        return plain_components
    fn = getattr(guard, "guarded_components", None)
    return fn if fn is not None else plain_components


@dataclass
class NewStory:
    story_id: str
    founder: str
    members: list[str]
    # member -> (best in-component similarity, that neighbour)
    best: dict[str, tuple[float, str]]


def pass2_stories(
    model: str,
    h_items: set[str],
    raw_edges: list[Edge] | dict[tuple[str, str], float],
    founder_key: Callable[[str], object],
    components: Callable[[list[str], list[Edge], dict], list[list[str]]] = plain_components,
    params: dict | None = None,
) -> list[NewStory]:
    """Components (after the guard) of >= 2 items that contain at least one item of H become
    stories. raw_edges: the directed KNN triples as the database returned them; the guard gets
    them as they are (a pair found from both ends, i.e. mutual neighbours, weighs double: gnews e5
    centred F1 0.862 vs 0.842 with one weight per pair, clustering/guard.py). Deterministic: nodes
    and edges sorted, founder = min(founder_key)."""
    if isinstance(raw_edges, dict):  # {(a, b): sim}: one direction per pair
        raw_edges = [(a, b, sim) for (a, b), sim in raw_edges.items()]
    raw_edges = sorted((a, b, float(sim)) for a, b, sim in raw_edges if a != b)
    edges = undirected(raw_edges)
    nodes = sorted({n for pair in edges for n in pair})
    groups = components(nodes, raw_edges, params or {})
    out: list[NewStory] = []
    for group in groups:
        members = sorted(set(group))
        if len(members) < 2 or not (h_items & set(members)):
            continue
        inside = set(members)
        best: dict[str, tuple[float, str]] = {}
        for (a, b), sim in edges.items():
            if a in inside and b in inside:
                for x, y in ((a, b), (b, a)):
                    # higher similarity wins; equal similarity -> smaller neighbour id (stable)
                    if x not in best or sim > best[x][0] or (sim == best[x][0] and y < best[x][1]):
                        best[x] = (sim, y)
        if any(m not in best for m in members):
            # A guard returned a group that is not connected by kept edges: refuse it rather than
            # store a story the "connected at the threshold" check would flag.
            log.warning("pass 2: dropping a component with a member that has no in-component edge")
            continue
        founder = min(members, key=founder_key)
        out.append(NewStory(story_id_for(model, founder), founder, members, best))
    out.sort(key=lambda s: s.story_id)
    return out


# ------------------------------------------------------------------ orchestration
@dataclass
class ClusterResult:
    partition: datetime
    model: str
    new_items: int = 0
    attached: int = 0                       # pass 1 attachments
    new_stories: list[str] = field(default_factory=list)
    updated_stories: list[str] = field(default_factory=list)   # older stories that gained items
    clustered_in_pass2: int = 0             # items (of H and of the window) put in new stories
    attached_pass3: int = 0                 # H's leftovers attached to H's new stories (pass 3)
    left_single: int = 0                    # H's items in no story after both passes
    undone_stories: int = 0                 # stories deleted by the undo step (re-materialisation)
    later_stories_removed: int = 0          # stories of later partitions removed (later_partitions=reset)
    edges: int = 0
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)


def cluster_partition(
    conn: psycopg.Connection,
    info: ModelInfo,
    h: datetime,
    settings: ClusterSettings,
) -> ClusterResult:
    """Cluster partition H (start of the hour, UTC) in one transaction. Idempotent."""
    t0 = time.perf_counter()
    result = ClusterResult(partition=h, model=info.model)
    timings = result.timings
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.commit()
    components_fn = guarded_components_fn()
    with conn.transaction():
        store.begin_clustering(conn, settings.ef_search, settings.lock_timeout_s)
        mark = time.perf_counter()
        later_touched: set[str] = set()
        if settings.later_partitions == "reset":
            later_touched, later_deleted = store.undo_later_partitions(conn, info, h)
            result.later_stories_removed = len(later_deleted)
        touched_old, deleted = store.undo_partition(conn, info, h)
        touched_old = (touched_old | later_touched) - deleted
        result.undone_stories = len(deleted)
        # Stories that lost H's members get their pre-H centroid / latest time back *before* pass 1
        # compares anything with them (else a rerun would match against its own previous result).
        store.recompute(conn, info, touched_old, settings.centroid_window)
        ids = store.new_items(conn, info, h)
        result.new_items = len(ids)
        timings["undo"] = time.perf_counter() - mark

        # ---- pass 1
        mark = time.perf_counter()
        matches = store.pass1_matches(conn, info, h, ids, settings) if ids else []
        store.attach(conn, h, [(i, s, 1, sim, gap, age) for i, s, sim, gap, age in matches])
        attached_to = {s for _, s, *_ in matches}
        result.attached = len(matches)
        timings["pass1"] = time.perf_counter() - mark

        # ---- pass 2
        mark = time.perf_counter()
        assigned = {m[0] for m in matches}
        remaining = [i for i in ids if i not in assigned]
        raw = store.pass2_edges(conn, info, h, remaining, settings) if remaining else []
        # One hop: the window's old items that H's items reach get their own neighbourhoods too,
        # so the guard judges a component on all its known edges, not only those touching H.
        hop = sorted({n for _, n, _ in raw} - set(remaining)) if settings.pass2_expand else []
        if hop:
            raw += store.pass2_edges(conn, info, h, hop, settings)
        edges = undirected(raw)
        result.edges = len(edges)
        nodes = sorted({n for pair in edges for n in pair} | set(remaining))
        published = store.published_at(conn, info, nodes) if nodes else {}
        stories = pass2_stories(
            info.model, set(remaining), raw,
            founder_key=lambda i: (published[i], i),
            components=components_fn, params=settings.guard,
        )
        timings["pass2"] = time.perf_counter() - mark

        mark = time.perf_counter()
        store.create_stories(conn, info, h, [(s.story_id, s.founder) for s in stories])
        rows = []
        for s in stories:
            first = published[s.founder]
            for m in s.members:
                sim, neighbour = s.best[m]
                gap = abs((published[m] - published[neighbour]).total_seconds()) / 3600.0
                age = (published[m] - first).total_seconds() / 3600.0
                rows.append((m, s.story_id, 2, sim, gap, age))
        store.attach(conn, h, rows)
        result.new_stories = [s.story_id for s in stories]
        result.clustered_in_pass2 = len(rows)
        timings["write_members"] = time.perf_counter() - mark
        in_new = {r[0] for r in rows}

        # ---- pass 3
        mark = time.perf_counter()
        leftovers = [i for i in remaining if i not in in_new]
        if settings.pass3 and stories and leftovers:
            rows3 = pass3_rows(conn, info, stories, leftovers, published, settings)
            store.attach(conn, h, rows3)
            in_new |= {r[0] for r in rows3}
            result.attached_pass3 = len(rows3)
        timings["pass3"] = time.perf_counter() - mark
        result.left_single = sum(1 for i in remaining if i not in in_new)
        store.recompute(conn, info, touched_old | attached_to | set(result.new_stories), settings.centroid_window)
        result.updated_stories = sorted(attached_to - set(result.new_stories))
        timings["write"] = time.perf_counter() - mark
    result.seconds = time.perf_counter() - t0
    return result


def pass3_rows(conn: psycopg.Connection, info: ModelInfo, stories: list[NewStory], leftovers: list[str],
               published: dict[str, datetime], settings: ClusterSettings) -> list[tuple]:
    """Pass 3 (guard.attach_leftovers with the centroids in SQL): H's items left alone by pass 2 join
    the nearest story founded by this pass 2 when cosine(item, avg of all its pass-2 members) >=
    story_threshold and the pass-1 gates (gap to the story's latest item, story age) hold.
    Returns story_items rows (item, story, 3, cosine, gap_hours, age_hours)."""
    from newsdedup_dagster.clustering.guard import attach_leftovers

    groups = [s.members for s in stories]
    sims: dict[str, tuple[int, float]] = {}

    def nearest(items, gs):  # the NearestCentroidFn of guard.py, answered in SQL
        sims.update(store.nearest_centroids(conn, info, list(items), gs, settings.batch_size))
        return sims

    best = attach_leftovers(leftovers, groups, nearest, settings.story_threshold)
    rows = []
    for item, g in sorted(best.items()):
        members = groups[g]
        first = min(published[m] for m in members)
        latest = max(published[m] for m in members)
        gap = abs((published[item] - latest).total_seconds()) / 3600.0
        age = (published[item] - first).total_seconds() / 3600.0
        if gap > settings.max_gap_hours or age > settings.story_max_age_hours:
            continue
        rows.append((item, stories[g].story_id, 3, sims[item][1], gap, age))
    return rows
