"""item_embeddings[H]: one vector per canonical item of the hour (cache first)."""


from typing import Optional

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    ConfigurableResource,
    MaterializeResult,
    MetadataValue,
    RetryPolicy,
    asset,
)

from ..embeddings import EmbeddingSettings, embed_partition, make_embedder
from ..embeddings.providers import Embedder
from ..partitions import HOURLY_PARTITIONS, hour_window
from ..resources import PostgresResource


class EmbedderResource(ConfigurableResource):
    """The embedding provider. Unset fields fall back to NEWSDEDUP_EMBEDDING_* (see
    embeddings/providers.py); the API key is only ever read from the environment."""

    provider: Optional[str] = None          # use | e5 | openai
    model: Optional[str] = None
    base_url: Optional[str] = None
    dimensions: Optional[int] = None
    text_mode: Optional[str] = None         # title | title_summary
    centre: Optional[str] = None            # auto | on | off (per-language centring)
    hnsw_m: Optional[int] = None
    hnsw_ef_construction: Optional[int] = None

    def settings(self) -> EmbeddingSettings:
        base = EmbeddingSettings()
        changes = {
            k: v for k, v in {
                "provider": self.provider, "model": self.model, "base_url": self.base_url,
                "dimensions": self.dimensions, "text_mode": self.text_mode, "centre": self.centre, "hnsw_m": self.hnsw_m,
                "hnsw_ef_construction": self.hnsw_ef_construction,
            }.items() if v is not None
        }
        import dataclasses

        return dataclasses.replace(base, **changes)

    def embedder(self) -> Embedder:
        return make_embedder(self.settings())


@asset(
    partitions_def=HOURLY_PARTITIONS,
    deps=["item_duplicates"],
    group_name="clustering",
    # The openai provider is network-facing; offline providers never fail transiently.
    retry_policy=RetryPolicy(max_retries=2, delay=30),
    check_specs=[
        AssetCheckSpec("every_canonical_item_embedded", asset="item_embeddings", blocking=True,
                       description="Every canonical item of the hour has exactly one vector of the active model."),
    ],
    description="One vector per canonical item of the hour (duplicates share their canonical item's), "
                "cached by (text hash, model); model + dims recorded; per-model HNSW index.",
)
def item_embeddings(context: AssetExecutionContext, postgres: PostgresResource, embedder: EmbedderResource) -> MaterializeResult:
    start, end = hour_window(context.partition_key)
    settings = embedder.settings()
    model = embedder.embedder()
    with postgres.connection() as conn:
        stats = embed_partition(conn, model, start, end, settings)
        missing = conn.execute(
            """SELECT count(*) FROM items i
                WHERE i.partition_hour >= %s AND i.partition_hour < %s
                  AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = i.id)
                  AND NOT EXISTS (SELECT 1 FROM item_embeddings e WHERE e.item_id = i.id AND e.model = %s)""",
            (start, end, stats.model),
        ).fetchone()[0]
        conn.commit()
    return MaterializeResult(
        metadata={
            "model": stats.model,
            "dims": model.dims,
            "canonical_items": stats.items,
            "cache_hits": stats.cache_hits,
            "embedded_now": stats.computed,
            "rows_written": stats.written,
            "stale_rows_removed": stats.removed,
            "text_mode": settings.text_mode,
            "lead_chars": settings.lead_chars,
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


ASSETS = [item_embeddings]
RESOURCES = {"embedder": EmbedderResource()}
