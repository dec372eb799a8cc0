"""The hourly chain over a range of hours is the hourly runs of those hours, in one run.

Hours 00:00-05:00 of the bundled sample day (replayed feeds, the offline e5 model, offline scores)
go through the hourly job twice, each time into a database of its own on the embedded PostgreSQL:
as six one-hour runs in time order, and as one ranged run (the partition range tags a backfill's
single run carries), both with `stories.later_partitions=reset` as the demo replays a day. Every
application table must hold the same rows (the crash suite's fingerprint idea: every column but
serial ids, the columns referring to them and write times), and each (asset, hour) must have been
materialised with that hour's partition key, once.
"""

from __future__ import annotations

import psycopg
import pytest
from dagster import AssetKey, DagsterInstance

from newsdedup_dagster import db
from newsdedup_dagster.assets.hourly import HOURLY_OP, STAGES, hourly_run_config
from newsdedup_dagster.instance import QUIET_RUN_CONFIG

DAY = "2026-11-02"
HOURS = [f"{DAY}-{hour:02d}:00" for hour in range(6)]
ASSETS = [stage.key.to_user_string() for stage in STAGES]
RUN_CONFIG = {**QUIET_RUN_CONFIG, **hourly_run_config(stories={"later_partitions": "reset"})}
RANGE_TAGS = {"dagster/asset_partition_range_start": HOURS[0], "dagster/asset_partition_range_end": HOURS[-1]}

# Columns that say when a row was written (or where the run's files went: each run publishes
# into a directory of its own), not what it holds.
WRITE_TIME_COLUMNS = {"narrative_generated_at", "sent_at", "written_at", "output_dir"}


def _database(admin_url: str, name: str) -> str:
    """A new, migrated database `name` on the server of `admin_url`."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    url = db.with_database(admin_url, name)
    db.migrate(url)
    return url


def _drop(admin_url: str, url: str, name: str) -> None:
    pool = db._pools.pop(url, None)  # the process's pool on it (else it keeps reconnecting)
    if pool is not None:
        pool.close()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def table_rows(url: str) -> dict[str, list[str]]:
    """{table: its rows as text, sorted}, every base table, without serial ids (and the columns
    referring to them) and write times (tests/test_crash_suite.py's fingerprint)."""
    out = {}
    with psycopg.connect(url) as conn:
        serial = {(t, c) for t, c in conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND column_default LIKE 'nextval%%'")}
        referring = {(t, c) for t, c, rt, rc in conn.execute(
            "SELECT k.conrelid::regclass::text, a.attname, k.confrelid::regclass::text, ra.attname"
            "  FROM pg_constraint k"
            "  JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]"
            "  JOIN pg_attribute ra ON ra.attrelid = k.confrelid AND ra.attnum = k.confkey[1]"
            " WHERE k.contype = 'f'") if (rt, rc) in serial}
        columns: dict[str, list[str]] = {}
        for table, column, default in conn.execute(
                "SELECT c.table_name, c.column_name, c.column_default FROM information_schema.columns c"
                "  JOIN information_schema.tables t USING (table_schema, table_name)"
                " WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'"
                " ORDER BY c.table_name, c.ordinal_position"):
            written_at = default is not None and ("now()" in default or "clock_timestamp" in default)
            if (table, column) in serial or (table, column) in referring or written_at or column in WRITE_TIME_COLUMNS:
                continue
            columns.setdefault(table, []).append(column)
        for table, cols in columns.items():
            if table in ("llm_calls", "schema_migrations"):
                continue  # the call log holds durations; migrations are the same files
            select = ", ".join(f'"{c}"::text' for c in cols)
            out[table] = sorted(repr(r) for r in conn.execute(f'SELECT {select} FROM "{table}"'))
    return out


def differences(got: dict[str, list[str]], want: dict[str, list[str]]) -> dict[str, dict]:
    out = {}
    for table in sorted(set(got) | set(want)):
        a, b = set(got.get(table, [])), set(want.get(table, []))
        if got.get(table) != want.get(table):
            out[table] = {"only_ranged": sorted(a - b)[:3], "only_hourly": sorted(b - a)[:3],
                          "rows": (len(got.get(table, [])), len(want.get(table, [])))}
    return out


def _materialized(result) -> list[tuple[str, str]]:
    """(asset, partition) of each materialisation of the run, in order; each carries stage_seconds."""
    out = []
    for event in result.get_asset_materialization_events():
        materialization = event.materialization
        assert event.step_key == HOURLY_OP
        assert "stage_seconds" in materialization.metadata, materialization.asset_key
        out.append((materialization.asset_key.to_user_string(), materialization.partition))
    return out


@pytest.mark.slow
def test_a_ranged_run_leaves_the_rows_of_the_hourly_runs(clean_db, tmp_path, monkeypatch):
    from newsdedup_dagster.definitions import HOURLY_JOB_NAME, defs
    from newsdedup_dagster.resources import PostgresResource

    database_url = clean_db

    monkeypatch.setenv("NEWSDEDUP_FETCH_MODE", "replay")
    job = defs.resolve_job_def(HOURLY_JOB_NAME)
    names = {"hourly": "chain_hourly", "ranged": "chain_ranged"}
    urls = {how: _database(database_url, name) for how, name in names.items()}
    try:
        # Six one-hour runs, in time order (the hourly schedule, or the demo).
        resources = {"postgres": PostgresResource(database_url=urls["hourly"])}
        monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(tmp_path / "public-hourly"))
        hourly: list[tuple[str, str]] = []
        with DagsterInstance.ephemeral() as instance:
            for hour in HOURS:
                result = job.execute_in_process(partition_key=hour, instance=instance, run_config=RUN_CONFIG,
                                                resources=resources)
                assert result.success, hour
                assert result.dagster_run.tags.get("dagster/partition") == hour
                done = _materialized(result)
                # The hour's run computes every hourly asset of that hour, in the chain's order.
                assert done == [(asset, hour) for asset in ASSETS], (hour, done)
                evaluations = result.get_asset_check_evaluations()
                assert evaluations and all(e.passed for e in evaluations), \
                    (hour, [e.check_name for e in evaluations if not e.passed])
                hourly += done
        want = table_rows(urls["hourly"])
        assert len(want["stories"]) >= 5 and want["story_scores"] and want["events"], \
            {table: len(rows) for table, rows in want.items()}

        # One run over the same range (what a backfill of the six hours is).
        resources = {"postgres": PostgresResource(database_url=urls["ranged"])}
        monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(tmp_path / "public-ranged"))
        with DagsterInstance.ephemeral() as instance:
            result = job.execute_in_process(instance=instance, tags=RANGE_TAGS, run_config=RUN_CONFIG,
                                            resources=resources)
            assert result.success
            ranged = _materialized(result)
            # Hour H of every asset before hour H+1 of any: the hourly runs' order, in one step.
            assert ranged == hourly
            assert sorted(ranged) == sorted((asset, hour) for asset in ASSETS for hour in HOURS)
            for asset in ASSETS:
                partitions = sorted(m.partition for m in result.asset_materializations_for_node(HOURLY_OP)
                                    if m.asset_key == AssetKey(asset))
                assert partitions == HOURS, (asset, partitions)
            # Each check is reported once, for the range, and passed every hour.
            evaluations = result.get_asset_check_evaluations()
            assert evaluations and all(e.passed for e in evaluations), \
                [e.check_name for e in evaluations if not e.passed]
            assert len({(e.asset_key, e.check_name) for e in evaluations}) == len(evaluations)
            for evaluation in evaluations:
                metadata = evaluation.metadata
                assert metadata["hours_checked"].value == f"{HOURS[0]} .. {HOURS[-1]} ({len(HOURS)})", evaluation
                assert metadata["hours_failed"].value == "none"

        got = table_rows(urls["ranged"])
        assert got == want, differences(got, want)
        # Everything went through the runs' postgres resource: the default database stayed empty.
        with db.connection(database_url) as conn:
            assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == 0
    finally:
        for how, name in names.items():
            _drop(database_url, urls[how], name)
