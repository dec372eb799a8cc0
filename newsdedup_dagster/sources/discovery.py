"""A feed found from an address: the feed itself, or a site whose page declares its feed.

`discover(url, ...)` fetches `url` once through the ingest fetcher (fetch.py: address checks,
size caps, redirects, timeouts) after reading its origin's robots.txt (RFC 9309, stages/articles/robots.py),
and parses what came back with the ingest parser in a worker process under its time budget:
- a feed (RSS, Atom, RDF): that is the feed;
- an HTML page: its `<link rel="alternate" type="application/rss+xml|atom+xml|rdf+xml">` feeds are
  tried in the page's order, the first that parses wins; only when the page declares none are the
  common paths (`COMMON_PATHS`, at the site's root) tried, each after its robots.txt check.
What it proposes: the language (the feed's own `<language>`, else its items' majority, else the
page's `lang`) and the country (the site's or the feed's country-code domain, else the region of
the feed's or page's language tag). Every address tried is reported with its outcome.

No environment reads: the fetch and parse limits are passed in.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from urllib.parse import urljoin, urlsplit

from lxml import etree

from newsdedup_dagster.shared.http.fetch import FetchConfig, FetchRequest, FetchResult, fetch_feeds, origin
from newsdedup_dagster.shared.sources import ISO_3166_1_ALPHA2, normalise_language
from newsdedup_dagster.sources.edit import country_from_host
from newsdedup_dagster.sources.opml import feed_url_problem
from newsdedup_dagster.stages.articles.robots import RobotsEntry, entry_from_fetch
from newsdedup_dagster.stages.ingest.parse_pool import parse_many
from newsdedup_dagster.stages.ingest.parse_types import ParseConfig, ParseResult

FEED_TYPES = ("application/rss+xml", "application/atom+xml", "application/rdf+xml", "application/feed+json")
PARSED_FEED_TYPES = FEED_TYPES[:3]   # the ingest parser reads XML feeds; JSON Feed is named, not used
# Tried, in this order, only when a page declares no feed: WordPress, Ghost, Hugo, Jekyll, Blogger.
COMMON_PATHS = ("/feed", "/rss", "/rss.xml", "/feed.xml", "/atom.xml", "/index.xml", "/feeds/posts/default")
# The part of a page read for its links: they sit in <head>, and a page's first 2 MB hold it.
MAX_PAGE_BYTES = 2 * 1024 * 1024
MAX_ROBOTS_BYTES = 512 * 1024
ROBOTS_TTL = timedelta(hours=24)
MAX_DECLARED = 10   # declared feeds tried at most (a page may list one per tag)


@dataclass(frozen=True)
class FeedLink:
    url: str
    media_type: str
    title: str | None = None


@dataclass(frozen=True)
class Discovery:
    """What `discover` found: the feed to add (None when none was found) and every step's outcome."""

    requested: str
    feed_url: str | None = None
    how: str | None = None               # given | declared | common path
    title: str | None = None
    language: str | None = None          # proposed, ISO 639-1
    country: str | None = None           # proposed, ISO 3166-1 alpha-2
    items: int = 0
    feed_format: str | None = None
    site_url: str | None = None
    tried: tuple[str, ...] = ()          # "URL: outcome", in order
    error: str | None = None             # why nothing was found, one line

    @property
    def found(self) -> bool:
        return self.feed_url is not None


def feed_links(page: bytes, base_url: str) -> list[FeedLink]:
    """The feeds a page declares (`<link rel="alternate" type=...feed type...>`), absolute, in order."""
    if not page.strip():
        return []
    parser = etree.HTMLParser(no_network=True, huge_tree=False, remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(page[:MAX_PAGE_BYTES], parser)
    except (etree.ParserError, ValueError):
        return []
    if root is None:
        return []
    base = base_url
    for element in root.iter("base"):
        joined = _joined(base_url, element.get("href") or "")
        if joined and urlsplit(joined).scheme.lower() in ("http", "https"):   # a page cannot move its base elsewhere
            base = joined
        break
    found: list[FeedLink] = []
    seen: set[str] = set()
    for element in root.iter("link"):
        rel = (element.get("rel") or "").lower().split()
        media_type = (element.get("type") or "").split(";")[0].strip().lower()
        url = _joined(base, element.get("href") or "")
        if "alternate" not in rel or media_type not in FEED_TYPES or not url:
            continue
        if url not in seen:
            seen.add(url)
            title = " ".join((element.get("title") or "").split())[:300] or None
            found.append(FeedLink(url, media_type, title))
    return found


def _joined(base: str, href: str) -> str | None:
    """`href` made absolute against `base`; None when empty or not a URL ('http://[::1')."""
    href = href.strip()
    if not href:
        return None
    try:
        return urljoin(base, href)
    except ValueError:
        return None


def page_language_tag(page: bytes) -> str | None:
    """The `lang` of a page's <html> element, as written ('en-GB'), from its first bytes."""
    match = re.search(rb"<html\b[^>]*?\blang\s*=\s*[\"']?([A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*)", page[:65536],
                      flags=re.IGNORECASE)
    return match.group(1).decode("ascii") if match else None


def feed_language_tag(body: bytes) -> str | None:
    """The language tag a feed declares (`<language>`, `<dc:language>` or the root's `xml:lang`)."""
    match = re.search(rb"<(?:dc:)?language>\s*([A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*)\s*</", body[:65536])
    if match is None:
        match = re.search(rb"<(?:feed|rss|rdf:RDF)\b[^>]*\bxml:lang\s*=\s*[\"']([A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*)",
                          body[:65536])
    return match.group(1).decode("ascii") if match else None


def region_of(tag: str | None) -> str | None:
    """GB from 'en-GB', BR from 'pt_br'; None without a region that is a country."""
    if not tag:
        return None
    for part in re.split(r"[-_]", tag)[1:]:
        if len(part) == 2 and part.upper() in ISO_3166_1_ALPHA2:
            return part.upper()
    return None


def propose_language(parsed: ParseResult, feed_tag: str | None, page_tag: str | None) -> str | None:
    if parsed.feed_language:
        return parsed.feed_language
    languages = Counter(item.language for item in parsed.items if item.language)
    if languages:
        return languages.most_common(1)[0][0]
    return normalise_language(feed_tag) or normalise_language(page_tag)


def propose_country(feed_url: str, site_url: str | None, feed_tag: str | None, page_tag: str | None) -> str | None:
    return (country_from_host(urlsplit(site_url).hostname if site_url else None)
            or country_from_host(urlsplit(feed_url).hostname) or region_of(feed_tag) or region_of(page_tag))


@dataclass
class _Run:
    fetch_config: FetchConfig
    parse_config: ParseConfig
    allow_private: bool
    now: datetime
    robots: dict[str, RobotsEntry] = field(default_factory=dict)
    tried: list[str] = field(default_factory=list)

    async def allowed(self, url: str) -> str | None:
        """None when robots.txt of the URL's origin lets it be fetched; else why not."""
        scheme, host, port = origin(url)
        key = f"{scheme}://{host}:{port}"
        entry = self.robots.get(key)
        if entry is None:
            shown_host = f"[{host}]" if ":" in host else host
            robots_config = replace(self.fetch_config, max_body_bytes=MAX_ROBOTS_BYTES,
                                    max_decoded_bytes=MAX_ROBOTS_BYTES, accept="text/plain, */*;q=0.5")
            [result] = await fetch_feeds([FetchRequest("robots.txt", f"{scheme}://{shown_host}:{port}/robots.txt",
                                                       allow_private=self.allow_private)], robots_config)
            entry = self.robots[key] = entry_from_fetch(key, http_status=result.http_status, body=result.body,
                                                        error=result.error, now=self.now, ttl=ROBOTS_TTL)
        if entry.status == "unreachable":
            return f"robots.txt of {key} could not be read ({entry.detail}): nothing on it is fetched"
        if not entry.allows(url):
            return f"robots.txt of {key} disallows it"
        return None

    async def fetch(self, url: str, *, page: bool = False) -> FetchResult | None:
        """One guarded fetch after the robots.txt check; None (and the reason in `tried`) when refused."""
        refused = await self.allowed(url)
        if refused:
            self.tried.append(f"{url}: {refused}")
            return None
        config = self.fetch_config
        if page:
            config = replace(config, accept="text/html, application/xhtml+xml, application/rss+xml, "
                                            "application/atom+xml;q=0.9, */*;q=0.8")
        [result] = await fetch_feeds([FetchRequest("discovery", url, allow_private=self.allow_private)], config)
        if result.status == "error":
            self.tried.append(f"{url}: {result.error}")
            return None
        return result

    def parse(self, result: FetchResult) -> ParseResult:
        [parsed] = parse_many([(result, None, None, self.parse_config)], workers=1)
        return parsed


def _is_feed(parsed: ParseResult) -> bool:
    return parsed.error is None and parsed.feed_format is not None


async def discover(url: str, fetch_config: FetchConfig, parse_config: ParseConfig, *, allow_private: bool = False,
                   now: datetime | None = None) -> Discovery:
    """The feed at `url`, or the feed the page at `url` declares (see the module's docstring)."""
    url = url.strip()
    problem = feed_url_problem(url)
    if problem:
        return Discovery(requested=url, error=problem)
    run = _Run(fetch_config, parse_config, allow_private, now or datetime.now(UTC))
    first = await run.fetch(url, page=True)
    if first is None:
        return Discovery(requested=url, tried=tuple(run.tried), error=run.tried[-1])
    parsed = run.parse(first)
    if _is_feed(parsed):
        run.tried.append(f"{url}: a feed ({parsed.feed_format}, {len(parsed.items)} items)")
        return _found(url, url, "given", first, parsed, None, None, run)
    run.tried.append(f"{url}: not a feed ({parsed.error or 'no entries'})")
    page = first.body or b""
    page_tag = page_language_tag(page)
    site_url = first.final_url or url
    declared = [link for link in feed_links(page, site_url) if link.media_type in PARSED_FEED_TYPES]
    if declared:
        candidates = [(link.url, "declared") for link in declared[:MAX_DECLARED]]
    else:
        root = f"{urlsplit(site_url).scheme}://{urlsplit(site_url).netloc}"
        candidates = [(urljoin(root, path), "common path") for path in COMMON_PATHS]
        run.tried.append(f"{site_url}: the page declares no feed; trying {len(candidates)} common paths")
    for candidate, how in candidates:
        problem = feed_url_problem(candidate)
        if problem:
            run.tried.append(f"{candidate}: {problem}")
            continue
        result = await run.fetch(candidate)
        if result is None:
            continue
        parsed = run.parse(result)
        if _is_feed(parsed):
            run.tried.append(f"{candidate}: a feed ({parsed.feed_format}, {len(parsed.items)} items)")
            return _found(url, candidate, how, result, parsed, site_url, page_tag, run)
        run.tried.append(f"{candidate}: not a feed ({parsed.error or 'no entries'})")
    what = "none of the feeds the page declares parses" if declared else "the page declares no feed and no common path has one"
    return Discovery(requested=url, site_url=site_url, tried=tuple(run.tried), error=f"no feed found at {url}: {what}")


def _found(requested: str, feed_url: str, how: str, result: FetchResult, parsed: ParseResult, site_url: str | None,
           page_tag: str | None, run: _Run) -> Discovery:
    feed_tag = feed_language_tag(result.body or b"")
    return Discovery(
        requested=requested, feed_url=feed_url, how=how, title=parsed.feed_title,
        language=propose_language(parsed, feed_tag, page_tag),
        country=propose_country(feed_url, site_url, feed_tag, page_tag), items=len(parsed.items),
        feed_format=parsed.feed_format, site_url=site_url, tried=tuple(run.tried))
