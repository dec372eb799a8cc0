"""item_embeddings[H]: one vector per canonical item of the hour (cache first)."""


from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetSpec,
    MaterializeResult,
    MetadataValue,
)

from newsdedup_dagster.assets.common import OWNERS, ROW_COUNT, HourlyStage, HourRun, hourly_check
from newsdedup_dagster.partitions import HOURLY_PARTITIONS, READS_PREVIOUS_HOUR, hour_window
from newsdedup_dagster.resources import EmbedderResource
from newsdedup_dagster.shared import db
from newsdedup_dagster.stages.embeddings import embed_partition

__all__ = ["EmbedderResource", "ITEM_EMBEDDINGS"]  # EmbedderResource lives in resources.py


ITEM_EMBEDDINGS_CHECKS = (
    hourly_check("every_canonical_item_embedded", asset="item_embeddings", blocking=True,
                   description="Every canonical item of the hour has exactly one vector of the active model."),
)

ITEM_EMBEDDINGS_SPEC = AssetSpec(
    "item_embeddings",
    partitions_def=HOURLY_PARTITIONS,
    # Per-language centring subtracts the running mean of the earlier hours' vectors.
    # article_texts: the page's first paragraph is the lead of an item whose feed gives none.
    deps=["raw_items", "item_duplicates", "article_texts"],
    tags=READS_PREVIOUS_HOUR,
    group_name="clustering",
    owners=OWNERS,
    kinds={"python", "postgres", "pgvector"},
    skippable=True,
    description="One vector per canonical item of the hour (duplicates share their canonical item's) of its "
                "headline and lead (the feed's summary, else its page's first paragraph), cached by (text hash, "
                "model); model + dims recorded; per-model HNSW index.",
)


def item_embeddings_hour(run: HourRun, partition_key: str) -> MaterializeResult:
    embedder = run.embedder
    start, end = hour_window(partition_key)
    settings = embedder.settings()
    model = embedder.embedder()
    with run.postgres.connection() as conn:
        stats = embed_partition(conn, model, start, end, settings)
        missing = conn.execute(
            db.load_sql("embed_hour_missing_vectors"),
            (start, end, stats.model),
        ).fetchone()[0]
        conn.commit()
    return MaterializeResult(
        metadata={
            ROW_COUNT: stats.written,
            "model": stats.model,
            "dims": model.dims,
            "canonical_items": stats.items,
            "cache_hits": stats.cache_hits,
            "embedded_now": stats.computed,
            "rows_written": stats.written,
            "stale_rows_removed": stats.removed,
            "text_mode": settings.text_mode,
            "lead_chars": settings.lead_chars,
            "leads_from_pages": stats.page_leads,
            "parallelism": getattr(model, "workers", None) or (settings.concurrency if settings.provider == "openai" else 1),
            "centred": stats.centred,
            "seconds": MetadataValue.float(round(stats.seconds, 3)),
        },
        check_results=[
            AssetCheckResult(
                check_name="every_canonical_item_embedded", passed=missing == 0,
                severity=AssetCheckSeverity.ERROR, metadata={"missing": missing},
            )
        ],
    )


ITEM_EMBEDDINGS = HourlyStage(ITEM_EMBEDDINGS_SPEC, ITEM_EMBEDDINGS_CHECKS, item_embeddings_hour)
