"""Clustering benchmark: one 500-item hourly partition against a 10k and a 100k window.

Same run, same data, per window size:
  hnsw    cluster_partition with the HNSW index + iterative scan (the default path)
  exact   cluster_partition with plain expressions no index serves (exact scan in Postgres)
  numpy   brute-force cosine KNN of the 500 items against the window in numpy (the floor;
          it must hold the window's vectors, which the pipeline never does)
plus pass-2 edge recall of HNSW against exact, and the Python process's peak RSS (ru_maxrss)
after the database paths (numpy runs last, so its copy of the window is not counted there).

Vectors are structured, not uniform: super-topics -> topics -> items (cosine item~topic ~0.85,
neighbouring topics ~0.5), which is what makes ANN hard; uniform random vectors have no
neighbours for any index to find.

    .venv/bin/python bench/clustering.py            # 10k and 100k
    .venv/bin/python bench/clustering.py --sizes 10000 --json
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from newsdedup_dagster import db  # noqa: E402
from newsdedup_dagster.clustering import store  # noqa: E402
from newsdedup_dagster.clustering.passes import cluster_partition  # noqa: E402
from newsdedup_dagster.clustering.settings import settings_for  # noqa: E402
from newsdedup_dagster.embeddings.store import ensure_model, vector_literal  # noqa: E402
from newsdedup_dagster.evaluation import temporary_database  # noqa: E402

DIMS = 512
NEW_PER_HOUR = 500
H = datetime(2026, 11, 10, 0, tzinfo=timezone.utc)


class SyntheticEmbedder:
    provider = "bench"
    model_id = "bench:synthetic-512"
    dims = DIMS


class Generator:
    """Super-topics -> topics -> items, deterministic (seeded)."""

    def __init__(self, n_items: int, seed: int = 7):
        self.rng = np.random.default_rng(seed)
        n_topics = max(50, n_items // 20)
        n_super = max(10, n_topics // 10)
        supers = self._unit(self.rng.standard_normal((n_super, DIMS)))
        parent = self.rng.integers(0, n_super, n_topics)
        # topic = super + spread: neighbouring topics of one super-topic sit near cosine 0.5
        self.topics = self._unit(supers[parent] + 0.044 * self.rng.standard_normal((n_topics, DIMS)))
        self.sigma = self.rng.uniform(0.022, 0.034, n_topics)

    @staticmethod
    def _unit(m):
        return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)

    def items(self, n: int) -> np.ndarray:
        t = self.rng.integers(0, len(self.topics), n)
        noise = self.rng.standard_normal((n, DIMS)) * self.sigma[t][:, None]
        return self._unit(self.topics[t] + noise)


def load(conn, gen: Generator, window: int, window_hours: int) -> None:
    """Window items spread over the hours before H, then 500 new items in H (COPY, in chunks)."""
    model = SyntheticEmbedder.model_id
    with conn.transaction():
        conn.execute("INSERT INTO sources (id, name, feed_url, language) VALUES ('b', 'b', 'bench://b', 'en')")
        # the model row first (FK); its indexes are built after the load, in bulk (ensure_model)
        conn.execute("INSERT INTO embedding_models (model, provider, dims, index_type) VALUES (%s, 'bench', %s, 'vector')",
                     (model, DIMS))
    specs = [(n, H - timedelta(hours=1 + (n % window_hours))) for n in range(window)]
    specs += [(window + n, H) for n in range(NEW_PER_HOUR)]
    chunk = 5000
    for start in range(0, len(specs), chunk):
        part = specs[start : start + chunk]
        vectors = gen.items(len(part))
        with conn.transaction():
            with conn.cursor().copy(
                "COPY items (id, canonical_url, url, title, published_at, partition_hour, source_id) FROM STDIN"
            ) as copy:
                for n, hour in part:
                    copy.write_row((f"i{n:07d}", f"bench://{n}", f"bench://{n}", f"item {n}",
                                    hour + timedelta(seconds=(n * 37) % 3600), hour, "b"))
            with conn.cursor().copy(
                "COPY item_embeddings (item_id, model, text_hash, embedding, partition_hour, published_at) FROM STDIN"
            ) as copy:
                for (n, hour), v in zip(part, vectors):
                    copy.write_row((f"i{n:07d}", model, f"h{n}", vector_literal(v), hour,
                                    hour + timedelta(seconds=(n * 37) % 3600)))
        del vectors
    conn.execute("ANALYZE")
    conn.commit()


def edges_for(conn, info, settings) -> set[tuple[str, str]]:
    ids = store.new_items(conn, info, H)
    with conn.transaction():
        store.begin_clustering(conn, settings.ef_search, 60)
        rows = store.pass2_edges(conn, info, H, ids, settings)
    return {(a, b) for a, b, _ in rows}


def numpy_floor(conn, info, settings) -> dict:
    t0 = time.perf_counter()
    rows = conn.execute(
        "SELECT item_id, embedding, partition_hour = %s FROM item_embeddings WHERE model = %s ORDER BY item_id",
        (H, info.model),
    ).fetchall()
    conn.commit()
    ids = [r[0] for r in rows]
    matrix = np.vstack([np.asarray(r[1].to_numpy(), dtype=np.float32) for r in rows])
    is_new = np.array([r[2] for r in rows])
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    q = matrix[is_new]
    sims = q @ matrix.T
    qi = np.flatnonzero(is_new)
    sims[np.arange(len(qi)), qi] = -2  # not itself
    k = settings.knn_k
    top = np.argpartition(-sims, k, axis=1)[:, :k]
    edges = {(ids[qi[r]], ids[c]) for r in range(len(qi)) for c in top[r] if sims[r, c] >= settings.item_threshold}
    return {"seconds": time.perf_counter() - t0, "load_seconds": load_s, "edges": edges}


def bench(window: int, ef_search: int, m: int, ef_construction: int) -> dict:
    window_hours = max(1, window // NEW_PER_HOUR)
    gen = Generator(window + NEW_PER_HOUR)
    out: dict = {"window": window, "new_items": NEW_PER_HOUR, "ef_search": ef_search, "m": m,
                 "ef_construction": ef_construction}
    from newsdedup_dagster.embeddings.providers import EmbeddingSettings

    with temporary_database() as url, db.connect(url) as conn:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        conn.commit()
        t0 = time.perf_counter()
        load(conn, gen, window, window_hours)
        out["load_seconds"] = round(time.perf_counter() - t0, 1)
        t0 = time.perf_counter()
        info = ensure_model(conn, SyntheticEmbedder(), EmbeddingSettings(hnsw_m=m, hnsw_ef_construction=ef_construction))
        out["index_build_seconds"] = round(time.perf_counter() - t0, 1)
        base = {"max_gap_hours": str(window_hours + 2), "story_max_age_hours": str(window_hours + 2),
                "ef_search": str(ef_search)}
        s_hnsw = settings_for(info.model, {**base, "search": "hnsw"}, env=False)
        s_exact = settings_for(info.model, {**base, "search": "exact"}, env=False)

        t0 = time.perf_counter()
        exact_edges = edges_for(conn, info, s_exact)
        out["exact_pass2_knn_seconds"] = round(time.perf_counter() - t0, 3)
        t0 = time.perf_counter()
        hnsw_edges = edges_for(conn, info, s_hnsw)
        out["hnsw_pass2_knn_seconds"] = round(time.perf_counter() - t0, 3)
        out["pass2_edges_exact"] = len(exact_edges)
        out["pass2_edge_recall"] = round(len(hnsw_edges & exact_edges) / max(1, len(exact_edges)), 4)

        # The full partition (undo, pass 1, pass 2, writes) on the HNSW path; run twice: the second
        # run re-materialises H (undo + redo), the idempotent path. The exact path is measured on
        # pass-2 KNN alone above (a full exact run at 100k takes minutes).
        for name, settings in (("hnsw", s_hnsw), ("hnsw_again", s_hnsw)):
            t0 = time.perf_counter()
            result = cluster_partition(conn, info, H, settings)
            out[f"{name}_seconds"] = round(time.perf_counter() - t0, 3)
            out[f"{name}_detail"] = {k: round(v, 3) for k, v in result.timings.items()}
            out[f"{name}_new_stories"] = len(result.new_stories)
        out["python_peak_rss_mb_before_numpy"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)

        conn.execute("TRUNCATE story_items, stories CASCADE")
        conn.commit()
        floor = numpy_floor(conn, info, s_exact)
        out["numpy_seconds"] = round(floor["seconds"], 3)
        out["numpy_load_seconds"] = round(floor["load_seconds"], 2)
        out["numpy_vs_exact_edge_agreement"] = round(len(floor["edges"] & exact_edges) / max(1, len(floor["edges"])), 4)
        out["python_peak_rss_mb_after_numpy"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--ef-search", type=int, default=100)
    parser.add_argument("--m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=64)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    for size in (int(s) for s in args.sizes.split(",")):
        result = bench(size, args.ef_search, args.m, args.ef_construction)
        if args.json:
            print(json.dumps(result), flush=True)
        else:
            print(f"window {size:>7,}: hnsw {result['hnsw_seconds']:.2f}s (again {result['hnsw_again_seconds']:.2f}s)  "
                  f"exact pass-2 KNN {result['exact_pass2_knn_seconds']:.2f}s (hnsw {result['hnsw_pass2_knn_seconds']:.2f}s)  numpy {result['numpy_seconds']:.2f}s "
                  f"(+{result['numpy_load_seconds']:.1f}s to fetch the window)  edge recall {result['pass2_edge_recall']:.3f} "
                  f"of {result['pass2_edges_exact']} edges  peak RSS {result['python_peak_rss_mb_before_numpy']} MB "
                  f"(after numpy {result['python_peak_rss_mb_after_numpy']} MB)  load {result['load_seconds']}s "
                  f"index {result['index_build_seconds']}s", flush=True)
            print("   detail:", json.dumps({k: v for k, v in result.items() if k.endswith('_detail')}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
