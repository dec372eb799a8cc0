"""`prune` (daily, unpartitioned): apply the retention settings (newsdedup_dagster/stages/retention/prune.py).

Exports ASSETS, JOBS and SCHEDULES: `retention_job` materialises `prune` alone, and
`retention_schedule` runs it every day at 03:15 UTC (after the day's digest, away from the hourly
runs at :05). Keep `prune` out of the hourly and daily jobs' selections.
"""

from dagster import (
    AssetExecutionContext,
    DefaultScheduleStatus,
    MaterializeResult,
    MetadataValue,
    ScheduleDefinition,
    asset,
    define_asset_job,
)

from newsdedup_dagster import config as app_config
from newsdedup_dagster.assets.common import OWNERS
from newsdedup_dagster.assets.run_options import RunOptions
from newsdedup_dagster.resources import PostgresResource
from newsdedup_dagster.stages.retention.prune import prune as prune_data, table_sizes

RETENTION_JOB_NAME = "retention"


class PruneConfig(RunOptions):
    dry_run: bool = False


@asset(
    name="prune",
    group_name="retention",
    owners=OWNERS,
    kinds={"postgres"},
    config_schema=PruneConfig.config_schema(),
    description="Retention: feed bodies, LLM call detail (daily totals kept), old item vectors and unused "
                "embedding cache entries past their NEWSDEDUP_RETENTION_* ages are removed.",
)
def prune(context: AssetExecutionContext, postgres: PostgresResource) -> MaterializeResult:
    config = PruneConfig.from_op_config(context.op_config)
    windows = app_config.clustering_settings(None)
    with postgres.connection() as conn:
        report = prune_data(conn, app_config.retention_settings(), dry_run=config.dry_run,
                            longest_vector_window_hours=max(windows.story_max_age_hours, windows.max_gap_hours))
        sizes = table_sizes(conn)
    context.log.info("prune: %d rows, %.1f MB%s", report.rows, report.bytes / 1e6, " (dry run)" if report.dry_run else "")
    table = "| data | older than | rows | MB |\n|---|---|---|---|\n" + "\n".join(
        f"| {s.name} | {s.cutoff:%Y-%m-%d %H:%M} | {s.rows:,d} | {s.bytes / 1e6:.2f} |" if s.cutoff else
        f"| {s.name} | kept forever | 0 | 0 |" for s in report.steps)
    return MaterializeResult(metadata={
        "removed": MetadataValue.md(table),
        "rows_removed": MetadataValue.int(report.rows),
        "bytes_removed": MetadataValue.int(report.bytes),
        "dry_run": MetadataValue.bool(report.dry_run),
        "database_bytes": MetadataValue.int(sum(v[0] for v in sizes.values())),
        "report": MetadataValue.json(report.as_dict()),
    })


retention_job = define_asset_job(RETENTION_JOB_NAME, selection=[prune],
                                 description="Delete or thin data past the retention settings.")
# Running from the start: a deployment left alone for a year must not grow without bound.
retention_schedule = ScheduleDefinition(name="retention_schedule", job=retention_job, cron_schedule="15 3 * * *",
                                        execution_timezone="UTC", default_status=DefaultScheduleStatus.RUNNING)

ASSETS = [prune]
JOBS = [retention_job]
SCHEDULES = [retention_schedule]
