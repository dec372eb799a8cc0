"""`newsdedup reembed` says what to launch next, and that launch works: after two hours of the sample
day, switching the centring choice prints a `dagster asset materialize` line for `stories` over
the hours that hold items; run as printed (the real CLI, an instance of its own), it rebuilds those
hours of `stories` alone, in one run."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from dagster import AssetKey, AssetRecordsFilter, DagsterInstance
from helpers import calibration_environment

from newsdedup_dagster.assets.hourly import hourly_run_config
from newsdedup_dagster.definitions import HOURLY_JOB_NAME, defs
from newsdedup_dagster.instance import QUIET_RUN_CONFIG
from newsdedup_dagster.resources import PostgresResource, deployment_resources

pytestmark = pytest.mark.slow

HOURS = ["2026-11-02-05:00", "2026-11-02-06:00"]
BIN = Path(sys.executable).parent


def test_reembed_prints_a_backfill_that_runs(clean_db, tmp_path, monkeypatch):
    env = {**os.environ, "NEWSDEDUP_DATABASE_URL": clean_db, "NEWSDEDUP_FETCH_MODE": "replay",
           "NEWSDEDUP_PUBLISH_DIR": str(tmp_path / "public"), "NEWSDEDUP_HOME": str(tmp_path / "home"),
           "DAGSTER_HOME": str(tmp_path / "dagster"), "NEWSDEDUP_STEP_RETRY_DELAY": "1"}
    (tmp_path / "dagster").mkdir()
    monkeypatch.setenv("NEWSDEDUP_FETCH_MODE", "replay")
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(tmp_path / "public"))
    with DagsterInstance.ephemeral() as instance:
        for hour in HOURS:
            assert defs.resolve_job_def(HOURLY_JOB_NAME).execute_in_process(
                partition_key=hour, instance=instance,
                run_config={**QUIET_RUN_CONFIG, **hourly_run_config(stories={"later_partitions": "reset"})},
                resources={**deployment_resources(), "postgres": PostgresResource(database_url=clean_db)}).success

    # e5's default is centred vectors; the operator switches centring off.
    env.update(calibration_environment(tmp_path, embeddings={"centre": "off"}))
    out = subprocess.run([sys.executable, "-m", "newsdedup_dagster.cli", "reembed", "--yes"], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [line.strip() for line in out.stdout.splitlines() if line.strip().startswith("dagster asset materialize")]
    assert len(lines) == 1, out.stdout
    argv = shlex.split(lines[0])
    assert argv[argv.index("--select") + 1] == "stories"
    assert argv[argv.index("--partition-range") + 1] == f"{HOURS[0]}...{HOURS[1]}"
    assert re.search(r"in the UI, select stories -> Materialize", out.stdout)

    launched = subprocess.run([str(BIN / argv[0]), *argv[1:]], env=env, capture_output=True, text=True, timeout=900)
    assert launched.returncode == 0, launched.stdout[-3000:] + launched.stderr[-3000:]
    with DagsterInstance.from_config(str(tmp_path / "dagster")) as instance:
        runs = instance.get_runs()
        assert len(runs) == 1 and runs[0].asset_selection == {AssetKey("stories")}
        for asset in ("stories", "item_embeddings", "story_scores"):
            records = instance.fetch_materializations(AssetRecordsFilter(asset_key=AssetKey(asset)), limit=100).records
            assert sorted(r.partition_key for r in records) == (HOURS if asset == "stories" else []), asset
        # A run over a range rebuilds in time order, as a backfill does: later hours are reset.
        stories = instance.fetch_materializations(AssetRecordsFilter(asset_key=AssetKey("stories")), limit=100).records
        assert {r.asset_materialization.metadata["later_partitions"].value for r in stories} == {"reset"}
