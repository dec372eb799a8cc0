"""Names across languages, magnitudes and match results alone on a labelled file's pairs (no
embedding, no clustering).

For every pair of items in two languages (every pair for --kind numbers): is it refused on that
kind (shared/text/anchors.py "romanised" names, or "magnitudes" and "scores",
shared/text/numbers.py)? Counted separately for pairs of one gold story and of two, for each
minimum of romanised names a side and each spelling similarity asked for, with a few same-story
refusals. The figures in docs/calibration/clustering.md#cross-language-anchors come from

    python bench/cross_anchor_pairs.py data/itn_multilingual_dev.jsonl
    python bench/cross_anchor_pairs.py data/ecbplus_dev.jsonl --kind numbers
"""

from __future__ import annotations

import argparse
import collections
import random

from newsdedup_dagster.evaluation import clustering as evaluation
from newsdedup_dagster.shared.text import anchors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help='labelled JSON-lines file, or "sample"')
    parser.add_argument("--kind", choices=("romanised", "numbers"), default="romanised")
    parser.add_argument("--min-names", default="2,3,4", help="romanised names a side at least (comma-separated)")
    parser.add_argument("--similarity", default="0.6,0.7,0.8", help="difflib ratios tried (comma-separated)")
    parser.add_argument("--examples", type=int, default=8)
    args = parser.parse_args()
    rows = evaluation.load_data(args.data)
    items = [(r.cluster, anchors.extract(r.title, r.text if r.text and r.text != r.title else None, r.lang), r.title)
             for r in rows]
    if args.kind == "numbers":
        rules = [("numbers", anchors.AnchorRules(years=False, min_names=0, places=False, numbers=True,
                                                 min_cross_names=0), None)]
        carrying = [x for x in items if x[1].magnitudes or x[1].scores]
    else:
        rules = [(f"min {n}, similarity {s}", anchors.AnchorRules(years=False, min_names=0, places=False,
                                                                  numbers=False, min_cross_names=int(n)), float(s))
                 for n in args.min_names.split(",") for s in args.similarity.split(",")]
        carrying = [x for x in items if len(x[1].cross_names) >= min(int(n) for n in args.min_names.split(","))]
    pairs = collections.Counter()
    for i, (gold_a, a, _) in enumerate(items):
        for gold_b, b, _ in items[i + 1:]:
            if args.kind == "numbers" or not (a.lang and a.lang == b.lang):
                pairs["same story" if gold_a == gold_b else "two stories"] += 1
    print(f"items {len(items)}, carrying the kind {len(carrying)}")
    default = anchors.CROSS_NAME_SIMILARITY
    try:
        for label, rule, similarity in rules:
            anchors.CROSS_NAME_SIMILARITY = similarity if similarity is not None else default
            refused = collections.Counter()
            examples = []
            for i, (gold_a, a, _) in enumerate(carrying):
                for gold_b, b, _ in carrying[i + 1:]:
                    if args.kind == "romanised" and a.lang and a.lang == b.lang:
                        continue
                    if anchors.conflict(a, b, rule) is None:
                        continue
                    kind = "same story" if gold_a == gold_b else "two stories"
                    refused[kind] += 1
                    if gold_a == gold_b:
                        examples.append((a.lang, b.lang, anchors.conflict(a, b, rule).as_dict()))
            print(label + ": " + "; ".join(
                f"{kind} {refused[kind]} of {pairs[kind]} refused ({refused[kind] / max(pairs[kind], 1):.2%})"
                for kind in ("same story", "two stories")))
            for example in random.Random(0).sample(examples, min(args.examples, len(examples))):
                print("   ", example)
    finally:
        anchors.CROSS_NAME_SIMILARITY = default


if __name__ == "__main__":
    main()
