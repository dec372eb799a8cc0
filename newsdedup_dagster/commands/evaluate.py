"""`newsdedup eval --data FILE [--json] [--set key=value ...] [--sweep key=start:stop:step]`."""

from __future__ import annotations

import argparse
import json
import sys

HELP_KEYS = "story_threshold, item_threshold, max_gap_hours, story_max_age_hours, knn_k, centroid_window, batch_size, ef_search (+ guard keys)"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="score clustering on a labelled JSON-lines file (fresh temporary database)",
        description=(
            "Load a labelled JSON-lines file ({id,title,text,lang,published_at,source,cluster}) into a fresh "
            "temporary database, run the real embedding + clustering path one hour partition at a time, and print "
            "B-cubed precision/recall/F1, NMI, ARI, number of clusters and the largest cluster."
        ),
    )
    parser.add_argument("--data", required=True, help="labelled JSON-lines file")
    parser.add_argument("--json", action="store_true", help="print the result as JSON (one object per line when sweeping)")
    parser.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE",
                        help=f"override a clustering setting ({HELP_KEYS})")
    parser.add_argument("--sweep", metavar="KEY=START:STOP:STEP", help="run once per value of one setting")
    parser.add_argument("--no-cache", action="store_true",
                        help="do not reuse (or keep) raw vectors in the persistent eval cache database")
    parser.set_defaults(func=handle)


def _fmt(result: dict) -> str:
    return (
        f"B-cubed P {result['bcubed_precision']:.4f}  R {result['bcubed_recall']:.4f}  F1 {result['bcubed_f1']:.4f}  "
        f"NMI {result['nmi']:.4f}  ARI {result['ari']:.4f}  clusters {result['clusters']}  "
        f"largest {result['largest']}  items {result['items']}  {result['seconds']:.1f}s"
    )


def handle(args: argparse.Namespace) -> int:
    from ..clustering.settings import parse_assignments, settings_for
    from ..embeddings.store import EmbeddingModelMismatch
    from ..evaluation import RESULT_KEYS, evaluate, frange

    try:
        overrides = parse_assignments(args.assignments)
        settings_for(None, overrides)  # validate keys and values before any work
        sweep = None
        if args.sweep:
            if "=" not in args.sweep:
                raise ValueError(f"--sweep {args.sweep!r}: expected key=start:stop:step")
            key, spec = args.sweep.split("=", 1)
            settings_for(None, {key: spec.split(":")[0]})
            sweep = (key.strip(), frange(spec))
        results = evaluate(args.data, overrides, sweep, use_cache=not getattr(args, "no_cache", False))
    except (ValueError, FileNotFoundError, EmbeddingModelMismatch) as exc:
        print(f"newsdedup eval: error: {exc}", file=sys.stderr)
        return 2
    for result in results:
        if args.json:
            out = {k: result[k] for k in RESULT_KEYS}
            if "sweep" in result:
                out["sweep"] = result["sweep"]
            print(json.dumps(out))
        else:
            prefix = ""
            if "sweep" in result:
                prefix = ", ".join(f"{k}={v}" for k, v in result["sweep"].items()) + "  "
            print(prefix + _fmt(result))
    if not args.json:
        t = results[0]["timings"]
        print(f"model {t['model']}, {t['partitions']} partitions, embedding {t['embed_seconds']:.1f}s"
              f" ({t.get('cached_vectors', 0)} vectors from the eval cache)", file=sys.stderr)
    return 0
