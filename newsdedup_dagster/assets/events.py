"""`events` (hourly): group the hour's new or changed stories into multi-day events, close quiet
events, refresh narratives (LLM or offline extractive) and translate them.

Thin: the rules live in newsdedup_dagster/stages/events/ (grouping.py pure, store.py SQL, narrative.py).
"""


from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetSpec,
    MaterializeResult,
    MetadataValue,
)
from pydantic import Field

from newsdedup_dagster import config as app_config
from newsdedup_dagster.assets.common import OWNERS, ROW_COUNT, HourlyStage, HourRun, hourly_check, table
from newsdedup_dagster.assets.run_options import RunOptions, run_option
from newsdedup_dagster.partitions import HOURLY_PARTITIONS, READS_PREVIOUS_HOUR, hour_start
from newsdedup_dagster.stages.embeddings.store import active_model
from newsdedup_dagster.stages.events import narrative as narrative_mod, store
from newsdedup_dagster.stages.events.settings import GroupingSettings

CHECK_ONE_EVENT = "story_in_at_most_one_event"
CHECK_GAPS = "no_gap_longer_than_quiet_period"
CHECK_ORDER = "timeline_in_time_order"


class EventsConfig(RunOptions):
    """Per-run overrides (launchpad); unset fields come from NEWSDEDUP_EVENT_* env vars."""

    threshold: float | None = run_option(GroupingSettings, "threshold", low=-1.0, high=1.0,
                                            what="a cosine similarity")
    quiet_hours: float | None = run_option(GroupingSettings, "quiet_hours", low=0, low_open=True, high=24 * 90,
                                              what="hours")
    narratives: bool = Field(True, description="true or false")


def _settings(config: EventsConfig, active_model_id: str | None = None) -> GroupingSettings:
    """Run config, then NEWSDEDUP_EVENT_* env vars, then the calibrated threshold of the model the
    database's vectors were made with (not the configured provider's: the stories being grouped
    carry the active model's centroids, and a provider change only takes effect after reembed)."""
    base = app_config.grouping_settings(active_model_id)
    join_gap = min(base.join_gap_hours, config.quiet_hours) if config.quiet_hours is not None else None
    return app_config.merged(base, threshold=config.threshold, quiet_hours=config.quiet_hours,
                             join_gap_hours=join_gap)


def events_table(rows: list[dict]):
    def narrative(r: dict) -> str:
        return "offline extractive" if r["narrative_offline"] else ("LLM" if r["narrative_offline"] is False else "")

    return table(
        ({"event": r["title"], "days": r["days"], "stories": r["story_count"], "languages": ", ".join(r["langs"]),
          "status": r["status"], "narrative": narrative(r)} for r in rows),
        ["event", "days", "stories", "languages", "status", "narrative"])


EVENTS_CHECKS = (
    hourly_check(CHECK_ONE_EVENT, asset="events", blocking=True,
                   description="Every story belongs to at most one event."),
    hourly_check(CHECK_GAPS, asset="events",
                   description="No event (touched this hour) has a gap between stories longer than its quiet period."),
    hourly_check(CHECK_ORDER, asset="events", blocking=True,
                   description="Each touched event's timeline positions follow its stories' publication times."),
)

EVENTS_SPEC = AssetSpec(
    "events",
    partitions_def=HOURLY_PARTITIONS,
    # The tables its hour reads (tests/test_hourly_lineage.py); open events, their centroids and
    # quiet periods are what its earlier hours left.
    deps=["raw_items", "item_duplicates", "item_embeddings", "stories", "story_scores"],
    tags=READS_PREVIOUS_HOUR,
    group_name="events",
    owners=OWNERS,
    kinds={"openai", "postgres"},
    skippable=True,
    description="Multi-day events: stories joined by centroid similarity + time gate, closed after a quiet period, "
                "with a 4-section narrative (LLM, or extractive offline) translated into the narrative languages.",
)


def events_hour(run: HourRun, partition_key: str) -> MaterializeResult:
    # Narratives call the LLM endpoint; grouping itself is idempotent, so the op's retry is safe.
    config = run.options.events
    postgres, llm = run.postgres, run.llm
    hour = hour_start(partition_key)
    llm_settings = llm.settings()
    narration = app_config.narrative_settings()
    with postgres.connection() as conn:
        model = active_model(conn)
        conn.commit()
        settings = _settings(config, model.model if model else None)
        result = store.group_hour(conn, hour, settings)
        narr = narrative_mod.NarrativeResult()
        mode = "disabled"
        if config.narratives:
            with llm.client(postgres.url()) as client:
                mode = ("offline extractive (no NEWSDEDUP_LLM_BASE_URL configured)" if client is None
                        else f"llm: {llm_settings.narrative_model}")
                narr = narrative_mod.generate_narratives(conn, hour, llm_settings, narration, client=client,
                                                         quiet_hours=settings.quiet_hours)
                if client is not None:
                    narrative_mod.translate_narratives(conn, hour, client, llm_settings, narration, result=narr)
        report = store.check_invariants(conn, result.touched_event_ids, settings.quiet_hours)
        summaries = store.event_summaries(conn, result.touched_event_ids, limit=25)

    counts = result.counts()
    run.log.info("events %s: %s; narratives: %s", partition_key, counts, narr.as_metadata())
    checks = [
        AssetCheckResult(check_name=CHECK_ONE_EVENT, passed=not report.multi_membership,
                         metadata={"stories_in_several_events": len(report.multi_membership),
                                   "examples": MetadataValue.json([list(x) for x in report.multi_membership[:5]])}),
        AssetCheckResult(check_name=CHECK_GAPS, passed=not report.gap_violations, severity=AssetCheckSeverity.WARN,
                         metadata={"events_checked": report.events_checked,
                                   "violations": MetadataValue.json([list(x) for x in report.gap_violations[:10]])}),
        AssetCheckResult(check_name=CHECK_ORDER, passed=not report.order_violations,
                         metadata={"events_checked": report.events_checked,
                                   "violations": MetadataValue.json(report.order_violations[:10])}),
    ]
    return MaterializeResult(
        metadata={
            ROW_COUNT: len(result.touched_event_ids),
            **{k: MetadataValue.int(v) for k, v in counts.items()},
            "closed_event_ids": MetadataValue.json(result.plan.closes[:50]),
            "events": events_table(summaries),
            "threshold": MetadataValue.float(settings.threshold),
            "embedding_model": MetadataValue.text(model.model if model else "(none)"),
            "quiet_hours": MetadataValue.float(settings.quiet_hours),
            "narrative_mode": MetadataValue.text(mode),
            "narratives": MetadataValue.json(narr.as_metadata()),
        },
        check_results=checks,
    )


EVENTS = HourlyStage(EVENTS_SPEC, EVENTS_CHECKS, events_hour)
