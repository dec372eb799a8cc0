"""The near-duplicate stage's two candidate paths on the same hours, compared decision by decision.

    decide(conn, hours, candidates, ...) -> set of (item_id, anchor_item_id)
    agreement(reference, other) -> {"recall", "precision", ...}

The reference is the whole-window path (`candidates="window"`: every item of the look-back window
read and shingled); the other is the banded lookup (`candidates="bands"`, migration 121). A
decision pair is (duplicate, the anchor it points at): recall = reference pairs the other path
also made, precision = its pairs the reference also made. Used by tests/test_neardup_bands.py
(the sample day, a small window) and bench/neardup_bands.py (bench/neardup.py's headline sets).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

import yaml

from newsdedup_dagster.shared.db import load_sql
from newsdedup_dagster.stages.neardup.store import DEFAULT_BAND_GRAMS, dedup_partition

SAMPLE_DATA = Path(__file__).resolve().parents[1] / "sample_data"


def sample_day() -> tuple[list[dict], list[dict]]:
    """(sources, items) of the bundled sample day, items as in its gold file."""
    sources = yaml.safe_load((SAMPLE_DATA / "sources.yaml").read_text(encoding="utf-8"))["sources"]
    rows = [json.loads(line) for line in (SAMPLE_DATA / "gold.jsonl").read_text(encoding="utf-8").splitlines() if line]
    src = [{"id": s["id"], "lang": s["language"], "syndicator": bool(s.get("syndicator"))} for s in sources]
    items = [{"id": f"s{i:04d}", "url": r["url"], "title": r["title"], "lang": r["lang"],
              "published_at": datetime.fromisoformat(r["published_at"].replace("Z", "+00:00")), "source": r["source"]}
             for i, r in enumerate(rows)]
    return src, items


def seed(conn, sources: Sequence[dict], items: Sequence[dict]) -> list[datetime]:
    """Insert the sources and items (each item in the hour of its published_at); the hours, sorted."""
    conn.execute(load_sql("neardup_candidates_sources"), {
        "ids": [s["id"] for s in sources], "langs": [s["lang"] for s in sources],
        "syndicators": [s["syndicator"] for s in sources]})
    conn.execute(load_sql("neardup_candidates_items"), {
        "ids": [i["id"] for i in items], "urls": [i["url"] for i in items], "titles": [i["title"] for i in items],
        "langs": [i["lang"] for i in items], "published": [i["published_at"] for i in items],
        "sources": [i["source"] for i in items]})
    conn.commit()
    return sorted({i["published_at"].replace(minute=0, second=0, microsecond=0) for i in items})


def decide(conn, hours: Iterable[datetime], candidates: str, *, lookback_hours: int = 36,
           band_grams: int = DEFAULT_BAND_GRAMS, timings: list | None = None) -> set[tuple[str, str]]:
    """Forget all decisions, decide `hours` in order with the given candidate path, return the
    (duplicate, anchor) pairs. `timings` (optional) receives each hour's seconds."""
    conn.execute(load_sql("neardup_candidates_reset"))
    conn.commit()
    for hour in hours:
        start = time.perf_counter()
        dedup_partition(conn, hour, lookback_hours=lookback_hours, candidates=candidates, band_grams=band_grams)
        if timings is not None:
            timings.append(time.perf_counter() - start)
    return {(r[0], r[1]) for r in conn.execute(load_sql("neardup_candidates_decisions")).fetchall()}


def agreement(reference: set[tuple[str, str]], other: set[tuple[str, str]]) -> dict:
    """Pair recall and precision of `other` against `reference`, and the pairs that differ."""
    both = reference & other
    return {
        "reference_pairs": len(reference), "pairs": len(other),
        "recall": len(both) / len(reference) if reference else 1.0,
        "precision": len(both) / len(other) if other else 1.0,
        "missed": sorted(reference - other), "extra": sorted(other - reference),
    }
