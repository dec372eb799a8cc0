"""`newsdedup serve [--port N] [--dir DIR]`: serve the published feeds and site read-only on
127.0.0.1, for looking at them locally (production: any static web server or a bucket).

A slow or silent client cannot pin the server: each connection has a deadline (closed when it
passes, however the client trickles bytes) and at most `max_connections` are served at once (the
rest get 503 at once, without a thread). Hidden and temporary names (`.x`, `*.tmp`: the publisher's
files while they are written) answer 404."""

from __future__ import annotations

import argparse
import functools
import os
import socket
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

DEFAULT_PORT = 8000  # matches the default NEWSDEDUP_PUBLISH_BASE_URL
# A request to a local static server takes milliseconds; 10 s is ample for a browser on a slow
# machine and short enough that clients which never finish a request free their thread soon.
DEFAULT_TIMEOUT_S = 10.0
# Connections served at once (one thread each): a browser opens about 6 per host.
DEFAULT_MAX_CONNECTIONS = 32
BUSY_ANSWER = b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\nRetry-After: 1\r\n\r\n"


def escape_for_log(text: str) -> str:
    """`text` with every character a terminal would act on or hide (C0/C1 controls, escape
    sequences, bidi overrides, zero-width characters) written as a Python escape, and backslashes
    doubled, so a request line cannot rewrite or disguise the log."""
    return "".join(ch if ch.isprintable() and ch != "\\" else ascii(ch)[1:-1] for ch in text)


def hidden_or_temporary(relative: str) -> bool:
    """True when a part of `relative` (a path inside the served directory) is a dot name or ends in
    `.tmp` (shared/presentation/write.py writes `.<name>.<random>.tmp` beside a file, then renames it)."""
    return any(part.startswith(".") or part.lower().endswith(".tmp")
               for part in relative.split(os.sep) if part not in ("", "."))


def within(root: str, path: str) -> bool:
    """True when `path`, symlinks resolved, is `root` or inside it (`root` already resolved).
    Raises ValueError for paths no file can have (NUL, unencodable characters)."""
    real = os.path.realpath(path)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


class ReadOnlyHandler(SimpleHTTPRequestHandler):
    """GET/HEAD only (the base class answers 501 to anything else), no directory listings,
    nothing outside the directory (symlinks included), feed media types, and headers that keep a
    browser from running anything on the pages."""

    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".html": "text/html; charset=utf-8",
        ".json": "application/feed+json; charset=utf-8",
        ".xml": "application/atom+xml; charset=utf-8",
    }

    def setup(self) -> None:
        # Every read and write on the connection times out (the server also closes it at its deadline).
        self.timeout = getattr(self.server, "connection_timeout_s", None)
        super().setup()

    def send_head(self):
        # The base class opens whatever the path names, following symlinks, and lets the ValueError
        # of a NUL byte escape (no response at all). Checked here first; the base class then serves
        # the same path. (The publish directory is written by the pipeline, not by visitors, so the
        # check and the open see the same links.)
        root = os.path.realpath(self.directory)
        try:
            path = self.translate_path(self.path)
            allowed = within(root, path) and not hidden_or_temporary(os.path.relpath(path, self.directory))
            if allowed and os.path.lexists(path):
                allowed = not hidden_or_temporary(os.path.relpath(os.path.realpath(path), root))
            if allowed and os.path.isdir(path):
                # the base class serves the first of these that exists
                for name in ("index.html", "index.htm"):
                    index = os.path.join(path, name)
                    if os.path.lexists(index):
                        allowed = within(root, index) and not hidden_or_temporary(
                            os.path.relpath(os.path.realpath(index), root))
                        break
        except ValueError:
            self.send_error(400, "Bad path")
            return None
        if not allowed:
            self.send_error(404, "File not found")
            return None
        return super().send_head()

    def list_directory(self, path):
        self.send_error(404, "No directory listing")
        return None

    def end_headers(self) -> None:
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy",
                         "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'none'")
        self.send_header("Cache-Control", "no-cache")  # revalidate: the feeds change every hour
        super().end_headers()

    def log_message(self, format, *args) -> None:  # one short line per request on stderr
        sys.stderr.write(f"{self.log_date_time_string()} {escape_for_log(format % args)}\n")


class BoundedThreadingHTTPServer(ThreadingHTTPServer):
    """A thread per connection, at most `max_connections` of them, each closed at its deadline."""

    daemon_threads = True
    block_on_close = False
    # socketserver's default backlog of 5 makes a burst of connections wait out SYN retransmits
    # (1 s, 3 s, ...) before they even reach the 503 above.
    request_queue_size = 128

    def __init__(self, address, handler, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_connections: int = DEFAULT_MAX_CONNECTIONS):
        super().__init__(address, handler)
        self.connection_timeout_s = timeout_s
        self._slots = threading.BoundedSemaphore(max(1, max_connections))
        self._deadlines: dict[socket.socket, float] = {}
        self._deadlines_lock = threading.Lock()
        self._closing = threading.Event()
        threading.Thread(target=self._close_overdue, name="serve-deadlines", daemon=True).start()

    def process_request(self, request, client_address) -> None:
        if not self._slots.acquire(blocking=False):
            # Full: answer at once rather than start (or queue) a thread for this client.
            try:
                request.settimeout(1.0)
                request.sendall(BUSY_ANSWER)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        with self._deadlines_lock:
            self._deadlines[request] = time.monotonic() + self.connection_timeout_s
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._release(request)
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._release(request)

    def _release(self, request) -> None:
        with self._deadlines_lock:
            self._deadlines.pop(request, None)
        self._slots.release()

    def _close_overdue(self) -> None:
        # The socket timeout bounds each read; this bounds the whole connection (a client sending a
        # byte every few seconds would otherwise keep its thread for ever).
        while not self._closing.wait(min(0.5, self.connection_timeout_s / 4)):
            now = time.monotonic()
            with self._deadlines_lock:
                overdue = [conn for conn, deadline in self._deadlines.items() if deadline <= now]
            for conn in overdue:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def server_close(self) -> None:
        self._closing.set()
        super().server_close()


def make_server(directory: Path, port: int = DEFAULT_PORT, host: str = "127.0.0.1", *,
                timeout_s: float = DEFAULT_TIMEOUT_S,
                max_connections: int = DEFAULT_MAX_CONNECTIONS) -> BoundedThreadingHTTPServer:
    handler = functools.partial(ReadOnlyHandler, directory=str(directory))
    return BoundedThreadingHTTPServer((host, port), handler, timeout_s=timeout_s, max_connections=max_connections)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve", help="serve the published feeds and site read-only on 127.0.0.1",
        description="Serve the story_feeds output directory (default $NEWSDEDUP_PUBLISH_DIR) read-only on "
                    "127.0.0.1. --port 0 picks a free port; the URL is printed first.")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="TCP port (default %(default)s; 0 = any free port)")
    parser.add_argument("--dir", default=None, help="directory to serve (default: NEWSDEDUP_PUBLISH_DIR)")
    parser.add_argument("--timeout", type=_positive, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help="a connection is closed after this long, finished or not (default %(default)s)")
    parser.add_argument("--max-connections", type=int, choices=range(1, 1025), default=DEFAULT_MAX_CONNECTIONS,
                        metavar="N", help="connections served at once; more get 503 (default %(default)s, 1-1024)")
    parser.set_defaults(func=handle)


def _positive(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (0 < value <= 3600):
        raise argparse.ArgumentTypeError(f"{raw!r}: expected seconds from 0 to 3600")
    return value


def handle(args: argparse.Namespace) -> int:
    from newsdedup_dagster import config  # deferred on purpose: fast --help

    directory = Path(args.dir).expanduser().resolve() if args.dir else config.publish_settings().output_dir
    if not directory.is_dir():
        print(f"newsdedup serve: error: {directory} does not exist (materialise story_feeds or run the demo first)",
              file=sys.stderr)
        return 2
    try:
        server = make_server(directory, args.port, timeout_s=args.timeout, max_connections=args.max_connections)
    except OSError as exc:
        print(f"newsdedup serve: error: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    host, port = server.server_address[:2]
    print(f"serving {directory} at http://{host}:{port}/ (read-only; Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
