"""raw_items[H]: fetch (or replay / re-read the archive of) every enabled source for hour H,
archive each feed body, parse, and store items. Thin: the work is in newsdedup_dagster/stages/ingest/."""


from typing import Literal

from dagster import AssetSpec, MaterializeResult, MetadataValue
from pydantic import Field

from newsdedup_dagster import config
from newsdedup_dagster.assets.common import OWNERS, ROW_COUNT, HourlyStage, HourRun, table
from newsdedup_dagster.assets.run_options import RunOptions
from newsdedup_dagster.assets.source_health import hour_source_health
from newsdedup_dagster.partitions import HOURLY_PARTITIONS, hour_start
from newsdedup_dagster.shared.sources import load_sources
from newsdedup_dagster.stages.ingest.store import choose_mode, configs_for, ingest_partition


class RawItemsConfig(RunOptions):
    """Per-run choice of the fetch mode only: the sources file is the deployment's
    ($NEWSDEDUP_SOURCES), never a path chosen at launch."""

    fetch_mode: Literal["live", "replay", "auto"] | None = Field(
        None, description="live, replay or auto; unset: $NEWSDEDUP_FETCH_MODE")


def resolve_fetch_mode(requested: str, sources) -> str:
    """'auto' replays when every enabled source names a replay file (the bundled sample), else live."""
    if requested != "auto":
        return requested
    enabled = [s for s in sources if s.enabled]
    return "replay" if enabled and all(s.replay_file for s in enabled) else "live"


def run_ingest(conn, partition_key: str, sources_file: str | None = None, fetch_mode: str | None = None):
    sources = load_sources(sources_file or config.sources_file())
    mode = choose_mode(hour_start(partition_key), resolve_fetch_mode(fetch_mode or config.fetch_mode(), sources))
    fetch_config, parse_config = configs_for(config.ingest_settings())
    return ingest_partition(conn, sources, hour_start(partition_key), mode=mode, fetch_config=fetch_config,
                            parse_config=parse_config)


RAW_ITEMS_SPEC = AssetSpec(
    "raw_items",
    partitions_def=HOURLY_PARTITIONS,
    group_name="ingest",
    owners=OWNERS,
    kinds={"rss", "postgres"},
    skippable=True,
    description="Feed items of hour H: fetched (live), replayed (sample/eval) or re-parsed from the hour's archive (backfill).",
)


def raw_items_hour(run: HourRun, partition_key: str) -> MaterializeResult:
    # Fetch errors are per source and never fail the asset; the op's retry covers a dropped connection.
    config = run.options.raw_items
    with run.postgres.connection() as conn:
        report = run_ingest(conn, partition_key, fetch_mode=config.fetch_mode)
        health = hour_source_health(conn, partition_key, mode=report.mode, in_backfill=run.in_backfill, log=run.log)
    for row in report.errors:
        run.log.warning(f"source {row.source_id}: {row.error or row.bozo_error}")
    return MaterializeResult(metadata={**raw_items_metadata(report), **health})


def raw_items_metadata(report) -> dict:
    """The hour's ingest report as asset metadata (also what `newsdedup ingest` prints)."""
    statuses = report.counts_by_status()
    return {
        "mode": report.mode,
        "sources": len(report.rows),
        "sources_ok": statuses.get("ok", 0),
        "sources_not_modified": statuses.get("not_modified", 0),
        "sources_failed": len(report.errors),
        "items_seen": report.items_seen,
        "new_items": report.new_items,
        "partition_items": report.partition_items,
        "fetch_seconds": report.fetch_seconds,
        "parse_seconds": report.parse_seconds,
        # Entries skipped (by reason: entry_error, over_entry_cap, duplicate_guid, ...) and hostile
        # input repaired (declarations_removed, charrefs_replaced, links_dropped, ...), all sources.
        "skipped_entries": MetadataValue.json(report.skipped_totals()),
        "repairs": MetadataValue.json(report.repair_totals()),
        ROW_COUNT: report.partition_items,
        "per_source": table(
            ({"source": r.source_id, "status": r.status, "http_status": r.http_status,
              "parse_status": r.parse_status, "items": r.items, "new_items": r.new_items,
              "skipped": sum(r.skipped.values()) if r.skipped else 0,
              "error": r.error or r.bozo_error} for r in report.rows),
            ["source", "status", "http_status", "parse_status", "items", "new_items", "skipped", "error"],
            limit=500),
        "per_source_json": MetadataValue.json(
            [
                {"id": r.source_id, "status": r.status, "http_status": r.http_status,
                 "parse_status": r.parse_status, "entries": r.entries, "items": r.items,
                 "new_items": r.new_items, "skipped": r.skipped, "repairs": r.repairs,
                 "error": r.error or r.bozo_error}
                for r in report.rows
            ]
        ),
    }


RAW_ITEMS = HourlyStage(RAW_ITEMS_SPEC, (), raw_items_hour)
