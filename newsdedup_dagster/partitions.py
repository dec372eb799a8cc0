"""Partition definitions shared by every asset (UTC)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dagster import DailyPartitionsDefinition, HourlyPartitionsDefinition

from newsdedup_dagster import config

# end_offset=1: the current hour is a partition. A live run archives what the feeds show
# when it runs under the hour it runs in; the hourly schedule runs a few minutes past the
# hour, for that hour, so every fetch belongs to the hour it happened in.
HOURLY_PARTITIONS = HourlyPartitionsDefinition(start_date=config.partitions_start(), timezone="UTC", end_offset=1)
DAILY_PARTITIONS = DailyPartitionsDefinition(start_date=config.partitions_start()[:10], timezone="UTC")

HOUR_KEY_FORMAT = "%Y-%m-%d-%H:%M"

# An hourly asset whose hour H reads what its own earlier hours built (canonical items, per-language
# means, story centroids, open events) carries this tag, shown on its page in the UI. It is not
# declared as a self-dependency: see assets/hourly.py for what Dagster's backfill daemon does with
# one. Backfills run in time order because one run walks its range hour by hour.
READS_PREVIOUS_HOUR = {"newsdedup/reads_previous_hour": "true"}


def hour_start(partition_key: str) -> datetime:
    """'2026-11-02-05:00' -> 2026-11-02 05:00 UTC (aware)."""
    return datetime.strptime(partition_key, HOUR_KEY_FORMAT).replace(tzinfo=UTC)


def hour_key(moment: datetime) -> str:
    moment = moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    return moment.strftime(HOUR_KEY_FORMAT)


def hour_window(partition_key: str) -> tuple[datetime, datetime]:
    start = hour_start(partition_key)
    return start, start + timedelta(hours=1)
