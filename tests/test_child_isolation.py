"""The processes newsdedup starts never import from the working directory: a module left there (a
stray file, or a planted one) named like a dependency would otherwise replace it in the processes
`newsdedup dev` starts (Dagster's webserver, daemon and code
server). Each test runs the product's own command from a folder holding a `psycopg.py` (the
database driver every one of them imports) and a `pebble.py` (imported only with the code location's
definitions, after Dagster's loader has put its working directory first on the path); each notes the
process that imports it, then hands over to the real package, so the processes go on as they would
have."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from helpers import free_port, stop_process_group

import newsdedup_dagster
from newsdedup_dagster.commands.platform import dagster_dev_command

TRAP = '''
import importlib, os, sys
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "imported-by.txt"), "a") as out:
    out.write(__name__ + ": " + " ".join(sys.argv) + "\\n")
# Hand over to the real package: the importing process goes on as it would have.
del sys.modules[__name__]
saved = sys.path[:]
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
try:
    sys.modules[__name__] = importlib.import_module(__name__)
finally:
    sys.path[:] = saved
'''


PLANTED = ("psycopg", "pebble")


@pytest.fixture()
def trap(tmp_path, monkeypatch) -> Path:
    """A working directory with the planted modules; returns the file they write when imported."""
    folder = tmp_path / "workdir"
    folder.mkdir()
    for name in PLANTED:
        (folder / f"{name}.py").write_text(TRAP)
    monkeypatch.chdir(folder)
    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    return folder / "imported-by.txt"


def _imported(marker: Path) -> str:
    return marker.read_text() if marker.exists() else ""


def _trap_works(marker: Path) -> None:
    """Control: a plain `python -c` from the folder does import the planted modules."""
    subprocess.run([sys.executable, "-c", f"import {', '.join(PLANTED)}"], check=True, timeout=60)
    assert len(_imported(marker).splitlines()) == len(PLANTED), "the test would prove nothing"
    marker.unlink()


def test_newsdedup_dev_command_keeps_the_working_directory_off_its_childrens_path(trap):
    cmd, env = dagster_dev_command("127.0.0.1", 3000, dict(os.environ))
    # Dagster's code loader puts its working directory first on the path: the package's folder, not ours.
    assert cmd[cmd.index("-d") + 1] == str(Path(newsdedup_dagster.__file__).resolve().parents[1])
    # Dagster starts its children as `python -m ...` with the environment it was given.
    child = subprocess.run([sys.executable, "-m", "newsdedup_dagster.cli", "--help"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    assert _imported(trap) == ""
    _trap_works(trap)
    subprocess.run([sys.executable, "-m", "newsdedup_dagster.cli", "--help"], capture_output=True, timeout=120)
    assert _imported(trap), "without the command's environment, the same child imports the planted module"


QUERY = "{ assetNodes { assetKey { path } } }"


@pytest.mark.slow
@pytest.mark.daemon
def test_newsdedup_dev_started_from_a_folder_with_a_stray_module(trap, tmp_path):
    """`newsdedup dev` as an operator starts it (the console script), from the trap folder: the
    webserver serves the asset graph (the code server loaded the definitions) and the daemon
    reports, and none of them imported a planted module."""
    port = free_port()
    env = {**os.environ, "NEWSDEDUP_HOME": str(tmp_path / "home"), "DAGSTER_HOME": str(tmp_path / "dagster")}
    env.pop("NEWSDEDUP_DATABASE_URL", None)
    newsdedup = Path(sys.executable).with_name("newsdedup")
    command = [str(newsdedup)] if newsdedup.exists() else [sys.executable, "-P", "-m", "newsdedup_dagster.cli"]
    log = tmp_path / "dev.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([*command, "dev", "--port", str(port)], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        served = daemon = False
        deadline = time.time() + 240
        while time.time() < deadline and not (served and daemon):
            assert proc.poll() is None, f"newsdedup dev exited early:\n{log.read_text()}"
            try:
                if not served:
                    resp = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": QUERY}, timeout=10)
                    served = bool((resp.json().get("data") or {}).get("assetNodes"))
                else:
                    query = "{ instance { daemonHealth { allDaemonStatuses { daemonType healthy } } } }"
                    resp = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": query}, timeout=10)
                    statuses = resp.json()["data"]["instance"]["daemonHealth"]["allDaemonStatuses"]
                    daemon = any(s["healthy"] for s in statuses)
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(2)
        assert served and daemon, f"dev never served the asset graph and a healthy daemon:\n{log.read_text()}"
        assert _imported(trap) == ""
    finally:
        stop_process_group(proc)
