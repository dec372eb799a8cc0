"""Pair evaluation for the near-duplicate scorer (core of `newsdedup neardup-eval`).

Pairs are dicts {"a": str, "b": str, "label": 0|1, "lang"?: str} (the shape of
msrp_train_pairs.jsonl). IDF is computed over all texts in the pair set.

Also derives a second, headline-like check from clustered articles
({"id","title","lang","cluster"} — gnews_titles.jsonl, itn_multilingual_dev.jsonl):
same language + same cluster = positive, and for every text its nearest
same-language text of another cluster (by plain 3-gram IDF Jaccard, so the
negatives are hard ones and not chosen by the scorer under test) = negative.

Run without the lead's CLI (FILE: a path, or a file name in the data directory, see data.py):
    python -m newsdedup_dagster.evaluation.neardup_pairs eval --pairs FILE [--json] [--sweep 0.2:0.6:0.05]
    python -m newsdedup_dagster.evaluation.neardup_pairs cv --pairs FILE [--folds 5] [--seed 0]
    python -m newsdedup_dagster.evaluation.neardup_pairs derive --articles FILE --out PAIRS.jsonl \
        [--positives all|nearest] [--langs en,zh]
each with [--data-dir DIR].
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from newsdedup_dagster import config as settings_config
from newsdedup_dagster.evaluation.data import DATA_DIR_VARIABLE, data_directory, resolve_data_file
from newsdedup_dagster.shared.text.headline import (
    MODEL_FEATURES,
    HeadlineFeatures,
    NearDupConfig,
    build_idf,
    gate_passes,
    headline_features,
    model_features,
    pair_overlaps,
    score_features,
)

DEFAULT_LANG = "en"


def parse_sweep(spec: str) -> list[float]:
    """"0.2:0.6:0.05" -> [0.2, 0.25, ..., 0.6] (inclusive, rounded to 4 places)."""
    parts = [float(p) for p in spec.split(":")]
    if len(parts) != 3 or parts[2] <= 0 or parts[1] < parts[0]:
        raise ValueError(f"sweep must be START:STOP:STEP with STOP >= START and STEP > 0, got {spec!r}")
    start, stop, step = parts
    count = int(round((stop - start) / step)) + 1
    return [round(start + i * step, 4) for i in range(count) if start + i * step <= stop + 1e-9]


def _prf(predicted: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    tp = int(np.sum(predicted & labels))
    fp = int(np.sum(predicted & ~labels))
    fn = int(np.sum(~predicted & labels))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4), "tp": tp, "fp": fp, "fn": fn}


def score_pairs(
    pairs: Sequence[Mapping], config: NearDupConfig, default_lang: str = DEFAULT_LANG
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(scores, gate_ok, labels, langs) for every pair; IDF over all texts of the pairs."""
    cache: dict[str, HeadlineFeatures] = {}

    def feats(text: str) -> HeadlineFeatures:
        found = cache.get(text)
        if found is None:
            found = cache[text] = headline_features(text, config.ngram)
        return found

    pair_feats = [(feats(p["a"]), feats(p["b"])) for p in pairs]
    idf = build_idf(cache.values(), n=config.ngram, prior_docs=config.idf_prior_docs)
    langs = [str(p.get("lang") or default_lang) for p in pairs]
    scores = np.array([score_features(a, b, idf, lang, config) for (a, b), lang in zip(pair_feats, langs)])
    gate_ok = np.array([
        a.exact_key == b.exact_key or gate_passes(a, b, lang, config) for (a, b), lang in zip(pair_feats, langs)
    ], dtype=bool)
    labels = np.array([bool(int(p["label"])) for p in pairs], dtype=bool)
    return scores, gate_ok, labels, langs


def evaluate_pairs(
    pairs: Sequence[Mapping],
    config: NearDupConfig | None = None,
    sweep: Sequence[float] | str | None = None,
    *,
    default_lang: str = DEFAULT_LANG,
) -> dict:
    """Precision/recall/F1 of `is_duplicate` over labelled pairs.

    Returns {"threshold", "precision", "recall", "f1", "pairs", "positives",
    "by_lang": {lang: {...}}, "sweep": [{threshold, precision, recall, f1}...]}.
    "threshold" is the configured one (a float, or {lang: t} when the pairs mix
    languages with different thresholds). A sweep applies one threshold to all pairs.
    """
    config = config or NearDupConfig()
    if isinstance(sweep, str):
        sweep = parse_sweep(sweep)
    scores, gate_ok, labels, langs = score_pairs(pairs, config, default_lang)
    lang_set = sorted(set(langs))
    limits = np.array([config.threshold_for(lang) for lang in langs]) if langs else np.zeros(0)
    predicted = gate_ok & (scores >= limits - 1e-12)
    thresholds = {lang: config.threshold_for(lang) for lang in lang_set}
    uniform = len(set(thresholds.values())) <= 1
    result: dict = {
        "threshold": (next(iter(thresholds.values())) if thresholds else config.threshold) if uniform else thresholds,
        **{k: v for k, v in _prf(predicted, labels).items()},
        "pairs": len(pairs),
        "positives": int(labels.sum()),
    }
    langs_arr = np.array(langs)
    result["by_lang"] = {
        lang: {"threshold": thresholds[lang], "pairs": int(np.sum(langs_arr == lang)),
               **_prf(predicted[langs_arr == lang], labels[langs_arr == lang])}
        for lang in lang_set
    }
    result["sweep"] = [
        {"threshold": t, **{k: v for k, v in _prf(gate_ok & (scores >= t - 1e-12), labels).items()
                            if k in ("precision", "recall", "f1")}}
        for t in (sweep or [])
    ]
    return result


# --------------------------------------------------------------------------- cross-validation

# The operating point the threshold is chosen for: the lowest threshold whose precision reaches this.
TARGET_PRECISION = 0.85


def feature_matrix(pairs: Sequence[Mapping], ngram: int = 3):
    """(X [pairs x MODEL_FEATURES], 3-gram Jaccard, exact-match flag, labels); IDF over the pairs'
    texts, as score_pairs computes it. Features come from the code the scorer runs."""
    cache: dict[str, HeadlineFeatures] = {}

    def feats(text: str) -> HeadlineFeatures:
        found = cache.get(text)
        if found is None:
            found = cache[text] = headline_features(text, ngram)
        return found

    pf = [(feats(p["a"]), feats(p["b"])) for p in pairs]
    idf = build_idf(cache.values(), n=ngram)
    rows, gram_j, exact = [], [], []
    for a, b in pf:
        f = model_features(pair_overlaps(a, b, idf, True))
        rows.append([float(f[name]) for name in MODEL_FEATURES])
        gram_j.append(float(f["gram_jaccard"]))
        exact.append(bool(a.exact_key and a.exact_key == b.exact_key))
    labels = np.array([bool(int(p["label"])) for p in pairs])
    return np.array(rows), np.array(gram_j), np.array(exact), labels


def lowest_threshold(scores: np.ndarray, labels: np.ndarray, precision: float = TARGET_PRECISION) -> float:
    """Lowest threshold on a 0.01 grid whose predictions reach `precision`."""
    for t in np.arange(0.30, 0.95, 0.01):
        predicted = scores >= t - 1e-12
        tp = int((predicted & labels).sum())
        if tp / max(1, int(predicted.sum())) >= precision:
            return round(float(t), 2)
    return 0.95


def apply_cuts(scores: np.ndarray, gram_j: np.ndarray, exact: np.ndarray, min_gram: float) -> np.ndarray:
    """What the scorer does around the model: exact matches score 1, pairs under the 3-gram floor 0."""
    return np.where(exact, 1.0, np.where(gram_j < min_gram, 0.0, scores))


def cross_validate(pairs: Sequence[Mapping], config: NearDupConfig | None = None, folds: int = 5, seed: int = 0,
                   C: float = 1.0, precision: float = TARGET_PRECISION) -> dict:
    """Stratified k-fold CV of the whole procedure: on each training split the logistic model is
    fitted and the threshold chosen (lowest with precision >= `precision`), then applied to the
    held-out fold. Returns the folds' thresholds, their mean (the threshold to ship), and the
    out-of-fold precision/recall/F1 both at each fold's own threshold and at the mean one."""
    config = config or NearDupConfig()
    X, gram_j, exact, y = feature_matrix(pairs, config.ngram)
    oof_scores = np.zeros(len(y))
    pred = np.zeros(len(y), dtype=bool)
    chosen = []
    for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(X, y):
        model = LogisticRegression(C=C, max_iter=2000).fit(X[train], y[train])
        s_train = apply_cuts(model.predict_proba(X[train])[:, 1], gram_j[train], exact[train], config.min_gram_jaccard)
        t = lowest_threshold(s_train, y[train], precision)
        chosen.append(t)
        oof_scores[test] = apply_cuts(model.predict_proba(X[test])[:, 1], gram_j[test], exact[test],
                                      config.min_gram_jaccard)
        pred[test] = oof_scores[test] >= t - 1e-12
    mean_t = round(float(np.mean(chosen)), 2)
    return {"folds": folds, "seed": seed, "pairs": len(pairs), "thresholds": chosen, "mean_threshold": mean_t,
            "out_of_fold": _prf(pred, y), "out_of_fold_at_mean": _prf(oof_scores >= mean_t - 1e-12, y)}


def format_cv(result: Mapping) -> str:
    at_own, at_mean = result["out_of_fold"], result["out_of_fold_at_mean"]
    return (f"{result['folds']}-fold CV (seed {result['seed']}, {result['pairs']} pairs): model and threshold fitted "
            f"per training split, thresholds {result['thresholds']} (mean {result['mean_threshold']:.2f})\n"
            f"  out of fold, each fold's threshold: P {at_own['precision']:.3f}  R {at_own['recall']:.3f}  "
            f"F1 {at_own['f1']:.3f}\n"
            f"  out of fold, mean threshold {result['mean_threshold']:.2f}: P {at_mean['precision']:.3f}  "
            f"R {at_mean['recall']:.3f}  F1 {at_mean['f1']:.3f}")


# --------------------------------------------------------------------------- second check


def derive_pairs_from_articles(
    articles: Iterable[Mapping],
    *,
    positives: str = "all",
    langs: Iterable[str] | None = None,
    max_positives_per_cluster: int = 200,
    ngram: int = 3,
) -> list[dict]:
    """Labelled pairs from clustered articles (see module doc).

    Texts equal after normalisation are merged first (the exact pass catches them;
    ITN also files one blurb under several subjects: such a text belongs to all
    of them, and two texts sharing any subject are never a negative).
    positives="all": every same-subject pair (capped per cluster);
    "nearest": each text with its nearest same-cluster text only (for big clusters).
    """
    wanted = set(langs) if langs else None
    by_key: dict[tuple[str, str], dict] = {}
    for art in articles:
        lang = str(art.get("lang") or "")
        if wanted is not None and lang not in wanted:
            continue
        feats = headline_features(str(art.get("title") or ""), ngram)
        if not feats.exact_key:
            continue
        entry = by_key.setdefault((lang, feats.exact_key), {"lang": lang, "feats": feats, "clusters": set(), "ids": []})
        entry["clusters"].add(str(art["cluster"]))
        entry["ids"].append(str(art.get("id")))
    texts = sorted(by_key.values(), key=lambda e: (e["lang"], min(e["ids"])))
    idf = build_idf([t["feats"] for t in texts], n=ngram)
    out: list[dict] = []
    seen: set[tuple[int, int]] = set()

    def emit(i: int, j: int, label: int) -> None:
        key = (min(i, j), max(i, j))
        if key in seen:
            return
        seen.add(key)
        a, b = texts[key[0]], texts[key[1]]
        out.append({"id": f"{min(a['ids'])}|{min(b['ids'])}", "a": a["feats"].title, "b": b["feats"].title,
                    "label": label, "lang": a["lang"]})

    by_lang: dict[str, list[int]] = defaultdict(list)
    for idx, t in enumerate(texts):
        by_lang[t["lang"]].append(idx)
    for _lang, members in sorted(by_lang.items()):
        feats = [texts[i]["feats"] for i in members]
        clusters = [texts[i]["clusters"] for i in members]
        if positives == "all":
            per_cluster: dict[str, int] = defaultdict(int)
            by_cluster: dict[str, list[int]] = defaultdict(list)
            for x, cs in enumerate(clusters):
                for c in cs:
                    by_cluster[c].append(x)
            for cluster in sorted(by_cluster):
                xs = by_cluster[cluster]
                for ix, x in enumerate(xs):
                    for y in xs[ix + 1:]:
                        if per_cluster[cluster] < max_positives_per_cluster:
                            per_cluster[cluster] += 1
                            emit(members[x], members[y], 1)
        for x, best_pos, best_neg in _nearest_same_and_other(feats, clusters, idf):
            if positives == "nearest" and best_pos >= 0:
                emit(members[x], members[best_pos], 1)
            if best_neg >= 0:
                emit(members[x], members[best_neg], 0)
    return out


def _nearest_same_and_other(feats, clusters, idf, chunk: int = 1000):
    """For each text: index of its nearest text sharing a cluster and of its nearest
    text sharing none (plain 3-gram IDF-weighted Jaccard), -1 when there is none."""
    n = len(feats)
    if n < 2:
        return []
    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    for r, f in enumerate(feats):
        for g in f.grams:
            rows.append(r)
            cols.append(vocab.setdefault(g, len(vocab)))
            vals.append(idf.gram_weight(g))
    weights = sparse.csr_matrix((vals, (rows, cols)), shape=(n, max(1, len(vocab))))
    indicator = weights.copy()
    indicator.data[:] = 1.0
    cluster_ids: dict[str, int] = {}
    m_rows, m_cols = [], []
    for r, cs in enumerate(clusters):
        for c in cs:
            m_rows.append(r)
            m_cols.append(cluster_ids.setdefault(c, len(cluster_ids)))
    membership = sparse.csr_matrix((np.ones(len(m_rows)), (m_rows, m_cols)), shape=(n, len(cluster_ids)))
    mass = np.asarray(weights.sum(axis=1)).ravel()
    out = []
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        inter = (weights[lo:hi] @ indicator.T).toarray()
        union = mass[lo:hi, None] + mass[None, :] - inter
        with np.errstate(divide="ignore", invalid="ignore"):
            sims = np.where(union > 0, inter / union, 0.0)
        shares = (membership[lo:hi] @ membership.T).toarray() > 0
        sims[np.arange(hi - lo), np.arange(lo, hi)] = -1.0
        shares[np.arange(hi - lo), np.arange(lo, hi)] = False
        pos = np.where(shares, sims, -1.0)
        neg = np.where(shares, -1.0, sims)
        neg[np.arange(hi - lo), np.arange(lo, hi)] = -1.0
        for k in range(hi - lo):
            bp, bn = int(pos[k].argmax()), int(neg[k].argmax())
            out.append((lo + k, bp if pos[k, bp] >= 0 else -1, bn if neg[k, bn] >= 0 else -1))
    return out


# --------------------------------------------------------------------------- command line


def load_jsonl(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def format_report(result: Mapping) -> str:
    threshold = result["threshold"]
    if isinstance(threshold, Mapping):
        by_value: dict[float, list[str]] = defaultdict(list)
        for lang, value in sorted(threshold.items()):
            by_value[value].append(lang)
        threshold = "; ".join(f"{v} ({', '.join(langs) if len(langs) <= 6 else f'{len(langs)} languages'})"
                              for v, langs in sorted(by_value.items(), key=lambda kv: -len(kv[1])))
    lines = [
        f"pairs {result['pairs']} (positives {result['positives']}), threshold {threshold}: "
        f"precision {result['precision']:.3f}  recall {result['recall']:.3f}  f1 {result['f1']:.3f}"
    ]
    if len(result.get("by_lang", {})) > 1:
        for lang, r in result["by_lang"].items():
            lines.append(f"  {lang:8s} pairs {r['pairs']:5d} t={r['threshold']:.2f}  "
                         f"P {r['precision']:.3f}  R {r['recall']:.3f}  F1 {r['f1']:.3f}")
    if result.get("sweep"):
        lines.append("threshold  precision  recall  f1")
        for row in result["sweep"]:
            lines.append(f"{row['threshold']:9.3f}  {row['precision']:9.3f}  {row['recall']:6.3f}  {row['f1']:.3f}")
    return "\n".join(lines)


def apply_overrides(config: NearDupConfig, assignments: Sequence[str]) -> NearDupConfig:
    """["min_gram_jaccard=0.3"] -> replace(config, min_gram_jaccard=0.3). A global
    override of a per-language knob also clears its per-language table
    ("threshold=0.5" clears threshold_by_lang)."""
    changes: dict = {}
    for assignment in assignments:
        name, _, value = assignment.partition("=")
        name = name.strip()
        current = getattr(config, name, None)
        if isinstance(current, bool) or not isinstance(current, (int, float)):
            raise SystemExit(f"--set: {name!r} is not a numeric NearDupConfig field")
        changes[name] = type(current)(float(value))
        if f"{name}_by_lang" in NearDupConfig.__dataclass_fields__:
            changes[f"{name}_by_lang"] = {}
    return replace(config, **changes)


def config_from_options(assignments: Sequence[str] = (), gate: str = "config",
                        threshold: float | None = None) -> NearDupConfig:
    """The configured NearDupConfig with command-line overrides: --set KNOB=VALUE, --gate on|off
    for every language, --threshold for every language."""
    config = apply_overrides(NearDupConfig(), assignments)
    if gate != "config":
        config = replace(config, gate_by_lang={}, gate_default=(gate == "on"))
    if threshold is not None:
        config = replace(config, threshold=threshold, threshold_by_lang={})
    return config


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m newsdedup_dagster.evaluation.neardup_pairs")
    sub = parser.add_subparsers(dest="cmd", required=True)
    data_dir = argparse.ArgumentParser(add_help=False)
    data_dir.add_argument("--data-dir", default=None, metavar="DIR",
                          help=f"where bare file names are found (default ${DATA_DIR_VARIABLE}, else ./data)")
    ev = sub.add_parser("eval", help="precision/recall of the scorer on a pair file", parents=[data_dir])
    ev.add_argument("--pairs", required=True)
    ev.add_argument("--json", action="store_true")
    ev.add_argument("--sweep", default=None, help="START:STOP:STEP")
    ev.add_argument("--lang", default=DEFAULT_LANG, help="language of pairs without a 'lang' field")
    ev.add_argument("--gate", choices=("config", "on", "off"), default="config",
                    help="override the lead-token gate for every language")
    ev.add_argument("--threshold", type=float, default=None, help="override the threshold for every language")
    ev.add_argument("--set", action="append", default=[], metavar="KNOB=VALUE",
                    help="override a NearDupConfig number, e.g. --set min_gram_jaccard=0.3 --set gram_only_threshold=0.4")
    cv = sub.add_parser("cv", help="cross-validated precision/recall (model and threshold refit per fold)",
                        parents=[data_dir])
    cv.add_argument("--pairs", required=True)
    cv.add_argument("--folds", type=int, default=5)
    cv.add_argument("--seed", type=int, default=0)
    cv.add_argument("--json", action="store_true")
    dv = sub.add_parser("derive", help="labelled pairs from clustered articles", parents=[data_dir])
    dv.add_argument("--articles", required=True)
    dv.add_argument("--out", required=True)
    dv.add_argument("--positives", choices=("all", "nearest"), default="all")
    dv.add_argument("--langs", default=None, help="comma-separated languages to keep")
    args = parser.parse_args(argv)
    directory = data_directory(args.data_dir, settings_config.eval_data_dir())
    if args.cmd == "derive":
        pairs = derive_pairs_from_articles(
            load_jsonl(resolve_data_file(args.articles, directory)), positives=args.positives,
            langs=args.langs.split(",") if args.langs else None)
        with open(args.out, "w", encoding="utf-8") as fh:
            for p in pairs:
                fh.write(json.dumps(p, ensure_ascii=False) + "\n")
        print(f"{len(pairs)} pairs ({sum(p['label'] for p in pairs)} positive) -> {args.out}")
        return 0
    if args.cmd == "cv":
        result = cross_validate(load_jsonl(resolve_data_file(args.pairs, directory)), folds=args.folds, seed=args.seed)
        print(json.dumps(result) if args.json else format_cv(result))
        return 0
    config = config_from_options(args.set, args.gate, args.threshold)
    result = evaluate_pairs(load_jsonl(resolve_data_file(args.pairs, directory)), config, args.sweep,
                            default_lang=args.lang)
    print(json.dumps(result, ensure_ascii=False, indent=2) if args.json else format_report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
