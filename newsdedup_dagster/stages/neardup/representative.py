"""Which member of a duplicate group is its canonical item (pure).

Order of preference (the published near-duplicate method):
1. the original outlet over a syndicator (the source's `syndicator` flag, or a
   URL on a known aggregator host: SYNDICATOR_HOSTS);
2. a direct link over an opaque redirect (news.google.com/rss/articles/…,
   feedproxy, t.co …: OPAQUE_REDIRECT_PATTERNS);
3. the newest `published_at` (unknown dates rank after known ones);
4. the smallest item id (a stable tie-break, so the same members always give
   the same representative whatever order they arrive in).

Optionally (`keep_existing_canonical=True`) an existing canonical wins ties after
rules 1-2, so a newer copy of equal standing does not switch the canonical.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

# Aggregators / portals that republish or wrap other outlets' articles. A URL on
# one of these hosts (or a subdomain) marks the item as syndicated.
SYNDICATOR_HOSTS: tuple[str, ...] = (
    "news.google.com",
    "news.url.google.com",
    "news.naver.com",
    "n.news.naver.com",
    "m.news.naver.com",
    "v.daum.net",
    "news.v.daum.net",
    "news.nate.com",
    "news.zum.com",
    "msn.com",
    "yahoo.com",
    "yahoo.co.jp",
    "news.yahoo.co.jp",
    "flipboard.com",
    "newsbreak.com",
    "smartnews.com",
    "ground.news",
    "newsnow.co.uk",
    "toutiao.com",
    "inoreader.com",
    "feedly.com",
    "bing.com",
)

# Links that hide the article's real address behind an opaque token.
OPAQUE_REDIRECT_PATTERNS: tuple[str, ...] = (
    r"^https?://news\.google\.com/(?:rss/)?articles/",
    r"^https?://news\.google\.com/__i/rss/rd/articles/",
    r"^https?://news\.url\.google\.com/url",
    r"^https?://(?:www\.)?google\.[a-z.]+/url\?",
    r"^https?://feedproxy\.google\.com/~r/",
    r"^https?://feeds\.feedburner\.com/~r/",
    r"^https?://(?:www\.)?bing\.com/news/apiclick\.aspx",
    r"^https?://[a-z0-9.]*\.rd\.yahoo\.com/",
    r"^https?://l\.facebook\.com/l\.php",
    r"^https?://(?:t\.co|bit\.ly|ow\.ly|buff\.ly|dlvr\.it|trib\.al|lnkd\.in|tinyurl\.com|goo\.gl)/",
)
_OPAQUE_REDIRECT = re.compile("|".join(f"(?:{p})" for p in OPAQUE_REDIRECT_PATTERNS), re.IGNORECASE)
_SYNDICATOR_HOST_SET = frozenset(SYNDICATOR_HOSTS)


@dataclass(frozen=True)
class HeadlineItem:
    """One item offered to the near-duplicate step."""

    item_id: str
    title: str
    lang: str | None = None
    url: str = ""
    source_is_syndicator: bool = False
    published_at: datetime | None = None
    # True for canonical items of the lookback window (already stored, embedded).
    is_existing_canonical: bool = False


def url_host(url: str) -> str:
    try:
        host = urlsplit(url or "").hostname or ""
    except ValueError:
        return ""
    return host.lower().rstrip(".")


def is_syndicator_host(url: str) -> bool:
    """The URL's host is a listed aggregator or a subdomain of one."""
    if not url:
        return False
    labels = url_host(url).split(".")
    return any(".".join(labels[i:]) in _SYNDICATOR_HOST_SET for i in range(len(labels) - 1))


def is_syndicated(item: HeadlineItem) -> bool:
    return bool(item.source_is_syndicator) or is_syndicator_host(item.url)


def is_opaque_redirect(url: str) -> bool:
    return bool(url) and _OPAQUE_REDIRECT.search(url) is not None


def _timestamp(value: datetime | None) -> float | None:
    if value is None:
        return None
    if value.tzinfo is None:  # naive datetimes are taken as UTC
        value = value.replace(tzinfo=UTC)
    return value.timestamp()


def representative_key(item: HeadlineItem, keep_existing_canonical: bool = False) -> tuple:
    """Sort key: the smallest key is the best representative."""
    ts = _timestamp(item.published_at)
    return (
        is_syndicated(item),
        is_opaque_redirect(item.url),
        (not item.is_existing_canonical) if keep_existing_canonical else False,
        ts is None,
        -(ts or 0.0),
        item.item_id,
    )


def choose_representative(members: Iterable[HeadlineItem], keep_existing_canonical: bool = False) -> HeadlineItem:
    """The group's canonical item; independent of the members' order."""
    members = list(members)
    if not members:
        raise ValueError("a group needs at least one member")
    return min(members, key=lambda m: representative_key(m, keep_existing_canonical))
