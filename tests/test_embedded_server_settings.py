"""The embedded server's own settings: its buffer cache comes from the calibration file's
deployment.embedded_shared_buffers (or a quarter of memory), written into one managed block of postgresql.conf at every start.

Real parts: an embedded PostgreSQL in a temporary home, started in a child process each time (a
running server reads shared_buffers only when it starts; the child's exit stops it)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from helpers import calibrate, calibration_environment

from newsdedup_dagster import config

REPO = Path(__file__).resolve().parent.parent

SHOW = """
import psycopg
from newsdedup_dagster.shared import db
with psycopg.connect(db.app_database_url()) as conn:
    print(conn.execute("SHOW shared_buffers").fetchone()[0], conn.execute("SHOW unix_socket_permissions").fetchone()[0])
"""


def _start_and_show(home: Path, shared_buffers: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NEWSDEDUP_DATABASE_URL", "NEWSDEDUP_CALIBRATION_FILE")}
    env["NEWSDEDUP_HOME"] = str(home)
    if shared_buffers is not None:
        env.update(calibration_environment(home.parent / f"{home.name}-calibration",
                                           deployment={"embedded_shared_buffers": shared_buffers}))
    out = subprocess.run([sys.executable, "-c", SHOW], cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


@pytest.mark.slow
def test_the_embedded_server_starts_with_the_configured_buffer_cache():
    home = Path(tempfile.mkdtemp(prefix="nd-sb-"))
    assert _start_and_show(home, "160MB") == ["160MB", "0700"]
    conf = home / "pg" / "postgresql.conf"
    # a configuration written by an earlier version (its own socket block) is taken over, not repeated
    text = conf.read_text().split("# newsdedup:")[0]
    conf.write_text(text + "\n# newsdedup: only the server's user may open the socket\nunix_socket_permissions = 0700\n")
    assert _start_and_show(home, "2GB") == ["2GB", "0700"]
    assert _start_and_show(home, None) == [config.embedded_shared_buffers().replace("1024MB", "1GB"), "0700"]
    text = conf.read_text()
    assert text.count("unix_socket_permissions = 0700") == 1
    assert text.count("# newsdedup: the settings below") == 1
    # initdb's own line stays above; the last one is the server's value
    active = [line for line in text.splitlines() if line.startswith("shared_buffers")]
    assert active[-1] == f"shared_buffers = {config.embedded_shared_buffers()}"


def test_buffer_cache_setting_values(monkeypatch, tmp_path):
    monkeypatch.delenv("NEWSDEDUP_CALIBRATION_FILE", raising=False)
    auto = config.embedded_shared_buffers()
    assert auto.endswith("MB") and 128 <= int(auto[:-2]) <= 1024
    for raw, want in (("512MB", "512MB"), ("2gb", "2GB"), ("AUTO", auto)):
        calibrate(monkeypatch, tmp_path, deployment={"embedded_shared_buffers": raw})
        assert config.embedded_shared_buffers() == want
    for raw in ("1.5GB", "0MB", "512", "lots", "-1GB", "512KB"):
        calibrate(monkeypatch, tmp_path, deployment={"embedded_shared_buffers": raw})
        with pytest.raises(ValueError, match=r"deployment.embedded_shared_buffers='"):
            config.embedded_shared_buffers()
