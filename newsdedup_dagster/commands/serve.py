"""`newsdedup serve [--port N] [--dir DIR]`: serve the published feeds and site read-only on
127.0.0.1, for looking at them locally (production: any static web server or a bucket)."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

DEFAULT_PORT = 8000  # matches the default NEWSDEDUP_PUBLISH_BASE_URL


def escape_for_log(text: str) -> str:
    """`text` with every character a terminal would act on or hide (C0/C1 controls, escape
    sequences, bidi overrides, zero-width characters) written as a Python escape, and backslashes
    doubled, so a request line cannot rewrite or disguise the log."""
    return "".join(ch if ch.isprintable() and ch != "\\" else ascii(ch)[1:-1] for ch in text)


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

    def send_head(self):
        # The base class opens whatever the path names, following symlinks, and lets the ValueError
        # of a NUL byte escape (no response at all). Checked here first; the base class then serves
        # the same path. (The publish directory is written by the pipeline, not by visitors, so the
        # check and the open see the same links.)
        root = os.path.realpath(self.directory)
        try:
            path = self.translate_path(self.path)
            allowed = within(root, path)
            if allowed and os.path.isdir(path):
                # the base class serves the first of these that exists
                for name in ("index.html", "index.htm"):
                    index = os.path.join(path, name)
                    if os.path.lexists(index):
                        allowed = within(root, index)
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


def make_server(directory: Path, port: int = DEFAULT_PORT, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    handler = functools.partial(ReadOnlyHandler, directory=str(directory))
    return ThreadingHTTPServer((host, port), handler)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve", help="serve the published feeds and site read-only on 127.0.0.1",
        description="Serve the story_feeds output directory (default $NEWSDEDUP_PUBLISH_DIR) read-only on "
                    "127.0.0.1. --port 0 picks a free port; the URL is printed first.")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="TCP port (default %(default)s; 0 = any free port)")
    parser.add_argument("--dir", default=None, help="directory to serve (default: NEWSDEDUP_PUBLISH_DIR)")
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from .. import config  # deferred on purpose: fast --help

    directory = Path(args.dir).expanduser().resolve() if args.dir else config.publish_settings().output_dir
    if not directory.is_dir():
        print(f"newsdedup serve: error: {directory} does not exist (materialise story_feeds or run the demo first)",
              file=sys.stderr)
        return 2
    try:
        server = make_server(directory, args.port)
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
