"""item_duplicates[H]: URL, exact and near-duplicate headlines of hour H against each other and
against the canonical items of the lookback window. Thin: see newsdedup_dagster/neardup/."""

import os

from dagster import AssetExecutionContext, MaterializeResult, MetadataValue, asset

from ..neardup.store import DEFAULT_LOOKBACK_HOURS, dedup_partition, groups_markdown
from ..partitions import HOURLY_PARTITIONS, hour_start
from ..resources import PostgresResource


def lookback_hours() -> int:
    return int(os.environ.get("NEWSDEDUP_NEARDUP_LOOKBACK_HOURS") or DEFAULT_LOOKBACK_HOURS)


@asset(
    partitions_def=HOURLY_PARTITIONS,
    deps=["raw_items"],
    group_name="hourly",
    kinds={"python", "postgres"},
    description="Duplicates of hour H's items (rule url / exact / near); duplicates are not embedded but join their canonical item's story.",
)
def item_duplicates(context: AssetExecutionContext, postgres: PostgresResource) -> MaterializeResult:
    with postgres.connection() as conn:
        report = dedup_partition(conn, hour_start(context.partition_key), lookback_hours=lookback_hours())
    return MaterializeResult(
        metadata={
            "items": report.items,
            "duplicates": report.duplicates,
            "canonical_items": report.items - report.duplicates,
            "rule_url": report.by_rule["url"],
            "rule_exact": report.by_rule["exact"],
            "rule_near": report.by_rule["near"],
            "window_canonicals": report.window_canonicals,
            "lookback_hours": lookback_hours(),
            "merged_groups": MetadataValue.md(groups_markdown(report)),
        }
    )


ASSETS = [item_duplicates]
