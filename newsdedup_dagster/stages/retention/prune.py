"""Retention: delete or thin what the pipeline no longer needs (`newsdedup prune`, daily `prune`
asset). No Dagster imports, no environment reads (settings: retention_settings.RetentionSettings).

What goes, by age against `now` (each an UPDATE/DELETE in sql/queries/retention.sql, in batches of
`batch_rows`, each batch its own transaction, so pruning never holds long locks):

- feed bodies (`feed_fetches.body_gzip`) of hours older than feed_body_days, once parsed; the
  fetch row stays, marked `body_pruned_at`. Re-materialising such an hour re-parses nothing
  (its items, already stored, stay).
- article texts (`article_texts.text_gzip`, `lead`, and the page when NEWSDEDUP_ARTICLES_KEEP_HTML kept
  it) of hours older than feed_body_days; the row stays (status, word count, language, times, byline),
  marked `text_pruned_at`, so the page is not fetched again.
- `llm_calls` rows older than llm_call_days, folded into `llm_call_daily_totals` (UTC day, task,
  model, status) in the same statement: costs over any period stay exact.
- item vectors (`item_embeddings`, centred + raw) of items ingested and published before
  vector_days: the clustering reads item vectors only inside its windows (pass 2 and centroids:
  max_gap_hours / story_max_age_hours); stories keep their centroids, events use story
  centroids, centring uses the per-hour sums in `embedding_language_means`. Dropped rather than
  kept in another form: the raw vector is recomputable from the item's stored text, and the
  only readers of an old raw vector are `newsdedup reembed` (which then rewrites only the
  kept ones: old stories are not re-clustered anyway) and a re-run of an hour that old
  (which embeds its items again: CPU offline, API cost with the openai provider).
- embedding cache entries no item vector uses, older than cache_days, except the centring
  prior's texts.
- the site's archived front pages (`publish_archive_days` and `<lang>/archive/<day>.html`) of
  days older than archive_days (0 by default: kept for good); story and event pages stay.

Dry run: the same statements in one transaction, rolled back, so the counts are exact and
nothing changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import psycopg

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.presentation.site_paths import day_page
from newsdedup_dagster.shared.settings import plain_number
from newsdedup_dagster.shared.text.centring_prior import PRIOR_TEXTS
from newsdedup_dagster.shared.text.item_text import text_hash
from newsdedup_dagster.stages.retention.settings import RetentionSettings

log = logging.getLogger(__name__)

__all__ = ["PruneReport", "PruneStep", "check_settings", "cutoffs", "prune", "table_sizes"]

# (name, query, setting that sets its age)
STEPS: tuple[tuple[str, str, str], ...] = (
    ("feed_bodies", "prune_feed_bodies", "feed_body_days"),
    # Article pages' text (and kept page) go with the feed bodies; the row's metadata stays.
    ("article_texts", "prune_article_texts", "feed_body_days"),
    ("llm_calls", "prune_llm_calls", "llm_call_days"),
    ("item_vectors", "prune_item_vectors", "vector_days"),
    # after item_vectors: entries only a just-pruned vector used go in the same run
    ("embedding_cache", "prune_embedding_cache", "cache_days"),
    # The archive's day pages go with their rows (each row names its page); the pages around them
    # are linked again by the next published hour.
    ("archive_days", "prune_archive_days", "archive_days"),
)


@dataclass
class PruneStep:
    name: str
    cutoff: datetime | None          # None = this kind of data is kept forever
    rows: int = 0
    bytes: int = 0                   # logical size of what was removed (pg_column_size)


@dataclass
class PruneReport:
    now: datetime
    dry_run: bool
    steps: list[PruneStep] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self.steps)

    @property
    def bytes(self) -> int:
        return sum(s.bytes for s in self.steps)

    def as_dict(self) -> dict:
        return {"now": self.now.isoformat(), "dry_run": self.dry_run, "rows": self.rows, "bytes": self.bytes,
                "steps": {s.name: {"cutoff": s.cutoff.isoformat() if s.cutoff else None, "rows": s.rows,
                                   "bytes": s.bytes} for s in self.steps}}


def check_settings(settings: RetentionSettings, longest_vector_window_hours: float) -> None:
    """Refuse settings that would delete data the pipeline still reads."""
    for name in ("feed_body_days", "llm_call_days", "vector_days", "cache_days", "archive_days"):
        if getattr(settings, name) < 0:
            raise ValueError(f"retention {name} must be >= 0 (0 = keep forever)")
    if settings.batch_rows < 1:
        raise ValueError("retention.batch_rows must be >= 1")
    if settings.vector_days and settings.vector_days * 24 < 2 * longest_vector_window_hours:
        raise ValueError(
            f"NEWSDEDUP_RETENTION_VECTOR_DAYS={settings.vector_days} is shorter than twice the longest clustering "
            f"window ({plain_number(longest_vector_window_hours)} h): item vectors still read by the clustering "
            "would be deleted")


def cutoffs(settings: RetentionSettings, now: datetime) -> dict[str, datetime | None]:
    """Per step: rows older than this go (None = kept forever)."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    out = {}
    for name, _query, age_setting in STEPS:
        days = getattr(settings, age_setting)
        out[name] = now - timedelta(days=days) if days else None
    return out


def _keep_cache_hashes() -> list[str]:
    return [text_hash(t) for t in PRIOR_TEXTS]


def prune(conn: psycopg.Connection, settings: RetentionSettings, now: datetime | None = None,
          dry_run: bool = False, longest_vector_window_hours: float = 36.0,
          on_batch: Callable[[str, int], None] | None = None) -> PruneReport:
    """Apply the retention settings as of `now` (default: the database's clock). Idempotent: a
    second run with the same `now` removes nothing. `on_batch(step, rows)` hears of every batch
    (progress for the command)."""
    check_settings(settings, longest_vector_window_hours)
    if now is None:
        now = conn.execute(db.load_sql("server_now")).fetchone()[0]
        conn.commit()
    report = PruneReport(now=now.astimezone(UTC), dry_run=dry_run)
    limits = cutoffs(settings, report.now)
    params_extra = {"keep_hashes": _keep_cache_hashes()}
    try:
        for name, query, _setting in STEPS:
            step = PruneStep(name, limits[name])
            report.steps.append(step)
            if step.cutoff is None:
                continue
            sql = db.load_sql(query)
            while True:
                rows, size, *pages = conn.execute(sql, {"cutoff": step.cutoff, "limit": settings.batch_rows,
                                                        **params_extra}).fetchone()
                if not dry_run:
                    conn.commit()
                    _remove_archived_pages(pages[0] if pages else [])
                step.rows += int(rows)
                step.bytes += int(size)
                if on_batch is not None:
                    on_batch(name, int(rows))
                if rows < settings.batch_rows:
                    break
            log.info("prune %s: %d rows, %d bytes older than %s%s", name, step.rows, step.bytes, step.cutoff,
                     " (dry run)" if dry_run else "")
    finally:
        if dry_run:
            conn.rollback()
    return report


def _remove_archived_pages(pages: list) -> None:
    """The files of archived days whose rows were just deleted: [output_dir, lang, day] each."""
    for output_dir, lang, day in pages:
        (Path(output_dir) / lang / day_page(date.fromisoformat(day))).unlink(missing_ok=True)


def table_sizes(conn: psycopg.Connection) -> dict[str, tuple[int, int]]:
    """table -> (bytes on disk incl. TOAST and indexes, estimated rows)."""
    rows = conn.execute(db.load_sql("prune_table_sizes")).fetchall()
    conn.commit()
    return {name: (int(size), int(count)) for name, size, count in rows}
