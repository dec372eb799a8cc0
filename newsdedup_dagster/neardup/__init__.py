"""Near-duplicate headlines (seed method 2): pure logic, no Dagster, no database.

Entry points:
    cluster_headlines(items, background_titles=(), config=None) -> list[DuplicateMatch]
    score_pair(a, b, idf, lang=None, config=None) -> float
    is_duplicate(a, b, idf, lang=None, config=None) -> bool
    evaluate_pairs(pairs, config=None, sweep=None) -> dict      (neardup-eval core)
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
from .pairs_eval import derive_pairs_from_articles, evaluate_pairs, parse_sweep
from .representative import (
    SYNDICATOR_HOSTS,
    HeadlineItem,
    choose_representative,
    is_opaque_redirect,
    is_syndicated,
)

__all__ = [
    "SYNDICATOR_HOSTS", "DuplicateMatch", "HeadlineFeatures", "HeadlineIndex", "HeadlineItem", "IdfTable",
    "NearDupConfig", "build_idf", "char_ngrams", "choose_representative", "cluster_headlines",
    "derive_pairs_from_articles", "evaluate_pairs", "exact_key", "headline_features", "is_duplicate",
    "is_opaque_redirect", "is_syndicated", "lead_token", "normalize_headline", "parse_sweep", "score_pair",
    "strip_outlet_suffix", "weighted_jaccard",
]
