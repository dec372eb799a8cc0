"""Lineage is the data flow: each hourly asset's declared parents are exactly the assets whose tables
its hour reads, measured on the real database.

Four hours of the bundled sample day go through the hourly job; then hour five is computed one asset
at a time (Dagster's own asset selection on the subsettable op), and around each asset PostgreSQL's
own counters (`pg_stat_user_tables`: sequential and index scans per table) say which tables it read.
A table belongs to the asset that writes it (TABLE_OWNERS); the model stages' call record and
cache are shared bookkeeping of every stage that calls a model, not anyone's data.
"""

from __future__ import annotations

import time

import psycopg
import pytest
from dagster import AssetKey, DagsterInstance, materialize

from newsdedup_dagster.assets.hourly import STAGES, hourly_chain, hourly_run_config
from newsdedup_dagster.definitions import HOURLY_JOB_NAME, defs
from newsdedup_dagster.instance import QUIET_RUN_CONFIG
from newsdedup_dagster.partitions import READS_PREVIOUS_HOUR
from newsdedup_dagster.resources import LLMResource, PostgresResource, deployment_resources
from newsdedup_dagster.shared import db

pytestmark = pytest.mark.slow

DAY = "2026-11-02"
EARLIER_HOURS = [f"{DAY}-{hour:02d}:00" for hour in range(4)]
MEASURED_HOUR = f"{DAY}-04:00"
RUN_CONFIG = {**QUIET_RUN_CONFIG, **hourly_run_config(stories={"later_partitions": "reset"})}

TABLE_OWNERS = {
    "raw_items": {"sources", "items", "item_sources", "feed_fetches", "source_alerts"},
    "article_texts": {"article_texts", "article_robots"},
    # neardup_*: the kept counts and bands of the look-back window (migration 121, candidates=bands)
    "item_duplicates": {"item_duplicates", "duplicate_groups", "neardup_df_window", "neardup_df_docs", "neardup_df",
                        "neardup_bands"},
    # cluster_recent_*: the mirror of item_embeddings' recent rows that pass 2 searches, kept by a
    # trigger on item_embeddings (migration 033); stories moves its window.
    "item_embeddings": {"item_embeddings", "embedding_cache", "embedding_language_means", "embedding_models",
                        "cluster_recent_items", "cluster_recent_state"},
    "stories": {"stories", "story_items", "story_decisions"},
    "story_scores": {"story_scores", "story_briefings"},
    "story_translations": {"story_translations", "briefing_translations"},
    "events": {"events", "event_stories", "event_translations", "event_vetoes"},
    "story_feeds": {"publish_entries", "publish_state", "publish_archive_days"},
}
# Written and read by every stage that calls a model (the call record, its daily totals, the reply cache).
SHARED_TABLES = {"llm_calls", "llm_results", "llm_call_daily_totals", "schema_migrations"}
# The writes an asset makes into another asset's tables, and why.
FOREIGN_WRITES = {
    "stories": {"cluster_recent_items", "cluster_recent_state"},   # moves the search window (stages/clustering/store.py)
    # marks the story scored (stories.needs_score); a new score resets the story's translations
    "story_scores": {"stories", "story_translations"},
}


# Reads of a later asset's earlier hours, and why: the graph cannot declare them (the later asset
# depends on the reader, a loop across hours, which Dagster's asset graph does not allow even with a
# partition offset); the hourly chain runs hour H-1 whole before H, so what is read is H-1's.
EARLIER_HOURS_OF_LATER = {
    # a story's model briefing gets the earlier stories of its event, as events grouped them up to H-1
    "story_scores": {"events"},
}


def _scans(url: str) -> dict[str, tuple[int, int]]:
    """Per table: (scans, rows written)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        return {name: (scans, writes) for name, scans, writes in conn.execute(
            "SELECT relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0), n_tup_ins + n_tup_upd + n_tup_del "
            "FROM pg_stat_user_tables")}


def _settled_scans(url: str) -> dict[str, tuple[int, int]]:
    """The counters once the stage's connections have closed and their backends reported."""
    pool = db._pools.pop(url, None)
    if pool is not None:
        pool.close()
    last = _scans(url)
    for _ in range(40):
        time.sleep(0.25)
        now = _scans(url)
        if now == last:
            return now
        last = now
    return last


def _owner(table: str) -> str | None:
    return next((asset for asset, tables in TABLE_OWNERS.items() if table in tables), None)


def test_declared_parents_are_the_tables_each_hour_reads(clean_db, monkeypatch, tmp_path, fake):
    # The model stages do their real work against the local OpenAI-compatible server.
    monkeypatch.setenv("NEWSDEDUP_LLM_API_KEY", "sk-lineage-test")
    monkeypatch.setenv("NEWSDEDUP_TRANSLATION_LANGS", "fr,de")
    monkeypatch.setenv("NEWSDEDUP_FETCH_MODE", "replay")
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(tmp_path / "public"))
    resources = {**deployment_resources(), "postgres": PostgresResource(database_url=clean_db),
                 "llm": LLMResource(base_url=fake.base_url)}
    job = defs.resolve_job_def(HOURLY_JOB_NAME)
    graph = defs.resolve_asset_graph()
    with DagsterInstance.ephemeral() as instance:
        for hour in EARLIER_HOURS:
            assert job.execute_in_process(partition_key=hour, instance=instance, run_config=RUN_CONFIG,
                                          resources=resources).success, hour
        read: dict[str, set[str]] = {}
        wrote: dict[str, set[str]] = {}
        for stage in STAGES:
            name = stage.key.to_user_string()
            before = _settled_scans(clean_db)
            result = materialize([hourly_chain], selection=[stage.key], partition_key=MEASURED_HOUR,
                                 instance=instance, resources=resources, run_config=RUN_CONFIG)
            # Exactly the selected asset was computed.
            assert [e.materialization.asset_key for e in result.get_asset_materialization_events()] == [stage.key]
            after = _settled_scans(clean_db)
            zero = (0, 0)
            written = {t for t, (_s, w) in after.items() if w > before.get(t, zero)[1]} - SHARED_TABLES
            # A write into a later asset's table scans it too, and is not a read (cannot be: no cycles).
            later = set().union(*(TABLE_OWNERS[s.key.to_user_string()] for s in STAGES[STAGES.index(stage) + 1:]))
            read[name] = {t for t, (n, _w) in after.items() if n > before.get(t, zero)[0]} - SHARED_TABLES \
                - (written & later)
            wrote[name] = written - TABLE_OWNERS[name]
    for name, tables in wrote.items():
        assert tables <= FOREIGN_WRITES.get(name, set()), (name, tables)
    unowned = {t for tables in read.values() for t in tables if _owner(t) is None}
    assert not unowned, f"tables with no owner in TABLE_OWNERS: {unowned}"
    for name, later in EARLIER_HOURS_OF_LATER.items():
        assert later <= {_owner(t) for t in read[name]}, (name, later)     # the exception is still needed
    measured = {name: sorted({_owner(t) for t in tables} - {name} - EARLIER_HOURS_OF_LATER.get(name, set()))
                for name, tables in read.items()}
    declared = {stage.key.to_user_string(): sorted(p.to_user_string() for p in graph.get(stage.key).parent_keys)
                for stage in STAGES}
    assert declared == measured, {"declared": declared, "measured": measured, "tables": read}
    # The assets that say they read their own earlier hours do read their own tables.
    for stage in STAGES:
        name = stage.key.to_user_string()
        if stage.spec.tags.get(next(iter(READS_PREVIOUS_HOUR))) == "true":
            assert read[name] & TABLE_OWNERS[name], name
    assert AssetKey("digest") not in {s.key for s in STAGES}
