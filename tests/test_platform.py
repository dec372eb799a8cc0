"""Platform: embedded server, migrations, constraints, bad input, signals. All against a real
embedded PostgreSQL + pgvector (no mocks)."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import psycopg
import pytest
import yaml

from newsdedup_dagster.shared import db

REPO = Path(__file__).resolve().parent.parent


def _newsdedup(*args, env=None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "newsdedup_dagster.cli", *args],
        capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}, cwd=REPO,
    )


def _postgres_processes(pgdata: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(attrs=("name", "cmdline")):
        cmd = proc.info.get("cmdline") or []
        if proc.info.get("name") == "postgres" and str(pgdata) in " ".join(cmd):
            found.append(proc)
    return found


# ------------------------------------------------------------------ migrations
def _migrate_in_child(url: str, queue) -> None:
    from newsdedup_dagster.shared import db as child_db

    queue.put(child_db.migrate(url))


def test_migrations_idempotent_and_concurrent_safe(database_url):
    admin = db.with_database(database_url, "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS migrate_race")
        conn.execute("CREATE DATABASE migrate_race")
    url = db.with_database(database_url, "migrate_race")
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_migrate_in_child, args=(url, queue)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    applied = [queue.get(timeout=5) for _ in procs]
    versions = [v for v, _, _ in db.migration_files()]
    # Exactly one process applied everything; the others found it done.
    assert sorted(applied, key=len) == [[], [], versions]
    assert db.migrate(url) == []  # idempotent
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT version, count(*) FROM schema_migrations GROUP BY 1 ORDER BY 1").fetchall()
    assert rows == [(v, 1) for v in versions]


# ----------------------------------------------------------------- constraints
def _insert_story_fixture(conn, story_ids):
    conn.execute("INSERT INTO sources (id, name, feed_url, language) VALUES ('s1', 'S1', 'https://s1.example/feed', 'en')")
    conn.execute("INSERT INTO embedding_models (model, provider, dims, index_type) VALUES ('tiny', 'test', 3, 'vector')")
    conn.execute(
        "INSERT INTO items (id, canonical_url, url, title, published_at, partition_hour, source_id) "
        "VALUES ('i1', 'https://s1.example/a', 'https://s1.example/a', 'A', now(), date_trunc('hour', now()), 's1')"
    )
    for sid in story_ids:
        conn.execute(
            "INSERT INTO stories (id, model, created_partition, updated_partition, first_published_at, "
            "latest_published_at, centroid) VALUES (%s, 'tiny', now(), now(), now(), now(), '[1,0,0]')",
            (sid,),
        )


def test_item_cannot_belong_to_two_stories(conn):
    _insert_story_fixture(conn, ["st1", "st2"])
    conn.execute("INSERT INTO story_items (item_id, story_id, pass, partition_hour) VALUES ('i1', 'st1', 2, now())")
    with pytest.raises(psycopg.errors.UniqueViolation):
        conn.execute("INSERT INTO story_items (item_id, story_id, pass, partition_hour) VALUES ('i1', 'st2', 1, now())")
    conn.rollback()


def test_one_embedding_per_item_per_model_and_one_active_model(conn):
    _insert_story_fixture(conn, [])
    conn.execute(
        "INSERT INTO item_embeddings (item_id, model, text_hash, embedding, partition_hour, published_at) "
        "VALUES ('i1', 'tiny', 'h', '[1,2,3]', now(), now())"
    )
    with pytest.raises(psycopg.errors.UniqueViolation):
        conn.execute(
            "INSERT INTO item_embeddings (item_id, model, text_hash, embedding, partition_hour, published_at) "
            "VALUES ('i1', 'tiny', 'h2', '[1,2,4]', now(), now())"
        )
    conn.rollback()
    _insert_story_fixture(conn, [])
    with pytest.raises(psycopg.errors.UniqueViolation):
        conn.execute("INSERT INTO embedding_models (model, provider, dims, index_type) VALUES ('other', 't', 4, 'vector')")
    conn.rollback()


def test_duplicate_cannot_point_at_itself(conn):
    _insert_story_fixture(conn, [])
    with pytest.raises(psycopg.errors.CheckViolation):
        conn.execute(
            "INSERT INTO item_duplicates (item_id, canonical_item_id, rule, partition_hour) VALUES ('i1', 'i1', 'url', now())"
        )
    conn.rollback()


# ------------------------------------------------------------------- bad input
def test_unreachable_database_url_is_one_clear_line_without_password(tmp_path):
    result = _newsdedup(
        "db", "status",
        env={"NEWSDEDUP_DATABASE_URL": "postgresql://alice:s3cret-pw@127.0.0.1:9/newsdb", "NEWSDEDUP_HOME": str(tmp_path)},
    )
    assert result.returncode != 0
    err = result.stderr.strip().splitlines()
    assert len(err) == 1, result.stderr
    assert "127.0.0.1:9/newsdb" in err[0] and "NEWSDEDUP_DATABASE_URL" in err[0]
    assert "s3cret-pw" not in result.stderr + result.stdout


def test_home_not_writable_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = _newsdedup("db", "status", env={"NEWSDEDUP_HOME": str(blocker / "home")})
    assert result.returncode != 0
    assert "NEWSDEDUP_HOME" in result.stderr and "not writable" in result.stderr


def test_pgvector_version_gate():
    # The embedded server ships only pgvector 0.8.5, so "too old" cannot be installed here:
    # the version rule is checked as a pure function, the live check below on the real server.
    db.require_pgvector_version("0.8.0")
    db.require_pgvector_version("0.10.1")
    with pytest.raises(db.DatabaseError, match="too old"):
        db.require_pgvector_version("0.7.4")


def test_live_pgvector_check(database_url):
    with db.connect(database_url) as conn:
        assert db.check_pgvector(conn) >= "0.8"


def test_redact_url():
    assert db.redact_url("postgresql://u:pw@h:5432/d?sslmode=require") == "postgresql://u:***@h:5432/d?sslmode=require"
    assert db.describe_url("postgresql://u:pw@h:5432/d") == "h:5432/d"
    assert "pw" not in db.describe_url("postgresql://u:pw@h/d")


# ------------------------------------------------------ concurrency and signals
HOLD_SCRIPT = """
import sys, time
from newsdedup_dagster.shared import db
db.ensure_ready()
print("ready", flush=True)
time.sleep(float(sys.argv[1]))
"""


def _start_holder(home: Path, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_SCRIPT, str(seconds)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "NEWSDEDUP_HOME": str(home)}, cwd=REPO,
    )
    line = proc.stdout.readline()
    assert line.strip() == "ready", proc.stderr.read()
    return proc


@pytest.fixture()
def server_home():
    """A home for an embedded server outside pytest's tmp_path: as root the server runs as another
    user who must traverse the parents, and a concurrent pytest session of the same user resets
    the shared pytest-of-<user> directory to 0700."""
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="nd-platform-"))
    yield base / "home"
    shutil.rmtree(base, ignore_errors=True)


def _wait_gone(pgdata: Path, timeout: float = 20) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not _postgres_processes(pgdata):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.signals
def test_two_processes_share_one_server_and_sigterm_leaves_no_orphan(server_home):
    home = server_home
    a = _start_holder(home, 60)
    b = _start_holder(home, 60)
    pgdata = (home / "pg").resolve()
    assert _postgres_processes(pgdata), "no embedded server running"
    postmaster = json.loads((pgdata / ".handle_pids.json").read_text())
    assert {a.pid, b.pid} <= set(postmaster)
    a.send_signal(signal.SIGTERM)
    a.wait(20)
    time.sleep(0.5)
    assert _postgres_processes(pgdata), "server stopped while another client still holds it"
    b.send_signal(signal.SIGTERM)
    b.wait(20)
    assert _wait_gone(pgdata), "orphaned postgres after the last client got SIGTERM"


def test_sigkilled_client_is_cleaned_on_next_start(server_home):
    home = server_home
    victim = _start_holder(home, 60)
    pgdata = (home / "pg").resolve()
    victim.kill()
    victim.wait(10)
    assert victim.pid in json.loads((pgdata / ".handle_pids.json").read_text())
    survivor = _start_holder(home, 0.5)  # attaches, cleans the stale pid, exits normally
    survivor.wait(30)
    assert _wait_gone(pgdata), "server left running after the last live client exited"


# ------------------------------------------------------- migration checksums
from hypothesis import given, settings, strategies as st  # noqa: E402

_words = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
_strings = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20).map(
    lambda body: "'" + body.replace("'", "''") + "'")
_dollar_bodies = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00$"), max_size=30).map(
    lambda body: "$fn$" + body + "$fn$")
_tokens = st.one_of(_words, _strings, _dollar_bodies, st.sampled_from(["(", ")", ",", ";", "=", "::", "42"]))
_comment_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20)
_separators = st.lists(
    st.one_of(
        st.sampled_from([" ", "\n", "\t", "  \n  "]),
        _comment_text.map(lambda t: f"-- {t}\n"),
        _comment_text.filter(lambda t: "*/" not in t and "/*" not in t).map(lambda t: f"/* {t} */"),
    ),
    min_size=1, max_size=3,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_tokens, _separators), min_size=1, max_size=12))
def test_normalised_sql_ignores_comments_and_layout_only(pairs):
    tokens = [token for token, _ in pairs]
    text = "".join(token + separator for token, separator in pairs)
    # Comments and whitespace between tokens vanish; literals and dollar bodies stay byte for byte.
    assert db.normalise_sql(text) == " ".join(tokens)


def test_normalised_sql_keeps_comment_markers_inside_literals():
    text = "SELECT '-- not a comment', \"a /* b\", $$ -- body $$; -- real\n/* real /* nested */ */"
    assert db.normalise_sql(text) == "SELECT '-- not a comment', \"a /* b\", $$ -- body $$;"
    assert db.normalise_sql("SELECT 'a  b'") != db.normalise_sql("SELECT 'a b'")
    assert db.migration_checksum("SELECT 1 -- x") == db.migration_checksum("-- y\nSELECT   1")
    assert db.migration_checksum("SELECT 1") != db.migration_checksum("SELECT 2")


def test_applied_migrations_tolerate_comment_edits_not_changes(database_url, tmp_path, caplog):
    import hashlib
    import logging
    import shutil

    admin = db.with_database(database_url, "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS migrate_comments")
        conn.execute("CREATE DATABASE migrate_comments")
    url = db.with_database(database_url, "migrate_comments")
    migrations = tmp_path / "migrations"
    shutil.copytree(REPO / "sql" / "migrations", migrations)
    files = {version: path for version, _, path in db.migration_files(migrations)}
    first, second, third = sorted(files)[:3]
    assert db.migrate(url, migrations) == sorted(files)

    def warnings_now() -> list[str]:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="newsdedup_dagster.shared.db"):
            assert db.migrate(url, migrations) == []  # applied migrations are never re-run
        return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]

    # Comments rewritten, added and removed, lines re-indented: no complaint.
    body = files[second].read_text()
    edited = "-- A new header comment.\n/* and a block */\n" + "\n".join(
        ("    " + line.split("--")[0].rstrip() + "  -- reworded") if line.strip() and not line.lstrip().startswith("--")
        and "'" not in line else line
        for line in body.splitlines()
    )
    files[second].write_text(edited)
    assert db.normalise_sql(edited) == db.normalise_sql(body)
    assert warnings_now() == []

    # A checksum recorded by the earlier raw-file form is upgraded in place, silently.
    legacy = hashlib.sha256(files[first].read_text().encode()).hexdigest()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE schema_migrations SET checksum = %s WHERE version = %s", (legacy, first))
    assert warnings_now() == []
    with psycopg.connect(url) as conn:
        recorded = conn.execute("SELECT checksum FROM schema_migrations WHERE version = %s", (first,)).fetchone()[0]
    assert recorded == db.migration_checksum(files[first].read_text())

    # A changed statement in an applied file still warns (it would never be applied here).
    files[third].write_text(files[third].read_text() + "\nCREATE TABLE IF NOT EXISTS added_later (id int);\n")
    assert [m for m in warnings_now() if files[third].name in m]


# ------------------------------------------------------------- instance file
# What newsdedup wrote before its storage class: the URL in a variable only its own processes set.
EARLIER_INSTANCE_FILE = """\
storage:
  postgres:
    postgres_url:
      env: NEWSDEDUP_DAGSTER_PG_URL
concurrency:
  runs:
    max_concurrent_runs: 4
  pools:
    default_limit: 1
telemetry:
  enabled: false
"""


def test_instance_file_is_the_operators(database_url, tmp_path, monkeypatch):
    from newsdedup_dagster import instance

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    path, storage = instance.prepare_instance()
    written = path.read_text()
    assert instance.STORAGE_CLASS in written and storage == db.dagster_database_url()
    assert "password" not in written and "env" not in written  # needs no variable of its own

    operator = written.replace("telemetry:", "# the operator's own file\ntelemetry:")
    path.write_text(operator)
    instance.prepare_instance()
    assert path.read_text() == operator  # present: left alone

    instance.prepare_instance(overwrite=True)  # `--write-instance`
    assert path.read_text() == written

    # An earlier version's file (URL in a variable only newsdedup's processes set), unchanged: replaced;
    # the same file with one edit is the operator's.
    path.write_text(EARLIER_INSTANCE_FILE.replace("runs: 4", "runs: 2"))
    instance.prepare_instance()
    assert "runs: 2" in path.read_text()
    path.write_text(EARLIER_INSTANCE_FILE)
    assert instance.unset_variables(path) == ["NEWSDEDUP_DAGSTER_PG_URL"]
    instance.prepare_instance()
    assert path.read_text() == written

    # The previous file (newsdedup's storage, Dagster's default run coordinator), unchanged: replaced
    # by one naming the validating coordinator.
    previous = {k: v for k, v in instance.default_instance_document().items() if k != "run_coordinator"}
    path.write_text(yaml.safe_dump(previous, sort_keys=False))
    assert instance.written_by_earlier_version(path)
    instance.prepare_instance()
    assert path.read_text() == written and "ValidatingRunCoordinator" in written
    assert not instance.written_by_earlier_version(path)


def test_instance_file_loads_in_dagster_without_newsdedup(database_url, tmp_path):
    """The written file, opened by Dagster's own loader in a process that imported nothing of
    newsdedup's and set no variable: runs go to the `dagster` database newsdedup's settings name."""
    from newsdedup_dagster import instance

    home = tmp_path / "dagster"
    instance.write_dagster_yaml(home)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DAGSTER_")}
    env["DAGSTER_HOME"] = str(home)
    script = ("from dagster import DagsterInstance\n"
              "i = DagsterInstance.get()\n"
              "print(type(i.run_storage).__name__, i.run_storage.postgres_url.split('://')[0], i.get_runs_count(),\n"
              "      type(i.run_coordinator).__name__, i.get_concurrency_config().run_queue_config.max_concurrent_runs)")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    storage, scheme, runs, coordinator, max_runs = proc.stdout.split()
    assert storage == "PostgresRunStorage" and scheme == "postgresql+psycopg2" and int(runs) >= 0
    # The queue is still Dagster's, with the file's `concurrency` settings.
    assert coordinator == "ValidatingRunCoordinator" and int(max_runs) == 4
    with psycopg.connect(db.dagster_database_url()) as conn:
        assert conn.execute("SELECT to_regclass('runs') IS NOT NULL").fetchone()[0]


def test_db_status_reports_the_hours_each_stage_reached(conn, database_url):
    _insert_story_fixture(conn, ["st1"])
    conn.execute("INSERT INTO story_items (item_id, story_id, pass, partition_hour) "
                 "VALUES ('i1', 'st1', 2, '2026-11-02 05:00+00')")
    conn.commit()
    result = _newsdedup("db", "status", env={"NEWSDEDUP_DATABASE_URL": database_url})
    assert result.returncode == 0, result.stderr
    assert "hours fetched: 0\n" in result.stdout
    assert "hours clustered: 1 (2026-11-02-05:00 .. 2026-11-02-05:00 UTC)" in result.stdout, result.stdout
