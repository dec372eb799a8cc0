"""stories[H]: two-pass clustering of the hour's canonical items (see stages/clustering/passes.py)."""


from datetime import timedelta

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetSpec,
    FreshnessPolicy,
    MaterializeResult,
    MetadataValue,
    RetryRequested,
)

from newsdedup_dagster import config as app_config
from newsdedup_dagster.assets.common import OWNERS, ROW_COUNT, HourlyStage, HourRun, hourly_check, table
from newsdedup_dagster.assets.run_options import RunOptions, choice_type, run_option
from newsdedup_dagster.partitions import HOURLY_PARTITIONS, READS_PREVIOUS_HOUR, hour_start
from newsdedup_dagster.stages.clustering import explain
from newsdedup_dagster.stages.clustering.passes import check_invariants, cluster_partition, story_summaries
from newsdedup_dagster.stages.clustering.settings import ClusterSettings
from newsdedup_dagster.stages.clustering.store import ClusteringBusy
from newsdedup_dagster.stages.embeddings.store import active_model

# The hourly schedule runs at :05 and an hour takes minutes: older than 75 min is late, 2 h is broken.
STORIES_FRESHNESS = FreshnessPolicy.time_window(fail_window=timedelta(hours=2), warn_window=timedelta(minutes=75))

# `newsdedup explain` blocks in the materialisation metadata: the hour's largest new/updated stories
EXPLAINED_STORIES = 3

# Centroids are stored as float4 and averaged in SQL; a recomputed average differs by rounding only.
CENTROID_TOLERANCE = 1e-4

CHECKS = (
    ("one_story_per_item", True, "Every article (canonical or duplicate) is in at most one story."),
    ("pass1_gates_met", True, "Every pass-1 attachment of the hour met the similarity and time-gap gates, and every "
                              "pass-3 one the similarity gate (stored with it)."),
    ("pass2_stories_connected", True, "Every story founded this hour is connected by edges >= item_threshold."),
    ("centroids_current", True, "Each touched story's centroid equals the average of its 3 most recent items."),
    ("no_attachment_after_max_age", True, "No story absorbed an item after its maximum age."),
    ("all_items_considered", True, "Every embedded canonical item of the hour went through the passes."),
    ("largest_story_size", False, "The largest story touched this hour stays under max_story_size (chaining warning)."),
)


_COSINE = "a cosine similarity"
# A run's time gates and sizes are bounded tighter than the deployment's (stages/clustering/settings.py).
_MONTH_HOURS = 24 * 30


class StoriesConfig(RunOptions):
    """Run-config overrides of the clustering settings (else NEWSDEDUP_<KEY> / calibrated defaults);
    each field is the ClusterSettings key of its name, with that key's declaration."""

    story_threshold: float | None = run_option(ClusterSettings, "story_threshold", what=_COSINE)
    item_threshold: float | None = run_option(ClusterSettings, "item_threshold", what=_COSINE)
    max_gap_hours: float | None = run_option(ClusterSettings, "max_gap_hours", low=0, low_open=True,
                                                high=_MONTH_HOURS, what="hours")
    story_max_age_hours: float | None = run_option(ClusterSettings, "story_max_age_hours", low=0, low_open=True,
                                                      high=_MONTH_HOURS, what="hours")
    knn_k: int | None = run_option(ClusterSettings, "knn_k")
    centroid_window: int | None = run_option(ClusterSettings, "centroid_window", high=100)
    batch_size: int | None = run_option(ClusterSettings, "batch_size", high=100_000)
    ef_search: int | None = run_option(ClusterSettings, "ef_search")
    max_story_size: int | None = run_option(ClusterSettings, "max_story_size", high=1_000_000)
    pass3: bool | None = run_option(ClusterSettings, "pass3")
    pass2_expand: bool | None = run_option(ClusterSettings, "pass2_expand")
    # default: reset inside a Dagster backfill
    later_partitions: choice_type(ClusterSettings, "later_partitions") | None = run_option(  # type: ignore[valid-type]
        ClusterSettings, "later_partitions")


def _stories_table(rows: list[tuple], new: set[str]):
    return table(
        ({"story": sid[:11], "status": "new" if sid in new else "updated", "items": items, "articles": articles,
          "languages": langs or "", "sources": sources or "", "representative_headline": headline or ""}
         for sid, items, articles, langs, sources, headline, _created in rows),
        ["story", "status", "items", "articles", "languages", "sources", "representative_headline"])


STORIES_CHECKS = tuple(hourly_check(name, asset="stories", blocking=blocking, description=desc)
                       for name, blocking, desc in CHECKS)

STORIES_SPEC = AssetSpec(
    "stories",
    partitions_def=HOURLY_PARTITIONS,
    # Pass 1 matches against the stories earlier hours built.
    deps=["raw_items", "item_duplicates", "article_texts", "item_embeddings"],
    tags=READS_PREVIOUS_HOUR,
    group_name="clustering",
    owners=OWNERS,
    kinds={"python", "postgres", "pgvector"},
    freshness_policy=STORIES_FRESHNESS,
    skippable=True,
    description="Pass 1: new items -> story centroids (KNN, cosine, time gates); pass 2: the rest -> "
                "item KNN + UnionFind + chaining guard -> new stories; pass 3: leftovers -> the hour's new stories. "
                "Idempotent per hour; backfill in time order.",
)


def stories_hour(run: HourRun, partition_key: str) -> MaterializeResult:
    # Two clustering runs never overlap: the hourly op's pool queues them and the advisory lock in
    # stages/clustering/store.py enforces it in the database.
    config = run.options.stories
    postgres = run.postgres
    h = hour_start(partition_key)
    overrides = config.model_dump()
    if overrides["later_partitions"] is None and run.in_backfill:
        # A backfill recomputes history in time order: rebuild later hours exactly, don't mix.
        overrides["later_partitions"] = "reset"
    with postgres.connection() as conn:
        info = active_model(conn)
        conn.commit()
        if info is None:
            raise RuntimeError("no embedding model registered yet: materialise item_embeddings first")
        settings = app_config.merged(app_config.clustering_settings(info.model), **overrides)
        try:
            result = cluster_partition(conn, info, h, settings, connect=postgres.connect)
        except ClusteringBusy as exc:
            # Another clustering run held the lock past its timeout: wait and run again (not a failure).
            retries, wait_s = app_config.clustering_busy_retry()
            raise RetryRequested(max_retries=retries, seconds_to_wait=wait_s) from exc
        inv = check_invariants(conn, info, h, settings, result)
        changed = result.new_stories + result.updated_stories
        rows = story_summaries(conn, changed)
        # rows are ordered by size: explain the hour's largest stories, where a wrong merge hurts most
        explained = [explain.load(conn, r[0]) for r in rows[:EXPLAINED_STORIES]]
    largest = max(rows, key=lambda r: (r[1], r[0]), default=None)
    metadata = {
        ROW_COUNT: len(changed),
        "model": info.model,
        "new_items": result.new_items,
        "attached_pass1": result.attached,
        "new_stories": len(result.new_stories),
        "updated_stories": len(result.updated_stories),
        "items_in_new_stories": result.clustered_in_pass2,
        "attached_pass3": result.attached_pass3,
        "left_single": result.left_single,
        "largest_story": largest[1] if largest else 0,
        "largest_story_headline": (largest[5] or "") if largest else "",
        "pass2_edges": result.edges,
        "anchor_vetoes": result.anchor_vetoes,
        "anchor_splits": result.anchor_splits,
        "undone_stories": result.undone_stories,
        "later_partitions": settings.later_partitions,
        "later_stories_removed": result.later_stories_removed,
        "seconds": MetadataValue.float(round(result.seconds, 3)),
        "settings": MetadataValue.json(settings.as_dict()),
        "stories": _stories_table(rows, set(result.new_stories)),
        "largest_stories_explained": MetadataValue.md(
            "\n\n---\n\n".join(explain.render_markdown(e) for e in explained) or "_no new or updated stories_"),
        "recent_window": MetadataValue.json(result.recent),
    }
    ERROR, WARN = AssetCheckSeverity.ERROR, AssetCheckSeverity.WARN
    checks = [
        AssetCheckResult(check_name="one_story_per_item", passed=inv.multi_story_items == 0, severity=ERROR,
                         metadata={"items_in_several_stories": inv.multi_story_items}),
        AssetCheckResult(check_name="pass1_gates_met", passed=inv.pass1_gate_violations == 0, severity=ERROR,
                         metadata={"violations": inv.pass1_gate_violations,
                                   "story_threshold": settings.story_threshold, "max_gap_hours": settings.max_gap_hours}),
        AssetCheckResult(check_name="pass2_stories_connected", passed=not inv.disconnected_stories, severity=ERROR,
                         metadata={"disconnected": MetadataValue.json(inv.disconnected_stories[:20]),
                                   "item_threshold": settings.item_threshold}),
        AssetCheckResult(check_name="centroids_current", passed=inv.centroid_max_error <= CENTROID_TOLERANCE,
                         severity=ERROR, metadata={"max_error": MetadataValue.float(inv.centroid_max_error),
                                                   "tolerance": CENTROID_TOLERANCE}),
        AssetCheckResult(check_name="no_attachment_after_max_age", passed=inv.age_violations == 0, severity=ERROR,
                         metadata={"violations": inv.age_violations, "story_max_age_hours": settings.story_max_age_hours}),
        AssetCheckResult(check_name="all_items_considered", passed=inv.all_considered, severity=ERROR,
                         metadata={"embedded_canonical": inv.embedded, "considered": inv.considered}),
        AssetCheckResult(check_name="largest_story_size", passed=inv.largest_touched <= settings.max_story_size,
                         severity=WARN, metadata={"largest": inv.largest_touched, "limit": settings.max_story_size}),
    ]
    return MaterializeResult(metadata=metadata, check_results=checks)


STORIES = HourlyStage(STORIES_SPEC, STORIES_CHECKS, stories_hour)
