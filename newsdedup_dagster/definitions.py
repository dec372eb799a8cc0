"""The Dagster code location: every asset, check, job, schedule and resource, assembled here.

Hourly graph (partition H, UTC):
  raw_items -> item_duplicates -> item_embeddings -> stories -> story_scores -> story_translations
                                                      stories/story_scores -> events
  story_translations + events -> story_feeds
Daily: digest (events + story_translations of the day).
"""

from __future__ import annotations

import importlib

from dagster import (
    AssetSelection,
    Definitions,
    build_schedule_from_partitioned_job,
    define_asset_job,
)

from .partitions import DAILY_PARTITIONS, HOURLY_PARTITIONS
from .resources import PostgresResource

# One module per pipeline stage, in graph order. Each exports ASSETS (and optionally ASSET_CHECKS,
# separately defined checks, and RESOURCES defaults). Checks declared on an asset come with it.
STAGE_MODULES = (
    "ingest",      # raw_items
    "neardup",     # item_duplicates
    "embeddings",  # item_embeddings
    "stories",     # stories
    "llm",         # story_scores, story_translations
    "events",      # events
    "digest",      # digest (daily)
    "publish",     # story_feeds (hourly: Atom, JSON Feed, static site)
)

HOURLY_JOB_NAME = "hourly_pipeline"
DAILY_JOB_NAME = "daily_digest"


def _load_stages():
    assets, checks, resources = [], [], {"postgres": PostgresResource()}
    for name in STAGE_MODULES:
        module = importlib.import_module(f"newsdedup_dagster.assets.{name}")
        assets.extend(getattr(module, "ASSETS", []))
        checks.extend(getattr(module, "ASSET_CHECKS", []))
        for key, resource in getattr(module, "RESOURCES", {}).items():
            resources.setdefault(key, resource)
    return assets, checks, resources


ASSETS, CHECKS, RESOURCES = _load_stages()

hourly_job = define_asset_job(
    HOURLY_JOB_NAME,
    selection=AssetSelection.all() - AssetSelection.assets("digest"),
    partitions_def=HOURLY_PARTITIONS,
    description="One hour of news: fetch, dedup, embed, cluster, score, translate, group into events.",
)
daily_job = define_asset_job(
    DAILY_JOB_NAME,
    selection=AssetSelection.assets("digest"),
    partitions_def=DAILY_PARTITIONS,
    description="Render and send the day's digest.",
)

# A few minutes past the hour, so feeds published on the hour are in.
hourly_schedule = build_schedule_from_partitioned_job(hourly_job, minute_of_hour=5)
# 00:30 UTC for the day that just ended (after its last hourly run).
daily_schedule = build_schedule_from_partitioned_job(daily_job, hour_of_day=0, minute_of_hour=30)

defs = Definitions(
    assets=ASSETS,
    asset_checks=CHECKS,
    jobs=[hourly_job, daily_job],
    schedules=[hourly_schedule, daily_schedule],
    resources=RESOURCES,
)
