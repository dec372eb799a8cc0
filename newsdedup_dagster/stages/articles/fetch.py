"""Fetch an hour's article pages politely, through the feed fetcher (shared/http/fetch.py).

Every request (robots.txt and pages) goes through `ingest.fetch.fetch_feeds`, so pages get the
feed fetcher's address rules (public addresses only unless allowed, pinned after resolution, never
a private network after a redirect to another origin), its redirect rules (at most 5, http/https
only, no https -> http, loops refused), its bounded gzip/deflate decoding, size caps and timeouts,
and no cookies. What this module adds is politeness:

- robots.txt per origin (robots.py), from the cache when fresh, else fetched first;
- one request at a time per host and at least `min_host_delay` seconds (or the robots.txt
  Crawl-delay, if longer) between two requests to one host;
- redirects are followed here, one hop per fetcher call: each hop is checked against its own
  origin's robots.txt and waits for its own host's turn and delay (a disallowed target is
  refused, `robots`), and a hop to another origin than the page's reaches public addresses only;
- a 429 or 503 with Retry-After stops requests to that host until then (this hour and later ones);
- each page is requested once (no retry within the hour); the hour's whole budget is bounded, and
  pages not reached in it are `deferred` (tried again in a later hour, not counted as an attempt).

Pure: no Dagster, no database, no environment reads. `handle(page, result)` turns a fetched page
into the caller's outcome (the extraction runs there).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from newsdedup_dagster.shared.http.fetch import (
    FetchConfig,
    FetchRequest,
    FetchResult,
    fetch_feeds,
    origin,
    parse_retry_after,
    same_origin,
)
from newsdedup_dagster.shared.http.netguard import AddressPolicy
from newsdedup_dagster.stages.articles.robots import RobotsEntry, entry_from_fetch

HTML_ACCEPT = "text/html, application/xhtml+xml;q=0.9, */*;q=0.1"
ROBOTS_ACCEPT = "text/plain, */*;q=0.5"
# The longest Retry-After taken as given; a longer one is read as this (the next day's hours retry).
MAX_RETRY_AFTER = timedelta(hours=24)

# Reasons a failed page is tried again in a later hour (up to the attempt cap); the others are final.
PASSING_REASONS = frozenset({"timeout", "fetch_error", "http_error_retryable", "retry_after", "robots_unreachable"})


@dataclass(frozen=True)
class PageRequest:
    item_id: str
    url: str
    private_ok: bool = False         # every source of the item may reach the allowed private networks
    language_hint: str | None = None  # the item's (feed's) language: a tie-breaker for the encoding


@dataclass(frozen=True)
class PageOutcome:
    item_id: str
    url: str
    status: str                      # ok | failed | deferred (not attempted)
    reason: str | None = None
    detail: str | None = None
    http_status: int | None = None
    final_url: str | None = None
    attempted: bool = True
    payload: object = None           # what `handle` made of the page (the extraction)
    body: bytes | None = None        # the page, when the caller keeps it


@dataclass(frozen=True)
class Politeness:
    user_agent: str
    min_host_delay: float = 5.0
    hosts_in_parallel: int = 32
    page_timeout: float = 20.0
    hour_budget: float = 900.0
    robots_ttl: timedelta = timedelta(hours=24)
    max_robots_bytes: int = 512 * 1024


@dataclass
class FetchRun:
    """An hour's page fetching: outcomes in request order and the robots cache as it ends."""

    outcomes: list[PageOutcome]
    robots: dict[str, RobotsEntry]
    requests_made: int = 0
    robots_fetched: int = 0
    robots_changed: set[str] = field(default_factory=set)


def origin_key(url: str) -> str:
    scheme, host, port = origin(url)
    return f"{scheme}://{host}:{port}"


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower().rstrip(".")


def failure_reason(result: FetchResult) -> tuple[str, str | None]:
    """(reason, detail) of a failed fetch, in the stage's words."""
    error = result.error or ""
    status = result.http_status
    if status in (401, 402):
        return "paywall", error
    if status == 429 or (status is not None and status >= 500):
        return "http_error_retryable", error
    if status is not None and status >= 400:
        return "http_error", error
    lowered = error.lower()
    if "refused to connect" in lowered or "non-http" in lowered or "https to http" in lowered:
        return "refused_address", error
    if "too large" in lowered:
        return "too_large", error
    if "timeout" in lowered or "timed out" in lowered:
        return "timeout", error
    if "redirect" in lowered:
        return "redirect_refused", error
    return "fetch_error", error


def _retry_after(result: FetchResult, now: datetime) -> datetime | None:
    if result.http_status not in (429, 503):
        return None
    seconds = parse_retry_after((result.headers or {}).get("retry-after"), now)
    if seconds is None:
        return None
    return now + timedelta(seconds=min(seconds, MAX_RETRY_AFTER.total_seconds()))


def _address_refused(result: FetchResult) -> bool:
    return result.status == "error" and "refused to connect" in (result.error or "").lower()


def _redirect_target(url: str, result: FetchResult) -> str | None:
    """Where a hop fetched with `max_redirects=0` was redirected to, or None. The fetcher checks the
    redirect (http/https only, never https -> http, not to itself) and stops there, naming the
    target as the final URL; any other failure names the hop itself (or nothing)."""
    if result.status == "error" and result.final_url and result.final_url != url:
        return result.final_url
    return None


@dataclass
class _Host:
    """One host's turn: one request at a time, `last` the moment its previous request ended."""

    turn: asyncio.Lock = field(default_factory=asyncio.Lock)
    last: float | None = None


async def fetch_pages(pages: Sequence[PageRequest], *, politeness: Politeness, page_config: FetchConfig,
                      robots_cache: dict[str, RobotsEntry],
                      handle: Callable[[PageRequest, FetchResult], Awaitable[PageOutcome]],
                      clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> FetchRun:
    """Fetch `pages` (in the order given within each host) under `politeness`; never raises for a
    page. `page_config` is the feed fetcher's configuration; a page reaches what its address policy
    allows beyond public addresses only when its request says `private_ok` (as a feed's does), and
    only on its own origin."""
    page_config = replace(page_config, max_per_host=1, max_attempts=1, total_timeout=politeness.page_timeout,
                          user_agent=politeness.user_agent, accept=HTML_ACCEPT)
    robots_config = replace(page_config, max_body_bytes=politeness.max_robots_bytes,
                            max_decoded_bytes=politeness.max_robots_bytes, accept=ROBOTS_ACCEPT)
    # A redirect is a new hop of this module's, so that its target's robots.txt and host delay apply.
    hop_config = replace(page_config, max_redirects=0)
    # Another origin than the page's: public addresses only, whatever the deployment allows, refused
    # in the words of a redirect elsewhere.
    elsewhere = AddressPolicy(redirect_target=True)
    run = FetchRun(outcomes=[None] * len(pages), robots=dict(robots_cache))  # type: ignore[list-item]
    by_host: dict[str, list[int]] = {}
    for index, page in enumerate(pages):
        try:
            origin_key(page.url)
            host = host_of(page.url)
        except Exception as exc:  # noqa: BLE001 - an unparsable link fails alone
            run.outcomes[index] = PageOutcome(page.item_id, page.url, "failed", "refused_address",
                                              f"not a URL that can be fetched: {str(exc)[:200]}")
            continue
        by_host.setdefault(host, []).append(index)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + politeness.hour_budget
    slots = asyncio.Semaphore(politeness.hosts_in_parallel)
    hosts: dict[str, _Host] = {}
    robots_turns: dict[str, asyncio.Lock] = {}

    async def send(url: str, delay: float, request: FetchRequest, config: FetchConfig) -> FetchResult:
        """One request, alone on its host and at least `delay` seconds after the host's previous one
        (a redirect from another host's page waits its turn here too)."""
        name = host_of(url)
        host = hosts.get(name) or hosts.setdefault(name, _Host())
        async with host.turn:
            if host.last is not None:
                wait = host.last + delay - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
            result = (await fetch_feeds([request], config))[0]
            host.last = loop.time()
        run.requests_made += 1
        return result

    def fetch_config(config: FetchConfig, own_origin: bool) -> FetchConfig:
        return config if own_origin else replace(config, address_policy=elsewhere)

    async def robots_for(url: str, private_ok: bool, own_origin: bool) -> RobotsEntry | FetchResult:
        """The origin's robots.txt, or the refused fetch when the address checks did not let it be
        asked (that says nothing of the origin's rules, so it is not kept)."""
        key = origin_key(url)
        turn = robots_turns.get(key) or robots_turns.setdefault(key, asyncio.Lock())
        async with turn:  # a redirect into an origin while its own pages read its robots.txt: one request
            entry = run.robots.get(key)
            if entry is not None and entry.fresh(clock()):
                return entry
            return await read_robots(url, key, entry, private_ok, own_origin)

    async def read_robots(url: str, key: str, entry: RobotsEntry | None, private_ok: bool,
                          own_origin: bool) -> RobotsEntry | FetchResult:
        scheme, host, port = origin(url)
        shown_host = f"[{host}]" if ":" in host else host
        robots_url = f"{scheme}://{shown_host}:{port}/robots.txt"
        result = await send(url, politeness.min_host_delay,
                            FetchRequest(source_id="robots.txt", url=robots_url, allow_private=private_ok),
                            fetch_config(robots_config, own_origin))
        run.robots_fetched += 1
        if _address_refused(result):
            return result
        fresh = entry_from_fetch(key, http_status=result.http_status, body=result.body,
                                 error=result.error if result.status == "error" else None, now=clock(),
                                 ttl=politeness.robots_ttl)
        fresh = fresh.with_not_before(entry.not_before if entry is not None else None)
        run.robots[key] = fresh
        run.robots_changed.add(key)
        return fresh

    async def one_page(page: PageRequest) -> PageOutcome:
        url, chain, spent = page.url, [page.url], 0.0

        def failed(reason: str, detail: str | None, result: FetchResult | None = None) -> PageOutcome:
            final_url = result.final_url if result is not None else (url if url != page.url else None)
            return PageOutcome(page.item_id, page.url, "failed", reason, detail,
                               http_status=result.http_status if result is not None else None, final_url=final_url)

        while True:
            redirected = url != page.url
            target = f" (the redirect target {url})" if redirected else ""
            key = origin_key(url)
            entry = run.robots.get(key)
            if entry is not None and entry.not_before is not None and clock() < entry.not_before:
                detail = f"the host{target} asked for no requests before {entry.not_before:%Y-%m-%d %H:%M} UTC"
                if not redirected:
                    return PageOutcome(page.item_id, page.url, "deferred", "retry_after", detail, attempted=False)
                return failed("retry_after", detail)
            own_origin = same_origin(url, page.url)
            private_ok = page.private_ok and own_origin
            found = await robots_for(url, private_ok, own_origin)
            if isinstance(found, FetchResult):
                return failed("refused_address", f"{found.error}{target}")
            entry = found
            if entry.status == "unreachable":
                whose = f"robots.txt of {key}" if redirected else "robots.txt"
                return failed("robots_unreachable", f"{whose} could not be read: {entry.detail}{target}")
            if not entry.allows(url):
                return failed("robots", f"robots.txt of {key} disallows the redirect target {url}" if redirected
                              else "robots.txt disallows this page")
            # The page timeout bounds the page's hops together, as it bounded a fetch that followed them.
            remaining = politeness.page_timeout - spent
            if remaining <= 0:
                return failed("timeout", f"total timeout: gave up after {politeness.page_timeout:g}s of "
                                         f"redirects: " + " -> ".join(chain))
            result = await send(url, max(politeness.min_host_delay, entry.crawl_delay() or 0.0),
                                FetchRequest(source_id=page.item_id, url=url, allow_private=private_ok),
                                fetch_config(replace(hop_config, total_timeout=remaining), own_origin))
            spent += result.elapsed_ms / 1000
            next_url = _redirect_target(url, result)
            if next_url is not None:
                if next_url in chain:
                    return failed("redirect_refused", "redirect loop: " + " -> ".join(chain + [next_url]))
                chain.append(next_url)
                if len(chain) - 1 > page_config.max_redirects:
                    return failed("redirect_refused", f"too many redirects (more than {page_config.max_redirects}): "
                                  + " -> ".join(chain))
                url = next_url
                continue
            if result.status != "ok" or result.body is None:
                not_before = _retry_after(result, clock())
                if not_before is not None:
                    run.robots[key] = run.robots[key].with_not_before(not_before)
                    run.robots_changed.add(key)
                    return failed("retry_after", result.error, result)
                reason, detail = failure_reason(result)
                return failed(reason, f"{detail}{target}" if redirected and detail else detail, result)
            # The result as a fetch that followed the redirects gave it: the page's URL, the last hop's.
            return await handle(page, replace(result, url=page.url))

    async def host_worker(indexes: list[int]) -> None:
        async with slots:
            for position, index in enumerate(indexes):
                page = pages[index]
                if loop.time() >= deadline:
                    for rest in indexes[position:]:
                        run.outcomes[rest] = PageOutcome(pages[rest].item_id, pages[rest].url, "deferred",
                                                         "hour_budget", "the hour's budget ran out first",
                                                         attempted=False)
                    return
                try:
                    async with asyncio.timeout_at(deadline):
                        run.outcomes[index] = await one_page(page)
                except TimeoutError:
                    run.outcomes[index] = PageOutcome(page.item_id, page.url, "failed", "timeout",
                                                      "the hour's budget ran out during this page")
                except Exception as exc:  # noqa: BLE001 - one page's surprise stays with that page
                    run.outcomes[index] = PageOutcome(page.item_id, page.url, "failed", "fetch_error",
                                                      f"unexpected {type(exc).__name__}: {str(exc)[:200]}")

    await asyncio.gather(*(host_worker(indexes) for indexes in by_host.values() if indexes))
    for index, outcome in enumerate(run.outcomes):
        if outcome is None:  # never reached (cannot happen; kept so a bug defers instead of crashing)
            run.outcomes[index] = PageOutcome(pages[index].item_id, pages[index].url, "deferred", "hour_budget",
                                              attempted=False)
    return run
