"""Fetch feeds concurrently with httpx, defensively.

`fetch_feeds(requests, config)` fetches every request with a global and a
per-host concurrency bound, conditional GET (ETag / Last-Modified),
timeouts (connect, read, and a total budget per source that also covers
retries), a streamed body-size cap on both wire bytes and decoded bytes (we
decode gzip/deflate ourselves with a bounded zlib decompressor, so a gzip
bomb stops at the cap), manual redirects (at most `max_redirects`, http/https
only, loops detected) and retries with exponential backoff for timeouts,
connection errors, 5xx and 429.

Where a fetch may go (netguard.py): every connection, for the first request
and every redirect, is made to an address resolved and checked here
(public addresses only, unless `address_policy` allows a network or host),
never to a second DNS answer. What `address_policy` allows is open only to a
request that says `allow_private` (a source with `allow_private: true`), and
only for the feed's own origin (scheme, host, port: RFC 6454): a redirect to any
other origin, another port of the same host included, goes through a client
that allows public addresses only, so a feed cannot steer the fetcher into
an allowed intranet. A redirect from https to http is refused; validators
(ETag / Last-Modified) go only to the feed's own origin, and no cookie is
ever stored or sent. Proxies from the environment are not used:
the address checks need the fetcher to make the connection itself.

A failing source never raises: its FetchResult has status 'error' and a
one-line `error`. Results come back in request order.
"""

from __future__ import annotations

import asyncio
import email.utils
import http.cookiejar
import mimetypes
import zlib
from collections.abc import AsyncIterator, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from urllib.parse import urljoin, urlsplit
from urllib.request import url2pathname

import httpcore
import httpx

from newsdedup_dagster.shared.http.netguard import AddressPolicy, AddressRefused, GuardedBackend


def _package_version() -> str:
    for name in ("newsdedup", "newsdedup-dagster", "newsdedup_dagster"):
        try:
            return version(name)
        except PackageNotFoundError:
            continue
    return "0.1.0"


USER_AGENT = f"newsdedup/{_package_version()} (+https://github.com/newsdedup/newsdedup)"
ACCEPT = "application/rss+xml, application/atom+xml, application/rdf+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.8"
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Only encodings we decode ourselves with a size bound are advertised:
# brotli/zstd would need a bounded decoder of their own.
ACCEPT_ENCODING = "gzip, deflate"


@dataclass(frozen=True)
class FetchRequest:
    source_id: str
    url: str
    etag: str | None = None  # validators stored from the previous successful fetch
    last_modified: str | None = None
    # May this feed reach what FetchConfig.address_policy allows beyond public addresses? Only
    # sources with `allow_private: true` do; every other request reaches public addresses only.
    allow_private: bool = False


@dataclass(frozen=True)
class FetchConfig:
    """Fetch limits. Safety bounds, not calibrated on data: typical news feeds
    are 10 KB - 1 MB and answer in < 2 s; the caps only stop pathological ones."""

    # Requests in flight in total. bench/ingest.py (200 feeds on 20 hosts, 50 ms
    # latency): fetch 0.6-0.95 s at 32 vs 10.9 s one at a time; parsing, not
    # fetching, then dominates, so a higher bound buys little.
    max_concurrency: int = 32
    max_per_host: int = 4  # requests in flight to one host (politeness towards sites with many section feeds)
    connect_timeout: float = 10.0  # seconds
    read_timeout: float = 20.0  # seconds between two reads
    total_timeout: float = 60.0  # seconds per source, all attempts and backoff included
    max_body_bytes: int = 10 * 1024 * 1024  # bytes on the wire
    max_decoded_bytes: int = 20 * 1024 * 1024  # bytes after gzip/deflate decoding
    max_redirects: int = 5
    max_attempts: int = 3  # 1 try + 2 retries on retryable failures
    backoff_base: float = 1.0  # seconds before the 2nd attempt; doubles each time
    backoff_max: float = 10.0  # cap on one backoff sleep (also the longest Retry-After we honour)
    user_agent: str = USER_AGENT
    accept: str = ACCEPT  # the Accept header: feed types here; the article stage asks for HTML
    allowed_file_dir: Path | None = None  # file:// URLs are refused unless inside this folder
    trust_env: bool = True  # honour SSL_CERT_FILE / SSL_CERT_DIR from the environment (never proxies)
    # Destinations that are not public Internet addresses are refused unless allowed here, for the
    # requests with `allow_private` (NEWSDEDUP_FETCH_ALLOW_PRIVATE: the networks such sources reach).
    address_policy: AddressPolicy = field(default_factory=AddressPolicy)


@dataclass(frozen=True)
class FetchResult:
    source_id: str
    url: str  # as requested
    final_url: str | None  # after redirects
    status: str  # 'ok' | 'not_modified' | 'error'
    http_status: int | None
    elapsed_ms: int
    etag: str | None  # validators to store for the next conditional GET
    last_modified: str | None
    body: bytes | None  # decoded content (gzip/deflate removed); None unless status 'ok'
    content_type: str | None
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    error: str | None = None  # one line
    attempts: int = 0
    fetched_at: datetime = field(default_factory=lambda: datetime.now(UTC))


class _FetchFailure(Exception):
    """A failure of one attempt; `retryable` says whether another attempt may help."""

    def __init__(self, message: str, *, retryable: bool, http_status: int | None = None,
                 final_url: str | None = None, retry_after: float | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.http_status = http_status
        self.final_url = final_url
        self.retry_after = retry_after
        self.headers = headers or {}


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _BoundedDecoder:
    """Streaming gzip/deflate decoder whose output per call is bounded, so a
    small compressed chunk cannot expand into gigabytes in memory."""

    def __init__(self, encoding: str):
        self.encoding = encoding
        self._raw_deflate_fallback = encoding == "deflate"
        self._obj = zlib.decompressobj(31 if encoding in ("gzip", "x-gzip") else 15)
        self._started = False

    def decode(self, data: bytes, limit: int) -> bytearray:
        """Decode `data`, producing at most limit + 1 bytes (one more than
        allowed means: over the cap). Raises zlib.error on corrupt input."""
        out = bytearray()
        while data and len(out) <= limit:
            try:
                chunk = self._obj.decompress(data, limit + 1 - len(out))
            except zlib.error:
                # 'deflate' is meant to be zlib-wrapped, but some servers send raw deflate.
                if self._raw_deflate_fallback and not self._started:
                    self._raw_deflate_fallback = False
                    self._obj = zlib.decompressobj(-15)
                    continue
                raise
            self._started = True
            out += chunk
            data = self._obj.unconsumed_tail
            if self._obj.eof and self._obj.unused_data:
                # Concatenated gzip members (RFC 1952 allows several).
                data = self._obj.unused_data
                self._obj = zlib.decompressobj(31)
        return out

    @property
    def finished(self) -> bool:
        return self._obj.eof


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date, as of `now`), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _read_local_file(url: str, config: FetchConfig) -> tuple[bytes, str]:
    """Read a file:// URL that lies inside config.allowed_file_dir."""
    if config.allowed_file_dir is None:
        raise _FetchFailure("file:// URLs are not allowed (no allowed_file_dir configured)", retryable=False)
    path = Path(url2pathname(urlsplit(url).path)).resolve()
    allowed = Path(config.allowed_file_dir).resolve()
    if not path.is_relative_to(allowed):
        raise _FetchFailure(f"file {path} is outside the allowed replay directory {allowed}", retryable=False)
    try:
        with path.open("rb") as handle:
            body = handle.read(config.max_body_bytes + 1)
    except OSError as exc:
        raise _FetchFailure(f"cannot read {path}: {exc.strerror or exc}", retryable=False) from exc
    if len(body) > config.max_body_bytes:
        raise _FetchFailure(f"file {path} is larger than {config.max_body_bytes} bytes", retryable=False)
    content_type = mimetypes.guess_type(path.name)[0] or "application/xml"
    return body, content_type


async def _read_body(response: httpx.Response, config: FetchConfig) -> bytes:
    declared = response.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > config.max_body_bytes:
        raise _FetchFailure(
            f"body too large: Content-Length {declared} exceeds the {config.max_body_bytes}-byte limit",
            retryable=False)
    encodings = content_codings(response.headers.get("content-encoding", ""))
    # Content-Encoding lists codings in the order applied: undo them in reverse.
    decoders = [_BoundedDecoder(token) for token in reversed(encodings)]
    wire_bytes = 0
    body = bytearray()
    try:
        async for chunk in response.aiter_raw():
            wire_bytes += len(chunk)
            if wire_bytes > config.max_body_bytes:
                raise _FetchFailure(f"body too large: cut off after {config.max_body_bytes} bytes", retryable=False)
            data = chunk
            for decoder in decoders:
                data = decoder.decode(data, config.max_decoded_bytes - len(body))
            body += data
            if len(body) > config.max_decoded_bytes:
                raise _FetchFailure(
                    f"decoded body too large: cut off after {config.max_decoded_bytes} decoded bytes "
                    f"({wire_bytes} bytes on the wire; compression bomb?)", retryable=False)
    except zlib.error as exc:
        raise _FetchFailure(f"corrupt {'/'.join(encodings)} body: {exc}", retryable=False) from exc
    if any(not decoder.finished for decoder in decoders):
        raise _FetchFailure(f"truncated {'/'.join(encodings)} body ({wire_bytes} bytes received)", retryable=True)
    return bytes(body)


# Codings a body may carry at once. Each layer is decoded in step with the others, so stacked
# layers multiply the work and memory per wire byte (6,000 gzip layers: 197 MB for an 81-byte
# feed); a server has no reason to apply one coding twice or to stack more than gzip over deflate.
MAX_CONTENT_CODINGS = 2


def content_codings(header: str) -> list[str]:
    """The codings of a Content-Encoding header, in the order applied ('x-gzip' is 'gzip'; 'identity'
    is none). Raises _FetchFailure for an unsupported coding, a repeated one, or more than
    MAX_CONTENT_CODINGS."""
    tokens = [token.strip().lower() for token in header.split(",")]
    codings = [{"x-gzip": "gzip"}.get(token, token) for token in tokens if token and token != "identity"]
    if len(codings) > MAX_CONTENT_CODINGS or len(set(codings)) != len(codings):
        repeated = sorted({coding for coding in codings if codings.count(coding) > 1})
        detail = f", {' and '.join(repr(c[:20]) for c in repeated[:3])} repeated" if repeated else ""
        raise _FetchFailure(f"stacked Content-Encoding refused: {len(codings)} codings{detail} (at most "
                            f"{MAX_CONTENT_CODINGS} different codings are decoded)", retryable=False)
    for coding in codings:
        if coding not in ("gzip", "deflate"):
            raise _FetchFailure(f"unsupported Content-Encoding {coding[:40]!r}", retryable=False)
    return codings


_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in (RFC 6454 section 4)."""
    parts = httpx.URL(url)
    scheme = parts.scheme.lower()
    return scheme, parts.host.lower().rstrip("."), parts.port or _DEFAULT_PORTS.get(scheme)


@dataclass(frozen=True)
class _Clients:
    """`private` connects where `address_policy` allows, for the own origin of a feed with
    `allow_private`; `public` allows public addresses only, for the own origin of every other
    feed; `other` allows public addresses only, for redirects to any other origin."""

    private: httpx.AsyncClient
    public: httpx.AsyncClient
    other: httpx.AsyncClient



def same_origin(url: str, feed_url: str) -> bool:
    try:
        return origin(url) == origin(feed_url)
    except (httpx.InvalidURL, ValueError):
        return False


async def _attempt(clients: _Clients, request: FetchRequest, config: FetchConfig) -> dict:
    """One attempt, following redirects by hand. Returns FetchResult fields."""
    url = request.url
    chain = [url]
    if urlsplit(url).scheme.lower() == "file":
        body, content_type = _read_local_file(url, config)
        return dict(final_url=url, status="ok", http_status=None, etag=None, last_modified=None,
                    body=body, content_type=content_type, headers={"content-type": content_type})
    base_headers = {"User-Agent": config.user_agent, "Accept": config.accept, "Accept-Encoding": ACCEPT_ENCODING}
    validators = {}
    if request.etag:
        validators["If-None-Match"] = request.etag
    if request.last_modified:
        validators["If-Modified-Since"] = request.last_modified
    for _hop in range(config.max_redirects + 1):
        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("http", "https"):
            raise _FetchFailure(f"refusing non-http(s) URL {url!r}", retryable=False, final_url=url)
        own_origin = same_origin(url, request.url)
        if not own_origin:
            client = clients.other
        else:
            client = clients.private if request.allow_private else clients.public
        # Validators describe the feed's own origin's copy: never sent elsewhere.
        headers = {**base_headers, **validators} if own_origin else base_headers
        try:
            async with client.stream("GET", url, headers=headers) as response:
                status = response.status_code
                response_headers = {k.lower(): v for k, v in response.headers.items()}
                if status in REDIRECT_STATUSES:
                    location = response.headers.get("location")
                    if not location:
                        raise _FetchFailure(f"HTTP {status} redirect without a Location header", retryable=False,
                                            http_status=status, final_url=url)
                    try:
                        target = urljoin(url, location.strip())
                        target_scheme = urlsplit(target).scheme.lower()
                    except ValueError as exc:
                        raise _FetchFailure(f"redirect to an invalid URL refused: {exc}", retryable=False,
                                            http_status=status, final_url=url) from exc
                    if target_scheme not in ("http", "https"):
                        raise _FetchFailure(f"redirect to a non-http(s) URL refused: {target!r}", retryable=False,
                                            http_status=status, final_url=url)
                    if scheme == "https" and target_scheme == "http":
                        raise _FetchFailure(f"redirect from https to http refused: {target!r}", retryable=False,
                                            http_status=status, final_url=url)
                    if target in chain:
                        raise _FetchFailure("redirect loop: " + " -> ".join(chain + [target]), retryable=False,
                                            http_status=status, final_url=url)
                    chain.append(target)
                    url = target
                    continue
                if status == 304:
                    return dict(final_url=url, status="not_modified", http_status=304,
                                etag=response.headers.get("etag") or request.etag,
                                last_modified=response.headers.get("last-modified") or request.last_modified,
                                body=None, content_type=response.headers.get("content-type"),
                                headers=response_headers)
                if 200 <= status < 300:
                    body = await _read_body(response, config)
                    # A 200 carries the authoritative validators: a missing one is gone.
                    # Validators from another origin are not kept (they would be sent to ours).
                    return dict(final_url=url, status="ok", http_status=status,
                                etag=response.headers.get("etag") if own_origin else None,
                                last_modified=response.headers.get("last-modified") if own_origin else None,
                                body=body, content_type=response.headers.get("content-type"),
                                headers=response_headers)
                reason = response.reason_phrase or ""
                raise _FetchFailure(f"HTTP {status} {reason}".strip(), retryable=status >= 500 or status == 429,
                                    http_status=status, final_url=url,
                                    retry_after=parse_retry_after(response.headers.get("retry-after")),
                                    headers=response_headers)
        except AddressRefused as exc:
            where = "" if url == request.url else f" (redirected to {url})"
            raise _FetchFailure(f"{exc}{where}", retryable=False, final_url=url) from exc
    raise _FetchFailure(f"too many redirects (more than {config.max_redirects}): " + " -> ".join(chain),
                        retryable=False, final_url=url)


def _describe_transport_error(exc: Exception, config: FetchConfig) -> str:
    if isinstance(exc, httpx.ConnectTimeout):
        return f"connect timeout after {config.connect_timeout:g}s"
    if isinstance(exc, httpx.ReadTimeout):
        return f"read timeout: no data for {config.read_timeout:g}s"
    if isinstance(exc, httpx.PoolTimeout):
        return "timed out waiting for a free connection"
    if isinstance(exc, httpx.TimeoutException):
        return f"timeout: {exc}"
    cause = exc.__cause__ or exc.__context__
    detail = str(exc) or type(exc).__name__
    if cause is not None and str(cause) and str(cause) not in detail:
        detail = f"{detail} ({cause})"
    if isinstance(exc, httpx.ConnectError):
        return f"connection failed: {detail}"
    return f"{type(exc).__name__}: {detail}"


class _Limiter:
    """Global + per-host concurrency bounds, created inside the running loop."""

    def __init__(self, config: FetchConfig):
        self.total = asyncio.Semaphore(max(1, config.max_concurrency))
        self.per_host_limit = max(1, config.max_per_host)
        self.per_host: dict[str, asyncio.Semaphore] = {}

    def host(self, url: str) -> asyncio.Semaphore:
        key = (urlsplit(url).hostname or "").lower()
        if key not in self.per_host:
            self.per_host[key] = asyncio.Semaphore(self.per_host_limit)
        return self.per_host[key]


async def _fetch_one(client: _Clients, request: FetchRequest, config: FetchConfig,
                     limiter: _Limiter) -> FetchResult:
    fetched_at = datetime.now(UTC)
    loop = asyncio.get_running_loop()
    started: float | None = None
    deadline: float | None = None
    attempts = 0
    last_failure: _FetchFailure | None = None
    outcome: dict | None = None
    try:
        while True:
            attempts += 1
            # Host slot first, then a global slot: a task queued behind a busy
            # host must not sit on a global slot other hosts could use.
            async with limiter.host(request.url), limiter.total:
                if deadline is None:
                    # The total budget starts when the source first gets a slot,
                    # so sources queued behind the concurrency bound do not time out.
                    started = loop.time()
                    fetched_at = datetime.now(UTC)
                    deadline = started + config.total_timeout
                try:
                    async with asyncio.timeout_at(deadline):
                        outcome = await _attempt(client, request, config)
                    break
                except TimeoutError:
                    previous = f"; last failure: {last_failure.message}" if last_failure else ""
                    last_failure = _FetchFailure(
                        f"total timeout: gave up after {config.total_timeout:g}s (attempt {attempts}){previous}",
                        retryable=False)
                except _FetchFailure as failure:
                    last_failure = failure
                except (httpx.TimeoutException, httpx.TransportError) as exc:
                    last_failure = _FetchFailure(_describe_transport_error(exc, config), retryable=True)
                except httpx.HTTPError as exc:  # e.g. InvalidURL, too-long URL
                    last_failure = _FetchFailure(f"{type(exc).__name__}: {exc}", retryable=False)
            if not last_failure.retryable or attempts >= config.max_attempts:
                break
            delay = min(config.backoff_max, config.backoff_base * (2 ** (attempts - 1)))
            if last_failure.retry_after is not None and last_failure.retry_after <= config.backoff_max:
                delay = max(delay, last_failure.retry_after)
            if loop.time() + delay >= deadline:
                last_failure.message += "; no time left in the total budget for a retry"
                break
            await asyncio.sleep(delay)
    except Exception as exc:  # a bug or an unforeseen library error must not sink the other sources
        last_failure = _FetchFailure(f"unexpected {type(exc).__name__}: {exc}", retryable=False)
        outcome = None
    elapsed_ms = int((loop.time() - started) * 1000) if started is not None else 0
    if outcome is not None:
        return FetchResult(source_id=request.source_id, url=request.url, elapsed_ms=elapsed_ms,
                           attempts=attempts, fetched_at=fetched_at, **outcome)
    assert last_failure is not None
    message = last_failure.message
    if attempts > 1 and "total timeout" not in message:
        message += f" (after {attempts} attempts)"
    return FetchResult(
        source_id=request.source_id, url=request.url, final_url=last_failure.final_url, status="error",
        http_status=last_failure.http_status, elapsed_ms=elapsed_ms,
        # Keep the stored validators: an error says nothing about them.
        etag=request.etag, last_modified=request.last_modified, body=None,
        content_type=last_failure.headers.get("content-type"), headers=last_failure.headers,
        error=_one_line(message), attempts=attempts, fetched_at=fetched_at)


class _GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with a connection pool whose network backend checks and
    pins every destination address (httpx has no public switch for the backend)."""

    def __init__(self, config: FetchConfig, limits: httpx.Limits, policy: AddressPolicy):
        super().__init__(trust_env=config.trust_env, limits=limits, retries=0)
        ssl_context = self._pool._ssl_context
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context, max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
            http1=True, http2=False, retries=0, network_backend=GuardedBackend(policy))


class _NoCookies(http.cookiejar.DefaultCookiePolicy):
    """Feeds need no cookies; storing one would send it on with the next request."""

    def set_ok(self, cookie, request):
        return False

    def return_ok(self, cookie, request):
        return False


def _client(config: FetchConfig, policy: AddressPolicy) -> httpx.AsyncClient:
    timeout = httpx.Timeout(connect=config.connect_timeout, read=config.read_timeout,
                            write=config.read_timeout, pool=config.total_timeout)
    limits = httpx.Limits(max_connections=max(1, config.max_concurrency),
                          max_keepalive_connections=max(1, config.max_concurrency))
    cookies = http.cookiejar.CookieJar(policy=_NoCookies())
    # An explicit transport also means httpx ignores HTTP(S)_PROXY: connections are ours to check.
    return httpx.AsyncClient(timeout=timeout, transport=_GuardedTransport(config, limits, policy),
                             follow_redirects=False, trust_env=False, cookies=cookies,
                             headers={"User-Agent": config.user_agent})


@asynccontextmanager
async def _clients(config: FetchConfig) -> AsyncIterator[_Clients]:
    """Separate pools, so a connection opened under the allow-list is never reused for another
    origin or another source's request."""
    if not config.address_policy.allowed_networks and not config.address_policy.allowed_hosts:
        async with _client(config, replace(config.address_policy, public_source=True)) as only:
            yield _Clients(only, only, only)  # nothing allowed beyond public addresses: one pool serves all
        return
    async with (_client(config, config.address_policy) as private,
                _client(config, AddressPolicy(public_source=True)) as public,
                _client(config, AddressPolicy(redirect_target=True)) as other):
        yield _Clients(private, public, other)


async def iter_fetch_feeds(requests: Iterable[FetchRequest], config: FetchConfig | None = None
                           ) -> AsyncIterator[FetchResult]:
    """Yield FetchResults as they complete (lets the caller parse one feed
    while the others are still downloading)."""
    config = config or FetchConfig()
    limiter = _Limiter(config)
    async with _clients(config) as client:
        tasks = [asyncio.create_task(_fetch_one(client, request, config, limiter)) for request in requests]
        try:
            for next_done in asyncio.as_completed(tasks):
                yield await next_done
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


async def fetch_feeds(requests: list[FetchRequest], config: FetchConfig | None = None) -> list[FetchResult]:
    """Fetch all requests concurrently; results in request order; never raises for a source."""
    config = config or FetchConfig()
    limiter = _Limiter(config)
    async with _clients(config) as client:
        return list(await asyncio.gather(*(_fetch_one(client, request, config, limiter) for request in requests)))


def run_sync(coroutine_factory):
    """Run an async function to completion from sync code, even when the
    calling thread already runs an event loop (then in a helper thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine_factory())

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(coroutine_factory())).result()


def fetch_feeds_sync(requests: list[FetchRequest], config: FetchConfig | None = None) -> list[FetchResult]:
    """Synchronous wrapper around fetch_feeds (for Dagster ops and scripts)."""
    return run_sync(lambda: fetch_feeds(requests, config))


def with_validators(request: FetchRequest, result: FetchResult) -> FetchRequest:
    """The request to send next time, carrying the validators this result returned."""
    return replace(request, etag=result.etag, last_modified=result.last_modified)
