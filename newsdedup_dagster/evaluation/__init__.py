"""Evaluation tooling: quality figures of the pipeline's stages on labelled data. The pipeline's
stages never import this package (tests/test_evaluation_boundary.py); the evaluation commands and
the benchmarks do. Nothing is imported here, so `python -m` runs a module below without a
half-imported copy of it.

- data: where labelled files are found (`--data NAME`, `--data-dir`, $NEWSDEDUP_EVAL_DATA_DIR)
- metrics: B-cubed, NMI, ARI
- clustering: `newsdedup eval`, the real embedding + clustering path in a temporary database
- neardup_pairs: `newsdedup neardup-eval`; `python -m newsdedup_dagster.evaluation.neardup_pairs`
- events_calibrate: `python -m newsdedup_dagster.evaluation.events_calibrate`
"""
