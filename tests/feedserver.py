"""A real HTTP server on 127.0.0.x with programmable routes, for fetch tests and the bench.

    with FeedServer() as server:
        server.add("/feed.xml", body=b"<rss ...>", headers={"Content-Type": "application/rss+xml"})
        server.route("/flaky", lambda request: Response(status=500) if server.count("/flaky") == 1 else ...)
        url = server.url("/feed.xml")

A route is a `Response` (served every time) or a function `Request -> Response`.
Bodies may be bytes (sent with Content-Length) or an iterable of byte chunks
(sent chunked, so endless or huge bodies are generated lazily, never held in
memory). `delay` sleeps before the headers, `chunk_delay` between chunks
(slow drip), and the server-wide `latency` before every response models a
network round trip. Threaded: a slow route does not block the others.
Listens only on loopback addresses.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


@dataclass
class Request:
    method: str
    path: str  # path only
    query: str
    headers: dict[str, str]  # lower-case names
    server_host: str  # the 127.0.0.x address the request arrived on


@dataclass
class Response:
    status: int = 200
    body: bytes | Iterable[bytes] | Callable[[], Iterable[bytes]] = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the status line
    chunk_delay: float = 0.0  # seconds between body chunks
    raw: bool = False  # body bytes are the full raw response (status line + headers + body)


Route = Response | Callable[[Request], Response]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format, *args):  # noqa: A002 - keep test output quiet
        pass

    def do_GET(self):  # noqa: N802
        self._serve()

    def do_HEAD(self):  # noqa: N802
        self._serve(head=True)

    def _serve(self, head: bool = False):
        feed_server = self.server.feed_server
        parts = urlsplit(self.path)
        request = Request(method=self.command, path=parts.path, query=parts.query,
                          headers={k.lower(): v for k, v in self.headers.items()},
                          server_host=self.server.server_address[0])
        feed_server._log(request)
        route = feed_server.routes.get(parts.path)
        if route is None:
            response = Response(status=404, body=b"not found", headers={"Content-Type": "text/plain"})
        elif isinstance(route, Response):
            response = route
        else:
            response = route(request)
        try:
            if feed_server.latency:
                time.sleep(feed_server.latency)
            if response.delay:
                time.sleep(response.delay)
            if response.raw:
                self.wfile.write(response.body if isinstance(response.body, bytes) else b"".join(response.body))
                self.close_connection = True
                return
            self.send_response(response.status)
            body = response.body() if callable(response.body) else response.body
            headers = dict(response.headers)
            streamed = not isinstance(body, (bytes, bytearray))
            # A streamed body with an explicit Content-Length is written as is;
            # without one it is sent with chunked transfer encoding.
            chunked = streamed and "Content-Length" not in headers
            if chunked:
                headers.setdefault("Transfer-Encoding", "chunked")
            elif "Content-Length" not in headers and response.status not in (204, 304):
                headers["Content-Length"] = str(len(body))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            if head or response.status in (204, 304):
                return
            if not streamed:
                self.wfile.write(body)
                return
            for chunk in body:
                if response.chunk_delay:
                    time.sleep(response.chunk_delay)
                if not chunk:
                    continue
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
                self.wfile.flush()
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except (TimeoutError, BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True  # the client gave up (size cap, timeout): expected


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256
    feed_server: FeedServer


class FeedServer:
    """One or more listening sockets (127.0.0.1, 127.0.0.2, ...) sharing one route table."""

    def __init__(self, host: str = "127.0.0.1", *, hosts: Iterable[str] | None = None, latency: float = 0.0,
                 routes: dict[str, Route] | None = None):
        self.hosts = list(hosts) if hosts is not None else [host]
        for address in self.hosts:
            if not address.startswith("127."):
                raise ValueError(f"FeedServer listens on loopback only, not {address}")
        self.latency = latency
        self.routes: dict[str, Route] = routes if routes is not None else {}
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._servers: list[_Server] = []
        self._threads: list[threading.Thread] = []

    # ------------------------------------------------------------ lifecycle
    def start(self) -> FeedServer:
        for address in self.hosts:
            server = _Server((address, 0), _Handler)
            server.feed_server = self
            thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            thread.start()
            self._servers.append(server)
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        self._servers.clear()

    def __enter__(self) -> FeedServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------ addressing
    @property
    def base_urls(self) -> list[str]:
        return [f"http://{host}:{server.server_address[1]}" for host, server in zip(self.hosts, self._servers)]

    @property
    def base_url(self) -> str:
        return self.base_urls[0]

    def url(self, path: str, host_index: int = 0) -> str:
        return self.base_urls[host_index] + path

    # ------------------------------------------------------------ routes
    def route(self, path: str, route: Route) -> str:
        self.routes[path] = route
        return self.url(path) if self._servers else path

    def add(self, path: str, body: bytes | Iterable[bytes] = b"", *, status: int = 200,
            headers: dict[str, str] | None = None, content_type: str | None = "application/rss+xml; charset=utf-8",
            delay: float = 0.0, chunk_delay: float = 0.0) -> str:
        headers = dict(headers or {})
        if content_type and "Content-Type" not in headers:
            headers["Content-Type"] = content_type
        return self.route(path, Response(status=status, body=body, headers=headers, delay=delay,
                                         chunk_delay=chunk_delay))

    def conditional(self, path: str, body: bytes, *, etag: str | None = None, last_modified: str | None = None,
                    content_type: str = "application/rss+xml; charset=utf-8") -> str:
        """A feed honouring If-None-Match / If-Modified-Since. Change `self.routes[path]`
        (call again) to simulate a new version with new validators."""

        def handler(request: Request) -> Response:
            headers = {"Content-Type": content_type}
            if etag:
                headers["ETag"] = etag
            if last_modified:
                headers["Last-Modified"] = last_modified
            if etag and request.headers.get("if-none-match") == etag:
                return Response(status=304, headers=headers)
            if not etag and last_modified and request.headers.get("if-modified-since") == last_modified:
                return Response(status=304, headers=headers)
            return Response(status=200, body=body, headers=headers)

        return self.route(path, handler)

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        return self.route(path, Response(status=status, headers={"Location": location, "Content-Length": "0"}))

    # ------------------------------------------------------------ inspection
    def _log(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def count(self, path: str) -> int:
        with self._lock:
            return sum(1 for request in self.requests if request.path == path)

    def requests_for(self, path: str) -> list[Request]:
        with self._lock:
            return [request for request in self.requests if request.path == path]


def unused_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on (for connection-refused tests)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


# ------------------------------------------------------------ feed builders


def rss(items: Iterable[dict], *, title: str = "Test feed", link: str = "https://news.example.com/",
        language: str | None = "en", encoding: str = "utf-8", declare_encoding: bool = True) -> bytes:
    """An RSS 2.0 document. Each item dict: title, link, guid, pubDate, description, raw (verbatim XML)."""
    parts = []
    for item in items:
        if "raw" in item:
            parts.append(item["raw"])
            continue
        fields = []
        for key in ("title", "link", "guid", "pubDate", "description", "author"):
            if item.get(key) is not None:
                fields.append(f"<{key}>{item[key]}</{key}>")
        parts.append("<item>" + "".join(fields) + "</item>")
    declaration = f'<?xml version="1.0" encoding="{encoding}"?>' if declare_encoding else '<?xml version="1.0"?>'
    language_tag = f"<language>{language}</language>" if language else ""
    text = (f'{declaration}\n<rss version="2.0"><channel><title>{title}</title><link>{link}</link>'
            f"{language_tag}{''.join(parts)}</channel></rss>\n")
    return text.encode(encoding)


def rss_entries(count: int, *, prefix: str = "item", site: str = "https://news.example.com",
                start_hour: int = 0) -> list[dict]:
    return [
        {
            "title": f"Headline {prefix} {i}: ministers meet over budget &amp; taxes",
            "link": f"{site}/{prefix}/{i}?utm_source=rss",
            "guid": f"{site}/{prefix}/{i}",
            "pubDate": f"Mon, 02 Nov 2026 {(start_hour + i // 60) % 24:02d}:{i % 60:02d}:00 +0000",
            "description": f"&lt;p&gt;Summary of {prefix} {i}, with &lt;b&gt;details&lt;/b&gt; for readers.&lt;/p&gt;",
        }
        for i in range(count)
    ]


# ------------------------------------------------------------ scenario harness
# Shared by the ingest tests: run a misbehaving feed between two healthy ones.

from dataclasses import replace as _replace  # noqa: E402
from datetime import UTC, datetime as _datetime  # noqa: E402

from newsdedup_dagster.shared.http.fetch import FetchConfig, FetchRequest, fetch_feeds_sync  # noqa: E402
from newsdedup_dagster.shared.http.netguard import AddressPolicy  # noqa: E402
from newsdedup_dagster.stages.ingest.feed_parse import parse_fetch_result  # noqa: E402
from newsdedup_dagster.stages.ingest.parse_types import ParseConfig  # noqa: E402

# The feed server listens on loopback, which the fetcher refuses unless allowed:
# tests allow it explicitly (tests/test_ingest_ssrf.py shows the refusal without).
LOOPBACK_ALLOWED = AddressPolicy.from_entries(["127.0.0.0/8"])
# Small timeouts and backoff so failure scenarios finish in about a second.
FAST = FetchConfig(connect_timeout=1.0, read_timeout=0.4, total_timeout=1.5, backoff_base=0.01,
                   backoff_max=0.05, max_attempts=3, trust_env=False, address_policy=LOOPBACK_ALLOWED)
FIXED_FETCH_TIME = _datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
GOOD_A = rss(rss_entries(5, prefix="a"))
GOOD_B = rss(rss_entries(7, prefix="b"))


def add_good_feeds(server: FeedServer) -> None:
    server.add("/good-a.xml", GOOD_A)
    server.add("/good-b.xml", GOOD_B)


def parse_all(results, source_language: str | None = None, config: ParseConfig = ParseConfig()):
    # The fetch time is pinned so that two runs are comparable: undated
    # entries take the fetch time (an archive re-parse reuses the stored one).
    from newsdedup_dagster.shared.sources import Source

    parsed = {}
    for result in results:
        source = None
        if source_language:
            source = Source(id=result.source_id, name=result.source_id, feed_url=result.url,
                            language=source_language, country="ZZ")
        parsed[result.source_id] = parse_fetch_result(_replace(result, fetched_at=FIXED_FETCH_TIME), source,
                                                      config=config)
    return parsed


def run_scenario(server: FeedServer, bad: FetchRequest, config: FetchConfig = FAST, *,
                 source_language: str | None = None, parse_config: ParseConfig = ParseConfig()):
    """Fetch [good-a, bad, good-b] twice in one fetch_feeds call each; check the
    healthy feeds are complete and unduplicated and that both runs parse the
    same; return (FetchResult, ParseResult) of the `bad` one from run 1."""
    requests = [FetchRequest("good-a", server.url("/good-a.xml"), allow_private=True), bad,
                FetchRequest("good-b", server.url("/good-b.xml"), allow_private=True)]
    outputs = []
    for _run in range(2):
        results = fetch_feeds_sync(requests, config)
        assert [r.source_id for r in results] == ["good-a", bad.source_id, "good-b"]
        parsed = parse_all(results, source_language, parse_config)
        for index, source_id, expected in ((0, "good-a", 5), (2, "good-b", 7)):
            assert results[index].status == "ok", results[index].error
            items = parsed[source_id].items
            assert len(items) == expected
            assert len({item.item_id for item in items}) == expected  # nothing lost or duplicated
        outputs.append((results[1], parsed[bad.source_id]))
    (first, first_parsed), (second, second_parsed) = outputs
    assert first.status == second.status
    assert first.body == second.body
    assert first_parsed == second_parsed  # identical parsed output
    return first, first_parsed
