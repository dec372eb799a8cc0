"""Place check alone on a labelled file's cross-language pairs (no embedding, no clustering).

For every pair of items in two languages: is it refused on places (shared/text/anchors.py,
kind "places", shared/text/places.py's gazetteer)? Counted separately for pairs of one gold story
and of two, with the place names behind the same-story refusals and a few examples. The figures
in docs/calibration/clustering.md#places-across-languages come from

    python bench/place_pairs.py data/itn_multilingual_dev.jsonl
    python bench/place_pairs.py sample
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
    parser.add_argument("--examples", type=int, default=10)
    args = parser.parse_args()
    rows = evaluation.load_data(args.data)
    items = [(r.cluster, anchors.extract(r.title, r.text if r.text and r.text != r.title else None, r.lang), r.title)
             for r in rows]
    rules = anchors.AnchorRules(years=False, min_names=0, places=True, numbers=False, min_cross_names=0)
    counts = collections.Counter()
    behind = collections.Counter()
    examples = []
    for i, (gold_a, a, title_a) in enumerate(items):
        for gold_b, b, title_b in items[i + 1:]:
            if a.lang and a.lang == b.lang:
                continue
            kind = "same story" if gold_a == gold_b else "two stories"
            counts[kind] += 1
            if anchors.conflict(a, b, rules) is None:
                continue
            counts[kind + ", refused"] += 1
            if gold_a == gold_b:
                behind.update(a.place_names | b.place_names)
                examples.append((title_a[:80], a.shown("places"), title_b[:80], b.shown("places")))
    print(f"items {len(items)}, naming a place {sum(1 for _, a, _ in items if a.places)}")
    for kind in ("same story", "two stories"):
        n, refused = counts[kind], counts[kind + ", refused"]
        print(f"{kind}: {n} pairs in two languages, {refused} refused on places ({refused / max(n, 1):.2%})")
    print("places behind same-story refusals:", behind.most_common(20))
    for example in random.Random(0).sample(examples, min(args.examples, len(examples))):
        print("  ", example)


if __name__ == "__main__":
    main()
