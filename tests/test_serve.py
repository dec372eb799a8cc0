"""`newsdedup serve` on a free port (the real command in a subprocess), asked with raw request
lines over a socket: nothing outside its directory is served (symlinks included), nor a hidden or
temporary file, a path no file can have gets 400 (not a dropped connection), the request log shows
control and invisible characters escaped, never raw, and 300 clients that never finish a request
hold a bounded number of threads, each freed at the connection's deadline."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

import psutil
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

pytestmark = pytest.mark.signals

SECRET = "ADMIN SECRET outside the published directory"
ANSWERS = {200, 301, 400, 404, 414}


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    """A publish directory whose symlinks point inside it and out of it."""
    base = tmp_path_factory.mktemp("serve")
    outside = base / "outside"
    outside.mkdir()
    (outside / "hostname").write_text(SECRET)
    (outside / "index.html").write_text(SECRET)
    site = base / "public"
    (site / "en").mkdir(parents=True)
    (site / "index.html").write_text("<p>root page</p>")
    (site / "en" / "atom.xml").write_text("<feed/>")
    (site / "etclink").symlink_to(outside, target_is_directory=True)      # a directory link out
    (site / "hostname").symlink_to(outside / "hostname")                  # a file link out
    (site / "en" / "up.xml").symlink_to(Path("..") / ".." / "outside" / "hostname")  # relative, out
    (site / "alias.html").symlink_to(site / "index.html")                 # a link that stays inside
    (site / "linked").mkdir()
    (site / "linked" / "index.html").symlink_to(outside / "index.html")   # a directory's index links out
    (site / "linked-htm").mkdir()
    (site / "linked-htm" / "index.htm").symlink_to(outside / "index.html")   # the other index name
    # What the publisher leaves while it writes (shared/presentation/write.py: atomic_write), and dot names.
    (site / "en" / ".atom.xml.k3j2h1.tmp").write_text(SECRET)
    (site / "draft.tmp").write_text(SECRET)
    (site / ".env").write_text(SECRET)
    (site / ".git").mkdir()
    (site / ".git" / "config").write_text(SECRET)
    (site / ".git" / "index.html").write_text(SECRET)
    (site / "visible.html").symlink_to(site / ".env")                  # a visible name for a hidden file
    return site


def serve(directory: Path, *options: str):
    """(host, port, log lines, process): the command as a user runs it; its stderr collected line by line."""
    newsdedup = shutil.which("newsdedup") or str(Path(sys.executable).with_name("newsdedup"))
    proc = subprocess.Popen([newsdedup, "serve", "--port", "0", "--dir", str(directory), *options],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))
    log: list[bytes] = []
    try:
        line = proc.stdout.readline().decode()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, line
        threading.Thread(target=lambda: [log.append(x) for x in proc.stderr], daemon=True).start()
        yield "127.0.0.1", int(match.group(1)), log, proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def server(published):
    yield from serve(published)


def ask(server, target: bytes, method: bytes = b"GET") -> tuple[int | None, bytes]:
    """Send one raw HTTP/1.0 request line; (status or None when no status line came, whole answer)."""
    host, port = server[:2]
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall(method + b" " + target + b" HTTP/1.0\r\nHost: localhost\r\n\r\n")
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    answer = b"".join(chunks)
    match = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    return (int(match.group(1)) if match else None), answer


def log_after(server, mark: int, wanted: int = 1, timeout: float = 10) -> list[bytes]:
    log = server[2]
    deadline = time.monotonic() + timeout
    while len(log) < mark + wanted and time.monotonic() < deadline:
        time.sleep(0.02)
    return log[mark:]


def test_serves_the_directory(server):
    status, body = ask(server, b"/en/atom.xml")
    assert status == 200 and body.endswith(b"<feed/>")
    status, body = ask(server, b"/alias.html")                     # a symlink that stays inside
    assert status == 200 and body.endswith(b"<p>root page</p>")
    assert ask(server, b"/")[0] == 200


@pytest.mark.parametrize("target", [b"/etclink/hostname", b"/etclink/index.html", b"/etclink/", b"/hostname",
                                    b"/en/up.xml", b"/linked/", b"/linked/index.html", b"/linked-htm/", b"/../outside/hostname",
                                    b"/%2e%2e/outside/hostname", b"/en/%2e%2e/%2e%2e/outside/hostname"])
def test_nothing_outside_the_directory_is_served(server, target):
    status, body = ask(server, target)
    assert status == 404, body[:200]
    assert SECRET.encode() not in body
    status, body = ask(server, target, method=b"HEAD")
    assert status == 404


@pytest.mark.parametrize("target", [b"/index.html%00.txt", b"/%00", b"/en/%00/atom.xml", b"/%ed%a0%80.html"])
def test_a_path_no_file_can_have_gets_400(server, target):
    status, body = ask(server, target)
    assert status == 400, body[:200]
    assert ask(server, b"/en/atom.xml")[0] == 200                  # and the server carries on


def test_request_log_escapes_what_a_terminal_would_act_on(server):
    mark = len(server[2])
    # ESC sequences (colour, clear screen, window title), a bell, a C1 control, a right-to-left
    # override and a zero-width space, raw in the request line.
    hostile = "/\x1b[31mred\x1b[2J\x1b]0;owned\x07\x9b\u202etxt.exe\u200b".encode("utf-8")
    status, _ = ask(server, hostile)
    assert status == 404
    deadline = time.monotonic() + 10
    while True:   # earlier tests' lines may still be on their way through the pipe: wait for this request's
        lines = [x.decode("utf-8").rstrip("\n") for x in log_after(server, mark, wanted=2)]
        if any('"GET ' in line and "red" in line for line in lines) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert all(ch.isprintable() for line in lines for ch in line), lines
    at = next(n for n, line in enumerate(lines) if '"GET ' in line and "red" in line)
    assert at >= 1 and "404" in lines[at - 1], lines                 # the error, then the request line
    request = lines[at]
    assert "\\x1b[31mred" in request and "\\x07" in request
    # The request line arrives as bytes, read as ISO-8859-1: the UTF-8 bytes of U+202E show as
    # "â" + the escaped C1 byte 0x80 + "®", so they cannot reorder the terminal line either.
    assert "\\x80" in request and "\\x9b" in request


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=120).filter(lambda b: b"\r" not in b and b"\n" not in b),
       text=st.text(max_size=60))
def test_any_request_path_gets_an_answer_and_never_the_outside(server, raw, text):
    for target in (b"/" + raw, ("/" + quote(text, safe="/%.")).encode("ascii"),
                   b"/etclink/" + raw, ("/etclink/" + quote(text, safe="")).encode("ascii")):
        status, body = ask(server, target)
        assert status in ANSWERS, (target, body[:200])
        assert SECRET.encode() not in body


@pytest.mark.parametrize("target", [b"/en/.atom.xml.k3j2h1.tmp", b"/draft.tmp", b"/DRAFT.TMP", b"/.env", b"/.git/config",
                                    b"/.git/", b"/.git/index.html", b"/%2egit/config", b"/en/%2Eatom.xml.k3j2h1.tmp",
                                    b"/visible.html"])
def test_hidden_and_temporary_files_are_not_served(server, target):
    for method in (b"GET", b"HEAD"):
        status, body = ask(server, target, method=method)
        assert status == 404, (target, body[:200])
        assert SECRET.encode() not in body
    assert ask(server, b"/en/atom.xml")[0] == 200


TIMEOUT_S, MAX_CONNECTIONS, SLOW_CLIENTS = 2.0, 16, 300


@pytest.fixture()
def bounded_server(published):
    yield from serve(published, "--timeout", str(TIMEOUT_S), "--max-connections", str(MAX_CONNECTIONS))


def _threads_settle(proc, at_most: int, within_s: float) -> int:
    deadline = time.monotonic() + within_s
    while True:
        threads = psutil.Process(proc.pid).num_threads()
        if threads <= at_most or time.monotonic() > deadline:
            return threads
        time.sleep(0.1)


def test_slow_clients_hold_a_bounded_number_of_threads_until_their_deadline(bounded_server):
    proc = bounded_server[3]
    idle = psutil.Process(proc.pid).num_threads()            # the main thread and the deadline watcher
    clients = []
    try:
        for _ in range(SLOW_CLIENTS):                         # request lines that never end
            conn = socket.create_connection(bounded_server[:2], timeout=10)
            conn.sendall(b"GET /en/atom.xml HTTP/1.1\r\nHost: localhost\r\n")
            clients.append(conn)
        time.sleep(0.5)
        busy = psutil.Process(proc.pid).num_threads()
        assert idle < busy <= idle + MAX_CONNECTIONS, (idle, busy)
        # A request while every slot is taken: answered at once (503), never left hanging.
        started = time.monotonic()
        status, _ = ask(bounded_server, b"/en/atom.xml")
        assert status in (200, 503) and time.monotonic() - started < 2
        # Every slow client's connection is closed by the server by its deadline.
        assert _threads_settle(proc, idle, within_s=TIMEOUT_S + 4) <= idle
        for conn in clients:
            conn.settimeout(5)
            try:
                answer = conn.recv(65536)
            except ConnectionResetError:
                answer = b""
            assert answer == b"" or answer.startswith(b"HTTP/1.0 503") or b" 408 " in answer[:20], answer[:80]
    finally:
        for conn in clients:
            conn.close()
    status, body = ask(bounded_server, b"/en/atom.xml")      # and the server serves as before
    assert status == 200 and body.endswith(b"<feed/>")


def test_a_client_trickling_bytes_is_cut_off_at_the_deadline(bounded_server):
    conn = socket.create_connection(bounded_server[:2], timeout=10)
    started = time.monotonic()
    closed = None
    try:
        for byte in b"GET /en/atom.xml HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 200:
            conn.sendall(bytes([byte]))                       # one byte every 0.2 s: each read succeeds
            time.sleep(0.2)
            if time.monotonic() - started > TIMEOUT_S + 3:
                break
    except (BrokenPipeError, ConnectionResetError):
        closed = time.monotonic() - started
    if closed is None:
        conn.settimeout(5)
        try:
            conn.recv(65536)
            closed = time.monotonic() - started
        except ConnectionResetError:
            closed = time.monotonic() - started
        except TimeoutError:                                  # still open: the server never cut it off
            closed = float("inf")
    conn.close()
    assert closed < TIMEOUT_S + 3, closed
    assert ask(bounded_server, b"/en/atom.xml")[0] == 200
