"""Clustering benchmark: one 500-item hour against a 100k-item window, with and without months of history.

The default pipeline: e5 (multilingual-e5-small q4, 384 dims), vectors centred per language, pass 1 +
pass 2 with the Louvain guard + pass 3, the e5 thresholds (stages/clustering/settings.py). Two databases,
each measured in its own process (so its peak RSS is its own), in one run:
  window   the window (default 100,000 items over the 36 hours before H) and H's 500 new items
  history  the same window and hour plus --history items (default 1,000,000) over the 90 days
           before the window, all in stories (one per topic), as a deployment holds after months
Per database, the same hour H is clustered by
  baseline the clustering code before the recent-window table, single-statement KNN and merge
           explanations: the repository at BASELINE_REVISION, checked out by this run into a
           temporary git worktree and run in a process of its own with that worktree first on
           PYTHONPATH (bench/clustering_runs.py), so its clustering, settings, guard and SQL are
           that revision's; it clusters with the current settings' values (thresholds, k, gates)
  current  newsdedup_dagster.stages.clustering as it is
in two situations (each timed as a first run of the hour, the median of --repeat, plus one
re-materialisation, whose undo step a first run does not have):
  worst case  no stories in the window: pass 1 attaches nothing, all 500 items search the window
  pass 1      half the window's topics are stories (one per topic): pass 1 attaches those
              items, the rest go through pass 2 among the unassigned half
and reports per-hour seconds, current / baseline ratios, whether both paths built the same stories,
pass-2 edge recall of both paths against exact search (numpy, over the window), pass-1 agreement of
HNSW with an exact scan, and the Python peak RSS.

Vectors are structured, not uniform: super-topics -> topics -> items, shaped like centred e5 (itn
pair cosines: same subject median 0.45, different subject p99 0.32; stages/clustering/settings.py). The
history's topics are other children of the same super-topics (recurring themes: a query's
neighbourhood in the full graph is full of old items of sibling topics), each topic within ±12 h.

The history database takes a long time to build (1.1M vectors, HNSW over all of them): --keep-db
keeps both databases on the embedded server between runs (rebuilt only when the parameters change).
The baseline needs the repository's history (a shallow clone lacks BASELINE_REVISION: `git fetch
--unshallow`); --no-baseline measures the current path alone.

    nice -n 5 .venv/bin/python bench/clustering.py --keep-db            # window and 1M history
    .venv/bin/python bench/clustering.py --history 0 --window 10000      # quick
    .venv/bin/python bench/clustering.py --history 0 --window 5000 --search exact   # same stories?
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from clustering_runs import hour_runs as timed_hour_runs, vacuum
from common import REPO, peak_rss_mb
from psycopg import sql as pgsql

from newsdedup_dagster.evaluation.clustering import temporary_database
from newsdedup_dagster.shared import db
from newsdedup_dagster.stages.clustering import store
from newsdedup_dagster.stages.clustering.passes import cluster_partition
from newsdedup_dagster.stages.clustering.settings import settings_for
from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings
from newsdedup_dagster.stages.embeddings.store import active_model, ensure_centroid_index, ensure_model

DIMS = 384
NEW_PER_HOUR = 500
H = datetime(2026, 11, 10, 0, tzinfo=UTC)
MODEL = "e5:multilingual-e5-small-q4"
LAYOUT_VERSION = 3  # bump when the generated data changes: kept databases are rebuilt
# The parent of the commit that gave pass 2 the recent-vector window, one KNN statement and merge decisions.
BASELINE_REVISION = "41d607488fb981e3a3f75a4fc7222463139a9f67"


class SyntheticEmbedder:
    """Registers as the default model, so settings_for gives its thresholds, guard and pass 3."""

    provider = "e5"
    model_id = MODEL
    dims = DIMS


def unit(m):
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


class Generator:
    """Super-topics -> topics -> items, deterministic (seeded), shaped like centred e5 vectors.

    Per-dimension noise s on a unit vector in 384 dims has norm r = s * sqrt(384), and two draws
    around one centre meet at cosine ~ 1 / (1 + r^2):
      topic spread 0.046 -> r 0.90 -> sibling topics (one super-topic) near cosine 0.55
      item noise 0.040-0.065 -> r 0.78-1.27 -> items of one topic 0.38-0.62 (median ~0.47)
    so items of sibling topics sit near 0.25-0.35 and some cross the 0.40 threshold: the chaining
    the guard exists for, and neighbours an ANN index can confuse.
    """

    def __init__(self, n_items: int, seed: int = 7):
        self.rng = np.random.default_rng(seed)
        n_topics = max(50, n_items // 20)
        n_super = max(10, n_topics // 10)
        self.supers = unit(self.rng.standard_normal((n_super, DIMS)))
        self.parent = self.rng.integers(0, n_super, n_topics)
        self.topics = unit(self.supers[self.parent] + 0.046 * self.rng.standard_normal((n_topics, DIMS)))
        self.sigma = self.rng.uniform(0.040, 0.065, n_topics)
        # raw = centred + a shared language component (what centring removed), for row width only
        self.language_mean = unit(self.rng.standard_normal((1, DIMS)))[0] * 2.0

    def items(self, n: int, rng=None, topics=None, sigma=None, t=None) -> tuple[np.ndarray, np.ndarray]:
        rng = rng if rng is not None else self.rng
        topics = self.topics if topics is None else topics
        sigma = self.sigma if sigma is None else sigma
        t = rng.integers(0, len(topics), n) if t is None else t
        noise = rng.standard_normal((n, DIMS)) * sigma[t][:, None]
        return unit(topics[t] + noise), t

    def raw(self, centred: np.ndarray) -> np.ndarray:
        return unit(centred + self.language_mean)

    def cosine_profile(self, n: int = 1500) -> dict:
        v, t = self.items(n, rng=np.random.default_rng(99))
        sims = v @ v.T
        iu = np.triu_indices(n, 1)
        same = t[iu[0]] == t[iu[1]]
        sib = (self.parent[t[iu[0]]] == self.parent[t[iu[1]]]) & ~same
        s = sims[iu]
        return {"same_topic_median": round(float(np.median(s[same])), 3) if same.any() else None,
                "sibling_topic_median": round(float(np.median(s[sib])), 3) if sib.any() else None,
                "different_topic_p99": round(float(np.quantile(s[~same], 0.99)), 3),
                "different_topic_share_ge_0.40": round(float((s[~same] >= 0.40).mean()), 5)}


# ------------------------------------------------------------------ building a database
def copy_rows(conn, rows: list[tuple], vectors: np.ndarray, raws: np.ndarray | None) -> None:
    """rows: (item_id, title, published_at, partition_hour) -> items and item_embeddings (binary COPY)."""
    with conn.transaction():
        with conn.cursor().copy(
            "COPY items (id, canonical_url, url, title, lang, published_at, partition_hour, source_id) FROM STDIN"
        ) as copy:
            for item_id, title, published, hour in rows:
                copy.write_row((item_id, f"bench://{item_id}", f"bench://{item_id}", title, "en", published, hour, "b"))
        with conn.cursor().copy(
            "COPY item_embeddings (item_id, model, text_hash, embedding, raw_embedding, partition_hour, published_at)"
            " FROM STDIN WITH (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["text", "text", "text", "vector", "vector", "timestamptz", "timestamptz"])
            for n, (item_id, _title, published, hour) in enumerate(rows):
                copy.write_row((item_id, MODEL, item_id, vectors[n], None if raws is None else raws[n], hour, published))


def build(conn, window: int, window_hours: int, history: int, history_days: int, m: int, efc: int,
          item_index: bool = True) -> dict:
    """Window + H (as the original bench), then the history; stories for the history; indexes."""
    from pgvector.psycopg import register_vector

    register_vector(conn)
    conn.commit()
    timings = {}
    t0 = time.perf_counter()
    with conn.transaction():
        conn.execute("INSERT INTO sources (id, name, feed_url, language) VALUES ('b', 'b', 'bench://b', 'en')")
        conn.execute("INSERT INTO embedding_models (model, provider, dims, index_type, centring)"
                     " VALUES (%s, 'e5', %s, 'vector', true)", (MODEL, DIMS))
    gen = Generator(window + NEW_PER_HOUR)
    specs = [(n, H - timedelta(hours=1 + (n % window_hours))) for n in range(window)]
    specs += [(window + n, H) for n in range(NEW_PER_HOUR)]
    for start in range(0, len(specs), 5000):
        part = specs[start : start + 5000]
        vectors, topics = gen.items(len(part))
        rows = [(f"i{n:07d}", f"item {n} topic {t}", hour + timedelta(seconds=(n * 37) % 3600), hour)
                for (n, hour), t in zip(part, topics)]
        copy_rows(conn, rows, vectors, gen.raw(vectors))
    timings["load_window_s"] = round(time.perf_counter() - t0, 1)
    if history:
        t0 = time.perf_counter()
        rng = np.random.default_rng(8)
        n_topics = max(50, history // 20)
        parent = rng.integers(0, len(gen.supers), n_topics)
        topics = unit(gen.supers[parent] + 0.046 * rng.standard_normal((n_topics, DIMS)))
        sigma = rng.uniform(0.040, 0.065, n_topics)
        end = H - timedelta(hours=window_hours + 12)  # every history topic ends before the window
        span_s = (history_days * 24 - window_hours - 24) * 3600
        centre = end - timedelta(hours=12) - np.array([timedelta(seconds=float(x)) for x in rng.uniform(0, span_s, n_topics)])
        for start in range(0, history, 5000):
            count = min(5000, history - start)
            t = rng.integers(0, n_topics, count)
            vectors, _ = gen.items(count, rng=rng, topics=topics, sigma=sigma, t=t)
            offsets = rng.uniform(-12 * 3600, 12 * 3600, count)
            rows = []
            for k in range(count):
                published = centre[t[k]] + timedelta(seconds=float(offsets[k]))
                rows.append((f"h{start + k:07d}", f"item {start + k} topic h{t[k]}", published,
                             published.replace(minute=0, second=0, microsecond=0)))
            copy_rows(conn, rows, vectors, None)  # history rows: no raw vector (never read by clustering)
        timings["load_history_s"] = round(time.perf_counter() - t0, 1)
        t0 = time.perf_counter()
        with conn.transaction():  # one story per history topic, as months of hourly runs leave them
            conn.execute(load_bench_sql("stories_for_topics"), {"prefix": "bh_", "pattern": "h%", "model": MODEL,
                                                                "half": False})
        timings["history_stories_s"] = round(time.perf_counter() - t0, 1)
    t0 = time.perf_counter()
    conn.execute("ANALYZE")
    conn.commit()
    # The per-model HNSW indexes (embeddings/store.ensure_indexes), built here with enough memory for
    # 1.1M rows (the default 256 MB spills to disk and takes hours); ensure_model then finds them.

    with conn.transaction():
        db.set_local(conn, maintenance_work_mem="2GB")
        info = vectors.ModelInfo(MODEL, "e5", DIMS, "vector", True)
        tables = (("item_embeddings", "embedding"),) if item_index else ()
        for table, column in tables:
            vectors.create_index(conn, info, vectors.hnsw_index_name(table, MODEL), table, column, m, efc)
    # The centroid index: ensure_indexes (re)builds it with the measured parameters (measure()).
    timings["index_build_s"] = round(time.perf_counter() - t0, 1)
    return timings


def load_bench_sql(name: str) -> str:
    return BENCH_SQL[name]


BENCH_SQL = {
    # stories from the generator's topics (title "item N topic T"): members, centroid = avg of all
    "stories_for_topics": """
        WITH members AS (
            SELECT e.item_id, e.embedding, e.published_at, e.partition_hour, split_part(i.title, ' ', 4) AS topic
              FROM item_embeddings e JOIN items i ON i.id = e.item_id
             WHERE e.model = %(model)s AND e.item_id LIKE %(pattern)s
        ), topics AS (
            SELECT topic, count(*) AS n, avg(embedding) AS centroid, min(published_at) AS first_pub,
                   max(published_at) AS latest_pub, min(partition_hour) AS created, max(partition_hour) AS updated,
                   min(item_id) AS representative
              FROM members
             WHERE NOT %(half)s OR (ltrim(topic, 'h')::int %% 2 = 0)
             GROUP BY topic HAVING count(*) >= 2
        ), made AS (
            INSERT INTO stories (id, model, created_partition, updated_partition, first_published_at,
                                 latest_published_at, centroid, item_count, representative_item_id, needs_score)
            SELECT %(prefix)s || topic, %(model)s, created, updated, first_pub, latest_pub, centroid, n, representative, 0
              FROM topics
            RETURNING id
        )
        INSERT INTO story_items (item_id, story_id, pass, similarity, partition_hour)
        SELECT m.item_id, %(prefix)s || m.topic, 2, 1.0, m.partition_hour
          FROM members m JOIN topics t ON t.topic = m.topic
    """,
}


@contextlib.contextmanager
def bench_database(window: int, window_hours: int, history: int, history_days: int, m: int, efc: int, keep: bool,
                   item_index: bool = True):
    """(url, build timings): a kept database when --keep-db and it was completed before."""
    if not keep:
        with temporary_database() as url:
            with db.connect(url) as conn:
                timings = build(conn, window, window_hours, history, history_days, m, efc, item_index)
            yield url, timings
        return
    base = db.app_database_url()
    name = (f"newsdedup_bench_w{window}_x{window_hours}_h{history}_d{history_days}_m{m}_{efc}"
            f"{'' if item_index else '_noidx'}_v{LAYOUT_VERSION}")
    url = db.with_database(base, name)
    with db.connect(base, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    if exists:
        with db.connect(url) as conn:
            done = conn.execute("SELECT to_regclass('bench_meta') IS NOT NULL").fetchone()[0]
            timings = json.loads(conn.execute("SELECT timings FROM bench_meta").fetchone()[0]) if done else None
            conn.commit()
        if timings is not None:
            db.migrate(url)  # a kept database moves to the current schema like any deployment
            timings["reused"] = True
            yield url, timings
            return
        with db.connect(base, autocommit=True) as admin:
            admin.execute(pgsql.SQL("DROP DATABASE {} WITH (FORCE)").format(pgsql.Identifier(name)))
    with db.connect(base, autocommit=True) as admin:
        admin.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(name)))
    db.migrate(url)
    with db.connect(url) as conn:
        timings = build(conn, window, window_hours, history, history_days, m, efc, item_index)
        conn.execute("CREATE TABLE bench_meta (timings text)")
        conn.execute("INSERT INTO bench_meta VALUES (%s)", (json.dumps(timings),))
        conn.commit()
    yield url, timings


# ------------------------------------------------------------------ measuring
def reset_hour(conn) -> None:
    """Remove what earlier bench runs left in H and the pass-1 situation's window stories, then
    vacuum: every run leaves dead story rows in the centroid HNSW index, which a deployment's
    autovacuum clears between hours; without this the path measured second pays for the first."""
    with conn.transaction():
        conn.execute("DELETE FROM stories WHERE id LIKE 'bw\\_%%' OR created_partition >= %s", (H,))
        conn.execute("DELETE FROM story_items WHERE partition_hour >= %s", (H,))
    vacuum(conn)


def pass2_edges(conn, info, settings) -> set[tuple[str, str]]:
    """H's pass-2 KNN edges before clustering H (the worst case: every H item searches)."""
    with conn.transaction():
        store.begin_clustering(conn, settings.ef_search, 60)
        ids = list(store.new_items(conn, info, H))
        store.sync_recent(conn, info, H, store.Search.of(settings))
        rows = store.pass2_edges(conn, info, H, ids, store.Search.of(settings))
    return {(r[0], r[1]) for r in rows}


def pass1_matches(conn, info, settings) -> dict[str, str]:
    with conn.transaction():
        store.begin_clustering(conn, settings.ef_search, 60)
        published = store.new_items(conn, info, H)
        return {r[0]: r[1] for r in store.pass1_matches(conn, info, H, published, store.Search.of(settings))}


def exact_edges(conn, settings) -> set[tuple[str, str]]:
    """Exact KNN (numpy) of H's items among the window's unassigned items: the recall reference."""
    rows = conn.execute(
        "SELECT e.item_id, e.embedding, e.partition_hour = %(h)s FROM item_embeddings e"
        " WHERE e.model = %(model)s AND e.partition_hour >= %(lo)s AND e.partition_hour <= %(h)s"
        "   AND NOT EXISTS (SELECT 1 FROM story_items si WHERE si.item_id = e.item_id) ORDER BY e.item_id",
        {"h": H, "model": MODEL, "lo": store.window_start(H, store.Search.of(settings))},
    ).fetchall()
    conn.commit()
    ids = [r[0] for r in rows]
    matrix = np.vstack([np.asarray(r[1].to_numpy(), dtype=np.float32) for r in rows])
    is_new = np.array([r[2] for r in rows])
    del rows
    qi = np.flatnonzero(is_new)
    edges = set()
    k = settings.knn_k
    for start in range(0, len(qi), 100):
        block = qi[start : start + 100]
        sims = matrix[block] @ matrix.T
        sims[np.arange(len(block)), block] = -2  # not itself
        top = np.argpartition(-sims, k, axis=1)[:, :k]
        edges |= {(ids[block[r]], ids[c]) for r in range(len(block)) for c in top[r] if sims[r, c] >= settings.item_threshold}
    return edges


def undo_hour(conn, info) -> None:
    """Take H's clustering back out (the pipeline's own undo, committed)."""
    with conn.transaction():
        store.recompute(conn, info, store.undo_partition(conn, info, H).touched, 3)


def hour_runs(conn, info, settings, path: str, args, url: str) -> dict:
    """The timed runs of H (clustering_runs.hour_runs) on one path. The current path gets a way to
    open a second connection, as the stories asset gives it (pass 2 over knn_connections); the
    baseline runs in the baseline revision's process."""
    if path == "baseline":
        conn.commit()  # idle: the baseline's REINDEX and VACUUM must not wait on this connection
        return baseline_process(args, url, "hour_runs", settings)

    def run():
        return cluster_partition(conn, info, H, settings, connect=lambda: db.connect(url))

    return timed_hour_runs(conn, run, lambda: undo_hour(conn, info), centroid_index_name(), H, args.repeat)


def centroid_index_name() -> str:
    from newsdedup_dagster.shared.db.vectors import hnsw_index_name

    return hnsw_index_name("stories", MODEL)


# ------------------------------------------------------------------ the baseline revision
@contextlib.contextmanager
def baseline_worktree(revision: str = BASELINE_REVISION):
    """The repository at `revision`, checked out into a temporary git worktree, removed afterwards."""
    def git(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(REPO), *argv], capture_output=True, text=True, check=check)

    try:
        present = git("cat-file", "-e", f"{revision}^{{commit}}", check=False).returncode == 0
    except FileNotFoundError:
        present = False
    if not present:
        raise SystemExit(f"the baseline revision {revision} is not in the git repository at {REPO} (a shallow "
                         "clone or an unpacked archive has no history): run `git fetch --unshallow`, or measure "
                         "the current path alone with --no-baseline")
    parent = Path(tempfile.mkdtemp(prefix="newsdedup-bench-baseline-"))
    tree = parent / "tree"
    try:
        git("worktree", "add", "--detach", "--quiet", str(tree), revision)
        yield tree
    finally:
        git("worktree", "remove", "--force", str(tree), check=False)
        shutil.rmtree(parent, ignore_errors=True)
        git("worktree", "prune", check=False)


def baseline_process(args, url: str, mode: str, settings) -> dict:
    """clustering_runs.py `mode` in a process of its own on the baseline worktree's package."""
    if not args.baseline_tree:
        raise RuntimeError("the baseline path needs --baseline-tree (main() checks the revision out)")
    pythonpath = [args.baseline_tree, *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(pythonpath)}
    cmd = [sys.executable, str(REPO / "bench" / "clustering_runs.py"), mode, "--tree", args.baseline_tree,
           "--url", url, "--hour", H.isoformat(), "--settings", json.dumps(settings.as_dict()),
           "--centroid-index", centroid_index_name(), "--repeat", str(args.repeat)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the baseline revision's {mode} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def uses_baseline(case: str, args) -> bool:
    """--history-current-only: no HNSW over all of item_embeddings in the history database (the
    current path never reads it; building it over 1.1M rows takes most of an hour on a busy
    2-core machine), so the baseline path is measured on the window-only database alone."""
    return not args.no_baseline and not (case == "history" and args.history and args.history_current_only)


def measure(case: str, args) -> dict:
    history = args.history if case == "history" else 0
    out: dict = {"case": case, "window": args.window, "window_hours": args.window_hours, "history": history,
                 "history_days": args.history_days if history else 0, "new_items": NEW_PER_HOUR,
                 "loadavg_start": [round(x, 2) for x in os.getloadavg()]}
    with_baseline = uses_baseline(case, args)
    paths = ("baseline", "current") if with_baseline else ("current",)
    out["paths"] = list(paths)
    with bench_database(args.window, args.window_hours, history, args.history_days, args.m,
                        args.ef_construction, args.keep_db, with_baseline) as (url, build_timings), db.connect(url) as conn:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        conn.commit()
        out["build"] = build_timings
        out["python_peak_rss_mb_after_build"] = peak_rss_mb()
        embedding = EmbeddingSettings(hnsw_m=args.m, hnsw_ef_construction=args.ef_construction,
                                      centroid_hnsw_m=args.centroid_m,
                                      centroid_hnsw_ef_construction=args.centroid_ef_construction, centre="on")
        if with_baseline:
            info = ensure_model(conn, SyntheticEmbedder(), embedding)
        else:  # ensure_model would build the item index this database goes without
            info = active_model(conn)
            conn.commit()
            with conn.transaction():  # the centroid index alone, with the measured parameters
                ensure_centroid_index(conn, info, args.centroid_m, args.centroid_ef_construction)
        out["server"] = {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in ("shared_buffers", "work_mem")}
        out["centroid_index"] = {"m": args.centroid_m, "ef_construction": args.centroid_ef_construction}
        conn.commit()
        gates = {"max_gap_hours": str(args.window_hours + 2), "story_max_age_hours": str(args.window_hours + 2),
                 "ef_search": str(args.ef_search), "search": args.search}
        if args.knn_connections is not None:
            gates["knn_connections"] = str(args.knn_connections)
        settings = settings_for(info.model, gates)
        out["settings"] = {k: v for k, v in settings.as_dict().items()
                           if k in ("story_threshold", "item_threshold", "knn_k", "ef_search", "batch_size",
                                    "knn_connections")}
        out["rows"] = conn.execute(
            "SELECT (SELECT count(*) FROM item_embeddings), (SELECT count(*) FROM stories)").fetchone()
        conn.commit()
        reset_hour(conn)

        # ---- the recent-vector window: loaded once (first run after the migration), then kept
        with conn.transaction():
            store.begin_clustering(conn, settings.ef_search, 60)
            t0 = time.perf_counter()
            sync = store.sync_recent(conn, info, H, store.Search.of(settings))
            out["recent_sync"] = {"seconds": round(time.perf_counter() - t0, 2), **sync}

        # ---- worst case: no stories in the window
        found = {}
        for path in paths:
            if path == "baseline":
                conn.commit()
                edges = baseline_process(args, url, "pass2_edges", settings)
                found[path] = {tuple(e) for e in edges["edges"]}
                out[f"{path}_pass2_knn_seconds"] = edges["seconds"]
                out["settings_the_baseline_lacks"] = edges["settings_the_revision_lacks"]
                continue
            pass2_edges(conn, info, settings)  # warm
            t0 = time.perf_counter()
            found[path] = pass2_edges(conn, info, settings)
            out[f"{path}_pass2_knn_seconds"] = round(time.perf_counter() - t0, 3)
        for path in paths:
            out[f"worst_{path}"] = hour_runs(conn, info, settings, path, args, url)
            reset_hour(conn)
        if with_baseline:
            out["worst_same_stories"] = out["worst_baseline"].pop("members") == out["worst_current"].pop("members")

        # ---- pass 1: half the window's topics are stories
        t0 = time.perf_counter()
        with conn.transaction():
            conn.execute(load_bench_sql("stories_for_topics"), {"prefix": "bw_", "pattern": "i%", "model": MODEL,
                                                                 "half": True})
            conn.execute("DELETE FROM story_items WHERE partition_hour >= %s", (H,))
        conn.execute("ANALYZE stories")
        conn.execute("ANALYZE story_items")
        conn.commit()
        out["window_stories_setup_s"] = round(time.perf_counter() - t0, 1)
        exact_settings = settings_for(info.model, {**gates, "search": "exact"})
        hnsw_matches = pass1_matches(conn, info, settings)
        exact_matches = pass1_matches(conn, info, exact_settings)
        same = sum(1 for i, s in exact_matches.items() if hnsw_matches.get(i) == s)
        out["pass1_exact_matches"] = len(exact_matches)
        out["pass1_agreement"] = round(same / max(1, len(exact_matches)), 4)
        for path in paths:
            out[f"pass1_{path}"] = hour_runs(conn, info, settings, path, args, url)
        if with_baseline:
            out["pass1_same_stories"] = out["pass1_baseline"].pop("members") == out["pass1_current"].pop("members")
        reset_hour(conn)
        out["python_peak_rss_mb"] = peak_rss_mb()  # the clustering runs' peak (numpy's exact search comes next)

        # ---- recall against exact search (numpy over the window; worst-case state again)
        exact = exact_edges(conn, settings)
        out["exact_edges"] = len(exact)
        for path in paths:
            out[f"{path}_edge_recall"] = round(len(found[path] & exact) / max(1, len(exact)), 4)
        out["python_peak_rss_mb_with_numpy_window"] = peak_rss_mb()
        # what the mirror adds to the embedding step: one hour of vectors into the window's HNSW
        with conn.transaction():
            conn.execute("DELETE FROM cluster_recent_items WHERE partition_hour = %s", (H,))
            t0 = time.perf_counter()
            conn.execute(db.load_sql("cluster_recent_load"), {"model": MODEL, "lo": H, "hi": H + timedelta(hours=1)})
            out["mirror_one_hour_seconds"] = round(time.perf_counter() - t0, 3)
    out["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


# ------------------------------------------------------------------ report
def report(results: list[dict]) -> None:
    by = {r["case"]: r for r in results}
    print(f"{'':44}" + "".join(f"{c:>26}" for c in by))
    def line(label, fn):
        def cell(r):
            try:
                return fn(r)
            except KeyError:
                return "–"
        print(f"{label:44}" + "".join(f"{cell(r):>26}" for r in by.values()), flush=True)
    line("server shared_buffers / centroid index m, efc", lambda r: f"{r['server']['shared_buffers']} / "
         f"{r['centroid_index']['m']}, {r['centroid_index']['ef_construction']}")
    line("rows in item_embeddings / stories", lambda r: f"{r['rows'][0]:,} / {r['rows'][1]:,}")
    def situation_lines(situation: str, name: str) -> None:
        base, current = f"{situation}_baseline", f"{situation}_current"
        line(f"{name}: baseline s/hour", lambda r: f"{r[base]['seconds']:.3f}")
        line("  current s/hour", lambda r: f"{r[current]['seconds']:.3f}")
        line("  current / baseline", lambda r: f"{r[current]['seconds'] / r[base]['seconds']:.2f}x")
        line("  re-materialising H: baseline / current",
             lambda r: f"{r[base].get('rerun_seconds', '–')} / {r[current]['rerun_seconds']}")
        line("  same memberships as baseline", lambda r: str(r[f"{situation}_same_stories"]))
        line("  stories new / pass-1 attached",
             lambda r: f"{r[current]['stories']['new']} / {r[current]['stories']['attached_pass1']}")

    situation_lines("worst", "worst case (no stories)")
    situation_lines("pass1", "pass 1 (half the topics in stories)")
    line("pass-2 KNN s: baseline / current", lambda r: f"{r.get('baseline_pass2_knn_seconds', '–')} / {r['current_pass2_knn_seconds']:.2f}")
    line("pass-2 edge recall vs exact: base / current", lambda r: f"{r.get('baseline_edge_recall', '–')} / {r['current_edge_recall']:.4f}")
    line("pass-1 HNSW agreement with exact", lambda r: f"{r['pass1_agreement']:.4f} of {r['pass1_exact_matches']}")
    line("mirror one hour (trigger, s)", lambda r: f"{r['mirror_one_hour_seconds']:.3f}")
    line("recent window: first load s (rows)", lambda r: f"{r['recent_sync']['seconds']} ({r['recent_sync']['loaded']:,})")
    line("python peak RSS MB (clustering)", lambda r: f"{r['python_peak_rss_mb']}")
    line("load average start / end", lambda r: f"{r['loadavg_start'][0]} / {r['loadavg_end'][0]}")
    lacks = next((r["settings_the_baseline_lacks"] for r in results if "settings_the_baseline_lacks" in r), None)
    if lacks is not None:
        print(f"baseline: the repository at {BASELINE_REVISION[:12]}; current settings it has no such thing as "
              f"(the current path alone uses them): {', '.join(lacks) or 'none'}", flush=True)
    if "window" in by and "history" in by:
        for situation in ("worst", "pass1"):
            for path in by["history"]["paths"]:
                ratio = by["history"][f"{situation}_{path}"]["seconds"] / by["window"][f"{situation}_{path}"]["seconds"]
                print(f"history / window-only, {situation}, {path}: {ratio:.2f}x", flush=True)
    for r in results:
        for key in ("worst_current", "pass1_current"):
            r[key].pop("members", None)
        print(f"{r['case']} detail:", json.dumps({k: r[k] for k in r if k.startswith(("worst_", "pass1_", "build"))}),
              flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=100_000)
    parser.add_argument("--window-hours", type=int, default=36)
    parser.add_argument("--history", type=int, default=1_000_000, help="0: the window-only case alone")
    parser.add_argument("--history-days", type=int, default=90)
    parser.add_argument("--ef-search", type=int, default=100)
    parser.add_argument("--search", default="hnsw",
                        help="KNN access path for the hour runs; exact: both paths must build identical stories")
    parser.add_argument("--m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=64)
    parser.add_argument("--centroid-m", type=int, default=EmbeddingSettings().centroid_hnsw_m,
                        help="story-centroid HNSW m (default: the pipeline's)")
    parser.add_argument("--centroid-ef-construction", type=int,
                        default=EmbeddingSettings().centroid_hnsw_ef_construction)
    parser.add_argument("--knn-connections", type=int, default=None,
                        help="pass-2 KNN connections of the current path (default: the pipeline's)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per path (median)")
    parser.add_argument("--keep-db", action="store_true", help="keep the built databases for the next run")
    parser.add_argument("--history-current-only", action="store_true",
                        help="history database without the HNSW index over all item_embeddings: current path only")
    parser.add_argument("--no-baseline", action="store_true",
                        help=f"the current path alone (no checkout of the baseline revision {BASELINE_REVISION[:10]})")
    parser.add_argument("--cases", default=None, help="comma list of window,history (default: both, or window)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--in-process", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--baseline-tree", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.in_process:
        print(json.dumps(measure(args.in_process, args), default=str), flush=True)
        return 0
    cases = args.cases.split(",") if args.cases else (["window", "history"] if args.history else ["window"])
    with contextlib.ExitStack() as stack:
        passed = list(argv if argv is not None else sys.argv[1:])
        if any(uses_baseline(case, args) for case in cases):  # one checkout for every case
            passed += ["--baseline-tree", str(stack.enter_context(baseline_worktree()))]
        results = []
        for case in cases:  # one process per case: ru_maxrss is then that case's own peak
            done = subprocess.run([sys.executable, __file__, "--in-process", case, *passed], capture_output=True,
                                  text=True)
            if done.returncode:
                sys.stderr.write(done.stderr)
                return done.returncode
            results.append(json.loads(done.stdout.strip().splitlines()[-1]))
            if args.json:
                print(json.dumps(results[-1], default=str), flush=True)
    if not args.json:
        report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
