"""Clustering configuration: the 3mins.news method's names and defaults (docs/ARCHITECTURE.md#sources),
per-model calibration, --set.

Every key is declared once (its bounds, one line of meaning), read from the calibration file's
[clustering] table (`clustering.<key>`, docs/calibration/clustering.md) by config.clustering_settings(), which
hands the values to `settings_for`, and accepted by `newsdedup eval --set key=value`.
Thresholds are model-specific: MODEL_DEFAULTS holds the calibrated values per embedding model,
each with one line of evidence beside it; the tables and commands are in docs/calibration/clustering.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from newsdedup_dagster.shared.settings import Bound, calibration_key, declared, setting, warn_uncalibrated
from newsdedup_dagster.stages.clustering.guard import DEFAULTS as GUARD_DEFAULTS

# Per-model defaults, each with one line of evidence; tables and commands in docs/calibration/clustering.md#clustering-thresholds.
# The one table: the declarations below name it (`per_model`), settings_for applies it and the
# configuration table shows it. A model it does not name gets the declared defaults, with a warning.
MODEL_DEFAULTS: dict[str, dict[str, Any]] = {
    "use:multilingual-v3": {
        # gnews_titles.jsonl, plain UnionFind: F1 0.647 at 0.65 (calibrated on this file);
        # docs/calibration/clustering.md#use-thresholds
        "item_threshold": 0.65,
        # itn_multilingual_dev.jsonl, time gates off: F1 0.476-0.507 at story 0.50-0.55, 0.320 at 0.70
        # (calibrated on this file); docs/calibration/clustering.md#use-thresholds
        "story_threshold": 0.55,
    },
    # The offline default (stages/embeddings/settings.py), vectors centred per language. F1 at 0.40 / 0.40
    # and k 5: gnews titles 0.857, titles + snippets 0.906, ITN dev 0.723, sample day 0.891 (k 10:
    # 0.848 / 0.891 / 0.723 / 0.891); item 0.42 splits a four-language story at cosine 0.417
    # (calibrated on these files); docs/calibration/clustering.md#clustering-thresholds
    "e5:multilingual-e5-small-q4": {"story_threshold": 0.40, "item_threshold": 0.40, "knn_k": 5},
}


@dataclass(frozen=True)
class ClusterSettings:
    CALIBRATION: ClassVar[str] = "clustering"  # its section in the calibration file

    # Ranges are what the code can run with, not what is sensible: thresholds are cosines; "time
    # gates off" in docs/calibration/clustering.md is 100000 hours; ef_search, hnsw_m and hnsw_ef_construction
    # are pgvector's own ranges (pgvector README, "Index Options" and "Query Options"); knn_k beyond
    # ef_search's ceiling finds nothing more; lock_timeout_s becomes PostgreSQL's lock_timeout in
    # milliseconds, where 0 means "wait forever" and 2147483647 ms is the largest value.
    # Per-model defaults (MODEL_DEFAULTS above) replace some of these before the calibration file applies.
    # The declared thresholds (0.7), k (10) and story age (36 h) are the 3mins.news write-up's
    # clustering values; a model outside MODEL_DEFAULTS gets them, with a warning (settings_for).
    story_threshold: float = setting(
        0.7, calibrated=True, was="NEWSDEDUP_STORY_THRESHOLD", bounds=(-1.0, 1.0), per_model=MODEL_DEFAULTS,
        doc="pass 1: cosine(item, story centroid) needed to attach")
    item_threshold: float = setting(
        0.7, calibrated=True, was="NEWSDEDUP_ITEM_THRESHOLD", bounds=(-1.0, 1.0), per_model=MODEL_DEFAULTS,
        doc="pass 2: cosine(item, item) needed for an edge")
    max_gap_hours: float = setting(
        18.0, calibrated=True, was="NEWSDEDUP_MAX_GAP_HOURS", bounds=(0.0, 1e6),
        doc="time gate: |item - story's latest item| (pass 1) and the gap between items (pass 2), hours")
    story_max_age_hours: float = setting(
        36.0, calibrated=True, was="NEWSDEDUP_STORY_MAX_AGE_HOURS", bounds=(0.0, 1e6),
        doc="a story stops absorbing items this long after its first item, hours")
    knn_k: int = setting(10, calibrated=True, was="NEWSDEDUP_KNN_K", bounds=(1, 1000), per_model=MODEL_DEFAULTS,
                         doc="KNN breadth: neighbours per item")
    centroid_window: int = setting(3, calibrated=True, was="NEWSDEDUP_CENTROID_WINDOW", bounds=(1, 100_000),
                                   doc="a story's centroid is the average of its last N items")
    # items per KNN statement: an hour's items in one round trip (bench/clustering.py)
    batch_size: int = setting(2000, calibrated=True, was="NEWSDEDUP_BATCH_SIZE", bounds=(1, 1_000_000),
                              doc="items per KNN statement (an hour in one round trip)")
    # HNSW search breadth (hnsw.ef_search, per transaction): pass-2 edge recall vs exact 0.995-0.998 at 100
    # on a 100k window of synthetic e5-like vectors (bench/clustering.py); docs/calibration/clustering.md#hnsw-ef_search
    ef_search: int = setting(100, calibrated=True, was="NEWSDEDUP_EF_SEARCH", bounds=(1, 1000), doc="`hnsw.ef_search` of the KNN")
    # KNN access path: hnsw (ordered HNSW scan + iterative scan, the default), exact (no index;
    # the bench's reference), auto (the planner decides)
    search: str = setting("hnsw", calibrated=True, was="NEWSDEDUP_SEARCH", choices=("hnsw", "exact", "auto"),
                          doc="KNN access path: `hnsw` (ordered HNSW scan), `exact` (no index), `auto` (the planner)")
    # cluster_recent_items (migration 033) keeps this many hours before the pass-2 window, so re-running
    # the last day's hours never reloads vectors; its HNSW index uses the item index's parameters
    # (the same clustering.hnsw_m / clustering.hnsw_ef_construction)
    recent_margin_hours: float = setting(
        24.0, calibrated=True, was="NEWSDEDUP_RECENT_MARGIN_HOURS", bounds=(0.0, 1e6),
        doc="hours kept in `cluster_recent_items` before the pass-2 window, so re-running the last day's hours "
            "reloads nothing")
    hnsw_m: int = setting(16, calibrated=True, was="NEWSDEDUP_HNSW_M", bounds=(2, 100),
                          doc="HNSW build parameter m of the item index (also set on the embedding stage)")
    hnsw_ef_construction: int = setting(64, calibrated=True, was="NEWSDEDUP_HNSW_EF_CONSTRUCTION", bounds=(4, 1000),
                                        doc="HNSW build parameter ef_construction of the item index, at least 2 x m")
    # pgvector builds an HNSW index fast while its graph fits in maintenance_work_mem and slowly once
    # it spills: about 2 KB per 384-d row, so 256 MB holds about 100,000 rows (docs/OPERATING.md#past-one-machine)
    index_build_memory_mb: int = setting(256, calibrated=True, was="NEWSDEDUP_INDEX_BUILD_MEMORY_MB", bounds=(64, 1_048_576),
                                         doc="memory (MB, PostgreSQL's maintenance_work_mem) for building an HNSW "
                                             "index in bulk (the item, mirror and centroid indexes): about 2 KB per "
                                             "row of 384 dimensions, so ten times production's 600,000-item window "
                                             "wants 2048 (also set on the embedding stage)")
    # pass 2: also fetch the neighbourhoods of the window's old items that H's items reach, so a
    # guard sees every known edge of a component (doubles the KNN queries; off unless the guard
    # needs it: bench/clustering.py, 10k window, pass 2 took 2.2 s with it)
    pass2_expand: bool = setting(False, calibrated=True, was="NEWSDEDUP_PASS2_EXPAND",
                                 doc="pass 2 also fetches the neighbourhoods of old window items that the hour's "
                                     "items reach (doubles the KNN queries)")
    # pass 2's KNN statement split over this many connections reading the same snapshot; 1 = one
    # statement. The same edges either way (tests/test_clustering_parallel_knn.py). Pass-2 KNN of
    # 500 items 0.47 -> 0.30 s on 2 cores (bench/clustering.py); docs/calibration/clustering.md#two-connections
    knn_connections: int = setting(2, calibrated=True, was="NEWSDEDUP_KNN_CONNECTIONS", bounds=(1, 64),
                                   doc="pass 2's KNN statement split over up to this many connections reading one "
                                       "snapshot; 1 = one statement. The same edges either way")
    # pass 3: H's leftovers join H's best new story (guard.attach_leftovers); off = the 3mins.news
    # method's two passes
    pass3: bool = setting(True, calibrated=True, was="NEWSDEDUP_PASS3", doc="pass 3: the hour's leftovers join its best new story")
    # Re-materialising H when later hours are already clustered. "keep": later hours' stories and
    # memberships stay (an ad-hoc rerun of one hour does not wipe what came after it; H then sees
    # them, so the result can differ from the first run). "reset": everything later partitions
    # built is removed first, so re-running a range in time order rebuilds exactly what the hourly
    # runs built (Dagster backfills and the demo use this; the later hours must then be re-run).
    later_partitions: str = setting(
        "keep", calibrated=True, was="NEWSDEDUP_LATER_PARTITIONS", choices=("keep", "reset"), shown="`keep` (`reset` inside backfills)",
        doc="re-running an hour when later hours are done: keep their duplicates and stories, or remove them and "
            "rebuild in time order (`item_duplicates` follows the run's `stories` section)")
    # anchor check (shared/text/anchors.py): a merge (pass-2 edge, pass-1 / pass-3 attachment) is
    # refused when both sides name years and share none; ECB+ dev: docs/calibration/clustering.md#anchor-check
    anchor_years: bool = setting(True, calibrated=True, was="NEWSDEDUP_ANCHOR_YEARS",
                                 doc="anchor check: a merge is refused when both sides name years and share none")
    # ... or when both sides, in one language, carry at least this many names and share none; 0 = off
    anchor_min_names: int = setting(2, calibrated=True, was="NEWSDEDUP_ANCHOR_MIN_NAMES", bounds=(0, 1000),
                                    doc="... or when both sides (same language) carry at least this many names and "
                                        "share none; 0 = off")
    # ... or when the two are in different languages, both name places (shared/text/places.py: a
    # gazetteer of countries and cities in every script) and no country is shared or borders one;
    # sample day + ITN dev: docs/calibration/clustering.md#places-across-languages
    anchor_places: bool = setting(True, calibrated=True, was="NEWSDEDUP_ANCHOR_PLACES",
                                  doc="... or when the two are in different languages, both name places and no "
                                      "country is shared or borders one")
    # ... and, within one language, where the names cannot decide (a side carries fewer than
    # anchor_min_names): ECB+ dev, docs/calibration/clustering.md#places-within-one-language
    anchor_places_one_language: bool = setting(True, calibrated=True, was="NEWSDEDUP_ANCHOR_PLACES_ONE_LANGUAGE",
                                               doc="... places veto within one language too where a side carries "
                                                   "fewer names than anchor_min_names")
    # ... or when both name earthquake magnitudes none within 0.3 of the other's, or match results and
    # share none (shared/text/numbers.py); docs/calibration/clustering.md#cross-language-anchors
    anchor_numbers: bool = setting(True, calibrated=True, was="NEWSDEDUP_ANCHOR_NUMBERS",
                                   doc="... or when both name magnitudes (none within 0.3) or match results (none "
                                       "shared)")
    # ... or when both name a sport (or its league) and share none (shared/text/sports.py);
    # docs/calibration/clustering.md#cross-language-anchors
    anchor_sports: bool = setting(True, calibrated=True, was="NEWSDEDUP_ANCHOR_SPORTS",
                                  doc="... or when both name a sport or its league and share none")
    # ... or when the two are in different languages, both carry at least this many names
    # transliterated to ASCII and none is alike; 0 = off. ITN dev: docs/calibration/clustering.md#cross-language-anchors
    anchor_min_cross_names: int = setting(3, calibrated=True, was="NEWSDEDUP_ANCHOR_MIN_CROSS_NAMES", bounds=(0, 1000),
                                          doc="... or when the two are in different languages, both carry at least "
                                              "this many transliterated names and none is alike; 0 = off")
    # an edge between two items in different languages that agree on an anchor (anchors.agreement:
    # the same earthquake magnitude) and conflict on none is kept down to item_threshold minus this,
    # and the guard's groups such an edge joins are one story when they share no language
    # (guard.join_across_languages); an item joins a story none of whose members is in its language
    # down to story_threshold minus this on the same terms (passes 1 and 3); 0 = off. ITN dev:
    # docs/calibration/clustering.md#cross-language-agreement
    cross_language_margin: float = setting(
        0.10, calibrated=True, was="NEWSDEDUP_CROSS_LANGUAGE_MARGIN", bounds=(0.0, 1.0),
        doc="two items in different languages that name the same magnitude and conflict on no anchor are joined "
            "at item_threshold minus this (pass 2; the groups they join are one story when they share no "
            "language), an item and a story with no member in its language at story_threshold minus this "
            "(passes 1 and 3); 0 = off")
    # pass 2: a community of >= 6 items is split again on its own edges weighted by name agreement
    # (Louvain at this resolution) when names agree more inside the parts than across them by at
    # least anchor_split_margin (mean IDF-weighted name cosine); stages/clustering/guard.py split_by_anchors
    anchor_split: bool = setting(True, calibrated=True, was="NEWSDEDUP_ANCHOR_SPLIT",
                                 doc="anchor split: a pass-2 community of >= 6 items is split again on its own "
                                     "name-weighted edges")
    anchor_split_resolution: float = setting(0.35, calibrated=True, was="NEWSDEDUP_ANCHOR_SPLIT_RESOLUTION", bounds=(0.001, 1000.0),
                                             doc="the anchor split's Louvain resolution")
    # a difference of mean cosines of non-negative weights
    anchor_split_margin: float = setting(0.10, calibrated=True, was="NEWSDEDUP_ANCHOR_SPLIT_MARGIN", bounds=(0.0, 1.0),
                                         doc="names must agree this much more inside the parts than across them")
    # asset check warning: a story larger than this is suspicious (chaining)
    max_story_size: int = setting(500, calibrated=True, was="NEWSDEDUP_MAX_STORY_SIZE", bounds=(1, 1_000_000_000),
                                  doc="asset-check warning above this story size (chaining)")
    # wait this long for another clustering run to finish before failing
    lock_timeout_s: float = setting(600.0, calibrated=True, was="NEWSDEDUP_LOCK_TIMEOUT_S", bounds=(0.001, 2_147_483.0),
                                    doc="seconds to wait for another clustering run to finish")
    # chaining guard parameters (keys declared by GuardSettings below), e.g. {"guard": "..."}
    guard: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Every way in (calibration file, --set, run config through config.merged, code) ends here.
        for key, value in [(f.name, getattr(self, f.name)) for f in fields(self) if f.name != "guard"] + [
                (k, v) for k, v in self.guard.items() if k in BOUNDS]:
            BOUNDS[key].check(key, value)
        if self.hnsw_ef_construction < 2 * self.hnsw_m:  # pgvector refuses to build such an index
            raise ValueError(f"hnsw_ef_construction={self.hnsw_ef_construction!r}: expected at least "
                             f"2 * hnsw_m ({2 * self.hnsw_m})")

    def with_overrides(self, overrides: dict[str, Any]) -> ClusterSettings:
        return _apply(self, overrides)

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        guard = out.pop("guard")
        out.update(guard)
        return out


_FIELD_TYPES = {f.name: f.type for f in fields(ClusterSettings) if f.name != "guard"}


@dataclass(frozen=True)
class GuardSettings:
    """The chaining guard's keys (stages/clustering/guard.py DEFAULTS), held in ClusterSettings.guard."""

    CALIBRATION: ClassVar[str] = "clustering"  # its section in the calibration file

    guard: str = setting(GUARD_DEFAULTS["guard"], calibrated=True, was="NEWSDEDUP_GUARD", choices=("louvain", "none"),
                         doc="chaining guard on UnionFind components (`none` = plain UnionFind, as in the 3mins.news "
                             "write-up's clustering)")
    guard_resolution: float = setting(GUARD_DEFAULTS["guard_resolution"], calibrated=True, was="NEWSDEDUP_GUARD_RESOLUTION",
                                      bounds=(0.001, 1000.0), doc="the guard's Louvain resolution")


# One entry per key, fields and guard keys, from their declarations (settings.Bound: the parser and
# the check every setting uses).
BOUNDS: dict[str, Bound] = {f.name: Bound.of(annotation, f.metadata)
                            for cls in (ClusterSettings, GuardSettings) for f, annotation in declared(cls)}
# `clustering.<key>`, its name in the calibration file, by key.
CALIBRATION_KEYS: dict[str, str] = {f.name: calibration_key(cls, f)
                                    for cls in (ClusterSettings, GuardSettings) for f, _ in declared(cls)}


def guard_defaults() -> dict[str, Any]:
    """The guard's own keys and defaults (stages/clustering/guard.py)."""
    return dict(GUARD_DEFAULTS)


def _apply(base: ClusterSettings, overrides: Mapping[str, Any]) -> ClusterSettings:
    """`base` with `overrides` (text is parsed, values are checked): "key='value': expected ..."."""
    plain: dict[str, Any] = {}
    guard = dict(base.guard)
    known_guard = guard_defaults()
    for key, value in overrides.items():
        if key not in _FIELD_TYPES and key not in known_guard:
            valid = sorted(list(_FIELD_TYPES) + list(known_guard))
            raise ValueError(f"unknown clustering setting {key!r}; valid keys: {', '.join(valid)}")
        bound = BOUNDS[key]
        if isinstance(value, str):
            value = bound.parse(key, value)
        elif bound.kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        bound.check(key, value)
        if key in _FIELD_TYPES:
            plain[key] = value
        else:
            guard[key] = value
    return dataclasses.replace(base, guard=guard, **plain)


def setting_keys() -> list[str]:
    """Every clustering key: the fields and the guard's keys."""
    return list(_FIELD_TYPES) + list(guard_defaults())


# The keys some model has a calibrated default for, in declaration order.
CALIBRATED_KEYS: tuple[str, ...] = tuple(key for key in _FIELD_TYPES if any(key in v for v in MODEL_DEFAULTS.values()))


def settings_for(model: str | None = None, overrides: Mapping[str, Any] | None = None,
                 calibration: Mapping[str, Any] | None = None) -> ClusterSettings:
    """Defaults (the model's row of MODEL_DEFAULTS over the declared ones) -> `calibration`
    ({key: value} of the calibration file's [clustering], parsed and checked, from
    config.clustering_calibration()) -> overrides (`eval --set`; run config comes in through
    config.merged, checked by the same BOUNDS). `model` None: no model (callers that read only
    model-independent keys).

    A model outside MODEL_DEFAULTS clusters at the declared defaults, with a warning naming it and
    each such key the calibration file or the overrides do not set. Warned, not refused: its
    vectors are stored by then, and a refused hour would stop every later stage; 0.7 is the
    write-up's value, not a calibration, so the warning names what to calibrate
    (docs/calibration/clustering.md#models-outside-the-table)."""
    base = ClusterSettings(guard=guard_defaults())
    if model and model not in MODEL_DEFAULTS:
        given = set(calibration or {}) | set(overrides or {})
        warn_uncalibrated(model, [(key, CALIBRATION_KEYS[key], getattr(base, key))
                                  for key in CALIBRATED_KEYS if key not in given])
    base = _apply(base, MODEL_DEFAULTS.get(model or "", {}))
    # Applied together: hnsw_m and hnsw_ef_construction are checked against each other once both are in.
    base = _apply(base, dict(calibration or {}))
    return _apply(base, dict(overrides or {}))


def parse_assignments(pairs: list[str] | None) -> dict[str, str]:
    """['story_threshold=0.7', ...] -> {'story_threshold': '0.7'}."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ValueError(f"--set {pair!r}: expected key=value")
        key, value = pair.split("=", 1)
        out[key.strip()] = value.strip()
    return out
