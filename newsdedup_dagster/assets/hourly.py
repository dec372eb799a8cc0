"""The hourly chain: every hourly asset, computed by one op, hour by hour in time order.

    raw_items -> item_duplicates -> item_embeddings -> stories -> story_scores -> story_translations
      -> events -> story_feeds

Each asset stays an asset of its own (its page, partitions, checks, metadata per hour); what they
share is the op, which always computes all of them (Dagster's non-subsettable multi-asset: the
backfill daemon then keeps them in one run). A run of one hour (the hourly schedule, "Materialize"
on one partition) computes that hour of each asset, in graph order. A run of a partition range (a backfill: the
backfill policy is a single run) computes hour H of every asset before hour H+1 of any, so
each hour sees exactly what the earlier hours left, as the hourly runs did; one run, one process,
one set of loaded models for the whole range.

Why one op that cannot be subset: several hourly assets depend on their own previous hour. Dagster's
backfill daemon puts such an asset in a run of its own, apart from a parent requested beside it
(even a subsettable multi-asset is split asset by asset), and a ranged run of separate assets would
compute each asset over the whole range before the next one started (story_scores[H] would then
score the stories as they stand after the range's last hour, not after H). One stage's hour alone,
outside Dagster, is `run_stage` (commands and tests).

The chain is declared as one line (events' parent is story_translations, story_feeds' is events,
though they read stories and scores, translations and events): Dagster 1.13's
`launchPartitionBackfill` compares the targets of a non-subsettable multi-asset's keys with `!=`,
which also compares a lazily counted field that an asset reached from two parents leaves unset, and
refuses the backfill at random ("Targeted subset must match"). One parent per asset avoids it.

A run reports each hour's materialisations when the hour's last stage is done, so a failure at hour k
leaves hours before k materialised and hours from k failed, for every asset alike (the UI shows
both). A retry of the step in the same run, or a re-execution from failure, continues where it
stopped: the hours materialised by the run (or by the runs it resumes) are not computed again. Asset checks run every
hour; a ranged run reports each check once, for the range (Dagster checks are per asset, not per
partition), and stops at the first hour whose blocking check fails.
"""


import logging
import time
from collections.abc import Iterator, Sequence

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetKey,
    AssetMaterialization,
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
from pydantic import Field

from .. import config as app_config
from ..partitions import HOURLY_PARTITIONS
from ..resources import EmbedderResource, LLMResource, PostgresResource
from . import embeddings, events, ingest, llm, neardup, publish, stories
from .common import HourlyStage, HourRun
from .events import EventsConfig
from .ingest import RawItemsConfig
from .neardup import ItemDuplicatesConfig
from .publish import StoryFeedsConfig
from .run_options import RunOptions
from .stories import StoriesConfig

# In graph order: an hour computes its stages in this order.
STAGES: list[HourlyStage] = [
    ingest.RAW_ITEMS, neardup.ITEM_DUPLICATES, embeddings.ITEM_EMBEDDINGS, stories.STORIES,
    llm.STORY_SCORES, llm.STORY_TRANSLATIONS, events.EVENTS, publish.STORY_FEEDS]


class HourlyOptions(RunOptions):
    """The run options of the hourly assets, one section per asset that has any."""

    raw_items: RawItemsConfig = Field(default_factory=RawItemsConfig, description="raw_items")
    item_duplicates: ItemDuplicatesConfig = Field(default_factory=ItemDuplicatesConfig, description="item_duplicates")
    stories: StoriesConfig = Field(default_factory=StoriesConfig, description="stories")
    events: EventsConfig = Field(default_factory=EventsConfig, description="events")
    story_feeds: StoryFeedsConfig = Field(default_factory=StoryFeedsConfig, description="story_feeds")


HOURLY_OP = "hourly_chain"

# One policy for the op: a dropped database connection, a model endpoint's outage. A retry continues
# with the first (asset, hour) the failed attempt did not materialise.
HOURLY_RETRY_POLICY = RetryPolicy(max_retries=2, delay=app_config.step_retry_delay(), backoff=Backoff.EXPONENTIAL,
                                  jitter=Jitter.PLUS_MINUS)

class StageFailed(Exception):
    """An hourly asset's hour raised: the asset, the hour and the error. Retried like any error."""


# Dagster's tag on a re-execution from failure (the UI's "Re-execute from failure", a backfill's
# re-execution from failure); Dagster's own constant lives in a private module.
RESUME_RETRY_TAG = "dagster/is_resume_retry"


def _hours_landed(context: AssetExecutionContext) -> set[str]:
    """The hours this run already materialised (an earlier attempt of the step) and, for a
    re-execution from failure, those of the runs it resumes (an hour lands whole)."""
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
    return {hour for _key, hour in landed if all((stage.key, hour) in landed for stage in STAGES)}


def _for(key: AssetKey, result: AssetCheckResult) -> AssetCheckResult:
    return AssetCheckResult(asset_key=key, check_name=result.check_name, passed=result.passed,
                            severity=result.severity, metadata=result.metadata, description=result.description)


def _blocking_failures(stage: HourlyStage, results: Sequence[AssetCheckResult]) -> list[str]:
    blocking = {spec.name for spec in stage.check_specs if spec.blocking}
    return [r.check_name for r in results
            if r.check_name in blocking and not r.passed and r.severity == AssetCheckSeverity.ERROR]


class _RangeChecks:
    """A ranged run's check results, one per check: the first failing hour's, else the last hour's,
    with the hours checked and the hours that failed."""

    def __init__(self) -> None:
        self._results: dict[tuple[AssetKey, str], AssetCheckResult] = {}
        self._hours: dict[tuple[AssetKey, str], list[str]] = {}
        self._failed: dict[tuple[AssetKey, str], list[str]] = {}

    def add(self, key: AssetKey, hour: str, results: Sequence[AssetCheckResult]) -> None:
        for result in results:
            slot = (key, result.check_name)
            self._hours.setdefault(slot, []).append(hour)
            if not result.passed:
                self._failed.setdefault(slot, []).append(hour)
            earlier = self._results.get(slot)
            if earlier is None or earlier.passed:
                self._results[slot] = result

    def results(self) -> Iterator[AssetCheckResult]:
        for (key, name), result in self._results.items():
            hours, failed = self._hours[(key, name)], self._failed.get((key, name), [])
            yield AssetCheckResult(
                asset_key=key, check_name=name, passed=not failed, severity=result.severity,
                description=result.description,
                metadata={**result.metadata, "hours_checked": f"{hours[0]} .. {hours[-1]} ({len(hours)})",
                          "hours_failed": ", ".join(failed[:24]) or "none",
                          "reported_hour": failed[0] if failed else hours[-1]})


@multi_asset(
    name=HOURLY_OP,
    specs=[stage.spec for stage in STAGES],
    check_specs=[spec for stage in STAGES for spec in stage.check_specs],
    partitions_def=HOURLY_PARTITIONS,
    can_subset=False,
    # A backfill of any number of hours is one run, which walks its range in time order.
    backfill_policy=BackfillPolicy.single_run(),
    retry_policy=HOURLY_RETRY_POLICY,
    # Two runs of the chain never overlap (the schedule's hour and a backfill, two backfills):
    # clustering, events and publishing each assume they are alone, which their advisory locks
    # enforce in the database as well.
    pool="newsdedup_hourly",
    config_schema=HourlyOptions.config_schema(),
    description="The hourly assets, computed hour by hour in time order (one hour per scheduled run; "
                "a backfill is one run over its range).",
)
def hourly_chain(context: AssetExecutionContext, postgres: PostgresResource, embedder: EmbedderResource,
                 llm: LLMResource) -> Iterator:
    options = HourlyOptions.from_op_config(context.op_config, StoryFeedsConfig.run_languages(llm.settings()))
    if context.has_partition_key_range:
        hours = list(context.partition_keys)
    else:
        hours = [context.partition_key]
    ranged = len(hours) > 1
    done = _hours_landed(context)
    if done:
        context.log.info("continuing: %d hours already materialised by this run or the ones it "
                         "resumes", len(done))
    run = HourRun(log=context.log, postgres=postgres, embedder=embedder, llm=llm, options=options,
                  in_backfill=bool(context.run.tags.get("dagster/backfill")))
    checks = _RangeChecks()
    for hour in hours:
        if hour in done:
            continue
        # An hour is reported when all its stages are done: a failure inside hour k leaves every
        # asset's hours before k materialised and hour k of none, so a backfill's re-execution from
        # failure asks for the same hours of every asset (Dagster requires that of a
        # non-subsettable multi-asset), and a retry starts hour k again from its first stage.
        landed: list[tuple[HourlyStage, dict, list[AssetCheckResult]]] = []
        for stage in STAGES:
            started = time.perf_counter()
            try:
                result = stage.materialize_hour(run, hour)
            except (Failure, RetryRequested):
                raise
            except Exception as exc:
                # The step is the whole chain: say which asset and hour failed (the alert's first line).
                raise StageFailed(f"{stage.key.to_user_string()}[{hour}]: {type(exc).__name__}: {exc}") from exc
            metadata = {**result.metadata, "stage_seconds": MetadataValue.float(round(time.perf_counter() - started, 3))}
            check_results = [_for(stage.key, r) for r in (result.check_results or [])]
            checks.add(stage.key, hour, check_results)
            failed = _blocking_failures(stage, check_results)
            if failed:
                yield from checks.results()
                raise Failure(
                    description=f"{stage.key.to_user_string()}[{hour}]: blocking check failed ({', '.join(failed)}); "
                                "the assets after it and the later hours were not computed",
                    allow_retries=False)
            landed.append((stage, metadata, check_results))
        for stage, metadata, check_results in landed:
            if ranged:
                yield AssetMaterialization(asset_key=stage.key, partition=hour, metadata=metadata)
            else:
                yield MaterializeResult(asset_key=stage.key, metadata=metadata, check_results=check_results)
    if ranged:
        yield from checks.results()


def stage_named(name: str) -> HourlyStage:
    for stage in STAGES:
        if stage.key.to_user_string() == name:
            return stage
    raise KeyError(f"no hourly asset named {name!r}")


def run_stage(name: str, partition_key: str, *, postgres: PostgresResource, embedder: EmbedderResource | None = None,
              llm: LLMResource | None = None, options: dict | None = None, in_backfill: bool = False,
              log=None) -> MaterializeResult:
    """One hour of one hourly asset, computed outside Dagster (nothing is recorded in the instance):
    `newsdedup ingest`, and tests of one stage. `options` is the op config the run would carry
    (`{"stories": {"later_partitions": "reset"}}`), checked as a run's is."""
    published = StoryFeedsConfig.run_languages((llm or LLMResource()).settings())
    run = HourRun(log=log or logging.getLogger("newsdedup"), postgres=postgres, embedder=embedder or EmbedderResource(),
                  llm=llm or LLMResource(), options=HourlyOptions.from_op_config(options or {}, published),
                  in_backfill=in_backfill)
    return stage_named(name).materialize_hour(run, partition_key)


ASSETS = [hourly_chain]


def hourly_run_config(**sections: dict) -> dict:
    """Run config for the hourly assets, by asset: `hourly_run_config(stories={"later_partitions": "reset"})`."""
    return {"ops": {HOURLY_OP: {"config": sections}}}
