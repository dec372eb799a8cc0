"""The Dagster code location: every asset, check, job, schedule, sensor and resource, assembled here.

Hourly graph (partition H, UTC), groups in brackets; every asset's parents are the tables its
hour reads (tests/test_hourly_lineage.py measures them):
  [ingest] raw_items -> [articles] article_texts, [dedup] item_duplicates -> [clustering]
    item_embeddings -> stories -> [llm] story_scores -> story_translations -> [events] events
    -> [publish] story_feeds
  Assets tagged newsdedup/reads_previous_hour also read their own hour H-1.
  One subsettable op computes them, hour by hour (assets/hourly.py): a run computes exactly the
  selected assets, and a backfill is one run over its range.
Daily: [digest] digest[D] <- the 24 hours of D of events and story_translations (automation
condition: runs once the day is complete and its blocking checks passed); [retention] prune, daily.

To add an hourly stage: append its HourlyStage to assets/hourly.py STAGES; any other stage: import
its module below and append it to STAGES.
"""

from __future__ import annotations

from dagster import (
    AssetSelection,
    AutomationConditionSensorDefinition,
    DefaultSensorStatus,
    Definitions,
    Enum,
    EnumValue,
    Field,
    FilesystemIOManager,
    build_init_logger_context,
    build_schedule_from_partitioned_job,
    colored_console_logger,
    define_asset_job,
    in_process_executor,
    io_manager,
    logger,
)

from newsdedup_dagster.assets import digest, hourly, retention
from newsdedup_dagster.assets.run_options import LOG_LEVELS
from newsdedup_dagster.partitions import DAILY_PARTITIONS, HOURLY_PARTITIONS
from newsdedup_dagster.resources import deployment_resources
from newsdedup_dagster.sensors import SENSORS

STAGES = (hourly, digest, retention)   # in graph order

ASSETS = [asset for stage in STAGES for asset in stage.ASSETS]
CHECKS = [check for stage in STAGES for check in getattr(stage, "ASSET_CHECKS", [])]

# The run options of every asset that takes op config, by op name: what the run coordinator checks
# a submitted run against (tests/test_run_config_trust.py checks that no asset with config is missing).
RUN_OPTIONS = {
    hourly.HOURLY_OP: hourly.HourlyOptions,
    "digest": digest.DigestConfig,
    "prune": retention.PruneConfig,
}

HOURLY_JOB_NAME = "hourly_pipeline"
DAILY_JOB_NAME = "daily_digest"

hourly_job = define_asset_job(
    HOURLY_JOB_NAME,
    selection=AssetSelection.all() - AssetSelection.assets("digest", "prune"),
    partitions_def=HOURLY_PARTITIONS,
    description="One hour of news: fetch, dedup, embed, cluster, score, translate, group into events.",
)
# The digest runs by its automation condition; the job is for launching a day by hand.
daily_job = define_asset_job(
    DAILY_JOB_NAME,
    selection=AssetSelection.assets("digest"),
    partitions_def=DAILY_PARTITIONS,
    description="Render and send the day's digest.",
)

# A few minutes past the hour, so feeds published on the hour are in.
hourly_schedule = build_schedule_from_partitioned_job(hourly_job, minute_of_hour=5)

# Evaluates the digest's automation condition (running from the start: no toggle to forget).
automation_sensor = AutomationConditionSensorDefinition(
    "digest_automation",
    target=AssetSelection.assets("digest"),
    default_status=DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
    description="Requests digest[D] once every hour of D is materialised and its blocking checks passed.",
)


# Run config may change no path: Dagster's defaults would take one from a run in the executor
# (`marker_to_close`), the io manager (`base_dir`, a StringSource that also reads {env: NAME}) and
# the console logger (`name`). Each is bound here; the console's level is an enum.
# An empty schema (not Dagster's default Any) refuses every entry instead of ignoring it.
executor = in_process_executor.configured(lambda _: {"retries": {"enabled": {}}}, name="in_process",
                                          config_schema={})


@io_manager(config_schema={}, description="Dagster's filesystem io manager in the instance's storage directory.")
def filesystem_io_manager(init_context):
    return FilesystemIOManager().create_io_manager(init_context)


@logger(Field({"log_level": Field(Enum("LogLevel", [EnumValue(x) for x in LOG_LEVELS]), is_required=False,
                                  default_value="INFO")}),
        description="Dagster's coloured console logger; the level is the one thing a run may set.")
def console(init_context):
    return colored_console_logger.logger_fn(build_init_logger_context(
        logger_config={"log_level": init_context.logger_config["log_level"], "name": "dagster"}))


defs = Definitions(
    assets=ASSETS,
    asset_checks=CHECKS,
    jobs=[hourly_job, daily_job, *retention.JOBS],
    schedules=[hourly_schedule, *retention.SCHEDULES],
    sensors=[automation_sensor, *digest.SENSORS, *SENSORS],
    resources={**deployment_resources(), "io_manager": filesystem_io_manager},
    loggers={"console": console},
    # An hour's steps run one after another against Postgres: one process per run instead of one
    # per step (each would import the stack and load its models again).
    executor=executor,
)
