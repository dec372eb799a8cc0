"""The hourly assets, computed by one subsettable op, hour by hour in time order.

    raw_items -> item_duplicates -> article_texts -> item_embeddings
    raw_items -> item_duplicates -> item_embeddings -> stories -> story_scores -> story_translations
      -> events -> story_feeds          (each asset's declared parents are the tables its hour reads)

Each asset is an asset of its own (its page, partitions, checks, metadata per hour); what they
share is the op. The op is subsettable: a run computes exactly the selected assets (the hourly
schedule selects all of them; "Materialize" on one asset, or a backfill of a few, selects those).
A run of one hour computes that hour of each selected asset in graph order. A run of a partition
range (every backfill: the backfill policy is a single run) computes hour H of every selected asset
before hour H+1 of any, so each hour sees exactly what the earlier hours left, as the hourly runs
did; one run, one process, one set of loaded models for the whole range.

Several assets read their own previous hour (canonical items, per-language means, story centroids,
open events). That is said by the tag `newsdedup/reads_previous_hour` and in the asset's
description, not by a self-dependency: Dagster 1.13's backfill daemon runs a self-dependent asset of
a subsettable multi-asset in a run of its own, apart from every other asset requested with it
("Self-dependant assets cannot be materialized in the same run as other assets",
dagster/_core/execution/asset_backfill.py, `_get_cant_run_because_of_parent_reason`), and a ranged run
of one asset at a time would compute each asset over the whole range before the next one started
(tests/test_dagster_self_dependency.py shows it). Walking the hours in order inside the op is what
keeps a backfill identical to the hourly runs.

A run reports an hour's materialisations when the hour's last selected stage is done, so a failure
at hour k leaves hours before k materialised and hour k of none. Transient faults inside a stage are
retried by the client that met them (feeds, pages, the model endpoint, each with its own backoff);
what still fails fails the step with an error naming the asset and hour (`StageFailed`), and the
op's one `RetryPolicy` retries the step. A retry, or a re-execution from failure once the retries are
spent, continues where the run stopped: the (asset, hour)s materialised by the run, or by the runs
it resumes (read from their materialisation records), are not computed again. Each check is a partitioned check: its result
is recorded for the hour it checked, in single-hour and ranged runs alike, and a ranged run stops at
the first hour whose blocking check fails.
"""


import time
from collections.abc import Iterator

from dagster import (
    AssetCheckEvaluation,
    AssetCheckKey,
    AssetCheckResult,
    AssetExecutionContext,
    AssetKey,
    AssetMaterialization,
    AssetRecordsFilter,
    AssetsDefinition,
    BackfillPolicy,
    Backoff,
    DagsterEventType,
    Failure,
    Jitter,
    MaterializeResult,
    MetadataValue,
    RetryPolicy,
    RetryRequested,
    multi_asset,
)

# The evaluation's link to the materialisation it checked; Dagster does not export the class.
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData,
)
from pydantic import Field

from newsdedup_dagster import config as app_config
from newsdedup_dagster.assets import articles, embeddings, events, ingest, llm, neardup, publish, stories
from newsdedup_dagster.assets.common import HourlyStage, HourRun
from newsdedup_dagster.assets.events import EventsConfig
from newsdedup_dagster.assets.ingest import RawItemsConfig
from newsdedup_dagster.assets.neardup import ItemDuplicatesConfig
from newsdedup_dagster.assets.publish import StoryFeedsConfig
from newsdedup_dagster.assets.run_options import RunOptions
from newsdedup_dagster.assets.stories import StoriesConfig
from newsdedup_dagster.partitions import HOURLY_PARTITIONS
from newsdedup_dagster.resources import EmbedderResource, LLMResource, PostgresResource

# In graph order: an hour computes its selected stages in this order.
STAGES: list[HourlyStage] = [
    ingest.RAW_ITEMS, neardup.ITEM_DUPLICATES, articles.ARTICLE_TEXTS, embeddings.ITEM_EMBEDDINGS,
    stories.STORIES, llm.STORY_SCORES, llm.STORY_TRANSLATIONS, events.EVENTS, publish.STORY_FEEDS]


class HourlyOptions(RunOptions):
    """The run options of the hourly assets, one section per asset that has any."""

    raw_items: RawItemsConfig = Field(default_factory=RawItemsConfig, description="raw_items")
    item_duplicates: ItemDuplicatesConfig = Field(default_factory=ItemDuplicatesConfig, description="item_duplicates")
    stories: StoriesConfig = Field(default_factory=StoriesConfig, description="stories")
    events: EventsConfig = Field(default_factory=EventsConfig, description="events")
    story_feeds: StoryFeedsConfig = Field(default_factory=StoryFeedsConfig, description="story_feeds")


HOURLY_OP = "hourly_chain"

# The one retry of the hourly op: what failed after the clients' own retries (a database restart, an
# endpoint's outage of minutes) is tried again after NEWSDEDUP_STEP_RETRY_DELAY, then twice that. A
# retry continues with the first (asset, hour) the failed attempt did not materialise.
HOURLY_RETRY_POLICY = RetryPolicy(max_retries=2, delay=app_config.step_retry_delay(), backoff=Backoff.EXPONENTIAL,
                                  jitter=Jitter.PLUS_MINUS)


class StageFailed(Exception):
    """An hourly asset's hour raised: the asset, the hour and the error (its cause)."""


# Dagster's tag on a re-execution from failure (the UI's "Re-execute from failure", a backfill's
# re-execution from failure); Dagster's own constant lives in a private module.
RESUME_RETRY_TAG = "dagster/is_resume_retry"


def _landed(context: AssetExecutionContext) -> set[tuple[AssetKey, str]]:
    """The (asset, hour)s this run already materialised (an earlier attempt of the step) and, for a
    re-execution from failure, those of the runs it resumes."""
    instance, run = context.instance, context.run
    run_ids = [run.run_id]
    current = run
    while current is not None and current.tags.get(RESUME_RETRY_TAG) == "true" and current.parent_run_id:
        run_ids.append(current.parent_run_id)
        current = instance.get_run_by_id(current.parent_run_id)
    landed: set[tuple[AssetKey, str]] = set()
    for run_id in run_ids:
        for record in instance.all_logs(run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION):
            materialization = record.asset_materialization
            if materialization is not None and materialization.partition:
                landed.add((materialization.asset_key, materialization.partition))
    return landed


def _for(key: AssetKey, result: AssetCheckResult) -> AssetCheckResult:
    """A stage's check result with its asset's key (the op holds the checks of every asset)."""
    return AssetCheckResult(asset_key=key, check_name=result.check_name, passed=result.passed,
                            severity=result.severity, metadata=result.metadata, description=result.description)


def _evaluation(stage: HourlyStage, hour: str, result: AssetCheckResult,
                target: AssetCheckEvaluationTargetMaterializationData | None = None) -> AssetCheckEvaluation:
    """A check's result for one hour of a ranged run (an `AssetCheckResult` takes its partition from
    the run, which a ranged run does not have). `target`: the hour's materialisation it checked, as
    Dagster links a single-hour run's result; without it the result is not current for that hour
    and the digest's automation condition would not count it as passed."""
    return AssetCheckEvaluation(
        asset_key=stage.key, check_name=result.check_name, passed=result.passed, metadata=result.metadata,
        severity=result.severity, description=result.description,
        blocking=result.check_name in stage.blocking_checks, partition=hour, target_materialization_data=target)


def materialization_target(instance, key: AssetKey, hour: str) -> AssetCheckEvaluationTargetMaterializationData | None:
    """The latest materialisation of `key`'s `hour`, as a check result's target."""
    records = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=key, asset_partitions=[hour]), limit=1).records
    if not records:
        return None
    record = records[0]
    return AssetCheckEvaluationTargetMaterializationData(storage_id=record.storage_id, run_id=record.event_log_entry.run_id,
                                                         timestamp=record.timestamp)


def selected_stages(selected: set[AssetKey]) -> list[HourlyStage]:
    """The stages of `selected`, in graph order."""
    return [stage for stage in STAGES if stage.key in selected]


def build_hourly_chain(retry_policy: RetryPolicy = HOURLY_RETRY_POLICY) -> AssetsDefinition:
    """The hourly op, with `retry_policy` (a test's shorter one; the definitions use the default)."""

    @multi_asset(
        name=HOURLY_OP,
        specs=[stage.spec for stage in STAGES],
        check_specs=[spec for stage in STAGES for spec in stage.check_specs],
        partitions_def=HOURLY_PARTITIONS,
        can_subset=True,
        # A backfill of any number of hours is one run, which walks its range in time order.
        backfill_policy=BackfillPolicy.single_run(),
        retry_policy=retry_policy,
        # Two runs of the hourly assets never overlap (the schedule's hour and a backfill, two
        # backfills): clustering, events and publishing each assume they are alone, which their
        # advisory locks enforce in the database as well.
        pool="newsdedup_hourly",
        config_schema=HourlyOptions.config_schema(),
        description="The hourly assets, computed hour by hour in time order, each run exactly the selected ones "
                    "(one hour per scheduled run; a backfill is one run over its range).",
    )
    def hourly_chain(context: AssetExecutionContext, postgres: PostgresResource, embedder: EmbedderResource,
                     llm: LLMResource) -> Iterator:
        yield from _compute(context, postgres, embedder, llm)

    return hourly_chain


def _compute(context: AssetExecutionContext, postgres: PostgresResource, embedder: EmbedderResource,
             llm: LLMResource) -> Iterator:
    options = HourlyOptions.from_op_config(context.op_config, StoryFeedsConfig.run_languages(llm.settings()))
    hours = list(context.partition_keys) if context.has_partition_key_range else [context.partition_key]
    ranged = len(hours) > 1
    stages = selected_stages(set(context.selected_asset_keys))
    selected_checks: set[AssetCheckKey] = set(context.selected_asset_check_keys)
    landed = _landed(context)
    if landed:
        context.log.info("continuing: %d (asset, hour)s already materialised by this run or the ones it "
                         "resumes", len(landed))
    context.log.info(f"{len(stages)} assets ({', '.join(s.key.to_user_string() for s in stages)}) "
                     f"x {len(hours)} hours ({hours[0]} .. {hours[-1]})")
    # A backfill, or any run over a range (the CLI's --partition-range, the Materialize dialog's
    # range), recomputes history in time order: later hours are rebuilt, not mixed with old ones.
    run = HourRun(log=context.log, postgres=postgres, embedder=embedder, llm=llm, options=options,
                  in_backfill=bool(context.run.tags.get("dagster/backfill")) or ranged, hours=hours)
    try:
        yield from _hours(context, run, hours, stages, selected_checks, landed, ranged)
    finally:
        # A run that stops early still leaves the files of the hours it published: those an hour
        # held for a later hour of the range are written now (nothing is held after the last hour).
        written = run.site_files.write_held()
        if written:
            context.log.info("story_feeds: wrote %d files held for a later hour of the range", len(written))


def _hours(context: AssetExecutionContext, run: HourRun, hours: list[str], stages: list[HourlyStage],
           selected_checks: set[AssetCheckKey], landed: set[tuple[AssetKey, str]], ranged: bool) -> Iterator:
    for hour in hours:
        # An hour is reported when all its selected stages are done: a failure inside hour k leaves
        # hours before k materialised and hour k of none, and a retry starts hour k again from its
        # first stage that had not landed.
        done: list[tuple[HourlyStage, dict, list[AssetCheckResult]]] = []
        for stage in stages:
            if (stage.key, hour) in landed:
                continue
            started = time.perf_counter()
            try:
                result = stage.materialize_hour(run, hour)
            except (Failure, RetryRequested):
                raise
            except Exception as exc:
                # The error's first line names the asset and hour (the alert's first line).
                raise StageFailed(f"{stage.key.to_user_string()}[{hour}]: {type(exc).__name__}: {exc}") from exc
            metadata = {**result.metadata,
                        "stage_seconds": MetadataValue.float(round(time.perf_counter() - started, 3))}
            check_results = [r for r in (result.check_results or [])
                             if AssetCheckKey(stage.key, r.check_name) in selected_checks]
            failed = stage.blocking_failures(check_results)
            if failed:
                yield from (_evaluation(stage, hour, r) for r in check_results)
                raise Failure(
                    description=f"{stage.key.to_user_string()}[{hour}]: blocking check failed ({', '.join(failed)}); "
                                "the assets after it and the later hours were not computed",
                    allow_retries=False)
            done.append((stage, metadata, check_results))
        for stage, metadata, check_results in done:
            if ranged:
                yield AssetMaterialization(asset_key=stage.key, partition=hour, metadata=metadata)
                if check_results:
                    # The materialisation above is stored by now (events are written as they are yielded).
                    target = materialization_target(context.instance, stage.key, hour)
                    yield from (_evaluation(stage, hour, r, target) for r in check_results)
            else:
                yield MaterializeResult(asset_key=stage.key, metadata=metadata,
                                        check_results=[_for(stage.key, r) for r in check_results])


hourly_chain = build_hourly_chain()


def stage_named(name: str) -> HourlyStage:
    for stage in STAGES:
        if stage.key.to_user_string() == name:
            return stage
    raise KeyError(f"no hourly asset named {name!r}")


ASSETS = [hourly_chain]


def hourly_run_config(**sections: dict) -> dict:
    """Run config for the hourly assets, by asset: `hourly_run_config(stories={"later_partitions": "reset"})`."""
    return {"ops": {HOURLY_OP: {"config": sections}}}
