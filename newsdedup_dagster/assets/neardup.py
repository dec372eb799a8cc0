"""item_duplicates[H]: URL, exact and near-duplicate headlines of hour H against each other and
against the canonical items of the lookback window. Thin: see newsdedup_dagster/stages/neardup/."""

from typing import Literal

from dagster import AssetSpec, MaterializeResult
from pydantic import Field

from newsdedup_dagster import config as settings
from newsdedup_dagster.assets.common import OWNERS, ROW_COUNT, HourlyStage, HourRun, table
from newsdedup_dagster.assets.run_options import RunOptions
from newsdedup_dagster.partitions import HOURLY_PARTITIONS, READS_PREVIOUS_HOUR, hour_start
from newsdedup_dagster.stages.neardup.store import dedup_partition


class ItemDuplicatesConfig(RunOptions):
    # keep | reset (stages/neardup/store.py). Unset: the run's choice for `stories`, else reset
    # inside a Dagster backfill, else clustering.later_partitions, else keep.
    later_partitions: Literal["keep", "reset"] | None = Field(
        None, description="keep or reset; unset: the stories op's choice, reset in a backfill, else "
                          "clustering.later_partitions")


def later_partitions(run: HourRun) -> str:
    """One rebuild mode per run: a run that resets the clustering of later hours resets their
    duplicates too, else H's stories would be scored against copies that arrived after H."""
    own = run.options.item_duplicates.later_partitions
    if own:
        return own
    if run.options.stories.later_partitions:
        return run.options.stories.later_partitions
    if run.in_backfill:
        return "reset"
    return settings.dedup_settings().later_partitions or "keep"


ITEM_DUPLICATES_SPEC = AssetSpec(
    "item_duplicates",
    partitions_def=HOURLY_PARTITIONS,
    # H compares its items with the canonical items of the 36 hours before it, i.e. with what
    # raw_items and item_duplicates of those hours left. The self-dependency on H-1 orders that
    # (H-1 waited for H-2, ... each for its own raw_items); a 36-partition mapping on raw_items would
    # say the same thing 36 times over (docs/ARCHITECTURE.md#the-hourly-assets-as-one-subsettable-op).
    deps=["raw_items"],
    tags=READS_PREVIOUS_HOUR,
    group_name="dedup",
    owners=OWNERS,
    kinds={"python", "postgres"},
    skippable=True,
    description="Duplicates of hour H's items (rule url / exact / near); duplicates are not embedded but join "
                "their canonical item's story.",
)


def item_duplicates_hour(run: HourRun, partition_key: str) -> MaterializeResult:
    dedup = settings.dedup_settings()
    later = later_partitions(run)
    with run.postgres.connection() as conn:
        report = dedup_partition(conn, hour_start(partition_key), lookback_hours=dedup.lookback_hours,
                                 later_partitions=later, candidates=dedup.candidates, band_grams=dedup.band_grams)
    groups = sorted(report.groups, key=lambda g: (-g["members"], g["anchor"]))
    return MaterializeResult(
        metadata={
            ROW_COUNT: report.duplicates,
            "items": report.items,
            "duplicates": report.duplicates,
            "canonical_items": report.items - report.duplicates,
            "rule_url": report.by_rule["url"],
            "rule_exact": report.by_rule["exact"],
            "rule_near": report.by_rule["near"],
            "window_canonicals": report.window_canonicals,
            "lookback_hours": dedup.lookback_hours,
            "later_partitions": later,
            "later_duplicates_removed": report.later_duplicates_removed,
            "merged_groups": table(
                ({"members": g["members"], "representative": g["representative_title"],
                  "other_headlines": " / ".join(t for t in g["titles"] if t != g["representative_title"])}
                 for g in groups),
                ["members", "representative", "other_headlines"], limit=30),
        }
    )


ITEM_DUPLICATES = HourlyStage(ITEM_DUPLICATES_SPEC, (), item_duplicates_hour)
