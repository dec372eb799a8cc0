"""`newsdedup neardup-eval`: headline near-duplicate precision / recall on labelled pairs,
scored with the same functions the item_duplicates asset uses."""

from __future__ import annotations

import json

from newsdedup_dagster.commands.evaluate import add_data_dir_argument, data_dir_of
from newsdedup_dagster.evaluation.data import resolve_data_file


def register(subparsers) -> None:
    p = subparsers.add_parser("neardup-eval", help="near-duplicate precision/recall on labelled pairs")
    p.add_argument("--pairs", required=True, metavar="NAME",
                   help='JSON-lines of {"id","a","b","label"} (label 1 = same content): a path, or a file name '
                        'in the data directory')
    add_data_dir_argument(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--sweep", default=None, metavar="START:STOP:STEP",
                   help="threshold sweep, e.g. 0.60:0.74:0.02 (the score is a probability; default threshold 0.67)")
    p.add_argument("--lang", default="en", help="language of pairs without a 'lang' field (default en)")
    p.add_argument("--gate", choices=("config", "on", "off"), default="config", help="override the lead-token gate")
    p.add_argument("--threshold", type=float, default=None, help="override the threshold for every language")
    p.add_argument("--set", action="append", default=[], metavar="KNOB=VALUE", help="override a NearDupConfig number")
    p.set_defaults(func=cmd_neardup_eval)


def cmd_neardup_eval(args) -> int:
    from newsdedup_dagster.evaluation.neardup_pairs import (  # deferred: scikit-learn and scipy load only when it runs
        config_from_options,
        evaluate_pairs,
        format_report,
        load_jsonl,
    )

    try:
        pairs = load_jsonl(resolve_data_file(args.pairs, data_dir_of(args)))
    except (OSError, ValueError) as exc:
        print(f"newsdedup: error: cannot read pairs file {args.pairs}: {exc}")
        return 2
    missing = [i for i, p in enumerate(pairs) if not {"a", "b", "label"} <= set(p)]
    if missing:
        print(f"newsdedup: error: {args.pairs}: line {missing[0] + 1} lacks one of a, b, label")
        return 2
    config = config_from_options(args.set, args.gate, args.threshold)
    result = evaluate_pairs(pairs, config, args.sweep, default_lang=args.lang)
    if args.json:
        keys = ("threshold", "precision", "recall", "f1", "pairs") + (("sweep",) if args.sweep else ())
        print(json.dumps({k: result[k] for k in keys}, ensure_ascii=False))
    else:
        print(format_report(result))
    return 0
