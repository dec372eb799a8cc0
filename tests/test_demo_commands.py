"""Every command `make demo` prints works as typed in the shell it ran from: a fresh clone's shell,
whose PATH does not hold the virtualenv's bin directory (`make` calls `.venv/bin/newsdedup demo`).
Each printed `newsdedup ...` (or `make ...`) resolves to an executable (or a Makefile target), and
its subcommand is one the CLI has."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from newsdedup_dagster.cli import build_parser
from newsdedup_dagster.commands.platform import cli_command

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
# A program (a path to it, or a name looked up on PATH) and the subcommand after it.
COMMAND = re.compile(r"(?:(?<=\s)|^)((?:\S*/)?newsdedup|make|\S*python[\d.]*(?= -m newsdedup_dagster\.cli))"
                     r"(?: -m newsdedup_dagster\.cli)? ([a-z][\w-]*)", re.M)


def _path_without_venv() -> str:
    """PATH as a shell that never activated the virtualenv has it."""
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and Path(p).resolve() != VENV_BIN.resolve())


def _subcommands() -> set[str]:
    action = next(a for a in build_parser()._actions if a.dest == "command")
    return set(action.choices)


def _make_targets() -> set[str]:
    return set(re.findall(r"^([a-z][\w-]*):", (REPO / "Makefile").read_text(encoding="utf-8"), re.M))


def unresolved(output: str, path: str, cwd: Path) -> list[str]:
    """The commands in `output` that would not run as typed in `cwd` with `path` as PATH."""
    bad = []
    for program, sub in COMMAND.findall(output):
        if program == "make":
            ok = sub in _make_targets() and cwd == REPO
        elif "/" in program:
            target = (cwd / program) if not program.startswith("/") else Path(program)
            ok = target.is_file() and os.access(target, os.X_OK)
        else:
            ok = shutil.which(program, path=path) is not None
        if program != "make" and sub not in _subcommands():
            ok = False
        if not ok:
            bad.append(f"{program} {sub}")
    return bad


def test_the_printed_command_runs_from_the_clone_with_or_without_the_virtualenv(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("PATH", _path_without_venv())
    command = cli_command("serve")
    assert unresolved(command, os.environ["PATH"], REPO) == [] and COMMAND.search(command), command
    if shutil.which("newsdedup", path=os.environ["PATH"]) is None:
        # The bare name, outside the virtualenv, is no command: the check says so.
        assert unresolved("view: newsdedup serve, then open http://127.0.0.1:8000/", os.environ["PATH"], REPO)
    # With the virtualenv active the plain name is this installation.
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}")
    if (VENV_BIN / "newsdedup").exists():
        assert cli_command("serve") == "newsdedup serve"


@pytest.mark.slow
def test_every_command_the_demo_prints_works_as_typed(tmp_path):
    env = {**os.environ, "NEWSDEDUP_HOME": str(tmp_path / "home"), "DAGSTER_HOME": str(tmp_path / "dagster"),
           "PATH": _path_without_venv()}
    env.pop("NEWSDEDUP_DATABASE_URL", None)
    script = VENV_BIN / "newsdedup"
    # As `make demo` starts it (one hour of the day is enough to print every line).
    program = [str(script.relative_to(REPO))] if script.exists() and script.is_relative_to(REPO) else \
        [sys.executable, "-m", "newsdedup_dagster.cli"]
    done = subprocess.run([*program, "demo", "--hours", "1"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "view: " in done.stdout
    printed = COMMAND.findall(done.stdout)
    assert any(sub == "serve" for _, sub in printed), done.stdout[-2000:]
    assert unresolved(done.stdout, env["PATH"], REPO) == [], done.stdout[-2000:]
