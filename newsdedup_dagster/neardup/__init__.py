"""Near-duplicate headlines (from the lexical baseline, docs/ARCHITECTURE.md#sources): pure logic,
no Dagster, no database.

Entry points:
    cluster_headlines(items, background_titles=(), config=None) -> list[DuplicateMatch]
        items: HeadlineItem(item_id, title, lang, url, source_is_syndicator,
        published_at, is_existing_canonical); pass the lookback window's canonical
        items with is_existing_canonical=True and its headlines as background_titles
        (IDF). Returns one DuplicateMatch(item_id, canonical_item_id, rule
        'exact'|'near', similarity) per item whose canonical is another item,
        sorted by item_id. An existing canonical may appear as item_id (demoted by
        a better representative): its own duplicates then need re-pointing.
    score_pair(a, b, idf, lang=None, config=None) -> float      (gate not applied)
    is_duplicate(a, b, idf, lang=None, config=None) -> bool     (gate applied)
    build_idf(texts) -> IdfTable
    choose_representative(members) -> HeadlineItem
    evaluate_pairs(pairs, config=None, sweep=None) -> dict      (neardup-eval core)
    pairs_eval.format_report(result) -> str                      (its text output)

Modules: headline (normalisation, features, IDF, scoring, NearDupConfig with the
calibration evidence), representative (which member is canonical), cluster (the
vectorised engine and greedy clustering), pairs_eval (evaluation, second check).
Benchmark: bench/neardup.py.
"""

from .cluster import DuplicateMatch, HeadlineIndex, cluster_headlines
from .headline import (
    HeadlineFeatures,
    IdfTable,
    NearDupConfig,
    build_idf,
    char_ngrams,
    exact_key,
    headline_features,
    is_duplicate,
    lead_token,
    normalize_headline,
    score_pair,
    strip_outlet_suffix,
    weighted_jaccard,
)
from .representative import (
    SYNDICATOR_HOSTS,
    HeadlineItem,
    choose_representative,
    is_opaque_redirect,
    is_syndicated,
)

_PAIRS_EVAL_NAMES = ("derive_pairs_from_articles", "evaluate_pairs", "parse_sweep")


def __getattr__(name: str):
    # Imported on first use, so `python -m newsdedup_dagster.neardup.pairs_eval`
    # does not find its own module half-imported (runpy warning).
    if name in _PAIRS_EVAL_NAMES:
        from . import pairs_eval

        return getattr(pairs_eval, name)
    raise AttributeError(name)


__all__ = [
    "SYNDICATOR_HOSTS", "DuplicateMatch", "HeadlineFeatures", "HeadlineIndex", "HeadlineItem", "IdfTable",
    "NearDupConfig", "build_idf", "char_ngrams", "choose_representative", "cluster_headlines",
    "derive_pairs_from_articles", "evaluate_pairs", "exact_key", "headline_features", "is_duplicate",
    "is_opaque_redirect", "is_syndicated", "lead_token", "normalize_headline", "parse_sweep", "score_pair",
    "strip_outlet_suffix", "weighted_jaccard",
]
