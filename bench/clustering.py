"""Clustering benchmark: one 500-item hourly partition against a 10k and a 100k window.

The current default pipeline: e5 (multilingual-e5-small q4, 384 dims), vectors centred per language,
pass 1 + pass 2 with the Louvain guard + pass 3, the e5 thresholds (clustering/settings.py).
Same run, same data, per window size:
  hnsw    cluster_partition with the HNSW index + iterative scan (the default path)
  exact   cluster_partition with plain expressions no index serves (exact scan in Postgres)
  numpy   brute-force cosine KNN of the 500 items against the window in numpy (the floor;
          it must hold the window's vectors, which the pipeline never does)
plus pass-2 edge recall of HNSW against exact (for each --ef-search value), and the Python
process's peak RSS (ru_maxrss) after the database paths (numpy runs last, so its copy of the window
is not counted there). Each window size runs in its own process, so its peak RSS is its own.

Worst case for pass 2: the window's items are not in stories (none exist), so pass 1 attaches
nothing and all 500 new items search the whole window (time gates opened to the window's span).

Vectors are structured, not uniform: super-topics -> topics -> items, shaped like centred e5
(itn pair cosines: same subject median 0.45, different subject p99 0.32; clustering/settings.py);
the run prints the generated figures. Rows carry raw_embedding too, as production rows do (the
row width decides whether `embedding` stays inline, migration 030).

    .venv/bin/python bench/clustering.py            # 10k and 100k
    .venv/bin/python bench/clustering.py --sizes 10000 --ef-search 40,64,100 --json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
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
from newsdedup_dagster.embeddings.providers import EmbeddingSettings  # noqa: E402
from newsdedup_dagster.embeddings.store import ensure_model, vector_literal  # noqa: E402
from newsdedup_dagster.evaluation import temporary_database  # noqa: E402

DIMS = 384
NEW_PER_HOUR = 500
H = datetime(2026, 11, 10, 0, tzinfo=timezone.utc)


class SyntheticEmbedder:
    """Registers as the default model, so settings_for gives its thresholds, guard and pass 3."""

    provider = "e5"
    model_id = "e5:multilingual-e5-small-q4"
    dims = DIMS


def rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class Generator:
    """Super-topics -> topics -> items, deterministic (seeded), shaped like centred e5 vectors.

    Per-dimension noise s on a unit vector in 384 dims has norm r = s * sqrt(384), and two draws
    around one centre meet at cosine ~ 1 / (1 + r^2):
      topic spread 0.046 -> r 0.90 -> sibling topics (one super-topic) near cosine 0.55
      item noise 0.040-0.065 -> r 0.78-1.27 -> items of one topic 0.38-0.62 (median ~0.47)
    so items of sibling topics sit near 0.25-0.35 and some cross the 0.40 threshold: the chaining
    the guard exists for, and neighbours an ANN index can confuse. Centred vectors have mean ~0
    (random directions), unlike raw e5 (unrelated texts at cosine 0.76-0.85).
    """

    def __init__(self, n_items: int, seed: int = 7):
        self.rng = np.random.default_rng(seed)
        n_topics = max(50, n_items // 20)
        n_super = max(10, n_topics // 10)
        supers = self._unit(self.rng.standard_normal((n_super, DIMS)))
        parent = self.rng.integers(0, n_super, n_topics)
        self.parent = parent
        self.topics = self._unit(supers[parent] + 0.046 * self.rng.standard_normal((n_topics, DIMS)))
        self.sigma = self.rng.uniform(0.040, 0.065, n_topics)
        # raw = centred + a shared language component (what centring removed), for row width only
        self.language_mean = self._unit(self.rng.standard_normal((1, DIMS)))[0] * 2.0

    @staticmethod
    def _unit(m):
        return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)

    def items(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        t = self.rng.integers(0, len(self.topics), n)
        noise = self.rng.standard_normal((n, DIMS)) * self.sigma[t][:, None]
        return self._unit(self.topics[t] + noise), t

    def raw(self, centred: np.ndarray) -> np.ndarray:
        return self._unit(centred + self.language_mean)

    def cosine_profile(self, n: int = 1500) -> dict:
        """Pair cosines of a sample: same topic, sibling topics, unrelated (to compare with e5).
        Small on purpose (~1.1M pairs, ~30 MB): ru_maxrss keeps the peak of everything before."""
        v, t = self.items(n)
        sims = v @ v.T
        iu = np.triu_indices(n, 1)
        same = t[iu[0]] == t[iu[1]]
        sib = (self.parent[t[iu[0]]] == self.parent[t[iu[1]]]) & ~same
        s = sims[iu]
        return {"same_topic_median": round(float(np.median(s[same])), 3) if same.any() else None,
                "sibling_topic_median": round(float(np.median(s[sib])), 3) if sib.any() else None,
                "different_topic_p99": round(float(np.quantile(s[~same], 0.99)), 3),
                "different_topic_share_ge_0.40": round(float((s[~same] >= 0.40).mean()), 5)}


def load(conn, gen: Generator, window: int, window_hours: int) -> None:
    """Window items spread over the hours before H, then 500 new items in H (COPY, in chunks)."""
    model = SyntheticEmbedder.model_id
    with conn.transaction():
        conn.execute("INSERT INTO sources (id, name, feed_url, language) VALUES ('b', 'b', 'bench://b', 'en')")
        # the model row first (FK); its indexes are built after the load, in bulk (ensure_model)
        conn.execute("INSERT INTO embedding_models (model, provider, dims, index_type, centring)"
                     " VALUES (%s, 'e5', %s, 'vector', true)", (model, DIMS))
    specs = [(n, H - timedelta(hours=1 + (n % window_hours))) for n in range(window)]
    specs += [(window + n, H) for n in range(NEW_PER_HOUR)]
    chunk = 5000
    for start in range(0, len(specs), chunk):
        part = specs[start : start + chunk]
        vectors, _ = gen.items(len(part))
        raws = gen.raw(vectors)
        with conn.transaction():
            with conn.cursor().copy(
                "COPY items (id, canonical_url, url, title, lang, published_at, partition_hour, source_id) FROM STDIN"
            ) as copy:
                for n, hour in part:
                    copy.write_row((f"i{n:07d}", f"bench://{n}", f"bench://{n}", f"item {n}", "en",
                                    hour + timedelta(seconds=(n * 37) % 3600), hour, "b"))
            with conn.cursor().copy(
                "COPY item_embeddings (item_id, model, text_hash, embedding, raw_embedding, partition_hour,"
                " published_at) FROM STDIN"
            ) as copy:
                for (n, hour), v, r in zip(part, vectors, raws):
                    copy.write_row((f"i{n:07d}", model, f"h{n}", vector_literal(v), vector_literal(r), hour,
                                    hour + timedelta(seconds=(n * 37) % 3600)))
        del vectors, raws
    conn.execute("ANALYZE")
    conn.commit()


def storage(conn) -> dict:
    """Whether `embedding` stayed inline (a toasted vector costs a detoast per distance)."""
    row = conn.execute(
        "SELECT pg_size_pretty(pg_relation_size('item_embeddings')),"
        " pg_size_pretty(pg_total_relation_size('item_embeddings') - pg_relation_size('item_embeddings')"
        "   - pg_indexes_size('item_embeddings')),"
        " (SELECT round(avg(pg_column_size(embedding))) FROM item_embeddings),"
        " (SELECT round(avg(pg_column_size(raw_embedding))) FROM item_embeddings)").fetchone()
    conn.commit()
    return {"heap": row[0], "toast": row[1], "avg_embedding_bytes": int(row[2]), "avg_raw_bytes": int(row[3])}


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
    del rows
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


def bench(window: int, ef_searches: list[int], m: int, ef_construction: int, exact_partition: bool = True) -> dict:
    window_hours = max(1, window // NEW_PER_HOUR)
    gen = Generator(window + NEW_PER_HOUR)
    ef_search = ef_searches[-1]
    out: dict = {"window": window, "new_items": NEW_PER_HOUR, "dims": DIMS, "model": SyntheticEmbedder.model_id,
                 "ef_search": ef_search, "m": m, "ef_construction": ef_construction,
                 "loadavg_start": [round(x, 2) for x in os.getloadavg()], "python_rss_mb_start": rss_mb(),
                 "cosines": gen.cosine_profile()}
    gen = Generator(window + NEW_PER_HOUR)  # same stream whatever the profile sampled

    with temporary_database() as url, db.connect(url) as conn:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        conn.commit()
        t0 = time.perf_counter()
        load(conn, gen, window, window_hours)
        out["load_seconds"] = round(time.perf_counter() - t0, 1)
        out["python_peak_rss_mb_after_load"] = rss_mb()
        out["storage"] = storage(conn)
        t0 = time.perf_counter()
        info = ensure_model(conn, SyntheticEmbedder(), EmbeddingSettings(
            hnsw_m=m, hnsw_ef_construction=ef_construction, centre="on"))
        out["index_build_seconds"] = round(time.perf_counter() - t0, 1)
        base = {"max_gap_hours": str(window_hours + 2), "story_max_age_hours": str(window_hours + 2)}
        s_exact = settings_for(info.model, {**base, "search": "exact"}, env=False)
        out["settings"] = {k: v for k, v in s_exact.as_dict().items()
                           if k in ("story_threshold", "item_threshold", "knn_k", "guard", "guard_resolution", "pass3")}

        t0 = time.perf_counter()
        exact_edges = edges_for(conn, info, s_exact)
        out["exact_pass2_knn_seconds"] = round(time.perf_counter() - t0, 3)
        out["pass2_edges_exact"] = len(exact_edges)
        recall = {}
        for ef in ef_searches:
            s = settings_for(info.model, {**base, "search": "hnsw", "ef_search": str(ef)}, env=False)
            edges_for(conn, info, s)  # warm the index pages once per setting
            t0 = time.perf_counter()
            hnsw_edges = edges_for(conn, info, s)
            recall[ef] = {"recall": round(len(hnsw_edges & exact_edges) / max(1, len(exact_edges)), 4),
                          "pass2_knn_seconds": round(time.perf_counter() - t0, 3)}
        out["hnsw_pass2_by_ef_search"] = recall
        out["pass2_edge_recall"] = recall[ef_search]["recall"]
        out["hnsw_pass2_knn_seconds"] = recall[ef_search]["pass2_knn_seconds"]

        # The full partition (undo, pass 1, pass 2 + guard, pass 3, writes). hnsw twice: the second
        # run re-materialises H (undo + redo), the idempotent path. Then the same with exact scans.
        s_hnsw = settings_for(info.model, {**base, "search": "hnsw", "ef_search": str(ef_search)}, env=False)
        runs = [("hnsw", s_hnsw), ("hnsw_again", s_hnsw)] + ([("exact", s_exact)] if exact_partition else [])
        for name, settings in runs:
            t0 = time.perf_counter()
            result = cluster_partition(conn, info, H, settings)
            out[f"{name}_seconds"] = round(time.perf_counter() - t0, 3)
            out[f"{name}_detail"] = {k: round(v, 3) for k, v in result.timings.items()}
            out[f"{name}_stories"] = {"new": len(result.new_stories), "pass2_items": result.clustered_in_pass2,
                                      "pass3_items": result.attached_pass3, "single": result.left_single,
                                      "edges": result.edges}
        out["python_peak_rss_mb_before_numpy"] = rss_mb()

        conn.execute("TRUNCATE story_items, stories CASCADE")
        conn.commit()
        floor = numpy_floor(conn, info, s_exact)
        out["numpy_seconds"] = round(floor["seconds"], 3)
        out["numpy_load_seconds"] = round(floor["load_seconds"], 2)
        out["numpy_vs_exact_edge_agreement"] = round(len(floor["edges"] & exact_edges) / max(1, len(floor["edges"])), 4)
        out["python_peak_rss_mb_after_numpy"] = rss_mb()
    out["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def report(result: dict) -> None:
    r = result
    exact = f"exact {r['exact_seconds']:.2f}s" if "exact_seconds" in r else "exact (skipped)"
    print(f"window {r['window']:>7,} x {r['dims']}d, {r['new_items']} new: "
          f"hnsw {r['hnsw_seconds']:.2f}s (again {r['hnsw_again_seconds']:.2f}s)  {exact}  "
          f"numpy {r['numpy_seconds']:.2f}s (+{r['numpy_load_seconds']:.1f}s to fetch the window)", flush=True)
    print(f"   pass-2 KNN: exact {r['exact_pass2_knn_seconds']:.2f}s; hnsw by ef_search: "
          + ", ".join(f"{ef}: recall {v['recall']:.4f} in {v['pass2_knn_seconds']:.2f}s"
                      for ef, v in r["hnsw_pass2_by_ef_search"].items())
          + f"  (of {r['pass2_edges_exact']} exact edges; numpy agrees with exact {r['numpy_vs_exact_edge_agreement']:.4f})",
          flush=True)
    print(f"   python RSS: start {r['python_rss_mb_start']} MB, peak after load {r['python_peak_rss_mb_after_load']} MB, "
          f"after db paths "
          f"{r['python_peak_rss_mb_before_numpy']} MB, after numpy {r['python_peak_rss_mb_after_numpy']} MB", flush=True)
    print(f"   load {r['load_seconds']}s, index build {r['index_build_seconds']}s, storage {json.dumps(r['storage'])}",
          flush=True)
    print(f"   load average start {r['loadavg_start']} end {r['loadavg_end']} (2 cores)", flush=True)
    print(f"   cosines {json.dumps(r['cosines'])}  settings {json.dumps(r['settings'])}", flush=True)
    print("   detail:", json.dumps({k: v for k, v in r.items() if k.endswith('_detail') or k.endswith('_stories')}),
          flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--ef-search", default="100",
                        help="comma list: recall is measured for each, the partition runs with the last")
    parser.add_argument("--m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=64)
    parser.add_argument("--no-exact-partition", action="store_true", help="skip the full exact-scan partition")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    ef_searches = [int(x) for x in args.ef_search.split(",")]
    for size in sizes:
        if args.in_process:
            result = bench(size, ef_searches, args.m, args.ef_construction, not args.no_exact_partition)
        else:  # one process per window size: ru_maxrss is then that window's own peak
            cmd = [sys.executable, __file__, "--in-process", "--json", "--sizes", str(size), "--ef-search",
                   args.ef_search, "--m", str(args.m), "--ef-construction", str(args.ef_construction)]
            if args.no_exact_partition:
                cmd.append("--no-exact-partition")
            done = subprocess.run(cmd, check=True, capture_output=True, text=True)
            result = json.loads(done.stdout.strip().splitlines()[-1])
        if args.json:
            print(json.dumps(result), flush=True)
        else:
            report(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
