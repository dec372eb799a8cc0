"""canonical_url and item_id: pure unit tests, and property tests on redirect wrappers (only known
services are unwrapped, matched on the registrable domain)."""

from __future__ import annotations

from urllib.parse import quote, urlsplit

import pytest

from newsdedup_dagster.shared.http.canonical_url import TRACKING_PARAMS, canonical_url, item_id

CASES = [
    # case, default port, fragment, tracking params, query order
    ("HTTP://Example.COM:80/a/b/?utm_source=x&b=2&a=1#frag", "https://example.com/a/b?a=1&b=2"),
    ("https://example.com:443/", "https://example.com/"),
    ("https://example.com", "https://example.com/"),
    ("https://example.com:8080/x", "https://example.com:8080/x"),
    ("https://ex.com/a?fbclid=abc&ref=rss&id=5&gclid=1&mc_cid=2&mc_eid=3&igshid=4&_ga=5&cmpid=6&ocid=7",
     "https://ex.com/a?id=5"),
    ("https://ex.com/a?UTM_Source=1&utm_medium=2&WT.mc_id=3", "https://ex.com/a"),
    ("https://ex.com/search?q=a+b&Q=1", "https://ex.com/search?Q=1&q=a+b"),
    ("https://ex.com/a?x=2&x=1", "https://ex.com/a?x=1&x=2"),
    # http and https, www. and m. hosts
    ("http://www.bbc.co.uk/news/world-1", "https://bbc.co.uk/news/world-1"),
    ("https://m.yna.co.kr/view/AKR1", "https://yna.co.kr/view/AKR1"),
    # AMP variants
    ("https://www.bbc.co.uk/news/world-123/amp?utm_medium=rss", "https://bbc.co.uk/news/world-123"),
    ("https://ex.com/amp/story/1/", "https://ex.com/story/1"),
    ("https://ex.com/story?amp", "https://ex.com/story"),
    ("https://ex.com/story?amp=1&id=2", "https://ex.com/story?id=2"),
    ("https://amp.theguardian.com/world/2026/x", "https://theguardian.com/world/2026/x"),
    ("https://ex.com/news/story.amp.html", "https://ex.com/news/story.html"),
    ("https://ex.com/news/article-1.amp", "https://ex.com/news/article-1"),
    ("https://www-ex-com.cdn.ampproject.org/c/s/www.ex.com/story.amp.html", "https://ex.com/story.html"),
    ("https://www.google.com/amp/s/www.ex.com/story/amp", "https://ex.com/story"),
    ("https://www.washingtonpost.com/x/?outputType=amp", "https://washingtonpost.com/x"),
    ("https://ex.com/x?outputType=print", "https://ex.com/x?outputType=print"),
    # trailing slashes and dot segments
    ("https://ex.com/a/b/", "https://ex.com/a/b"),
    ("http://ex.com/a/./b/../c", "https://ex.com/a/c"),
    # redirect wrappers
    ("https://www.google.com/url?q=https%3A%2F%2Fexample.com%2Fx%3Fid%3D1%26utm_source%3Dg&sa=D",
     "https://example.com/x?id=1"),
    ("https://l.facebook.com/l.php?u=https%3A%2F%2Fex.com%2Fstory&h=AT0", "https://ex.com/story"),
    ("https://lm.facebook.com/l.php?u=https%253A%252F%252Fex.com%252Fdouble", "https://ex.com/double"),
    ("https://www.google.co.uk/url?url=https://ex.com/a/1%3Futm_campaign%3Dz", "https://ex.com/a/1"),
    ("https://news.google.com/news/url?sa=t&url=https://ex.com/n", "https://ex.com/n"),
    ("https://www.youtube.com/redirect?q=https%3A%2F%2Fex.com%2Fy&v=1", "https://ex.com/y"),
    ("https://out.reddit.com/t3_x?url=https%3A%2F%2Fex.com%2Fr&token=1", "https://ex.com/r"),
    # only known services are unwrapped: any other host's `?url=` is that host's own link
    ("https://track.ex.net/click?url=https://ex.com/a/1%3Futm_campaign%3Dz",
     "https://track.ex.net/click?url=https://ex.com/a/1?utm_campaign%3Dz"),
    ("https://r.ex.net/r?u=https%253A%252F%252Fex.com%252Fdouble", "https://r.ex.net/r?u=https%253A%252F%252Fex.com%252Fdouble"),
    ("https://evil.example/go?url=https://www.reuters.com/world/x", "https://evil.example/go?url=https://www.reuters.com/world/x"),
    ("https://google.evil/url?q=https://www.reuters.com/x", "https://google.evil/url?q=https://www.reuters.com/x"),
    ("https://www.google.com.evil.example/url?q=https://ex.com/x",
     "https://google.com.evil.example/url?q=https://ex.com/x"),
    ("https://l.facebook.com.evil.example/l.php?u=https://ex.com/x",
     "https://l.facebook.com.evil.example/l.php?u=https://ex.com/x"),
    ("https://google.evil/amp/s/www.reuters.com/x", "https://google.evil/s/www.reuters.com/x"),
    ("https://www-ex-com.cdn.ampproject.org.evil.example/c/s/www.ex.com/story",
     "https://www-ex-com.cdn.ampproject.org.evil.example/c/s/www.ex.com/story"),
    ("https://l.facebook.com/other.php?u=https://ex.com/x", "https://l.facebook.com/other.php?u=https://ex.com/x"),
    ("https://ex.com/search?q=https://other.com/", "https://ex.com/search?q=https://other.com/"),
    ("https://ex.com/share?url=not-a-url", "https://ex.com/share?url=not-a-url"),
    # percent-encoding and IDNA
    ("https://ex.com/%7Euser/a%20b?q=%e4%b8%ad", "https://ex.com/~user/a%20b?q=%E4%B8%AD"),
    ("https://例え.jp/パス?x=1", "https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9?x=1"),
    # not http(s): left alone
    ("urn:newsdedup:src:abc", "urn:newsdedup:src:abc"),
    ("  https://ex.com/padded  ", "https://ex.com/padded"),
    ("//ex.com/scheme-relative", "https://ex.com/scheme-relative"),
    ("http://[::1]:8080/x", "https://[::1]:8080/x"),
]


@pytest.mark.parametrize(("url", "expected"), CASES)
def test_canonical_url(url, expected):
    assert canonical_url(url) == expected


@pytest.mark.parametrize(("url", "_expected"), CASES)
def test_canonical_url_is_idempotent(url, _expected):
    once = canonical_url(url)
    assert canonical_url(once) == once


def test_spellings_of_one_article_share_an_item_id():
    spellings = [
        "https://www.example.com/world/2026/11/02/story-1",
        "http://example.com/world/2026/11/02/story-1/",
        "https://EXAMPLE.com:443/world/2026/11/02/story-1?utm_source=rss&utm_medium=feed#comments",
        "https://amp.example.com/world/2026/11/02/story-1",
        "https://example.com/world/2026/11/02/story-1/amp/",
        "https://www.google.com/url?q=https://www.example.com/world/2026/11/02/story-1&sa=D",
    ]
    assert len({item_id(canonical_url(url)) for url in spellings}) == 1


def test_item_id_shape_and_stability():
    identifier = item_id("https://example.com/a")
    assert len(identifier) == 20 and int(identifier, 16) >= 0
    assert item_id("https://example.com/a") == identifier
    assert item_id("https://example.com/b") != identifier


def test_item_id_known_value():
    # Pinned: a changed hash would re-key every stored item.
    assert item_id("https://example.com/a") == "c4ed1c218d14a0f15bba"


def test_tracking_list_is_lower_case():
    assert all(name == name.lower() for name in TRACKING_PARAMS)


def test_malformed_urls_do_not_raise():
    for url in ["https://ex.com:notaport/x", "https://[broken/x", "https://", "http://a b.com/x", ""]:
        assert isinstance(canonical_url(url), str)


def test_fast_path_matches_url_normalize_on_random_urls():
    # _syntax_normalise skips url-normalize for plain paths/queries; it must give the same result.
    import random
    import string

    from url_normalize.normalize_path import normalize_path
    from url_normalize.normalize_query import normalize_query
    from url_normalize.tools import deconstruct_url

    from newsdedup_dagster.shared.http.canonical_url import _syntax_normalise

    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits + "-._~/!$&'()*+,;=:@[]%é "
    for _ in range(3000):
        path = "/" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 15)))
        query = "".join(rng.choice(alphabet + "?") for _ in range(rng.randint(0, 15)))
        url = "https://ex.com" + path + ("?" + query if query else "")
        try:
            _, _, fast_path, fast_query = _syntax_normalise(url)
        except ValueError:
            continue
        parts = deconstruct_url(url)
        assert fast_path == normalize_path(parts.path, "https"), url
        assert fast_query == normalize_query(parts.query), url


# ------------------------------------------------------------------ redirect wrappers, by property
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from newsdedup_dagster.shared.http.canonical_url import (  # noqa: E402
    GOOGLE_DOMAINS,
    REDIRECT_SERVICES,
    canonical_outlet,
    links_directly,
    outlet_of,
    registrable_domain,
)

LABEL = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12).filter(
    lambda label: not label.startswith("-") and not label.endswith("-"))
SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.~", min_size=1, max_size=12).filter(
    lambda segment: segment not in (".", "..") and segment.lower() != "amp" and not segment.lower().endswith(".amp"))
TARGET_HOSTS = ["www.reuters.com", "bbc.co.uk", "m.example.org", "news.example.net", "xn--bcher-kva.de"]
# Every name the old host-name patterns took for a wrapper, none of them a known service.
LOOKALIKE_SUFFIXES = ["evil", "evil.example", "com.evil.example", "co.uk.evil", "example"]
WRAPPER_PARAMS = ["url", "u", "q", "to", "link", "target", "dest", "redirect", "goto", "out", "uddg"]


@st.composite
def targets(draw) -> str:
    path = "/".join(draw(st.lists(SEGMENT, min_size=1, max_size=4)))
    query = draw(st.sampled_from(["", "?id=7", "?utm_source=x&id=7", "?a=1&b=2"]))
    return f"https://{draw(st.sampled_from(TARGET_HOSTS))}/{path}{query}"


def _host_without_prefix(host: str) -> str:
    for prefix in ("www.", "m.", "mobile.", "amp."):
        if host.startswith(prefix) and host.count(".") >= 2:
            return host[len(prefix):]
    return host


PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(targets(), st.sampled_from(WRAPPER_PARAMS), st.sampled_from(["/go", "/url", "/l.php", "/redirect", "/", "/link"]),
       st.one_of(st.builds(lambda label, suffix: f"{label}.{suffix}", LABEL, st.sampled_from(LOOKALIKE_SUFFIXES)),
                 st.builds(lambda label, suffix: f"google.{label}.{suffix}", LABEL, st.sampled_from(LOOKALIKE_SUFFIXES)),
                 st.builds(lambda domain, suffix: f"www.{domain}.{suffix}",
                           st.sampled_from(sorted(GOOGLE_DOMAINS | {"facebook.com", "l.facebook.com"})),
                           st.sampled_from(LOOKALIKE_SUFFIXES))))
def test_a_link_on_any_other_host_keeps_its_own_host(target, param, path, host):
    """A redirect-shaped link on a host that is not a known service (look-alikes of Google and
    Facebook included) is that host's link: its canonical URL, outlet and item stay its own."""
    link = f"https://{host}{path}?{param}={quote(target, safe='')}"
    canonical = canonical_url(link)
    assert urlsplit(canonical).hostname == _host_without_prefix(host)
    assert outlet_of(link) == registrable_domain(host)
    assert canonical_outlet(canonical) == registrable_domain(_host_without_prefix(host))
    assert item_id(canonical) != item_id(canonical_url(target))
    assert links_directly(link, canonical)


SERVICE_LINKS = [
    *(f"https://www.{domain}/url?q={{}}&sa=D" for domain in sorted(GOOGLE_DOMAINS)[:40]),
    "https://www.google.com/url?url={}", "https://news.google.com/news/url?sa=t&url={}",
    "https://l.facebook.com/l.php?u={}&h=AT0", "https://lm.facebook.com/l.php?u={}",
    "https://l.instagram.com/?u={}&e=1", "https://out.reddit.com/t3_abc?url={}&token=x",
    "https://www.linkedin.com/redir/redirect?url={}", "https://www.youtube.com/redirect?q={}&v=1",
    "https://vk.com/away.php?to={}", "https://slack-redir.net/link?url={}", "https://duckduckgo.com/l/?uddg={}",
]


@PROPERTY
@given(targets(), st.sampled_from(SERVICE_LINKS), st.booleans())
def test_a_known_service_link_is_its_target(target, template, twice):
    """A known service's link (encoded once or twice) has its target's canonical URL and outlet, and
    is not a direct link to it; the canonical URL is a fixed point."""
    encoded = quote(target, safe="")
    link = template.format(quote(encoded, safe="") if twice else encoded)
    canonical = canonical_url(link)
    assert canonical == canonical_url(target)
    assert canonical_url(canonical) == canonical
    assert outlet_of(link) == outlet_of(target) == canonical_outlet(canonical)
    assert not links_directly(link, canonical) and links_directly(target, canonical)
    assert {service.name for service in REDIRECT_SERVICES} >= {"Google search", "Facebook link shim"}


@PROPERTY
@given(st.sampled_from(TARGET_HOSTS + ["evil.example", "google.evil", "www.google.com", "l.facebook.com"]),
       st.lists(SEGMENT, max_size=4), st.sampled_from(["", "?url=https%3A%2F%2Fbbc.co.uk%2Fx", "?q=1", "?u=x&v=2"]),
       st.sampled_from(["http", "https"]), st.sampled_from(["", "www.", "m."]))
def test_canonical_url_is_idempotent_and_names_the_link_host(host, segments, query, scheme, prefix):
    if host.startswith(("www.", "m.")):
        prefix = ""  # `www.www.` is folded one prefix at a time
    link = f"{scheme}://{prefix}{host}/{'/'.join(segments)}{query}"
    canonical = canonical_url(link)
    assert canonical_url(canonical) == canonical
    assert canonical.startswith("https://")
    if links_directly(link, canonical):
        assert canonical_outlet(canonical) == registrable_domain(_host_without_prefix(host))
