"""`newsdedup eval --data NAME [--data-dir DIR] [--json] [--set key=value ...] [--sweep key=start:stop:step]`;
`newsdedup eval support --pairs FILE [--sweep]` (the briefing line support rule, evaluation/briefing_support.py)."""

from __future__ import annotations

import argparse
import json
import sys

from newsdedup_dagster import config
from newsdedup_dagster.evaluation.data import (
    DATA_DIR_VARIABLE,
    data_directory,
    resolve_data_argument,
    resolve_data_file,
)
from newsdedup_dagster.stages.clustering.settings import parse_assignments

HELP_KEYS = ("story_threshold, item_threshold, max_gap_hours, story_max_age_hours, knn_k, centroid_window, "
             "batch_size, ef_search (+ guard keys)")


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
    # Required unless an evaluation below is named (checked in handle: argparse would ask it of them too).
    parser.add_argument("--data", metavar="NAME",
                        help='(required) labelled JSON-lines file: a path, or a file name in the data directory; '
                             '"sample" for the bundled sample day')
    add_data_dir_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON (one object per line when sweeping)")
    parser.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE",
                        help=f"override a clustering setting ({HELP_KEYS})")
    parser.add_argument("--sweep", metavar="KEY=START:STOP:STEP", help="run once per value of one setting")
    parser.add_argument("--no-cache", action="store_true",
                        help="do not reuse (or keep) raw vectors in the persistent eval cache database")
    parser.add_argument("--titles-from", metavar="FILE",
                        help="(a path, or a file name in the data directory) split each row's title into headline "
                             "(this file's title of the same row number) "
                             "+ summary (the rest): gnews_titles_snippets.jsonl with gnews_titles.jsonl")
    parser.add_argument("--text", choices=("title_lead", "title"), default=None,
                        help="embedded text (default embeddings.text_mode, title_lead)")
    parser.add_argument("--lead-chars", type=int, default=None, metavar="N",
                        help="lead budget in characters (default embeddings.lead_chars)")
    parser.add_argument("--page-leads", action="store_true",
                        help="give every item its page's first paragraph, as the article stage stores it (the sample "
                             "day: its bundled pages through the stage's extractor; a file whose text is the article: "
                             "that text's first paragraph); embedded as the lead when the feed gives none "
                             "(embeddings.page_lead)")
    parser.add_argument("--headlines-only", action="store_true",
                        help="drop the feed summaries: the items as a headline-only feed carries them")
    parser.add_argument("--resamples", type=int, default=0, metavar="N",
                        help="also report mean ± sd over N runs on random 80%% subsets of the gold stories")
    parser.add_argument("--seed", type=int, default=0, help="first resample's seed (default 0)")
    parser.add_argument("--level", choices=("stories", "events"), default="stories",
                        help="score the stories (default), or the events the events stage groups them into, against "
                             "the file's event labels (its \"event\" field, else its story)")
    parser.add_argument("--by", action="append", choices=("language", "source"), default=[],
                        help="also B-cubed precision/recall/F1 over each language's (or source's) items; repeatable")
    parser.add_argument("--csv", metavar="FILE",
                        help="also write the results as one CSV table (a row per configuration and per --by group; "
                             "resamples' mean and sd as columns)")
    parser.set_defaults(func=handle)
    evaluations = parser.add_subparsers(dest="evaluation", metavar="EVALUATION",
                                        help="another evaluation instead of clustering: support")
    support = evaluations.add_parser(
        "support", help="briefing line support rule: precision/recall on labelled (line, cited sentence) pairs",
        description="Precision and recall of both classes (supported / unsupported) of the briefing line support "
                    "rule (stages/briefings/support.py), same-language and cross-language pairs apart, at the calibrated "
                    "bars and, with --sweep, over a range of each.")
    support.add_argument("--pairs", required=True, metavar="NAME",
                         help='JSON-lines of {"line","line_lang","sentence","sentence_lang","label","kind"}: a path, '
                              "or a file name in the data directory (tests/data/briefing_support_pairs.jsonl is the "
                              "calibration set)")
    add_data_dir_argument(support)
    support.add_argument("--sweep", action="store_true", help="also sweep each bar (the other at its value)")
    support.add_argument("--words-range", metavar="START:STOP:STEP", help="min_shared_words sweep (0.30:0.90:0.05)")
    support.add_argument("--cross-range", metavar="START:STOP:STEP",
                         help="min_cross_similarity sweep (0.30:0.70:0.02)")
    support.add_argument("--embedder", choices=("e5", "use", "none"), default="e5",
                         help="offline embedder of the cross-language rule (default e5, the one the bars are for)")
    support.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE",
                         help="override a rule: min_shared_words, min_cross_similarity, max_embedded_sentences, "
                              "prefix_chars (0: whole words), window_sentences")
    support.add_argument("--json", action="store_true", help="print the result as JSON")
    support.set_defaults(func=handle_support)


def handle_support(args: argparse.Namespace) -> int:
    from newsdedup_dagster.evaluation.briefing_support import run  # deferred: the embedders load only when it runs

    try:
        print(run(resolve_data_file(args.pairs, data_dir_of(args)), args.embedder, args.assignments, args.sweep,
                  args.words_range, args.cross_range, args.json))
    except (OSError, ValueError) as exc:
        print(f"newsdedup eval support: error: {exc}", file=sys.stderr)
        return 2
    return 0


def add_data_dir_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", default=None, metavar="DIR",
                        help=f"where bare file names are found (default ${DATA_DIR_VARIABLE}, else ./data)")


def data_dir_of(args: argparse.Namespace):
    """The data directory of this invocation: --data-dir, else $NEWSDEDUP_EVAL_DATA_DIR, else ./data."""
    return data_directory(getattr(args, "data_dir", None), config.eval_data_dir())


# Column labels of the printed table (the CSV keeps the full names).
_LABELS = {"bcubed_precision": "P", "bcubed_recall": "R", "bcubed_f1": "F1", "nmi": "NMI", "ari": "ARI"}


def _label(column: str) -> str:
    for key, label in _LABELS.items():
        if column == key:
            return label
        if column.startswith(key + "_"):
            return f"{label} {column[len(key) + 1:]}"
    return column


def format_table(table, by: tuple[str, ...]) -> str:
    """The results table for a terminal: short metric names, 4 decimals, blank where a figure does
    not apply (NMI, ARI and resamples are whole-run figures)."""
    shown = table if by else table.drop(columns=["breakdown", "value"])
    shown = shown.rename(columns=_label)
    for column in shown.columns[shown.dtypes == "Int64"]:
        shown[column] = shown[column].astype("string").fillna("")
    return shown.to_string(index=False, na_rep="", float_format=lambda x: f"{x:.4f}")


def handle(args: argparse.Namespace) -> int:
    if not args.data:
        print("newsdedup eval: error: the following arguments are required: --data", file=sys.stderr)
        return 2
    from newsdedup_dagster.evaluation.clustering import (  # deferred: pandas, scikit-learn
        RESULT_KEYS,
        EventStages,
        NoEventLabels,
        evaluate,
        frange,
        results_table,
    )
    from newsdedup_dagster.stages.embeddings.store import EmbeddingModelMismatch  # deferred: loads the embedders

    try:
        data_dir = data_dir_of(args)
        data = resolve_data_argument(args.data, data_dir)
        titles_from = getattr(args, "titles_from", None)
        titles_from = resolve_data_file(titles_from, data_dir) if titles_from else None
        overrides = parse_assignments(args.assignments)
        config.clustering_settings(None, overrides)  # validate keys and values before any work
        sweep = None
        if args.sweep:
            if "=" not in args.sweep:
                raise ValueError(f"--sweep {args.sweep!r}: expected key=start:stop:step")
            key, spec = args.sweep.split("=", 1)
            sweep = (key.strip(), frange(spec))
            for value in sweep[1]:  # every value of the sweep, as evaluate() will hand it over
                config.clustering_settings(None, {**overrides, sweep[0]: str(value)})
        emb_settings = config.merged(config.embedding_settings(), text_mode=getattr(args, "text", None) or None,
                                     lead_chars=getattr(args, "lead_chars", None))
        if getattr(args, "resamples", 0) < 0:
            raise ValueError("--resamples must be >= 0")
        results = evaluate(data, overrides, sweep, emb_settings=emb_settings,
                           cluster_calibration=config.clustering_calibration(),
                           use_cache=not getattr(args, "no_cache", False),
                           titles_from=titles_from, page_leads=getattr(args, "page_leads", False),
                           drop_summaries=getattr(args, "headlines_only", False),
                           resamples=getattr(args, "resamples", 0), seed=getattr(args, "seed", 0),
                           level=getattr(args, "level", "stories"),
                           event_stages=EventStages(config.grouping_settings, config.llm_settings()))
    except NoEventLabels as exc:
        print(f"newsdedup eval: {exc}", file=sys.stderr)
        return 2
    except (ValueError, FileNotFoundError, EmbeddingModelMismatch) as exc:
        print(f"newsdedup eval: error: {exc}", file=sys.stderr)
        return 2
    by = tuple(dict.fromkeys(getattr(args, "by", None) or ()))
    table = results_table(results, by)
    if getattr(args, "csv", None):
        table.to_csv(args.csv, index=False)
    if args.json:
        for result in results:
            out = {k: result[k] for k in RESULT_KEYS}
            if result.get("level", "stories") != "stories":
                out["level"] = result["level"]
            for extra in ("sweep", "resamples"):
                if extra in result:
                    out[extra] = result[extra]
            print(json.dumps(out))
    else:
        print(format_table(table, by))
    if not args.json:
        t = results[0]["timings"]
        print(f"model {t['model']}, {t['partitions']} partitions, embedding {t['embed_seconds']:.1f}s"
              f" ({t.get('cached_vectors', 0)} vectors from the eval cache)", file=sys.stderr)
    return 0
