"""The embedded server is private to its user in every layout: another local user cannot open
its socket, whether the socket sits in the data directory (short NEWSDEDUP_HOME) or falls back
to a directory under /tmp (NEWSDEDUP_HOME too long for a socket path). Real server, real
`nobody` user through `su` (so the test needs root; skipped otherwise)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

HOLD_SCRIPT = """
import json, sys, time
from newsdedup_dagster.shared import db
server = db.embedded_server()
info = server.get_postmaster_info()
print(json.dumps({"socket_dir": str(info.socket_dir), "port": info.port,
                  "bin": str(server.bin_path)}), flush=True)
sys.stdin.read()  # hold the server until the test closes stdin
"""

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("su") is None,
    reason="connecting as another local user needs root and su",
)


def _as_nobody(command: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["su", "nobody", "-s", "/bin/sh", "-c", " ".join(f"'{part}'" for part in command)],
        capture_output=True, text=True, timeout=60,
    )


@pytest.fixture(params=["short", "long"])
def embedded_home(request):
    base = Path(tempfile.mkdtemp(prefix="nd-priv-"))
    home = base / "h" if request.param == "short" else base / ("long-newsdedup-home-" + "x" * 90) / "h"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_SCRIPT],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "NEWSDEDUP_HOME": str(home)}, cwd=REPO,
    )
    line = proc.stdout.readline()
    assert line, proc.stderr.read()
    info = json.loads(line)
    try:
        yield request.param, home, info
    finally:
        proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
        shutil.rmtree(base, ignore_errors=True)


def test_other_local_user_cannot_connect(embedded_home):
    layout, home, info = embedded_home
    socket_dir = Path(info["socket_dir"])
    pgdata = (home / "pg").resolve()
    if layout == "short":
        assert socket_dir == pgdata
    else:
        # The layout this test exists for: the socket fell back to a directory under /tmp.
        assert socket_dir != pgdata and str(socket_dir).startswith(tempfile.gettempdir())
    psql = str(Path(info["bin"]) / "psql")
    conninfo = f"host={socket_dir} port={info['port']} user=postgres dbname=postgres connect_timeout=5"

    # The project's user reaches it...
    mine = subprocess.run([psql, conninfo, "-tAc", "SELECT 1"], capture_output=True, text=True, timeout=60)
    assert mine.returncode == 0 and mine.stdout.strip() == "1", mine.stderr
    # ...nobody can run psql (so the refusal below is about the server)...
    runs = _as_nobody([psql, "--version"])
    assert runs.returncode == 0, runs.stderr
    # ...and is refused at the socket.
    other = _as_nobody([psql, conninfo, "-tAc", "SELECT 1"])
    assert other.returncode != 0, other.stdout
    assert "Permission denied" in other.stderr, other.stderr
    # The socket file itself admits only its owner, whichever directory it is in.
    sock = socket_dir / f".s.PGSQL.{info['port']}"
    assert sock.is_socket() and sock.stat().st_mode & 0o077 == 0
