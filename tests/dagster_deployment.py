"""A real Dagster deployment for tests: the test's OWN dagster.yaml in a temporary DAGSTER_HOME
(Postgres storage in a fresh database on the session's embedded server, 4 concurrent runs, run
monitoring), `dagster-daemon run` and `dagster-webserver` on a free port, and the GraphQL calls
the UI makes.

    with DagsterDeployment(tmp_path, app_database_url) as dep:
        backfill_id = dep.launch_backfill(ASSETS, ["2026-11-02-00:00", ...])
        dep.wait_for_backfill(backfill_id)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import yaml
from helpers import free_port

from newsdedup_dagster.shared import db

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
MODULE = "newsdedup_dagster.definitions"

def daemon_argv(python: str, module: str) -> list[str]:
    """The real `dagster-daemon run` of the environment `python` belongs to, at Dagster's default
    intervals (a backfill is one run: nothing to gain from a faster loop)."""
    return [str(Path(python).parent / "dagster-daemon"), "run", "-m", module]


BACKFILL_DONE = {"COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED"}

LAUNCH_BACKFILL = """
mutation LaunchPartitionBackfill($backfillParams: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $backfillParams) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message stack }
    ... on UnauthorizedError { message }
    ... on InvalidSubsetError { message }
  }
}"""

REEXECUTE_BACKFILL = """
mutation ReexecuteBackfill($reexecutionParams: ReexecutionParams!) {
  reexecutePartitionBackfill(reexecutionParams: $reexecutionParams) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message stack }
    ... on UnauthorizedError { message }
  }
}"""

BACKFILL_STATUS = """
query BackfillStatus($backfillId: String!) {
  partitionBackfillOrError(backfillId: $backfillId) {
    __typename
    ... on PartitionBackfill { id status error { message } }
    ... on PythonError { message }
  }
}"""


def write_dagster_yaml(home: Path, storage_url: str, max_concurrent_runs: int = 4,
                       run_coordinator: dict | None = None) -> Path:
    """What an operator would write: Postgres storage, a run queue allowing several runs at once,
    run monitoring, no telemetry; `run_coordinator` (module, class, config) replaces Dagster's default."""
    home.mkdir(parents=True, exist_ok=True)
    document = {
        "storage": {"postgres": {"postgres_url": storage_url}},
        **({"run_coordinator": run_coordinator} if run_coordinator else {}),
        "concurrency": {"runs": {"max_concurrent_runs": max_concurrent_runs}},
        "run_monitoring": {"enabled": True, "poll_interval_seconds": 10},
        "telemetry": {"enabled": False},
    }
    path = home / "dagster.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def stop_retention_schedule(dagster: Path, env: dict[str, str], cwd: Path) -> None:
    """Stop `retention_schedule` in the instance `env` names, before its daemon starts. It is on by
    default (03:15 UTC): a test whose daemon runs across that minute would see a prune of its
    sample day, weeks old by then, and an extra run. What it prunes is tests/test_retention.py's."""
    result = subprocess.run([str(dagster), "schedule", "stop", "retention_schedule", "-m", MODULE], env=env, cwd=cwd,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]


class DagsterDeployment:
    def __init__(self, root: Path, app_database_url: str, extra_env: dict[str, str] | None = None,
                 max_concurrent_runs: int = 4, newsdedup_dev: bool = False, run_coordinator: dict | None = None,
                 code: list[str] | None = None):
        """newsdedup_dev: start `newsdedup dev` (which runs `dagster dev`) instead of the daemon and
        webserver separately. run_coordinator: the instance file's `run_coordinator` entry. code: the
        code location's arguments for the daemon and webserver (default `-m newsdedup_dagster.definitions`)."""
        self.newsdedup_dev = newsdedup_dev
        self.code = code or ["-m", MODULE]
        self.root = root
        self.home = root / "dagster"
        self.outbox = root / "outbox"
        self.app_database_url = app_database_url
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        storage_db = f"dagster_test_{uuid.uuid4().hex[:10]}"
        db._ensure_database(app_database_url, storage_db)
        self.storage_url = db.sqlalchemy_psycopg2_url(db.with_database(app_database_url, storage_db))
        write_dagster_yaml(self.home, self.storage_url, max_concurrent_runs, run_coordinator)
        self.env = {
            **os.environ,
            "DAGSTER_HOME": str(self.home),
            "NEWSDEDUP_DATABASE_URL": app_database_url,
            # What `newsdedup dev` would point a dagster.yaml it writes at: the same fresh storage.
            "NEWSDEDUP_DAGSTER_DATABASE_URL": db.with_database(app_database_url, storage_db),
            "NEWSDEDUP_HOME": str(root / "home"),
            "NEWSDEDUP_OUTBOX": str(self.outbox),
            "NEWSDEDUP_FETCH_MODE": "replay",
            # A failed step is still retried twice; the test need not wait Dagster's 30 s and 60 s.
            "NEWSDEDUP_STEP_RETRY_DELAY": "1",
            **(extra_env or {}),
        }
        self.procs: list[subprocess.Popen] = []
        self.logs: list[Path] = []

    # ------------------------------------------------------------------ lifecycle
    def _start(self, name: str, argv: list[str]) -> None:
        log = self.root / f"{name}.log"
        self.logs.append(log)
        handle = log.open("w")
        self.procs.append(subprocess.Popen(argv, env=self.env, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT,
                                           start_new_session=True))

    def __enter__(self) -> DagsterDeployment:
        if self.code == ["-m", MODULE]:
            stop_retention_schedule(BIN / "dagster", self.env, REPO)
        if self.newsdedup_dev:
            self._start("newsdedup-dev", [sys.executable, "-m", "newsdedup_dagster.cli", "dev", "--port", str(self.port)])
            self.wait_until_ready()
            return self
        self._start("daemon", [str(BIN / "dagster-daemon"), "run", *self.code])
        self._start("webserver", [str(BIN / "dagster-webserver"), *self.code, "-h", "127.0.0.1",
                                  "-p", str(self.port)])
        self.wait_until_ready()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(f"--- {p.name}\n" + "\n".join(p.read_text(errors="replace").splitlines()[-lines:])
                         for p in self.logs if p.exists())

    def wait_until_ready(self, timeout: float = 240) -> None:
        deadline = time.time() + timeout
        query = "{ instance { daemonHealth { allDaemonStatuses { daemonType healthy required } } } assetNodes { id } }"
        while time.time() < deadline:
            for proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"a Dagster process exited early:\n{self.log_tail()}")
            try:
                data = self.graphql(query)
                statuses = data["instance"]["daemonHealth"]["allDaemonStatuses"]
                if data["assetNodes"] and all(s["healthy"] for s in statuses if s["required"]):
                    return
            except (httpx.HTTPError, ValueError, KeyError, AssertionError):
                pass
            time.sleep(2)
        raise TimeoutError(f"webserver/daemon not ready after {timeout}s:\n{self.log_tail()}")

    # -------------------------------------------------------------------- GraphQL
    def graphql(self, query: str, variables: dict | None = None, timeout: float = 60) -> dict:
        response = httpx.post(f"{self.url}/graphql", json={"query": query, "variables": variables or {}},
                              timeout=timeout)
        payload = response.json()
        assert not payload.get("errors"), json.dumps(payload["errors"])[:2000]
        return payload["data"]

    def launch_backfill(self, assets: list[str], partitions: list[str]) -> str:
        """What the UI's Materialize dialog sends for a partition range of the selected assets."""
        params = {"assetSelection": [{"path": [a]} for a in assets], "partitionNames": partitions,
                  "fromFailure": False, "tags": []}
        result = self.graphql(LAUNCH_BACKFILL, {"backfillParams": params})["launchPartitionBackfill"]
        assert result["__typename"] == "LaunchBackfillSuccess", result
        return result["backfillId"]

    def reexecute_backfill_from_failure(self, backfill_id: str) -> str:
        params = {"parentRunId": backfill_id, "strategy": "FROM_FAILURE"}
        result = self.graphql(REEXECUTE_BACKFILL, {"reexecutionParams": params})["reexecutePartitionBackfill"]
        assert result["__typename"] == "LaunchBackfillSuccess", result
        return result["backfillId"]

    def backfill_status(self, backfill_id: str) -> str:
        data = self.graphql(BACKFILL_STATUS, {"backfillId": backfill_id})["partitionBackfillOrError"]
        assert data["__typename"] == "PartitionBackfill", data
        return data["status"]

    def wait_for_backfill(self, backfill_id: str, timeout: float = 1500) -> str:
        deadline = time.time() + timeout
        while time.time() < deadline:
            status = self.backfill_status(backfill_id)
            if status in BACKFILL_DONE:
                return status
            time.sleep(3)
        raise TimeoutError(f"backfill {backfill_id} still {status} after {timeout}s:\n{self.log_tail()}")

    def instance(self):
        """A DagsterInstance on the deployment's storage, in the test process."""
        from dagster import DagsterInstance

        return DagsterInstance.from_config(str(self.home))
