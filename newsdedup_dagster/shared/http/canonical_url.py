"""Canonical URL: the identity key of a news item.

`canonical_url(url)` maps the many spellings of one article URL (tracking
parameters, AMP variants, the links of known redirect services, case, default
ports, trailing slashes, `www.`/`m.` hosts, http vs https) to one string, and
`item_id()` hashes that string into the stable item id used across the pipeline.
Only the redirect services listed in `REDIRECT_SERVICES` are unwrapped, matched
on the registrable domain (Public Suffix List), never on a host-name pattern: a
`?url=` on any other host is that host's own link, so no feed can make its link
another outlet's article.

The canonical URL is an *identity key*, not a link to show or fetch: it
forces https and strips host prefixes such as `www.`, which is right for
"is this the same article?" and may be wrong for clicking. Keep the
item's original `url` for display.

RFC 3986 syntax normalisation (case of scheme and host, IDNA hosts,
percent-encoding case and unreserved characters, dot segments, default
ports) is done by `url-normalize` (MIT, only dependency `idna`). Of the two
well-kept libraries for this job: url-normalize's parameter filter is an
allow-list (it drops every parameter not listed for the domain, which would
drop `?id=123` article ids on most news sites), and courlan's tracker regex
drops any parameter whose name contains `source`, `session`, `uid` ... and
its strict mode drops all but a few parameters; neither unwraps redirect
wrappers or AMP variants. So the news-specific policy below is hand-written
and url-normalize does only the syntax part. We call its component
functions (what its `url_normalize()` runs) rather than `url_normalize()`
itself so that host normalisation (IDNA, ~0.4 ms per call) is cached per
host: it was 30 % of parse time on a 2,000-entry feed (cProfile).

Links are read as a browser reads them: `browser_url` parses with ada
(`ada-url`, a binding of a WHATWG URL Standard parser), so a backslash ends
the host, userinfo is seen for what it is, and the host is the one a
reader's browser would open. `canonical_url` takes its host from the same
parse. `outlet_of` gives the publisher of a link: the registrable domain
(Public Suffix List, the snapshot bundled with `tldextract`, never fetched)
of its host, after decoding the aggregator links whose target is written
in the link itself (Google News' `CBMi...` article ids, known redirect
services). `canonical_outlet` and `links_directly` tell which of the entries
sharing a canonical URL is the publisher's (store.claim_key).
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

import ada_url
import tldextract
from url_normalize.generic_url_cleanup import generic_url_cleanup
from url_normalize.normalize_host import normalize_host
from url_normalize.normalize_path import normalize_path
from url_normalize.normalize_query import normalize_query
from url_normalize.tools import cleanup_url_input, deconstruct_url

# Query parameters that only track where a click came from. Matched on the
# lower-cased parameter name. Sources: the parameters seen on the starter
# feeds' links plus the usual analytics/ads click ids (Google, Facebook,
# Microsoft, Mailchimp, HubSpot, Adobe/AT Internet, Webtrends, Marketo).
TRACKING_PARAMS: frozenset[str] = frozenset(
    {
        # ad / social click ids
        "fbclid", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "msclkid",
        "yclid", "twclid", "ttclid", "igshid", "igsh", "li_fat_id",
        # mail campaigns
        "mc_cid", "mc_eid", "mkt_tok", "_hsenc", "_hsmi", "vero_id", "vero_conv",
        "oly_enc_id", "oly_anon_id", "sc_cid", "et_cid", "et_rid",
        # Google Analytics linker
        "_ga", "_gl",
        # publisher-side campaign / referral tags used by news sites
        "ref", "ref_src", "ref_url", "referrer", "referer", "cmpid", "cmp",
        "ocid", "icid", "ncid", "cid_source", "ito", "xtor", "wt.mc_id", "wt_mc",
        "s_cid", "smid", "smtyp", "sr_share", "share", "soc_src", "soc_trk",
        "at_medium", "at_campaign", "at_source", "at_content", "at_term",
        "ns_mchannel", "ns_source", "ns_campaign", "ns_linkname", "ns_fee",
        "guccounter", "guce_referrer", "guce_referrer_sig", "spm", "feature",
        "rss", "rssfeed", "from_rss", "partner", "taid", "mbid",
        "__twitter_impression", "fb_action_ids", "fb_action_types", "fb_source",
        "fb_ref", "action_object_map", "action_type_map", "action_ref_map",
    }
)
# Any parameter whose lower-cased name starts with one of these is tracking.
TRACKING_PARAM_PREFIXES: tuple[str, ...] = ("utm_", "pk_", "mtm_", "hsa_", "at_custom", "itm_")

# Parameters that only select the AMP rendering of the same article.
AMP_PARAMS: frozenset[str] = frozenset({"amp", "amp_js_v", "amp_gsa", "usqp", "outputtype"})

# Google's country domains (the registrable domains Google search serves from). Matched through
# the Public Suffix List: `google.evil` or `google.com.evil.example` is not Google.
GOOGLE_DOMAINS: frozenset[str] = frozenset("google." + suffix for suffix in """
    com ad ae al am as at az ba be bf bg bi bj bs bt by ca cat cd cf cg ch ci cl cm cn cv cz de dj
    dk dm dz ee es fi fm fr ga ge gg gl gm gr gy hn hr ht hu ie im iq is it je jo kg ki kz la li lk
    lt lu lv md me mg mk ml mn mu mv mw ne nl no nr nu pl pn ps pt ro rs ru rw sc se sh si sk sm sn
    so sr st td tg tl tm tn to tt vu ws
    co.ao co.bw co.ck co.cr co.id co.il co.in co.jp co.ke co.kr co.ls co.ma co.mz co.nz co.th
    co.tz co.ug co.uk co.uz co.ve co.vi co.za co.zm co.zw
    com.af com.ag com.ar com.au com.bd com.bh com.bn com.bo com.br com.bz com.co com.cu com.cy
    com.do com.ec com.eg com.et com.fj com.gh com.gi com.gt com.hk com.jm com.kh com.kw com.lb
    com.ly com.mm com.mt com.mx com.my com.na com.ng com.ni com.np com.om com.pa com.pe com.pg
    com.ph com.pk com.pr com.py com.qa com.sa com.sb com.sg com.sl com.sv com.tj com.tr com.tw
    com.ua com.uy com.vc com.vn
""".split())


@dataclass(frozen=True)
class RedirectService:
    """A known redirect service: links on `domains` (registrable domains, Public Suffix List) whose
    path is one of `paths` (any path when empty) carry their target in the first of `params` that
    holds an absolute http(s) URL. `hosts`, when given, narrows the service to those host names."""

    name: str
    domains: frozenset[str]
    paths: tuple[str, ...]
    params: tuple[str, ...]
    hosts: frozenset[str] = frozenset()


# Only these services are unwrapped: a `?url=` on any other host is that host's own link (an
# unknown host's redirect could send readers anywhere, and unwrapping it would let any feed claim
# another outlet's article).
REDIRECT_SERVICES: tuple[RedirectService, ...] = (
    RedirectService("Google search", GOOGLE_DOMAINS, ("/url",), ("q", "url")),
    RedirectService("Google News redirect", frozenset({"google.com"}), ("/news/url",), ("url",),
                    frozenset({"news.google.com"})),
    RedirectService("Facebook link shim", frozenset({"facebook.com"}), ("/l.php",), ("u",)),
    RedirectService("Instagram link shim", frozenset({"instagram.com"}), ("/",), ("u",),
                    frozenset({"l.instagram.com"})),
    RedirectService("Reddit outbound", frozenset({"reddit.com"}), (), ("url",), frozenset({"out.reddit.com"})),
    RedirectService("LinkedIn redirect", frozenset({"linkedin.com"}), ("/redir/redirect",), ("url",)),
    RedirectService("YouTube redirect", frozenset({"youtube.com"}), ("/redirect",), ("q",)),
    RedirectService("VK away", frozenset({"vk.com"}), ("/away.php",), ("to",)),
    RedirectService("Slack redirect", frozenset({"slack-redir.net"}), ("/link",), ("url",)),
    RedirectService("DuckDuckGo redirect", frozenset({"duckduckgo.com"}), ("/l/",), ("uddg",)),
)
_SERVICES_BY_DOMAIN: dict[str, tuple[RedirectService, ...]] = {}
for _service in REDIRECT_SERVICES:
    for _domain in _service.domains:
        _SERVICES_BY_DOMAIN[_domain] = _SERVICES_BY_DOMAIN.get(_domain, ()) + (_service,)
# Google's AMP cache (`<host>.cdn.ampproject.org/c/s/<host>/<path>`) and Google's AMP viewer
# (`www.google.<tld>/amp/s/<host>/<path>`) carry the target host and path in their own path.
AMP_CACHE_DOMAIN = "ampproject.org"
_AMP_CACHE_PATH = re.compile(r"^/(?:c|v|i)/(s/)?([^/]+)(/.*)?$")
_AMP_VIEWER_PATH = re.compile(r"^/amp/(s/)?([^/]+)(/.*)?$")

# Host prefixes that serve the same article as the bare host (desktop,
# mobile and AMP renderings of one site).
EQUIVALENT_HOST_PREFIXES: tuple[str, ...] = ("www.", "m.", "mobile.", "amp.")

_MAX_UNWRAP_DEPTH = 3  # a wrapper inside a wrapper inside a wrapper is plenty
_ABSOLUTE_HTTP_RE = re.compile(r"^https?://[^/?#\s]+", re.IGNORECASE)


def _is_tracking_param(name: str) -> bool:
    lowered = name.lower()
    return lowered in TRACKING_PARAMS or lowered.startswith(TRACKING_PARAM_PREFIXES)


def _unwrap_redirect(url: str) -> str | None:
    """The target URL if `url` is a link of a known redirect service (REDIRECT_SERVICES, the AMP
    cache and viewer), else None."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")
    if not host:
        return None
    domain = registrable_domain(host)
    amp_match = None
    if domain == AMP_CACHE_DOMAIN and host.endswith(".cdn.ampproject.org"):
        amp_match = _AMP_CACHE_PATH.match(parts.path)
    elif domain in GOOGLE_DOMAINS:
        amp_match = _AMP_VIEWER_PATH.match(parts.path)
    if amp_match:
        scheme = "https" if amp_match.group(1) else "http"
        target = f"{scheme}://{amp_match.group(2)}{amp_match.group(3) or '/'}"
        if parts.query:
            target += "?" + parts.query
        return target
    services = [service for service in _SERVICES_BY_DOMAIN.get(domain, ())
                if (not service.paths or parts.path in service.paths)
                and (not service.hosts or host in service.hosts)]
    # A wrapped target is an absolute URL, so its scheme ("http", maybe percent-encoded as
    # "http%3A") is in the query: skip parsing otherwise.
    if not services or not parts.query or "http" not in parts.query.lower():
        return None
    by_name: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        by_name.setdefault(key.lower(), value)
    for name in (name for service in services for name in service.params):
        value = by_name.get(name)
        if value:
            value = value.strip()
            # parse_qsl already percent-decoded once; a doubly encoded target
            # (`url=https%253A%252F%252F...`) needs one more round.
            if not _ABSOLUTE_HTTP_RE.match(value) and _ABSOLUTE_HTTP_RE.match(unquote(value)):
                value = unquote(value)
            if _ABSOLUTE_HTTP_RE.match(value):
                return value
    return None


def _strip_amp_from_path(path: str) -> str:
    # `.amp.html` -> `.html`, trailing `.amp` -> ``
    path = re.sub(r"\.amp\.html?$", ".html", path, flags=re.IGNORECASE)
    path = re.sub(r"(?<=[^/])\.amp$", "", path, flags=re.IGNORECASE)
    # a whole `/amp/` path segment (leading, middle or trailing)
    segments = path.split("/")
    kept = [seg for seg in segments if seg.lower() != "amp"]
    if len(kept) != len(segments):
        path = "/".join(kept) or "/"
        if not path.startswith("/"):
            path = "/" + path
    return path


def _normalise_query(query: str) -> str:
    kept = []
    for piece in query.split("&"):
        if not piece:
            continue
        name = piece.split("=", 1)[0]
        decoded_name = unquote(name.replace("+", " "))
        if _is_tracking_param(decoded_name):
            continue
        if decoded_name.lower() in AMP_PARAMS:
            # `outputType` is only AMP when its value says so.
            if decoded_name.lower() != "outputtype" or piece.lower().endswith("=amp"):
                continue
        kept.append(piece)
    # Sorting makes `?b=2&a=1` and `?a=1&b=2` one key; a stable sort on the
    # whole `name=value` piece keeps repeated names in a deterministic order.
    return "&".join(sorted(kept))


_cached_normalize_host = functools.lru_cache(maxsize=16384)(normalize_host)


# Paths / queries made only of these characters (no '%', no spaces, ASCII)
# come out of url-normalize unchanged, so they skip it (fast path, ~40 % of
# canonical_url time on typical news URLs).
_PLAIN_PATH_RE = re.compile(r"[A-Za-z0-9\-._~/!$&'()*+,;=:@]*")
_PLAIN_QUERY_RE = re.compile(r"[A-Za-z0-9\-._~:/?\[\]@!$'()*+,;=&]*")


def _syntax_normalise(url: str) -> tuple[str, str, str, str]:
    """RFC 3986 normalisation by url-normalize: (host, port, path, query)."""
    parts = deconstruct_url(generic_url_cleanup(cleanup_url_input(url)))
    host = _cached_normalize_host(parts.host) if parts.host else ""
    path = parts.path
    if not (_PLAIN_PATH_RE.fullmatch(path) and "/." not in path and "//" not in path and path.startswith("/")):
        path = normalize_path(path, "https")
    query = parts.query
    if (not _PLAIN_QUERY_RE.fullmatch(query) or "&&" in query or query.startswith("&") or query.endswith("&")
            or any(piece.count("=") > 1 for piece in query.split("&"))):
        query = normalize_query(query)
    return host, parts.port, path, query


class LinkRefused(ValueError):
    """A link no item may carry: not a WHATWG-valid http(s) URL, or one with userinfo."""


def browser_url(link: str, base: str | None = None) -> str:
    """`link` (resolved against `base`) as a browser's address bar shows it: the WHATWG
    serialisation (backslashes as slashes, IDNA host, percent-encoding). Raises LinkRefused for
    anything that is not an http(s) URL with a host, and for userinfo (`https://a.example@b.example/`
    shows one host's name while opening another's: RFC 3986 section 7.6 on semantic attacks)."""
    try:
        parsed = ada_url.URL(link, base) if base else ada_url.URL(link)
    except ValueError as exc:
        raise LinkRefused(f"not a valid URL: {link[:200]!r}") from exc
    if parsed.protocol not in ("http:", "https:"):
        raise LinkRefused(f"not an http(s) URL: {link[:200]!r}")
    if not parsed.hostname:
        raise LinkRefused(f"no host: {link[:200]!r}")
    if parsed.username or parsed.password:
        raise LinkRefused(f"userinfo in a link (it hides the host a browser opens): {link[:200]!r}")
    return parsed.href


def _has_userinfo(url: str) -> bool:
    try:
        parsed = ada_url.URL(url)
    except ValueError:
        return False
    return bool(parsed.username or parsed.password)


def _browser_view(url: str) -> str:
    """The WHATWG serialisation when `url` parses, else `url` (the canonical key stays stable)."""
    try:
        parsed = ada_url.URL(url)
    except ValueError:
        return url
    if parsed.username or parsed.password:
        # The identity is the resource the browser opens: userinfo is not part of it.
        parsed.username = ""
        parsed.password = ""
    return parsed.href


# ---------------------------------------------------------------- outlets

# The bundled Public Suffix List snapshot only: no suffix_list_urls means no download, and no
# cache_dir means nothing is written. Private suffixes (blogspot.com, github.io) count, so two
# blogs on one hosting domain are two outlets.
_SUFFIXES = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)


def public_suffix(host: str) -> str:
    """The public suffix a host name ends in ("com", "co.uk", "github.io"), "" when none does."""
    try:
        return _SUFFIXES(host).suffix
    except Exception:  # noqa: BLE001 - a name tldextract cannot read has no suffix
        return ""

# Google News article ids: base64url of a protobuf whose field 4 (tag 0x22) holds the publisher's
# URL (the "CBMi" prefix is that encoding's first bytes). The newer opaque ids ("AU_yqL...") do
# not carry it; those stay attributed to news.google.com.
_GOOGLE_NEWS_ARTICLE = re.compile(r"^/(?:rss/)?articles/(CBMi[A-Za-z0-9_-]+)")


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while pos < len(data) and shift < 35:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if not byte & 0x80:
            return value, pos
        shift += 7
    raise ValueError("bad varint")


def google_news_target(url: str) -> str | None:
    """The publisher URL inside a news.google.com `CBMi...` article link, or None."""
    try:
        parsed = ada_url.URL(url)
    except ValueError:
        return None
    if parsed.hostname != "news.google.com":
        return None
    match = _GOOGLE_NEWS_ARTICLE.match(parsed.pathname)
    if not match:
        return None
    token = match.group(1)
    try:
        data = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        pos = 0
        while pos < len(data):
            key, pos = _varint(data, pos)
            if key & 7 == 0:  # varint field
                _, pos = _varint(data, pos)
            elif key & 7 == 2:  # length-delimited field
                length, pos = _varint(data, pos)
                value = data[pos:pos + length]
                pos += length
                if key >> 3 == 4:
                    target = value.decode("utf-8")
                    return browser_url(target) if _ABSOLUTE_HTTP_RE.match(target) else None
            else:
                return None
    except (ValueError, binascii.Error, UnicodeDecodeError):  # LinkRefused is a ValueError
        return None
    return None


def registrable_domain(host: str) -> str:
    """`www.bbc.co.uk` -> `bbc.co.uk`; an IP literal or a name without a public suffix is itself."""
    return _registrable_domain(host.lower().rstrip("."))


@functools.lru_cache(maxsize=16384)  # a few thousand hosts an hour; the suffix lookup is per link
def _registrable_domain(host: str) -> str:
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ipaddress.ip_address(bare)
        return host
    except ValueError:
        pass
    extracted = _SUFFIXES(host)
    return extracted.top_domain_under_public_suffix or host


def outlet_of(url: str | None) -> str | None:
    """The publisher a link is attributed to: the registrable domain of the host a browser opens,
    after unwrapping a Google News article link or a known redirect service's link (the target
    `canonical_url` keys the item by). None for link-less items (urn:newsdedup: ids)."""
    if not url:
        return None
    target = google_news_target(url) or unwrapped(url)
    try:
        host = ada_url.URL(target).hostname
    except ValueError:
        return None
    return registrable_domain(host) if host else None


def feed_outlet(feed_url: str) -> str | None:
    """The outlet of a feed's own URL (its registrable domain), as configured by the operator."""
    try:
        host = ada_url.URL(feed_url).hostname
    except ValueError:
        return None
    return registrable_domain(host) if host else None


def canonical_url(url: str) -> str:
    """Return the canonical identity URL for an article URL.

    Non-http(s) inputs (for example the synthetic `urn:newsdedup:` ids of
    entries without a link) are returned stripped and otherwise unchanged.
    """
    url = (url or "").strip()
    if not _ABSOLUTE_HTTP_RE.match(url):
        if url.startswith("//"):
            url = "https:" + url
        else:
            return url
    try:
        return _canonical_http_url(url)
    except ValueError:  # unparseable (e.g. "https://[broken/x"): still a stable key
        return url.split("#", 1)[0]


def unwrapped(url: str) -> str:
    """`url` with the links of known redirect services (REDIRECT_SERVICES, the AMP cache and
    viewer) replaced by their targets, at most three deep; any other link is itself."""
    for _ in range(_MAX_UNWRAP_DEPTH):
        target = _unwrap_redirect(url)
        if target is None or _has_userinfo(target):
            # A wrapped target with userinfo names one host and opens another: the key stays
            # the wrapper's, so such a link cannot join the named outlet's item.
            break
        url = _browser_view(target)
    return url


def canonical_host(canonical: str) -> str | None:
    """The host (with a non-default port) of a canonical URL; None for a urn:newsdedup: id."""
    if not _ABSOLUTE_HTTP_RE.match(canonical):
        return None
    return urlsplit(canonical).netloc or None


def canonical_outlet(canonical: str) -> str | None:
    """The outlet a canonical URL belongs to: the registrable domain of its host. The item's
    identity is this URL, so "the publisher's own feed" is decided from it, not from the link
    an entry happens to carry (a redirect wrapper's host, a Google News id)."""
    host = urlsplit(canonical).hostname if _ABSOLUTE_HTTP_RE.match(canonical) else None
    return registrable_domain(host) if host else None


def links_directly(url: str | None, canonical: str) -> bool:
    """True when the entry's own link opens the canonical URL's host itself (the same host up to
    the spellings canonical_url folds: case, www./m., http/https, default port), False for a
    redirect wrapper's link, an AMP cache copy, or no link."""
    host = canonical_host(canonical)
    if not url or host is None:
        return False
    try:
        return canonical_host(_canonical_http_url(url, unwrap=False)) == host
    except ValueError:
        return False


def _canonical_http_url(url: str, *, unwrap: bool = True) -> str:
    url = _browser_view(url)
    if unwrap:
        url = unwrapped(url)
    try:
        host, port_text, raw_path, raw_query = _syntax_normalise(url)
    except Exception:  # url-normalize raises on some malformed hosts; keep a stable key anyway
        parts = urlsplit(url)
        host, port_text, raw_path, raw_query = (parts.hostname or ""), "", parts.path, parts.query
    host = host.lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    for prefix in EQUIVALENT_HOST_PREFIXES:
        if host.startswith(prefix) and host.count(".") >= 2:
            host = host[len(prefix):]
            break
    port = int(port_text) if port_text.isdigit() and int(port_text) not in (80, 443) else None
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    path = _strip_amp_from_path(raw_path or "/")
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    query = _normalise_query(raw_query)
    # http and https serve the same article: one key for both.
    return urlunsplit(("https", netloc, path, query, ""))


def item_id(canonical: str) -> str:
    """Stable item id: first 20 hex chars (80 bits) of sha1(canonical URL).

    80 bits keep the birthday-collision probability below 1e-9 up to ~50
    million items; sha1 is used as a fingerprint here, not for security.
    """
    return hashlib.sha1(canonical.encode("utf-8")).hexdigest()[:20]
