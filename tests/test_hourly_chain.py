"""The hourly chain over a range of hours is the hourly runs of those hours, in one run.

Hours 00:00-05:00 of the bundled sample day (replayed feeds, the offline e5 model, offline scores)
go through the hourly job twice, each time into a database of its own on the embedded PostgreSQL:
as six one-hour runs in time order, and as one ranged run (the partition range tags a backfill's
single run carries), both with `stories.later_partitions=reset` as the demo replays a day. Every
application table must hold the same rows (the crash suite's fingerprint idea: every column but
serial ids, the columns referring to them and write times), and each (asset, hour) must have been
materialised with that hour's partition key, once. The publish directories hold the same files,
though the ranged run writes it only at its last hour (the hours' story_feeds metadata names it).
"""

from __future__ import annotations

import psycopg
import pytest
from dagster import AssetCheckKey, AssetKey, DagsterInstance
from fingerprints import WRITE_TIME_COLUMNS, table_rows

from newsdedup_dagster.assets.hourly import HOURLY_OP, STAGES, hourly_run_config
from newsdedup_dagster.instance import QUIET_RUN_CONFIG
from newsdedup_dagster.shared import db

DAY = "2026-11-02"
HOURS = [f"{DAY}-{hour:02d}:00" for hour in range(6)]
ASSETS = [stage.key.to_user_string() for stage in STAGES]
RUN_CONFIG = {**QUIET_RUN_CONFIG, **hourly_run_config(stories={"later_partitions": "reset"})}
RANGE_TAGS = {"dagster/asset_partition_range_start": HOURS[0], "dagster/asset_partition_range_end": HOURS[-1]}

# Columns that say when a row was written (or where the run's files went: each run publishes
# into a directory of its own), not what it holds.
IGNORED_COLUMNS = WRITE_TIME_COLUMNS | {"written_at", "output_dir"}


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
        want = table_rows(urls["hourly"], IGNORED_COLUMNS)
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
            # The range's last hour wrote the publish directory; each earlier hour (all of one UTC day)
            # recorded its rows as an hourly run does and names that hour.
            written_by = {m.partition: m.metadata["written_by"].value
                          for m in result.asset_materializations_for_node(HOURLY_OP)
                          if m.asset_key == AssetKey("story_feeds")}
            assert written_by == {hour: HOURS[-1] for hour in HOURS}, written_by
            # Each check is reported once per hour, for that hour's partition, and passed.
            evaluations = result.get_asset_check_evaluations()
            assert evaluations and all(e.passed for e in evaluations), \
                [e.check_name for e in evaluations if not e.passed]
            per_hour = sorted((e.asset_key.to_user_string(), e.check_name, e.partition) for e in evaluations)
            checks = {(k.asset_key.to_user_string(), k.name) for stage in STAGES for k in
                      (AssetCheckKey(stage.key, spec.name) for spec in stage.check_specs)}
            assert per_hour == sorted((asset, name, hour) for asset, name in checks for hour in HOURS)
            # Each names the hour's materialisation it checked (else Dagster does not count it as
            # current, and the digest's automation condition would wait for it forever).
            stored = {(m.asset_key, m.partition): m for m in result.asset_materializations_for_node(HOURLY_OP)}
            for evaluation in evaluations:
                assert evaluation.target_materialization_data is not None, evaluation
                assert (evaluation.asset_key, evaluation.partition) in stored

        got = table_rows(urls["ranged"], IGNORED_COLUMNS)
        assert got == want, differences(got, want)
        # The ranged run computes each hour's publishing after its other stages and writes the files
        # at its last hour: the site and feeds it leaves are the hourly runs', byte for byte.
        published = {how: {str(p.relative_to(tmp_path / f"public-{how}")): p.read_bytes()
                           for p in sorted((tmp_path / f"public-{how}").rglob("*")) if p.is_file()}
                     for how in ("hourly", "ranged")}
        assert len(published["hourly"]) > 20
        assert published["ranged"] == published["hourly"], sorted(
            name for name in set(published["ranged"]) | set(published["hourly"])
            if published["ranged"].get(name) != published["hourly"].get(name))[:5]
        # Everything went through the runs' postgres resource: the default database stayed empty.
        with db.connection(database_url) as conn:
            assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == 0
    finally:
        for how, name in names.items():
            _drop(database_url, urls[how], name)
