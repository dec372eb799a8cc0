"""What `newsdedup prune` and the daily `prune` asset keep, by age (retention.py applies it;
built by config.retention_settings())."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from newsdedup_dagster.shared.settings import setting


@dataclass(frozen=True)
class RetentionSettings:
    """Ages after which `newsdedup prune` (and the daily `prune` asset) thins data; 0 = keep forever."""

    CALIBRATION: ClassVar[str] = "retention"  # its section in the calibration file

    # Archived feed bodies (the fetch row stays): re-parsing an hour needs its bodies.
    feed_body_days: int = setting(30, env="NEWSDEDUP_RETENTION_FEED_BODY_DAYS",
                                  doc="archived feed bodies (the fetch row stays, marked `body_pruned_at`) and "
                                      "article page texts (the row stays, marked `text_pruned_at`), days")
    # llm_calls rows (per-call detail); their daily totals are kept in llm_call_daily_totals.
    llm_call_days: int = setting(90, env="NEWSDEDUP_RETENTION_LLM_CALL_DAYS",
                                 doc="`llm_calls` rows, days; their daily totals stay in `llm_call_daily_totals`")
    # Item vectors; must exceed the longest clustering window (checked by retention.check_settings).
    vector_days: int = setting(7, env="NEWSDEDUP_RETENTION_VECTOR_DAYS",
                               doc="item vectors, days (at least twice the longest clustering window)")
    # Embedding cache entries no item vector uses are kept this long (a run may be filling the cache).
    cache_days: int = setting(2, calibrated=True, was="NEWSDEDUP_RETENTION_CACHE_DAYS",
                              doc="embedding cache entries no item vector uses, days")
    # The site's archived front pages (stages/publish/archive.py): kept for good unless asked.
    archive_days: int = setting(0, env="NEWSDEDUP_RETENTION_ARCHIVE_DAYS",
                                doc="the site's archived front pages (`<lang>/archive/<day>.html`), days; "
                                    "story and event pages always stay")
    # Rows per statement (each batch is its own transaction, so prune never holds long locks).
    batch_rows: int = setting(5000, calibrated=True, was="NEWSDEDUP_RETENTION_BATCH", doc="rows per statement (each batch commits)")
