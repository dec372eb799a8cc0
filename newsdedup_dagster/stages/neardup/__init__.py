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

Modules: headline (normalisation, features, IDF, scoring, NearDupConfig with the
calibration evidence), representative (which member is canonical), cluster (the
vectorised engine and greedy clustering). Evaluation on labelled pairs (`newsdedup neardup-eval`):
newsdedup_dagster.evaluation.neardup_pairs. Benchmark: bench/neardup.py.
"""

from newsdedup_dagster.shared.text.headline import (
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
from newsdedup_dagster.stages.neardup.cluster import DuplicateMatch, HeadlineIndex, cluster_headlines
from newsdedup_dagster.stages.neardup.representative import (
    SYNDICATOR_HOSTS,
    HeadlineItem,
    choose_representative,
    is_opaque_redirect,
    is_syndicated,
)

__all__ = [
    "SYNDICATOR_HOSTS", "DuplicateMatch", "HeadlineFeatures", "HeadlineIndex", "HeadlineItem", "IdfTable",
    "NearDupConfig", "build_idf", "char_ngrams", "choose_representative", "cluster_headlines",
    "exact_key", "headline_features", "is_duplicate",
    "is_opaque_redirect", "is_syndicated", "lead_token", "normalize_headline", "score_pair",
    "strip_outlet_suffix", "weighted_jaccard",
]
