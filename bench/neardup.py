"""Benchmark: near-duplicate headline clustering vs all-pairs and MinHashLSH.

    .venv/bin/python bench/neardup.py [PATH] [--sizes 10000,100000] [--seed 7] [--json OUT]

PATH defaults to gnews_titles.jsonl in $NEWSDEDUP_EVAL_DATA_DIR (default data/; not shipped:
docs/EVALUATION.md says where it comes from and how to rebuild it). Headline sets are built from it:

* 10k: distinct real titles (Google News, 152 stories);
* 100k: all real titles plus synthetic ones: real title lengths, words drawn
  from the real titles' word frequencies (the dev file has only 11k titles);
* in both, 10% of the base titles get an injected rewrite (drop a word, swap
  two adjacent words, join or split words, add or change an outlet suffix,
  or two of these): the known duplicate pairs.

Methods, all in the same run on the same items:
* `neardup` (ours, NearDupConfig defaults: en is ungated, so one bucket and
  candidates from shared triples of rare 3-grams, then greedy clustering),
* `neardup-gated` (the lead-token gate forced on, default threshold:
  bucketing by lead token, the lexical baseline's way of avoiding all pairs),
* `allpairs` (10k only): the same clustering, every pair scored (dense,
  chunked) instead of the candidate search: the cost and loss of blocking,
* `minhash-lsh`: datasketch MinHash (128 perm) + MinHashLSH over the same
  space-free 3-gram sets, at the best of a few Jaccard thresholds on 10k;
  its query hits are its predicted pairs (the usual way to use it).

Scoring on pairs: a predicted pair inside one injected family is a true
positive; a pair of two different items of the same Google News story is
ignored (real titles of one story can be genuine near duplicates); any other
predicted pair is a false positive. Recall is over the injected pairs.
(Many remaining "false positives" at 10k are real titles of one event that
Google News filed under two stories, e.g. "storm threaten holiday travel
moving east" / "storm threatens holiday travel east".)

Measured here (2 shared cores, default seed; about 90 s in all).
With the lexical model (headline.LEXICAL_MODEL, threshold 0.67, min_gram_jaccard 0.25):
  10k : neardup 0.71 s P 0.820 R 0.954 F1 0.882 | gated 0.76 s F1 0.870 |
        allpairs 17.6 s F1 0.738 (slow: scores each pair through HeadlineIndex.score) |
        minhash-lsh@0.7 1.38 s (x1.94) P 0.964 R 0.844 F1 0.900
  100k: neardup 8.52 s P 0.898 R 0.984 F1 0.939 | gated 8.29 s F1 0.965 |
        minhash-lsh@0.7 13.57 s (x1.59) P 0.989 R 0.849 F1 0.913
At 10k the model's F1 is below MinHashLSH's: its extra "false positives" are
mostly real titles of one event filed under two Google News stories (the
model is looser on such short lemmatised titles; GN pair check: P 0.941 vs
0.965 before). Before the model (gram + word Jaccard mix, threshold 0.38),
same machine: 10k neardup 0.58 s F1 0.919 (P 0.883 R 0.959), 100k 6.16 s F1
0.982 (P 0.981 R 0.983); MinHashLSH 1.19 s / 14.11 s F1 0.900 / 0.913.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

import common  # noqa: F401  (this checkout's package first on sys.path)
import numpy as np

from newsdedup_dagster.shared.text.headline import headline_features
from newsdedup_dagster.stages.neardup import HeadlineItem, NearDupConfig, cluster_headlines
from newsdedup_dagster.stages.neardup.cluster import HeadlineIndex, encode_grams

# The labelled files' directory, as the eval commands read it.
DEFAULT_PATH = str(Path(os.environ.get("NEWSDEDUP_EVAL_DATA_DIR") or "data") / "gnews_titles.jsonl")
SUFFIXES = [" - Reuters", " | AP News", " - BBC News", " - The Guardian", " | CNN", " - Yahoo News", " - NBC News"]


# --------------------------------------------------------------------------- data


def load_titles(path: str) -> list[tuple[str, str]]:
    seen, out = set(), []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            title = " ".join(str(row.get("title") or "").split())
            if title and title not in seen:
                seen.add(title)
                out.append((title, str(row.get("cluster") or "")))
    return out


def synthetic_titles(real: list[str], count: int, rng: random.Random, exclude: set[str]) -> list[str]:
    """Titles of real length whose words are drawn from the real titles' word
    frequencies. (A word Markov chain over only 11k titles repeats its spans so
    often that ~1 in 2 generated titles had a near duplicate: no use as filler.)"""
    counts = Counter(w for t in real for w in t.split())
    words, freqs = zip(*sorted(counts.items()))
    cum = np.cumsum(np.asarray(freqs, dtype=np.float64) ** 0.75)  # flatten a little: fewer "the data the"
    cum /= cum[-1]
    lengths = [len(t.split()) for t in real]
    np_rng = np.random.default_rng(rng.randrange(1 << 30))
    out: list[str] = []
    made = set(exclude)
    while len(out) < count:
        target = lengths[rng.randrange(len(lengths))]
        picks = np.searchsorted(cum, np_rng.random(target))
        title = " ".join(words[i] for i in picks)
        if title not in made:
            made.add(title)
            out.append(title)
    return out


def rewrite(title: str, rng: random.Random) -> str:
    """One or two edits a syndicated or rewritten copy typically shows."""
    words = title.split()
    ops = rng.sample(["drop", "swap", "join", "split", "suffix"], k=rng.choice([1, 1, 2]))
    for op in ops:
        if op == "drop" and len(words) > 4:
            del words[rng.randrange(1, len(words))]
        elif op == "swap" and len(words) > 3:
            i = rng.randrange(1, len(words) - 1)
            words[i], words[i + 1] = words[i + 1], words[i]
        elif op == "join" and len(words) > 2:
            i = rng.randrange(len(words) - 1)
            words[i : i + 2] = [words[i] + words[i + 1]]
        elif op == "split":
            long_words = [i for i, w in enumerate(words) if len(w) >= 6]
            if long_words:
                i = rng.choice(long_words)
                cut = rng.randrange(2, len(words[i]) - 2)
                words[i : i + 1] = [words[i][:cut], words[i][cut:]]
    text = " ".join(words)
    if "suffix" in ops or rng.random() < 0.3:
        text += rng.choice(SUFFIXES)
    return text


def build_set(real: list[tuple[str, str]], size: int, rng: random.Random, rewrite_share: float = 0.1):
    """Items (title, story, family) with ~rewrite_share of them injected rewrites."""
    n_rewrites = int(size * rewrite_share / (1 + rewrite_share))
    n_base = size - n_rewrites
    pool = real[:]
    rng.shuffle(pool)
    base = pool[:n_base]
    if len(base) < n_base:
        generated = synthetic_titles([t for t, _ in real], n_base - len(base), rng, {t for t, _ in real})
        base += [(t, f"gen-{i}") for i, t in enumerate(generated)]
    items = [(t, story, i) for i, (t, story) in enumerate(base)]
    for fam in rng.sample(range(len(base)), n_rewrites):
        title, story = base[fam]
        new = rewrite(title, rng)
        if new == title:
            new = title + rng.choice(SUFFIXES)
        items.append((new, story, fam))
    rng.shuffle(items)
    return items


# --------------------------------------------------------------------------- evaluation


def truth_pairs(items) -> set[tuple[int, int]]:
    fams = defaultdict(list)
    for idx, (_, _, fam) in enumerate(items):
        fams[fam].append(idx)
    return {(a, b) for members in fams.values() if len(members) > 1 for a, b in combinations(sorted(members), 2)}


def pairs_from_groups(groups: dict[int, int]) -> set[tuple[int, int]]:
    members = defaultdict(list)
    for idx, g in groups.items():
        members[g].append(idx)
    return {(a, b) for m in members.values() if len(m) > 1 for a, b in combinations(sorted(m), 2)}


def prf(predicted: set[tuple[int, int]], truth: set[tuple[int, int]], items) -> dict:
    tp = len(predicted & truth)
    fp = sum(1 for a, b in predicted - truth if items[a][1] != items[b][1])
    fn = len(truth - predicted)
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r) if p + r else 0.0, 4),
            "predicted_pairs": len(predicted)}


def run_neardup(items, config: NearDupConfig) -> set[tuple[int, int]]:
    batch = [HeadlineItem(item_id=f"{i:07d}", title=t, lang="en") for i, (t, _, _) in enumerate(items)]
    matches = cluster_headlines(batch, (), config)
    groups = {i: i for i in range(len(items))}
    for m in matches:
        groups[int(m.item_id)] = int(m.canonical_item_id)
    return pairs_from_groups(groups)


def run_allpairs(items, config: NearDupConfig) -> set[tuple[int, int]]:
    """The same clustering with the candidate search replaced by scoring every
    pair (dense weighted intersections in row chunks): what blocking costs."""
    from scipy import sparse

    def dense_scored_pairs(self, members, lang):
        keys = [self.features[m].exact_key for m in members]
        rows, grams = encode_grams(keys, config.ngram)
        w = self.gram_weights(grams)
        _, cols = np.unique(grams, return_inverse=True)
        n = len(members)
        x = sparse.csr_matrix((w, (rows, cols)), shape=(n, int(cols.max()) + 1))
        ind = x.copy()
        ind.data[:] = 1.0
        mass = np.asarray(x.sum(axis=1)).ravel()
        threshold = config.threshold_for(lang)
        out = []
        for lo in range(0, n, 1000):
            inter = (x[lo : lo + 1000] @ ind.T).toarray()
            jac = inter / (mass[lo : lo + 1000, None] + mass[None, :] - inter)
            ii, jj = np.nonzero(jac >= config.min_gram_jaccard)
            for a, b in zip((ii + lo).tolist(), jj.tolist()):
                if a < b:
                    score = self.score(members[a], members[b])
                    if score >= threshold:
                        out.append((members[a], members[b], score))
        return out

    original = HeadlineIndex.scored_pairs
    HeadlineIndex.scored_pairs = dense_scored_pairs
    try:
        return run_neardup(items, config)
    finally:
        HeadlineIndex.scored_pairs = original


def run_minhash(items, threshold: float, num_perm: int = 128) -> set[tuple[int, int]]:
    from datasketch import MinHash, MinHashLSH

    grams = [[g.encode("utf-8") for g in headline_features(t).grams] for t, _, _ in items]
    hashes = MinHash.bulk(grams, num_perm=num_perm)
    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    with lsh.insertion_session() as session:
        for i, h in enumerate(hashes):
            session.insert(i, h)
    predicted = set()
    for i, h in enumerate(hashes):
        for j in lsh.query(h):
            if j != i:
                predicted.add((min(i, j), max(i, j)))
    return predicted


def timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("path", nargs="?", default=DEFAULT_PATH)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--lsh-thresholds", default="0.5,0.6,0.7,0.8")
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args(argv)
    real = load_titles(args.path)
    config = NearDupConfig()
    gated = NearDupConfig(gate_by_lang={}, gate_default=True)
    lsh_ts = [float(x) for x in args.lsh_thresholds.split(",")]
    report = {"path": args.path, "config": {"threshold_en": config.threshold_for("en"), "gate_en": config.gate_for("en")},
              "runs": []}
    best_lsh = None
    for size in [int(s) for s in args.sizes.split(",")]:
        rng = random.Random(args.seed + size)
        items = build_set(real, size, rng)
        truth = truth_pairs(items)
        run = {"size": len(items), "injected_pairs": len(truth), "methods": {}}
        print(f"\n== {len(items)} headlines, {len(truth)} injected duplicate pairs")
        pred, secs = timed(run_neardup, items, config)
        run["methods"]["neardup"] = {"seconds": round(secs, 2), **prf(pred, truth, items)}
        pred, secs = timed(run_neardup, items, gated)
        run["methods"]["neardup-gated"] = {"seconds": round(secs, 2), **prf(pred, truth, items)}
        if len(items) <= 20000:
            pred, secs = timed(run_allpairs, items, config)
            run["methods"]["allpairs"] = {"seconds": round(secs, 2), **prf(pred, truth, items)}
        if best_lsh is None:  # pick the LSH threshold with the best F1 on the first (small) set
            scores = []
            for t in lsh_ts:
                pred, secs = timed(run_minhash, items, t)
                scores.append((prf(pred, truth, items)["f1"], -t, t, pred, secs))
                print(f"   minhash-lsh threshold {t}: F1 {scores[-1][0]:.3f} ({secs:.1f} s)")
            best = max(scores, key=lambda s: (s[0], s[1]))
            best_lsh = best[2]
            run["methods"]["minhash-lsh"] = {"seconds": round(best[4], 2), "threshold": best_lsh,
                                             **prf(best[3], truth, items)}
        else:
            pred, secs = timed(run_minhash, items, best_lsh)
            run["methods"]["minhash-lsh"] = {"seconds": round(secs, 2), "threshold": best_lsh,
                                             **prf(pred, truth, items)}
        base = run["methods"]["neardup"]["seconds"]
        for name, m in run["methods"].items():
            m["time_vs_neardup"] = round(m["seconds"] / base, 2) if base else None
            print(f"   {name:14s} {m['seconds']:7.2f} s  x{m['time_vs_neardup']:<6}  P {m['precision']:.3f}  "
                  f"R {m['recall']:.3f}  F1 {m['f1']:.3f}  (pairs {m['predicted_pairs']})")
        report["runs"].append(run)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
