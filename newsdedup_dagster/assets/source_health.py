"""What `raw_items` shows each hour about its sources' health, and the alerts that go with it.

The counts of failing and quiet sources (and a table of the sources that are not ok) go on the
hour's metadata; a live, non-backfill run of a recent hour also raises and clears the source alerts
(sources/health.py) through the operator alert channel (alerts.py). Thin: the work is in
newsdedup_dagster/sources/health.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from newsdedup_dagster import alerts, config
from newsdedup_dagster.assets.common import table
from newsdedup_dagster.partitions import hour_start
from newsdedup_dagster.shared.sources import load_sources
from newsdedup_dagster.sources.health import record_alerts, source_health, state_counts

# Alerts speak of now: only a run of one of the last hours (the schedule's) raises or clears them.
ALERTING_HOURS = timedelta(hours=2)


def _send(subject: str, body: str) -> str:
    return alerts.deliver_text(subject, body, "sources", config.mail_settings(), config.alert_recipients(),
                               config.outbox_dir(), config.configured_secrets())


def hour_source_health(conn, partition_key: str, *, mode: str, in_backfill: bool, log) -> dict:
    """The hour's health metadata; alerts when the run is live and of a recent hour. Health never
    fails the hour: a problem here is logged and the metadata left out."""
    now = datetime.now(UTC)
    try:
        healths = source_health(conn, load_sources(config.sources_file()), now)
        counts = state_counts(healths)
        metadata = {
            "sources_failing": counts["failing"],
            "sources_quiet": counts["quiet"],
            "source_health": table(
                ({"source": h.source_id, "state": h.state, "detail": h.detail(now),
                  "last_success": h.last_success.isoformat() if h.last_success else None,
                  "items_per_day": round(h.items_per_day, 1)}
                 for h in healths if h.state not in ("ok", "disabled")),
                ["source", "state", "detail", "last_success", "items_per_day"], limit=200),
        }
        if mode == "live" and not in_backfill and hour_start(partition_key) >= now - ALERTING_HOURS:
            changes, where = record_alerts(conn, healths, now, _send)
            if where:
                log.info(f"source alerts ({len(changes)} changes) {where}")
        return metadata
    except Exception as exc:  # noqa: BLE001 - the hour's items are stored; health is a report on them
        conn.rollback()
        log.warning(f"source health not computed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        return {}
