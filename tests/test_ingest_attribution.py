"""Which host and outlet an item belongs to: links read as a browser reads them (the WHATWG URL
Standard), userinfo refused, aggregator links attributed to their publisher, and the publisher's
own feed keeping its item. Unit checks on the pure functions, property tests on hostile links, and
the real ingest path (feeds served on 127.0.0.1, the fetcher, the parser workers, PostgreSQL)."""

from __future__ import annotations

import os
import string
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import ada_url
import pytest
from feedserver import FAST, FeedServer, rss
from hypothesis import HealthCheck, given, settings, strategies as st

from newsdedup_dagster.ingest.canonical_url import (
    LinkRefused,
    browser_url,
    canonical_url,
    google_news_target,
    outlet_of,
    registrable_domain,
)
from newsdedup_dagster.ingest.feed_parse import parse_feed
from newsdedup_dagster.ingest.sources import Source
from newsdedup_dagster.ingest.store import ingest_partition

H = datetime(2026, 11, 2, 10, tzinfo=UTC)
FETCH = replace(FAST, total_timeout=30.0, read_timeout=10.0)
REPO = Path(__file__).resolve().parent.parent
REUTERS_PATH = "/world/europe/italy-s-mount-etna-erupts-ash-cloud-shuts-catania-airport-2026-11-02/"
# The sample day's Google News link to that Reuters article (newsdedup_dagster/sample_data/feeds/gnews-en.xml).
GNEWS_REUTERS = ("https://news.google.com/rss/articles/CBMiamh0dHBzOi8vd3d3LnJldXRlcnMuY29tL3dvcmxkL2V1cm9wZS9pdGF"
                 "seS1zLW1vdW50LWV0bmEtZXJ1cHRzLWFzaC1jbG91ZC1zaHV0cy1jYXRhbmlhLWFpcnBvcnQtMjAyNi0xMS0wMi8?oc=5")


# ------------------------------------------------------------------ pure functions
def test_backslash_ends_the_host_as_in_a_browser():
    link = "https://evil.example\\@www.reuters.com" + REUTERS_PATH
    href = browser_url(link)
    assert ada_url.URL(href).hostname == "evil.example"
    assert canonical_url(link).startswith("https://evil.example/")
    assert outlet_of(href) == "evil.example"


@pytest.mark.parametrize("link", [
    "https://evil.example@www.reuters.com/world/x",
    "https://user:pass@www.reuters.com/world/x",
    "https://www.reuters.com%2F@evil.example/x",
    "HTTPS://www.reuters.com:443@evil.example/x",
    "https://www.reuters.com%40evil.example:pw@evil.example/",
])
def test_userinfo_is_refused(link):
    parsed = ada_url.URL(link)
    assert parsed.username or parsed.password  # the premise: a browser sees userinfo here
    with pytest.raises(LinkRefused):
        browser_url(link)


@pytest.mark.parametrize("link", ["javascript:alert(1)", "data:text/html,x", "ftp://a.example/x", "https://",
                                  "https://exa mple.com/", "http://[::1/"])
def test_not_http_links_are_refused(link):
    with pytest.raises(LinkRefused):
        browser_url(link)


def test_a_wrapped_target_with_userinfo_is_not_unwrapped():
    wrapped = "https://l.facebook.com/l.php?u=https%3A%2F%2Fevil.example%40www.reuters.com%2Fworld%2Fx"
    assert canonical_url(wrapped).startswith("https://l.facebook.com/l.php?")
    plain = "https://l.facebook.com/l.php?u=https%3A%2F%2Fwww.reuters.com%2Fworld%2Fx"
    assert canonical_url(plain) == "https://reuters.com/world/x"


def test_empty_userinfo_and_backslashes_leave_the_host_a_browser_shows():
    assert browser_url("https://:@www.reuters.com/world/x") == "https://www.reuters.com/world/x"
    assert ada_url.URL(browser_url("http://reuters.com\\x:y@evil.example/")).hostname == "reuters.com"


def test_relative_links_resolve_against_the_feed():
    assert browser_url("/a/b?c#d", "https://www.example.org/feed/") == "https://www.example.org/a/b?c#d"
    assert browser_url("\\\\evil.example/x", "https://www.example.org/feed/") == "https://evil.example/x"


@pytest.mark.parametrize(("host", "outlet"), [
    ("www.bbc.co.uk", "bbc.co.uk"), ("feeds.bbci.co.uk", "bbci.co.uk"), ("news.google.com", "google.com"),
    ("www.reuters.com", "reuters.com"), ("someone.github.io", "someone.github.io"), ("127.0.0.1", "127.0.0.1"),
    ("[::1]", "[::1]"), ("intranet", "intranet"), ("xn--bcher-kva.example", "xn--bcher-kva.example"),
])
def test_registrable_domain(host, outlet):
    assert registrable_domain(host) == outlet


def test_google_news_article_links_resolve_to_their_publisher():
    assert google_news_target(GNEWS_REUTERS) == "https://www.reuters.com" + REUTERS_PATH
    assert outlet_of(GNEWS_REUTERS) == "reuters.com"
    # Opaque ids (and anything that is not a CBMi id on news.google.com) stay with Google News.
    assert outlet_of("https://news.google.com/rss/articles/AU_yqLPx0v9?oc=5") == "google.com"
    assert google_news_target("https://evil.example/rss/articles/" + GNEWS_REUTERS.split("/articles/")[1]) is None
    assert outlet_of("https://news.google.com/rss/articles/CBMi!!!") == "google.com"


HOSTS = ["www.reuters.com", "evil.example", "bbc.co.uk", "m.example.org", "127.0.0.1", "[::1]", "xn--bcher-kva.de"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["http", "https", "HTTPS", "hTtP"]), st.sampled_from(HOSTS), st.sampled_from(HOSTS),
       st.text(alphabet=string.ascii_letters + string.digits + "\\@:/.%#-_~é ", max_size=30))
def test_item_host_is_the_host_a_browser_opens(scheme, host_a, host_b, junk):
    """Whatever a hostile link mixes (backslashes, '@', ports, percent-encoding), an accepted link's
    canonical key and outlet name the host the WHATWG parser opens, and a link with userinfo is refused."""
    link = f"{scheme}://{host_a}{junk}@{host_b}/path"
    try:
        opened = ada_url.URL(link)
    except ValueError:
        with pytest.raises(LinkRefused):
            browser_url(link)
        return
    if opened.username or opened.password:
        with pytest.raises(LinkRefused):
            browser_url(link)
        return
    href = browser_url(link)
    host = opened.hostname.rstrip(".")  # "reuters.com." is the fully qualified "reuters.com"
    canonical_host = ada_url.URL(canonical_url(href)).hostname
    assert canonical_host in (host, host.removeprefix("www.").removeprefix("m."))
    assert outlet_of(href) == registrable_domain(host)


def test_public_suffix_list_is_never_fetched(tmp_path):
    """Outlets come from the suffix list bundled with tldextract: with every socket refused and an
    empty cache directory, outlets still resolve and nothing is written."""
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network used')\n"
        "socket.socket.connect = refuse\nsocket.create_connection = refuse\nsocket.getaddrinfo = refuse\n"
        "from newsdedup_dagster.ingest.canonical_url import outlet_of\n"
        "print(outlet_of('https://www.bbc.co.uk/news/x'), outlet_of('https://a.b.c.k12.ak.us/'))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "TLDEXTRACT_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["bbc.co.uk", "c.k12.ak.us"]
    assert not (tmp_path / "cache").exists()


def test_parse_refuses_userinfo_links_and_keeps_the_entry():
    body = rss([
        {"title": "Hostile one", "link": "https://evil.example@www.reuters.com/world/x", "guid": "g1"},
        {"title": "Hostile two", "link": "https://evil.example\\@www.reuters.com/world/y", "guid": "g2"},
        {"title": "Plain", "link": "https://www.bbc.co.uk/news/z", "guid": "g3"},
    ])
    result = parse_feed(body, source_id="bbc", fetched_at=H)
    by_guid = {item.guid: item for item in result.items}
    assert by_guid["g1"].url is None and by_guid["g1"].canonical_url.startswith("urn:newsdedup:bbc:")
    assert by_guid["g1"].outlet is None
    assert by_guid["g2"].url == "https://evil.example/@www.reuters.com/world/y" and by_guid["g2"].outlet == "evil.example"
    assert by_guid["g3"].outlet == "bbc.co.uk"
    assert result.repairs.get("links_dropped") == 1


# ------------------------------------------------------------------ the real ingest path
def _item(conn, url_like: str):
    return conn.execute("SELECT title, url, source_id, outlet FROM items WHERE canonical_url LIKE %s",
                        (url_like,)).fetchall()


def test_hostile_links_cannot_take_over_another_outlets_item(conn, clean_db):
    """A feed listing Reuters' article under its own title, through userinfo, a backslash and the
    plain URL, in the same hour as Reuters' own feed: Reuters keeps its item (title, link, source),
    the hostile entries are attributed to the host a browser opens, and Google News' copy of the
    article is attributed to Reuters."""
    real = "https://www.reuters.com" + REUTERS_PATH
    hostile = rss([
        {"title": "TAKEOVER via userinfo", "link": "https://evil.example@www.reuters.com" + REUTERS_PATH, "guid": "h1"},
        {"title": "TAKEOVER via backslash", "link": "https://evil.example\\@www.reuters.com" + REUTERS_PATH,
         "guid": "h2"},
        {"title": "TAKEOVER via the same link", "link": real, "guid": "h3"},
    ], link="https://www.bbc.co.uk/")
    reuters = rss([{"title": "Italy's Mount Etna erupts, ash cloud shuts Catania airport", "link": real,
                    "guid": real}], link="https://www.reuters.com/")
    gnews = rss([{"title": "Italy's Mount Etna erupts - Reuters", "link": GNEWS_REUTERS.replace("&", "&amp;"),
                  "guid": "CBMi-etna"}], link="https://news.google.com/")
    with FeedServer() as server:
        server.add("/bbc.xml", hostile)
        server.add("/reuters.xml", reuters)
        server.add("/gnews.xml", gnews)
        # The hostile feed sorts first: before the fix, the first source seen took the item.
        # Every feed is served from 127.0.0.1: the sources file says which outlet each feed is.
        sources = [
            Source(id="a-bbc", name="BBC", feed_url=server.url("/bbc.xml"), language="en", country="GB",
                   outlet="bbc.co.uk"),
            Source(id="reuters", name="Reuters", feed_url=server.url("/reuters.xml"), language="en", country="GB",
                   outlet="reuters.com"),
            Source(id="gnews", name="Google News", feed_url=server.url("/gnews.xml"), language="en", country="GB",
                   syndicator=True, outlet="google.com"),
        ]
        report = ingest_partition(conn, sources, H, mode="live", fetch_config=FETCH)
    rows = {row.source_id: row for row in report.rows}
    assert all(row.status == "ok" for row in rows.values()), rows
    kept = _item(conn, "https://reuters.com/world/europe/italy-s-mount-etna%")
    assert kept == [("Italy's Mount Etna erupts, ash cloud shuts Catania airport", real, "reuters", "reuters.com")]
    # Both feeds list the article: both are credited in item_sources, under one item.
    linked = conn.execute("SELECT s.source_id FROM item_sources s JOIN items i ON i.id = s.item_id "
                          "WHERE i.canonical_url LIKE 'https://reuters.com/world/europe/italy%' ORDER BY 1").fetchall()
    assert linked == [("a-bbc",), ("reuters",)]
    backslash = _item(conn, "https://evil.example/@www.reuters.com%")
    assert [(title, outlet) for title, _, _, outlet in backslash] == [("TAKEOVER via backslash", "evil.example")]
    userinfo = conn.execute("SELECT url, outlet FROM items WHERE title = 'TAKEOVER via userinfo'").fetchone()
    assert userinfo[0].startswith("urn:newsdedup:a-bbc:") and userinfo[1] is None
    assert conn.execute("SELECT outlet FROM items WHERE source_id = 'gnews'").fetchall() == [("reuters.com",)]
