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
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import ada_url
import pytest
from feedserver import FAST, FeedServer, rss
from hypothesis import HealthCheck, given, settings, strategies as st

from newsdedup_dagster.shared.http.canonical_url import (
    LinkRefused,
    browser_url,
    canonical_outlet,
    canonical_url,
    google_news_target,
    links_directly,
    outlet_of,
    registrable_domain,
)
from newsdedup_dagster.shared.sources import Source
from newsdedup_dagster.stages.ingest.feed_parse import parse_feed
from newsdedup_dagster.stages.ingest.store import ingest_partition

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
        "from newsdedup_dagster.shared.http.canonical_url import outlet_of\n"
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
                   outlet="bbc.co.uk", allow_private=True),
            Source(id="reuters", name="Reuters", feed_url=server.url("/reuters.xml"), language="en", country="GB",
                   outlet="reuters.com", allow_private=True),
            Source(id="gnews", name="Google News", feed_url=server.url("/gnews.xml"), language="en", country="GB",
                   syndicator=True, outlet="google.com", allow_private=True),
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


# ------------------------------------------------------------------ redirect wrappers, the real path
REUTERS = "https://www.reuters.com" + REUTERS_PATH
REUTERS_TITLE = "Italy's Mount Etna erupts, ash cloud shuts Catania airport"
# A hostile feed's links to Reuters' article, each under its own title.
WRAPPED = {
    "TAKEOVER via an unknown redirect": "https://evil.example/go?url=" + quote(REUTERS, safe=""),
    "TAKEOVER via a Google look-alike": "https://google.evil/url?q=" + quote(REUTERS, safe=""),
    "TAKEOVER via Facebook's link shim": "https://l.facebook.com/l.php?u=" + quote(REUTERS, safe="") + "&h=AT0",
    "TAKEOVER via Google search": "https://www.google.com/url?q=" + quote(REUTERS, safe="") + "&sa=D",
}


def test_only_known_redirect_services_are_unwrapped():
    for title, link in WRAPPED.items():
        known = "Facebook" in title or "Google search" in title
        assert (canonical_url(link) == canonical_url(REUTERS)) is known, title
        assert (outlet_of(link) == "reuters.com") is known, title
        assert not links_directly(link, canonical_url(link)) if known else links_directly(link, canonical_url(link))
    assert canonical_outlet(canonical_url(WRAPPED["TAKEOVER via a Google look-alike"])) == "google.evil"


def _hostile_feed() -> bytes:
    entries = [{"title": title, "link": link.replace("&", "&amp;"), "guid": f"w{i}"}
               for i, (title, link) in enumerate(WRAPPED.items())]
    return rss([*entries, {"title": "TAKEOVER via the same link", "link": REUTERS, "guid": "direct"}],
               link="https://evil.example/")


def _reuters_feed() -> bytes:
    return rss([{"title": REUTERS_TITLE, "link": REUTERS, "guid": REUTERS}], link="https://www.reuters.com/")


def _sources(server, hostile_id: str) -> list[Source]:
    # Both feeds are served from 127.0.0.1: the sources file says which outlet each feed is.
    return [Source(id=hostile_id, name="Hostile", feed_url=server.url("/hostile.xml"), language="en", country="GB",
                   outlet="evil.example", allow_private=True),
            Source(id="reuters", name="Reuters", feed_url=server.url("/reuters.xml"), language="en", country="GB",
                   outlet="reuters.com", allow_private=True)]


def _reuters_item(conn):
    return conn.execute("SELECT title, url, source_id, outlet FROM items WHERE canonical_url = %s",
                        (canonical_url(REUTERS),)).fetchall()


@pytest.mark.parametrize("hostile_id", ["a-hostile", "z-hostile"])  # sorts before / after the publisher
@pytest.mark.parametrize("arrives_last", ["hostile", "reuters"])
def test_a_wrapper_link_cannot_take_over_the_publishers_item(conn, clean_db, hostile_id, arrives_last):
    """A hostile feed (its own outlet evil.example) links Reuters' article through an unknown
    redirect, a Google look-alike, Facebook's link shim, Google search and the plain link, in the
    same hour as Reuters' own feed, in either arrival and source order: Reuters keeps its item
    (title, link, source, outlet); the known services' links and the plain link join that item as
    the hostile source's listing; the others are the hostile host's own items."""
    with FeedServer() as server:
        server.add("/hostile.xml", _hostile_feed(), delay=0.6 if arrives_last == "hostile" else 0.0)
        server.add("/reuters.xml", _reuters_feed(), delay=0.6 if arrives_last == "reuters" else 0.0)
        report = ingest_partition(conn, _sources(server, hostile_id), H, mode="live", fetch_config=FETCH)
    assert all(row.status == "ok" for row in report.rows), report.rows
    assert _reuters_item(conn) == [(REUTERS_TITLE, REUTERS, "reuters", "reuters.com")]
    linked = conn.execute("SELECT s.source_id, s.url FROM item_sources s JOIN items i ON i.id = s.item_id "
                          "WHERE i.canonical_url = %s ORDER BY 1", (canonical_url(REUTERS),)).fetchall()
    assert [source_id for source_id, _ in linked] == sorted([hostile_id, "reuters"])
    own = dict(conn.execute("SELECT title, outlet FROM items WHERE source_id = %s", (hostile_id,)).fetchall())
    assert own == {"TAKEOVER via an unknown redirect": "evil.example",
                   "TAKEOVER via a Google look-alike": "google.evil"}
    assert report.new_items == 3


def test_the_publishers_entry_takes_its_item_back_when_the_hour_is_rerun(conn, clean_db):
    """Reuters' feed fails in hour H while the hostile feed's Facebook-wrapped link is stored: the
    item has the hostile title. The hour's retry fetches Reuters (the hostile feed is re-parsed from
    its archive): Reuters' entry replaces the row. In the next hour the hostile feed cannot take the
    item back (an item stored by an earlier hour is never rewritten)."""
    shim = {"title": "TAKEOVER via Facebook's link shim",
            "link": WRAPPED["TAKEOVER via Facebook's link shim"].replace("&", "&amp;"), "guid": "shim"}
    with FeedServer() as server:
        server.add("/hostile.xml", rss([shim], link="https://evil.example/"))
        server.add("/reuters.xml", b"down for maintenance", status=404, content_type="text/plain")
        sources = _sources(server, "a-hostile")
        first = ingest_partition(conn, sources, H, mode="live", fetch_config=FETCH)
        assert {row.source_id: row.status for row in first.rows} == {"a-hostile": "ok", "reuters": "error"}
        assert _reuters_item(conn) == [(shim["title"], WRAPPED[shim["title"]], "a-hostile", "reuters.com")]

        server.add("/reuters.xml", _reuters_feed())
        rerun = ingest_partition(conn, sources, H, mode="live", fetch_config=FETCH)
        assert {row.source_id: row.origin for row in rerun.rows} == {"a-hostile": "archive", "reuters": "fetched"}
        assert server.count("/hostile.xml") == 1
        assert _reuters_item(conn) == [(REUTERS_TITLE, REUTERS, "reuters", "reuters.com")]

        later = ingest_partition(conn, sources, H + timedelta(hours=1), mode="live", fetch_config=FETCH)
        assert all(row.status == "ok" for row in later.rows)
    assert _reuters_item(conn) == [(REUTERS_TITLE, REUTERS, "reuters", "reuters.com")]


@pytest.mark.parametrize("page_id", ["a-facebook-page", "z-facebook-page"])
def test_a_direct_link_keeps_the_item_over_a_wrapper_on_its_feeds_own_outlet(conn, clean_db, page_id):
    """A Facebook page's feed (its outlet facebook.com) links Reuters' article through Facebook's
    link shim; an aggregator lists the plain link; Reuters' feed is not in this hour. The shim's
    host is the page's own outlet but the article's is not: the aggregator's direct link keeps
    the item, in either source order, and the page's listing joins it."""
    aggregator = rss([{"title": "Etna erupts (aggregator)", "link": REUTERS, "guid": "agg"}],
                     link="https://news.example/")
    page = rss([{"title": "TAKEOVER via the page's own shim",
                 "link": WRAPPED["TAKEOVER via Facebook's link shim"].replace("&", "&amp;"), "guid": "fb"}],
               link="https://www.facebook.com/somepage")
    with FeedServer() as server:
        server.add("/page.xml", page)
        server.add("/aggregator.xml", aggregator)
        sources = [Source(id=page_id, name="Page", feed_url=server.url("/page.xml"), language="en", country="GB",
                          outlet="facebook.com", allow_private=True),
                   Source(id="m-aggregator", name="Agg", feed_url=server.url("/aggregator.xml"), language="en",
                          country="GB", outlet="news.example", allow_private=True)]
        report = ingest_partition(conn, sources, H, mode="live", fetch_config=FETCH)
    assert all(row.status == "ok" for row in report.rows), report.rows
    assert _reuters_item(conn) == [("Etna erupts (aggregator)", REUTERS, "m-aggregator", "reuters.com")]
    assert conn.execute("SELECT count(*) FROM item_sources").fetchone()[0] == 2


def test_the_publisher_keeps_its_item_when_the_hour_is_stored_source_by_source(conn, clean_db):
    """One source's rows are refused by PostgreSQL (a CHECK constraint added for the test), so the
    hour is stored source by source: the hostile feed's shim link is stored first, and Reuters'
    entry, stored later, still takes the row; the refused source fails alone."""
    conn.execute("ALTER TABLE items ADD CONSTRAINT test_refuse_poison CHECK (title NOT LIKE '%%POISON%%')")
    conn.commit()
    shim = {"title": "TAKEOVER via Facebook's link shim",
            "link": WRAPPED["TAKEOVER via Facebook's link shim"].replace("&", "&amp;"), "guid": "shim"}
    try:
        with FeedServer() as server:
            server.add("/hostile.xml", rss([shim], link="https://evil.example/"))
            server.add("/reuters.xml", _reuters_feed())
            server.add("/poison.xml", rss([{"title": "POISON", "link": "https://poison.example/1", "guid": "p"}]))
            sources = [*_sources(server, "a-hostile"),
                       Source(id="b-poison", name="P", feed_url=server.url("/poison.xml"), language="en",
                              country="GB", allow_private=True)]
            report = ingest_partition(conn, sources, H, mode="live", fetch_config=FETCH)
    finally:
        conn.rollback()
        conn.execute("ALTER TABLE items DROP CONSTRAINT IF EXISTS test_refuse_poison")
        conn.commit()
    rows = {row.source_id: row for row in report.rows}
    assert rows["b-poison"].error.startswith("store failed: CheckViolation") and rows["b-poison"].items == 0
    assert rows["reuters"].error is None and rows["a-hostile"].error is None
    assert _reuters_item(conn) == [(REUTERS_TITLE, REUTERS, "reuters", "reuters.com")]
    assert rows["reuters"].new_items == 1 and rows["a-hostile"].new_items == 0  # the row names Reuters
