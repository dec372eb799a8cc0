"""`newsdedup dev` serves the Dagster UI on the Postgres-backed instance: query the real
webserver's GraphQL for the asset graph and the schedules, then stop it with SIGTERM."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from helpers import free_port, stop_process_group

REPO = Path(__file__).resolve().parent.parent

QUERY = """
{
  assetNodes { assetKey { path } }
  repositoriesOrError {
    ... on RepositoryConnection { nodes { name schedules { name cronSchedule } } }
  }
}
"""


DAEMON_QUERY = "{ instance { daemonHealth { allDaemonStatuses { daemonType healthy } } } }"


@pytest.mark.slow
@pytest.mark.daemon
def test_newsdedup_dev_serves_asset_graph_and_schedule(tmp_path):
    port = free_port()
    env = {**os.environ, "NEWSDEDUP_HOME": str(tmp_path / "home"), "DAGSTER_HOME": str(tmp_path / "dagster")}
    env.pop("NEWSDEDUP_DATABASE_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "newsdedup_dagster.cli", "dev", "--port", str(port)],
        env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )
    try:
        data = None
        deadline = time.time() + 180
        while time.time() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"newsdedup dev exited early:\n{proc.stdout.read()}")
            try:
                resp = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": QUERY}, timeout=10)
                payload = resp.json()
                assert not payload.get("errors"), payload["errors"]
                if (payload.get("data") or {}).get("assetNodes"):
                    data = payload["data"]
                    break
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(2)
        assert data is not None, "webserver never answered GraphQL with the asset graph"
        keys = {"/".join(node["assetKey"]["path"]) for node in data["assetNodes"]}
        assert {"raw_items", "item_duplicates", "item_embeddings", "stories", "story_scores",
                "story_translations", "events", "digest"} <= keys
        schedules = {
            s["name"]: s["cronSchedule"]
            for repo in data["repositoriesOrError"]["nodes"]
            for s in repo["schedules"]
        }
        assert schedules.get("hourly_pipeline_schedule") == "5 * * * *"
        # The file newsdedup writes: its PostgreSQL storage and the validating run coordinator.
        written = (tmp_path / "dagster" / "dagster.yaml").read_text()
        assert "NewsdedupPostgresStorage" in written and "ValidatingRunCoordinator" in written
        # The daemon is running against the same Postgres instance: its scheduler reports healthy
        # (that is the process that ticks the hourly schedule).
        healthy = False
        while time.time() < deadline and not healthy:
            resp = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": DAEMON_QUERY}, timeout=10)
            statuses = resp.json()["data"]["instance"]["daemonHealth"]["allDaemonStatuses"]
            healthy = any(s["daemonType"] == "SCHEDULER" and s["healthy"] for s in statuses)
            if not healthy:
                time.sleep(3)
        assert healthy, "the scheduler daemon never reported healthy"
    finally:
        stop_process_group(proc)
