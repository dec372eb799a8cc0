"""Clustering configuration: the seed's names and defaults, per-model calibration, env and --set.

Every key is read from NEWSDEDUP_<KEY upper> and accepted by `newsdedup eval --set key=value`.
Thresholds are model-specific: MODEL_DEFAULTS holds the calibrated values per embedding model,
each with the evidence (dataset, figure, command) beside it.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class ClusterSettings:
    # cosine(item, story centroid) needed to attach in pass 1 (seed: 0.7)
    story_threshold: float = 0.7
    # cosine(item, item) needed for a pass-2 edge (seed: 0.7)
    item_threshold: float = 0.7
    # |item.published_at - story.latest_published_at| (pass 1) and |gap| between items (pass 2)
    max_gap_hours: float = 18.0
    # a story stops absorbing items this long after its first item (seed: 36)
    story_max_age_hours: float = 36.0
    knn_k: int = 10
    centroid_window: int = 3
    # items per KNN statement: an hour's items in one round trip (bench/clustering.py)
    batch_size: int = 2000
    # HNSW search breadth (SET LOCAL hnsw.ef_search). bench/clustering.py, e5 384-d centred-like
    # structured vectors, 500 new items, m=16 ef_construction=64, pass-2 edge recall vs exact
    # (target 0.98): 10k window 1.000 at 40/64/100; 100k window 0.947 at 40, 0.986-0.992 at 64,
    # 0.995-0.998 at 100 (two runs, helper-7, 2026-11-30), so 100 stays. Reproduce:
    #   python bench/clustering.py --sizes 10000,100000 --ef-search 40,64,100
    # (earlier, 512-d USE-like vectors at 100k: 1.000 at 100, 0.956 at 40.)
    ef_search: int = 100
    # KNN access path: hnsw (ordered HNSW scan + iterative scan, the default), exact (no index;
    # the bench's reference), auto (the planner decides)
    search: str = "hnsw"
    # cluster_recent_items (migration 033) keeps this many hours before the pass-2 window, so re-running
    # the last day's hours never reloads vectors; its HNSW index uses the item index's parameters
    # (the same NEWSDEDUP_HNSW_M / NEWSDEDUP_HNSW_EF_CONSTRUCTION)
    recent_margin_hours: float = 24.0
    hnsw_m: int = 16
    hnsw_ef_construction: int = 64
    # pass 2: also fetch the neighbourhoods of the window's old items that H's items reach, so a
    # guard sees every known edge of a component (doubles the KNN queries; off unless the guard
    # needs it: bench/clustering.py, 10k window, pass 2 took 2.2 s with it)
    pass2_expand: bool = False
    # pass 3: H's leftovers join H's best new story (guard.attach_leftovers); off = the seed's two passes
    pass3: bool = True
    # Re-materialising H when later hours are already clustered. "keep": later hours' stories and
    # memberships stay (an ad-hoc rerun of one hour does not wipe what came after it; H then sees
    # them, so the result can differ from the first run). "reset": everything later partitions
    # built is removed first, so re-running a range in time order rebuilds exactly what the hourly
    # runs built (Dagster backfills and the demo use this; the later hours must then be re-run).
    later_partitions: str = "keep"
    # asset check warning: a story larger than this is suspicious (chaining)
    max_story_size: int = 500
    # wait this long for another clustering run to finish before failing
    lock_timeout_s: float = 600.0
    # chaining guard parameters (keys defined by clustering/guard.py), e.g. {"guard": "..."}
    guard: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.later_partitions not in ("keep", "reset"):
            raise ValueError(f"later_partitions={self.later_partitions!r}: expected keep or reset")

    def with_overrides(self, overrides: dict[str, Any]) -> "ClusterSettings":
        return _apply(self, overrides)

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        guard = out.pop("guard")
        out.update(guard)
        return out


# Per-model defaults. Evidence for each value is in the comment beside it.
MODEL_DEFAULTS: dict[str, dict[str, Any]] = {
    "use:multilingual-v3": {
        # item_threshold: gnews_titles.jsonl (one undated partition = pass 2 alone), plain UnionFind,
        # k=10, B-cubed F1 by threshold: 0.60 0.479 | 0.65 0.647 | 0.68 0.644 | 0.70 0.623 | 0.72 0.588.
        # Cross-lingual pairs of one event sit at 0.6-0.77 (fixture tests/clustering_fixtures.py EU_AI),
        # so 0.65 is also the highest value that keeps the seed's four-language example together.
        # Reproduce: newsdedup eval --data ../shared/data/gnews_titles.jsonl --sweep item_threshold=0.6:0.72:0.02
        "item_threshold": 0.65,
        # story_threshold: itn_multilingual_dev.jsonl with max_gap_hours=story_max_age_hours=100000,
        # (story, item) -> F1: (0.50, 0.50) 0.503 | (0.50, 0.55) 0.507 | (0.55, 0.60) 0.476 |
        # (0.60, 0.60) 0.430 | (0.50, 0.70) 0.467 | (0.70, 0.70) 0.320. A centroid averages several
        # languages, so an item matches it at a lower cosine than it matches any single article.
        # Reproduce: newsdedup eval --data ../shared/data/itn_multilingual_dev.jsonl --set max_gap_hours=100000
        #   --set story_max_age_hours=100000 --sweep story_threshold=0.5:0.7:0.05
        # (Figures above: before the guard and pass 3. With them, helper-6, NEWSDEDUP_EMBEDDING_PROVIDER=use:
        #  these defaults: gnews F1 0.753 NMI 0.880, itn 0.468; story 0.6 item 0.5 guard_resolution 2.0
        #  (guard.CALIBRATION["use"]): gnews F1 0.792 NMI 0.899 -- USE misses the issue-5 targets either way.)
        "story_threshold": 0.55,
    },
    # The offline default (embeddings/providers.py). Vectors are centred per language
    # (providers.CENTRING_DEFAULTS; raw e5 puts unrelated text near cosine 0.76-0.85, centred e5 near
    # 0: itn pair cosines same subject median 0.45, different subject p99 0.32), pass 2 = UnionFind +
    # Louvain guard (guard=louvain, guard_resolution=1.0), pass 3 on, k=10. Measured through the real
    # pipeline with `newsdedup eval` (helper-6, 2026-11-30; defaults unless stated):
    #   gnews_titles.jsonl (11,109 items, one partition):
    #     P 0.820 R 0.897 F1 0.857 NMI 0.929, largest 422 (targets F1 0.80 / NMI 0.90 met)
    #     item_threshold 0.35 F1 0.835 NMI 0.922 | 0.40 0.857 0.929 | 0.45 0.851 0.927
    #     guard=none (the seed's UnionFind): F1 0.122, largest 10,498 -- the guard decides gnews
    #     pass3=false: F1 0.856
    #     newsdedup eval --data ../shared/data/gnews_titles.jsonl [--sweep item_threshold=0.35:0.45:0.05]
    #   itn_multilingual_dev.jsonl (2,306 items, 1,270 partitions), time gates off:
    #     P 0.742 R 0.703 F1 0.722 NMI 0.891 (target F1 0.65 met)
    #     story_threshold 0.35 F1 0.720 | 0.40 0.722 | 0.45 0.688
    #     item_threshold  0.35 F1 0.711 | 0.40 0.722 | 0.45 0.723
    #     guard=none 0.721, pass3=false 0.720, pass2_expand=true 0.708 (so expand stays off)
    #     newsdedup eval --data ../shared/data/itn_multilingual_dev.jsonl --set max_gap_hours=100000
    #       --set story_max_age_hours=100000 [--sweep story_threshold=0.35:0.45:0.05]
    #   With the live time gates (18 h / 36 h) itn scores 0.34: its postings of one subject are days apart.
    # The research prototype (bench/clustering_research.py --model e5 --centre online --method guard)
    # found the same plateau (story 0.35-0.45 x item 0.35-0.45).
    # Re-chosen once for the default text (headline + lead) over gnews titles, ITN and the sample day
    # together, maximising the worst file's F1 margin over its target: 0.40 / 0.40 (docs/CALIBRATION.md).
    "e5:multilingual-e5-small-q4": {"story_threshold": 0.40, "item_threshold": 0.40},
}

_FIELD_TYPES = {f.name: f.type for f in fields(ClusterSettings) if f.name != "guard"}


def guard_defaults() -> dict[str, Any]:
    """The guard's own keys and defaults, if the guard module declares them."""
    try:
        from . import guard as guard_module
    except ImportError:
        return {}
    return dict(getattr(guard_module, "DEFAULTS", {}) or {})


def _coerce(key: str, value: Any, like: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if isinstance(like, bool):
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"{key}={value!r}: expected true/false")
        if isinstance(like, int) and not isinstance(like, bool):
            try:
                return int(float(text)) if float(text).is_integer() else int(text)
            except ValueError as exc:
                raise ValueError(f"{key}={value!r} is not an integer") from exc
        if isinstance(like, float):
            try:
                return float(text)
            except ValueError as exc:
                raise ValueError(f"{key}={value!r} is not a number") from exc
        if like is None:
            for cast in (int, float):
                try:
                    return cast(text)
                except ValueError:
                    pass
        return text
    return value


def _apply(base: ClusterSettings, overrides: dict[str, Any]) -> ClusterSettings:
    plain: dict[str, Any] = {}
    guard = dict(base.guard)
    known_guard = guard_defaults()
    for key, value in overrides.items():
        if key in _FIELD_TYPES:
            plain[key] = _coerce(key, value, getattr(base, key))
        elif key in known_guard or key in guard:
            guard[key] = _coerce(key, value, guard.get(key, known_guard.get(key)))
        else:
            valid = sorted(list(_FIELD_TYPES) + list(known_guard))
            raise ValueError(f"unknown clustering setting {key!r}; valid keys: {', '.join(valid)}")
    return dataclasses.replace(base, guard=guard, **plain)


def settings_for(model: str | None = None, overrides: dict[str, Any] | None = None, env: bool = True) -> ClusterSettings:
    """Defaults -> guard defaults -> per-model calibration -> NEWSDEDUP_<KEY> env -> overrides."""
    base = ClusterSettings(guard=guard_defaults())
    base = _apply(base, MODEL_DEFAULTS.get(model or "", {}))
    if env:
        from_env = {}
        for key in list(_FIELD_TYPES) + list(base.guard):
            raw = os.environ.get(f"NEWSDEDUP_{key.upper()}")
            if raw not in (None, ""):
                from_env[key] = raw
        base = _apply(base, from_env)
    return _apply(base, overrides or {})


def parse_assignments(pairs: list[str] | None) -> dict[str, str]:
    """['story_threshold=0.7', ...] -> {'story_threshold': '0.7'}."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ValueError(f"--set {pair!r}: expected key=value")
        key, value = pair.split("=", 1)
        out[key.strip()] = value.strip()
    return out
