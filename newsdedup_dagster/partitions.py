"""Partition definitions shared by every asset (UTC)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dagster import AssetDep, DailyPartitionsDefinition, HourlyPartitionsDefinition, TimeWindowPartitionMapping

from . import config

# end_offset=1: the current hour is a partition. A live run archives what the feeds show
# when it runs under the hour it runs in; the hourly schedule runs a few minutes past the
# hour, for that hour, so every fetch belongs to the hour it happened in.
HOURLY_PARTITIONS = HourlyPartitionsDefinition(start_date=config.partitions_start(), timezone="UTC", end_offset=1)
DAILY_PARTITIONS = DailyPartitionsDefinition(start_date=config.partitions_start()[:10], timezone="UTC")

HOUR_KEY_FORMAT = "%Y-%m-%d-%H:%M"

# H depends on H-1 of the same asset: what hour H computes reads what earlier hours built (canonical
# items, per-language means, story centroids, open events). Declared, Dagster itself runs backfills
# in time order, whatever max_concurrent_runs is, and a failed hour leaves the later ones alone.
# The first partition simply has no predecessor.
PREVIOUS_HOUR = TimeWindowPartitionMapping(start_offset=-1, end_offset=-1)


def previous_hour_of(asset_name: str) -> AssetDep:
    """The self-dependency of an hourly asset on its own previous hour."""
    return AssetDep(asset_name, partition_mapping=PREVIOUS_HOUR)


def hour_start(partition_key: str) -> datetime:
    """'2026-11-02-05:00' -> 2026-11-02 05:00 UTC (aware)."""
    return datetime.strptime(partition_key, HOUR_KEY_FORMAT).replace(tzinfo=UTC)


def hour_key(moment: datetime) -> str:
    moment = moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    return moment.strftime(HOUR_KEY_FORMAT)


def hour_window(partition_key: str) -> tuple[datetime, datetime]:
    start = hour_start(partition_key)
    return start, start + timedelta(hours=1)
