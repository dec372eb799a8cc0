"""The package as a deployment gets it: a wheel built from this checkout, installed into a fresh
virtual environment outside it, and run from an empty directory with newsdedup's commands and
Dagster's own (`dagster-webserver`, `dagster-daemon run`, `dagster asset materialize`,
`dagster definitions validate`), given only the deployment's environment.

Tests never use the network beyond 127.0.0.1, so the new environment cannot download the
dependencies: it gets them from the environment running the tests (its site-packages on the new
environment's path through a `.pth` file, and Dagster's console scripts copied with the new
interpreter in their first line, as pip would have written them there). newsdedup itself comes
only from the wheel; the test checks that nothing is imported from the checkout."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import pytest
from helpers import free_port

REPO = Path(__file__).resolve().parent.parent
DEMO_HOURS = 24  # the whole sample day, as `make demo` runs it
DAGSTER_SCRIPTS = ("dagster", "dagster-webserver", "dagster-daemon")
# One hourly op computes these together (it cannot be subset): a materialisation selects all of them.
HOURLY_ASSETS = ("raw_items", "item_duplicates", "article_texts", "item_embeddings", "stories", "story_scores",
                 "story_translations", "events", "story_feeds")


def _checkout_files() -> list[str]:
    """The files a clean clone holds (tracked, plus new files not ignored)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout
    return [name for name in listed.decode().split("\0") if name and (REPO / name).is_file()]


def build_wheel(out: Path) -> Path:
    """`pip wheel --no-deps .` on a copy of the checkout (the build writes `build/` and egg-info
    beside the sources), without build isolation: setuptools comes from this environment."""
    source = out / "source"
    for name in _checkout_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, source / name)
    dist = out / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "--quiet", "-w", str(dist), str(source)], check=True, timeout=600)
    (wheel,) = dist.glob("newsdedup-*.whl")
    return wheel


def make_environment(root: Path, wheel: Path) -> Path:
    """A new virtual environment with the wheel installed (pip, no index) and this environment's
    dependencies visible; returns its bin directory."""
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=300)
    bin_dir = root / "bin"
    python = bin_dir / "python"
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, env=clean).stdout.strip()
    # Installed before the outer packages become visible, so pip never takes an install of this
    # checkout out there for the package it is asked to install.
    subprocess.run([bin_dir / "pip", "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
                   check=True, timeout=300, env=clean)
    # Plain paths in a .pth file are appended to sys.path after the new site-packages (so the
    # wheel's newsdedup wins); .pth files inside them are not run, so an editable install of this
    # checkout in the outer environment stays out.
    outer = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    Path(site, "outer_dependencies.pth").write_text("".join(f"{path}\n" for path in outer))
    outer_bin = Path(sysconfig.get_paths()["scripts"])
    for name in DAGSTER_SCRIPTS:
        text = (outer_bin / name).read_text()
        (bin_dir / name).write_text(f"#!{python}\n" + text.split("\n", 1)[1])
        (bin_dir / name).chmod(0o755)
    return bin_dir


def _run(args, env, cwd, timeout=600) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{args}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _doctor(bin_dir, env, cwd) -> dict[str, dict]:
    proc = _run([bin_dir / "newsdedup", "doctor", "--json"], env, cwd)
    return {finding["check"]: finding for finding in json.loads(proc.stdout)}


def _graphql(port: int, query: str) -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps({"query": query}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["data"]


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_wheel_ships_sql_templates_and_sample_data(tmp_path):
    wheel = build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    sql = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "sql").rglob("*.sql"))
    assert sql and {f"newsdedup_dagster/{name}" for name in sql} <= names
    package_files = {name for name in _checkout_files() if name.startswith("newsdedup_dagster/")}
    assert package_files <= names, sorted(package_files - names)[:10]


@pytest.mark.slow
@pytest.mark.daemon
@pytest.mark.timeout(1500)  # the whole demo day plus two Dagster servers: 2-5 min on a shared machine
def test_installed_wheel_runs_demo_doctor_and_dagsters_own_commands(tmp_path):
    started = time.monotonic()
    bin_dir = make_environment(tmp_path / "venv", build_wheel(tmp_path))
    work = tmp_path / "work"  # an empty directory: the demo's NEWSDEDUP_HOME is ./.newsdedup
    work.mkdir()
    # The deployment's environment: no PYTHONPATH, no NEWSDEDUP_* or DAGSTER_* of the test session.
    base = {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path),
            "LANG": os.environ.get("LANG", "C.UTF-8"), "TMPDIR": os.environ.get("TMPDIR", "/tmp")}

    where = _run([bin_dir / "python", "-c", "import newsdedup_dagster, newsdedup_dagster.config as c; "
                                            "print(newsdedup_dagster.__file__); print(c.sql_dir())"], base, work)
    package_file, sql_dir = where.stdout.split()
    assert package_file.startswith(str(tmp_path / "venv")) and sql_dir.startswith(str(tmp_path / "venv"))

    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert _run([bin_dir / "newsdedup", "--version"], base, work).stdout.strip() == f"newsdedup {version}"

    # The command as a user runs it: parse-pool workers come and go during the hours, and none of
    # that may stop the demo or fail a run or a check.
    # A hang guard, not a speed check: the demo takes about 4 min on an idle 2-core machine.
    demo = _run([bin_dir / "newsdedup", "demo", "--json"], base, work, timeout=1200)
    hour_lines = [line for line in demo.stdout.splitlines() if re.match(r"2026-11-02-\d\d:00 ", line)]
    assert len(hour_lines) == DEMO_HOURS and all(line.endswith("ok") for line in hour_lines), demo.stdout
    summary = json.loads(demo.stdout.strip().splitlines()[-1])
    assert summary["failed_runs"] == 0 and summary["checks"].get("failed", 0) == 0, summary
    assert summary["checks"]["passed"] > 0, summary
    assert "Against the sample day's gold stories" in demo.stdout and "B-cubed P" in demo.stdout
    stories = re.search(r"^Stories: (\d+) ", demo.stdout, re.M)
    assert stories and int(stories.group(1)) > 0, demo.stdout

    # Right after the demo, in the same (bare) environment: exit 0; DAGSTER_HOME unset is a warning.
    found = _doctor(bin_dir, base, work)
    assert all(f["status"] != "FAIL" for f in found.values()), found
    assert found["migrations"]["status"] == "OK" and found["dagster instance"]["status"] == "OK"
    assert found["dagster home"]["status"] == "WARN"
    dagster_home = work / ".newsdedup" / "dagster"
    assert str(dagster_home) in found["dagster home"]["fix"]

    # docs/DEPLOYING.md's production steps, with Dagster's own commands and DAGSTER_HOME as the only addition.
    deploy = {**base, "DAGSTER_HOME": str(dagster_home)}
    _run([bin_dir / "newsdedup", "migrate"], deploy, work)
    _run([bin_dir / "dagster", "definitions", "validate", "-m", "newsdedup_dagster.definitions"], deploy, work)
    # The hourly assets are one op; the selection names them all (the whole hour).
    _run([bin_dir / "dagster", "asset", "materialize", "-m", "newsdedup_dagster.definitions",
          "--select", ",".join(HOURLY_ASSETS), "--partition", "2026-11-02-05:00"], deploy, work)

    # The daily retention schedule (on by default, 03:15 UTC) would prune the day this test ran.
    _run([bin_dir / "dagster", "schedule", "stop", "retention_schedule", "-m", "newsdedup_dagster.definitions"],
         deploy, work)
    port = free_port()
    logs = tmp_path / "logs"
    logs.mkdir()
    with open(logs / "webserver.log", "w") as web_log, open(logs / "daemon.log", "w") as daemon_log:
        # The webserver through the repository's workspace.yaml (it names the installed module), the
        # daemon through -m: the two forms docs/DEPLOYING.md gives.
        shutil.copy(REPO / "workspace.yaml", work / "workspace.yaml")
        webserver = subprocess.Popen([bin_dir / "dagster-webserver", "-w", "workspace.yaml",
                                      "-h", "127.0.0.1", "-p", str(port)], env=deploy, cwd=work,
                                     stdout=web_log, stderr=subprocess.STDOUT)
        daemon = subprocess.Popen([bin_dir / "dagster-daemon", "run", "-m", "newsdedup_dagster.definitions"],
                                  env=deploy, cwd=work, stdout=daemon_log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 240
            runs = None
            while time.monotonic() < deadline and webserver.poll() is None:
                try:
                    runs = _graphql(port, "{ runsOrError { ... on Runs { count } } }")["runsOrError"]["count"]
                    break
                except (OSError, KeyError, TypeError, ValueError):
                    time.sleep(2)
            assert runs is not None, (logs / "webserver.log").read_text()[-3000:]
            # The demo's hourly runs, its digest run and the CLI's materialisation, read from PostgreSQL.
            assert runs >= DEMO_HOURS + 2, runs
            jobs = _graphql(port, '{ repositoriesOrError { ... on RepositoryConnection { nodes { jobs { name } } } } }')
            names = {job["name"] for repo in jobs["repositoriesOrError"]["nodes"] for job in repo["jobs"]}
            assert "hourly_pipeline" in names

            found = {}
            while time.monotonic() < deadline and daemon.poll() is None:
                found = _doctor(bin_dir, deploy, work)
                if found["dagster daemon"]["status"] == "OK":
                    break
                time.sleep(5)
            assert found.get("dagster daemon", {}).get("status") == "OK", (
                found, (logs / "daemon.log").read_text()[-3000:])
            assert "dagster home" not in found and all(f["status"] != "FAIL" for f in found.values()), found
        finally:
            _stop(daemon)
            _stop(webserver)
    print(f"wheel install test: {time.monotonic() - started:.0f} s")
