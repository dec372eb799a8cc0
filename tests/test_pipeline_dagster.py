"""The hourly job through Dagster with Postgres-backed instance storage, on the bundled sample
feeds (replayed), and the demo's SIGTERM behaviour."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from newsdedup_dagster.shared import db

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_hourly_partition_materialises_through_dagster_on_postgres_storage(clean_db, monkeypatch):
    from dagster_postgres import PostgresRunStorage

    from newsdedup_dagster.assets.hourly import HOURLY_OP, STAGES
    from newsdedup_dagster.definitions import HOURLY_JOB_NAME, defs
    from newsdedup_dagster.instance import QUIET_RUN_CONFIG, get_instance

    monkeypatch.setenv("NEWSDEDUP_FETCH_MODE", "replay")
    instance = get_instance()
    assert isinstance(instance.run_storage, PostgresRunStorage)
    job = defs.resolve_job_def(HOURLY_JOB_NAME)
    key = "2026-11-02-06:00"
    result = job.execute_in_process(partition_key=key, instance=instance, run_config=QUIET_RUN_CONFIG)
    assert result.success
    # The run and its materialisations are in the Postgres instance storage.
    run = instance.get_run_by_id(result.run_id)
    assert run is not None and run.tags.get("dagster/partition") == key
    stored = {
        key.to_user_string()
        for key in instance.get_asset_keys()
    }
    assert {"raw_items", "item_duplicates", "item_embeddings", "stories", "story_scores", "events"} <= stored
    # One step, the hourly op, materialised the hour of every hourly asset.
    materialized = sorted((m.asset_key.to_user_string(), m.partition)
                          for m in result.asset_materializations_for_node(HOURLY_OP))
    assert materialized == sorted((stage.key.to_user_string(), key) for stage in STAGES)
    evaluations = result.get_asset_check_evaluations()
    assert evaluations and all(e.passed for e in evaluations), [e.check_name for e in evaluations if not e.passed]
    with db.connection(clean_db) as conn:
        items = conn.execute("SELECT count(*) FROM items WHERE partition_hour = '2026-11-02 06:00+00'").fetchone()[0]
        stories = conn.execute("SELECT count(*) FROM stories").fetchone()[0]
        scored = conn.execute("SELECT count(*) FROM story_scores").fetchone()[0]
    assert items > 0 and stories > 0 and scored == stories
    # Materialising the same partition again leaves the same rows.
    with db.connection(clean_db) as conn:
        before = conn.execute("SELECT item_id, story_id FROM story_items ORDER BY 1").fetchall()
    assert job.execute_in_process(partition_key=key, instance=instance, run_config=QUIET_RUN_CONFIG).success
    with db.connection(clean_db) as conn:
        after = conn.execute("SELECT item_id, story_id FROM story_items ORDER BY 1").fetchall()
    assert before == after


def _postgres_for(pgdata: Path):
    import psutil

    return [p for p in psutil.process_iter(attrs=("name", "cmdline"))
            if p.info.get("name") == "postgres" and str(pgdata) in " ".join(p.info.get("cmdline") or [])]


@pytest.mark.slow
@pytest.mark.signals
def test_sigterm_stops_demo_without_orphaned_postgres(tmp_path):
    home = tmp_path / "home"
    env = {**os.environ, "NEWSDEDUP_HOME": str(home), "DAGSTER_HOME": str(tmp_path / "dagster")}
    env.pop("NEWSDEDUP_DATABASE_URL", None)
    # Started with SIGINT ignored, as a background job of a non-interactive shell (CI, service
    # managers) is: Dagster copies SIGINT's handler onto SIGTERM after each run.
    proc = subprocess.Popen([sys.executable, "-m", "newsdedup_dagster.cli", "demo"], env=env, cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        deadline = time.time() + 240
        while time.time() < deadline:
            line = proc.stdout.readline()
            if line.startswith("2026-11-02-00:00"):
                break  # the first partition has been materialised: the server is up and busy
            if not line and proc.poll() is not None:
                pytest.fail("demo exited before its first partition")
        pgdata = (home / "pg").resolve()
        assert _postgres_for(pgdata), "embedded server not running during the demo"
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=120)
        # With SIGINT ignored the demo's stop watch handles SIGTERM wherever it lands: 143.
        assert proc.returncode == 128 + signal.SIGTERM
        assert "demo finished" not in rest
        deadline = time.time() + 30
        while _postgres_for(pgdata) and time.time() < deadline:
            time.sleep(0.3)
        assert not _postgres_for(pgdata), "orphaned postgres after SIGTERM to the demo"
    finally:
        if proc.poll() is None:
            proc.kill()
