"""Fit (and check) the near-duplicate scorer's LexicalModel coefficients.

    .venv/bin/python bench/fit_neardup_weights.py \
        --msrp data/msrp_train_pairs.jsonl \
        [--itn ITN_PAIRS.jsonl] [--gn GN_PAIRS.jsonl] [--folds 5] [--seeds 0 1 2] [--C 1.0]

ITN/GN pair files come from `python -m newsdedup_dagster.evaluation.neardup_pairs derive`
(see NearDupConfig's docstring). Data is read at run time, never copied.

What it prints:
1. the coefficients of a logistic regression (sklearn, fitting only; the
   shipped scorer is numpy) over headline.MODEL_FEATURES, fitted on all MSRP
   pairs, ready to paste into headline.LEXICAL_MODEL;
2. the headline MSRP figure: k-fold stratified CV where, on each training
   split, the model is fitted and the threshold chosen (lowest with P >= 0.85
   after the min_gram_jaccard cut-off), then applied to the held-out fold
   (pairs_eval.cross_validate); the shipped threshold is the folds' mean;
3. for the SHIPPED model (headline.LEXICAL_MODEL, NearDupConfig defaults):
   in-sample MSRP threshold table, the min_gram_jaccard table, and the
   held-out ITN/GN figures at the configured threshold, next to the same
   figures for the gram-only score family of the previous release for comparison.
Features are computed with headline.pair_overlaps / model_features: the
code the scorer runs.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

import common  # noqa: F401  (this checkout's package first on sys.path)
import numpy as np

from newsdedup_dagster.evaluation.neardup_pairs import (
    cross_validate,
    evaluate_pairs,
    feature_matrix,
    format_cv,
    load_jsonl,
)
from newsdedup_dagster.shared.text.headline import (
    MODEL_FEATURES,
    NearDupConfig,
    build_idf,
    combine_scores,
    headline_features,
    pair_overlaps,
)


def main(argv=None) -> int:
    from sklearn.linear_model import LogisticRegression

    ap = argparse.ArgumentParser()
    ap.add_argument("--msrp", required=True)
    ap.add_argument("--itn", default=None)
    ap.add_argument("--gn", default=None)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0], help="one CV per seed (fold assignment)")
    ap.add_argument("--C", type=float, default=1.0)
    args = ap.parse_args(argv)
    config = NearDupConfig()
    msrp = load_jsonl(args.msrp)
    X, _gram_j, _exact, y = feature_matrix(msrp, config.ngram)

    # 1. fit on everything
    full = LogisticRegression(C=args.C, max_iter=2000).fit(X, y)
    print("fitted on all MSRP pairs (paste into headline.LEXICAL_MODEL):")
    print(f"    intercept={full.intercept_[0]:.4f},")
    for name, coef in zip(MODEL_FEATURES, full.coef_[0]):
        print(f"    {name}={coef:.4f},")

    # 2. the headline figure: fit + threshold inside each training split; the shipped threshold is
    # the mean of the folds' choices
    for seed in args.seeds:
        print("\n" + format_cv(cross_validate(msrp, config, folds=args.folds, seed=seed, C=args.C)))

    # 3. the shipped model
    print(f"\nshipped model (headline.LEXICAL_MODEL), configured threshold {config.threshold}:")
    res = evaluate_pairs(msrp, config, sweep="0.60:0.74:0.01")
    print(f"  MSRP in-sample: P {res['precision']:.3f}  R {res['recall']:.3f}  F1 {res['f1']:.3f}")
    print("  sweep: " + "; ".join(f"{row['threshold']:.2f} P {row['precision']:.3f} R {row['recall']:.3f}"
                                  for row in res["sweep"]))
    for mg in (0.30, 0.25, 0.20):
        res = evaluate_pairs(msrp, replace(config, min_gram_jaccard=mg))
        print(f"  min_gram_jaccard {mg:.2f}: P {res['precision']:.3f}  R {res['recall']:.3f}")
    for name, path in (("ITN", args.itn), ("GN", args.gn)):
        if not path:
            continue
        pairs = load_jsonl(path)
        res = evaluate_pairs(pairs, config)
        line = f"  {name} (held out): P {res['precision']:.3f}  R {res['recall']:.3f}  F1 {res['f1']:.3f}"
        if len(res["by_lang"]) > 1:
            line += "  |  " + "; ".join(f"{lang} P {v['precision']:.3f} R {v['recall']:.3f}"
                                        for lang, v in res["by_lang"].items() if lang in ("en", "zh", "ko", "ru", "fr"))
        print(line)
        # Ranking quality independent of the operating point: precision at fixed recall
        # for the model vs the gram-only score (word features off everywhere).
        gram_only = replace(config, word_features=False, word_features_by_lang={}, threshold_by_lang={})
        for label, cfg in (("model", config), ("gram-only", gram_only)):
            from newsdedup_dagster.evaluation.neardup_pairs import score_pairs

            scores, gate_ok, labels, _ = score_pairs(pairs, cfg)
            scores = np.where(gate_ok, scores, 0.0)
            order = np.argsort(-scores, kind="stable")
            tp = np.cumsum(labels[order])
            cells = []
            for target in (0.3, 0.4, 0.5, 0.6, 0.7):
                k = int(np.argmax(tp >= target * labels.sum()))
                cells.append(f"R{target:.1f} P {tp[k] / (k + 1):.3f}" if tp[-1] >= target * labels.sum() else f"R{target:.1f} -")
            print(f"    {label:9s} precision at recall: " + "  ".join(cells))
    # Mixed-language check of the same array code the clustering engine runs.
    o = pair_overlaps(headline_features("Quake kills 12 in Chile"), headline_features("Quake kills 12 in north Chile"),
                      build_idf([]), True)
    assert 0.0 <= float(combine_scores(o, True, config)) <= 1.0
    return 0


if __name__ == "__main__":
    sys.exit(main())
