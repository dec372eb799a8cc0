"""robots.txt as RFC 9309 reads it, parsed by protego, and the per-origin cache entry it becomes.

What a fetch of `/robots.txt` means (RFC 9309 section 2.3.1):
- 2xx: its rules apply (parsed by protego, which also reads `Crawl-delay`);
- 4xx ("unavailable"): no rules, everything may be fetched;
- 5xx, a timeout, a refused connection or a file over the size cap ("unreachable"): nothing on the
  origin is fetched until the file can be read; such an entry is kept for an hour only.
Pure: no network, no database.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from protego import Protego

# The product token robots.txt groups are matched against (the User-Agent's first word).
ROBOTS_TOKEN = "newsdedup"
# RFC 9309 2.4: a crawler should not use a cached copy for more than 24 hours; an unreachable file is
# asked for again an hour later (the next hourly run).
UNREACHABLE_TTL = timedelta(hours=1)
# A Crawl-delay above this is read as this: one page a minute still reaches a host's newest articles.
MAX_CRAWL_DELAY = 60.0

RULES, ALLOW_ALL, UNREACHABLE = "rules", "allow_all", "unreachable"


@dataclass(frozen=True)
class RobotsEntry:
    """What one origin's robots.txt allows, until `expires_at`."""

    origin: str                 # scheme://host:port
    status: str                 # rules | allow_all | unreachable
    body: str | None            # the file's text (status rules)
    fetched_at: datetime
    expires_at: datetime
    detail: str | None = None   # why it is unreachable
    not_before: datetime | None = None  # Retry-After: no request to the origin before this

    def fresh(self, now: datetime) -> bool:
        return now < self.expires_at

    def allows(self, url: str) -> bool:
        if self.status == ALLOW_ALL:
            return True
        if self.status == UNREACHABLE:
            return False
        return _parsed(self.body or "").can_fetch(url, ROBOTS_TOKEN)

    def crawl_delay(self) -> float | None:
        if self.status != RULES:
            return None
        delay = _parsed(self.body or "").crawl_delay(ROBOTS_TOKEN)
        return None if delay is None else min(MAX_CRAWL_DELAY, max(0.0, float(delay)))

    def with_not_before(self, moment: datetime | None) -> RobotsEntry:
        return replace(self, not_before=moment)


_PARSED: dict[str, Protego] = {}


def _parsed(body: str) -> Protego:
    """Parsed rules, kept per text for the process (an hour asks one origin's rules many times)."""
    rules = _PARSED.get(body)
    if rules is None:
        if len(_PARSED) > 1024:
            _PARSED.clear()
        rules = _PARSED[body] = Protego.parse(body)
    return rules


def entry_from_fetch(origin: str, *, http_status: int | None, body: bytes | None, error: str | None,
                     now: datetime, ttl: timedelta) -> RobotsEntry:
    """The cache entry a robots.txt fetch yields (RFC 9309 2.3.1)."""
    if error is None and http_status is not None and 200 <= http_status < 300 and body is not None:
        text = body.decode("utf-8", errors="replace")
        return RobotsEntry(origin, RULES, text, now, now + ttl)
    if http_status is not None and 400 <= http_status < 500 and http_status != 429:
        return RobotsEntry(origin, ALLOW_ALL, None, now, now + ttl)
    detail = error or f"HTTP {http_status}"
    return RobotsEntry(origin, UNREACHABLE, None, now, now + min(ttl, UNREACHABLE_TTL) if ttl else now, detail)
