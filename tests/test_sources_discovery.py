"""A feed found from a site's address (newsdedup_dagster/sources/discovery.py), `sources add` and
`sources check`, against a real HTTP server on 127.0.0.1: declared feeds, common paths, robots.txt,
the address checks, and the proposals of language and country."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from feedserver import FAST, FeedServer, rss, rss_entries
from hypothesis import given, settings, strategies as st

from newsdedup_dagster import cli
from newsdedup_dagster.shared.http.fetch import FetchConfig, run_sync
from newsdedup_dagster.shared.sources import load_sources
from newsdedup_dagster.sources.discovery import discover, feed_links, page_language_tag, region_of
from newsdedup_dagster.sources.opml import feed_url_problem
from newsdedup_dagster.stages.ingest.parse_types import ParseConfig

FRENCH_FEED = rss(rss_entries(4, prefix="fr", site="https://actu.example.fr"), title="Actu — À la une",
                  language="fr-FR")
HTML = {"Content-Type": "text/html; charset=utf-8"}


def page(head: str = "", lang: str = "fr-FR") -> bytes:
    return (f'<!doctype html><html lang="{lang}"><head><title>Actu</title>{head}</head>'
            "<body><h1>Actu</h1><p>Les nouvelles.</p></body></html>").encode()


def found(url: str, *, allow_private: bool = True, config: FetchConfig = FAST):
    return run_sync(lambda: discover(url, config, ParseConfig(), allow_private=allow_private,
                                     now=datetime(2026, 12, 6, tzinfo=UTC)))


def test_a_declared_feed_is_found_with_language_and_country_proposed():
    with FeedServer() as server:
        server.add("/", page('<link rel="alternate" type="application/rss+xml" title="À la une" href="/une.xml">'),
                   headers=HTML)
        server.add("/une.xml", FRENCH_FEED, headers={"Content-Type": "application/rss+xml"})
        result = found(server.url("/"))
        assert result.found and result.how == "declared"
        assert result.feed_url == server.url("/une.xml")
        # The feed says fr-FR; 127.0.0.1 has no country-code domain, so the region of the tag counts.
        assert (result.language, result.country, result.items, result.title) == ("fr", "FR", 4, "Actu — À la une")
        # robots.txt read once for the origin, before the page.
        assert server.count("/robots.txt") == 1
        assert server.count("/feed") == 0   # common paths only when none is declared


def test_the_first_declared_feed_that_parses_wins_and_every_step_is_reported():
    with FeedServer() as server:
        server.add("/", page('<link rel="alternate" type="application/atom+xml" href="/gone.xml">'
                             '<link rel="alternate" type="application/rss+xml" href="javascript:alert(1)">'
                             '<link rel="alternate" type="text/html" href="/other.html">'
                             '<link rel="alternate stylesheet" type="application/rss+xml" href="/une.xml">'),
                   headers=HTML)
        server.add("/une.xml", FRENCH_FEED)
        result = found(server.url("/"))
        assert result.feed_url == server.url("/une.xml")
        assert any(step.startswith(server.url("/gone.xml") + ": HTTP 404") for step in result.tried)
        assert any("'javascript:' address refused" in step for step in result.tried)
        assert server.count("/other.html") == 0


def test_common_paths_are_tried_only_when_the_page_declares_none():
    with FeedServer() as server:
        server.add("/", page(), headers=HTML)
        server.add("/rss.xml", FRENCH_FEED)
        result = found(server.url("/"))
        assert result.how == "common path" and result.feed_url == server.url("/rss.xml")
        assert server.count("/feed") == 1 and server.count("/rss") == 1 and server.count("/feed.xml") == 0


def test_robots_txt_that_disallows_the_site_stops_discovery_before_the_page():
    with FeedServer() as server:
        server.add("/robots.txt", b"User-agent: *\nDisallow: /\n", headers={"Content-Type": "text/plain"})
        server.add("/", page('<link rel="alternate" type="application/rss+xml" href="/une.xml">'), headers=HTML)
        result = found(server.url("/"))
        assert not result.found and "robots.txt" in result.error and "disallows" in result.error
        assert server.count("/") == 0 and server.count("/une.xml") == 0


def test_robots_txt_disallowing_a_common_path_skips_it():
    with FeedServer() as server:
        server.add("/robots.txt", b"User-agent: newsdedup\nDisallow: /feed\n")
        server.add("/", page(), headers=HTML)
        server.add("/feed", FRENCH_FEED)
        server.add("/rss", FRENCH_FEED)
        result = found(server.url("/"))
        assert result.feed_url == server.url("/rss") and server.count("/feed") == 0


def test_a_private_address_is_refused_unless_the_source_may_reach_it():
    with FeedServer() as server:
        server.add("/une.xml", FRENCH_FEED)
        result = found(server.url("/une.xml"), allow_private=False)
        assert not result.found and "loopback" in result.error
        assert server.requests_for("/une.xml") == [] and server.count("/robots.txt") == 0


def test_a_feed_address_is_the_feed():
    with FeedServer() as server:
        server.add("/une.xml", FRENCH_FEED)
        result = found(server.url("/une.xml"))
        assert result.how == "given" and result.feed_url == server.url("/une.xml")


@pytest.mark.parametrize("url", ["javascript:alert(1)", "file:///etc/passwd", "ftp://x.example/feed"])
def test_a_non_http_address_is_refused_before_any_request(url):
    result = found(url)
    assert not result.found and "refused" in result.error


def test_a_page_with_neither_feed_nor_common_path_says_so():
    with FeedServer() as server:
        server.add("/", page(), headers=HTML)
        result = found(server.url("/"))
        assert not result.found and "declares no feed and no common path has one" in result.error


def test_page_parsing_helpers_on_hostile_pages():
    assert feed_links(b"", "https://a.example/") == []
    assert feed_links(b"<link rel=alternate type=application/rss+xml href=/f.xml>" * 3, "https://a.example/x/") == [
        feed_links(b"<link rel=alternate type=application/rss+xml href=/f.xml>", "https://a.example/x/")[0]]
    links = feed_links(b'<html><head><base href="https://cdn.example/"><link rel="Alternate" '
                       b'type="application/atom+xml; charset=utf-8" href="atom"></head></html>', "https://a.example/")
    assert [link.url for link in links] == ["https://cdn.example/atom"]
    assert feed_links(b"<!--" * 100_000, "https://a.example/") == []
    assert page_language_tag(b'<html dir="rtl" lang="ar-EG">') == "ar-EG" and region_of("ar-EG") == "EG"
    assert region_of("en") is None and region_of("zh-Hant-TW") == "TW"


_markup = st.lists(st.one_of(
    st.sampled_from([b"<html>", b"<head>", b"<base href=\"javascript:x\">", b"<base href=\"http://[::1\">",
                     b"<link rel=alternate type=application/rss+xml href=", b"<link rel=\"alternate\" "
                     b"type=\"application/atom+xml\" href=\"", b"\"", b">", b"<!--", b"<meta charset=x-klingon>",
                     b"http://[::1", b"//other.example/f", b"javascript:alert(1)", b"\xff\xfe", b"\x00"]),
    st.binary(max_size=20)), max_size=30).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(_markup)
def test_any_page_gives_absolute_http_links_or_ones_discovery_refuses(page):
    """Against a http(s) base every link is absolute http(s), or (a `javascript:` href) one that
    discovery refuses before any request; nothing raises."""
    for link in feed_links(page, "https://site.example/section/"):
        assert link.url.startswith(("https://", "http://")) or feed_url_problem(link.url)
    page_language_tag(page)


# ------------------------------------------------------------------ the commands

@pytest.fixture()
def sources_file(tmp_path, monkeypatch):
    # The server is on loopback: only a source that says allow_private reaches it, and only because
    # the deployment allows the network.
    monkeypatch.setenv("NEWSDEDUP_FETCH_ALLOW_PRIVATE", "127.0.0.0/8")
    path = tmp_path / "sources.yaml"
    path.write_text("# hand-written\nsources:\n  - {id: bbc, name: BBC, feed_url: 'https://feeds.bbci.co.uk/news/"
                    "rss.xml', language: en, country: GB}\n", encoding="utf-8")
    return path


def test_sources_add_finds_the_feed_of_a_site_and_writes_its_entry(sources_file, capsys):
    with FeedServer() as server:
        server.add("/", page('<link rel="alternate" type="application/rss+xml" href="/une.xml">'), headers=HTML)
        server.add("/une.xml", FRENCH_FEED)
        code = cli.main(["sources", "add", server.url("/"), "--sources", str(sources_file), "--allow-private",
                         "--category", "Europe"])
        out = capsys.readouterr().out
        assert code == 0, out
        assert "proposed: language fr, country FR" in out
        text = sources_file.read_text(encoding="utf-8")
        assert text.startswith("# hand-written\nsources:\n  - {id: bbc,")
        added = load_sources(sources_file)[-1]
        assert (added.id, added.feed_url, added.language, added.country, added.category, added.allow_private) == \
               ("actu-a-la-une-fr", server.url("/une.xml"), "fr", "FR", "Europe", True)
        # The same feed again, by the feed's own address: refused as a duplicate, nothing written.
        assert cli.main(["sources", "add", server.url("/une.xml"), "--sources", str(sources_file),
                         "--allow-private"]) == 1
        assert "is already source 'actu-a-la-une-fr'" in capsys.readouterr().out
        assert sources_file.read_text(encoding="utf-8") == text


def test_sources_add_flags_override_the_proposals_and_dry_run_writes_nothing(sources_file, capsys):
    with FeedServer() as server:
        server.add("/une.xml", FRENCH_FEED)
        before = sources_file.read_bytes()
        assert cli.main(["sources", "add", server.url("/une.xml"), "--sources", str(sources_file), "--allow-private",
                         "--country", "BE", "--language", "nl", "--id", "actu-be", "--dry-run"]) == 0
        out = capsys.readouterr().out
        assert "would add {'id': 'actu-be'" in out and "'language': 'nl', 'country': 'BE'" in out
        assert sources_file.read_bytes() == before


def test_sources_add_without_allow_private_reaches_public_addresses_only(sources_file, capsys):
    with FeedServer() as server:
        server.add("/une.xml", FRENCH_FEED)
        before = sources_file.read_bytes()
        assert cli.main(["sources", "add", server.url("/une.xml"), "--sources", str(sources_file)]) == 1
        assert "no feed added" in capsys.readouterr().out and server.requests_for("/une.xml") == []
        assert sources_file.read_bytes() == before


def test_sources_check_fetches_now_and_reports_each_source(sources_file, capsys):
    with FeedServer() as server:
        server.add("/good.xml", FRENCH_FEED)
        server.add("/broken.xml", b"oops", status=500)
        server.add("/page.xml", page(), headers=HTML)
        sources_file.write_text(
            "sources:\n"
            + "".join(f"  - {{id: {name}, name: {name}, feed_url: '{server.url(f'/{name}.xml')}', language: fr, "
                      "country: FR, allow_private: true}\n" for name in ("good", "broken", "page"))
            + "  - {id: paused, name: Paused, feed_url: 'https://paused.example/rss', language: fr, country: FR, enabled: false}\n",
            encoding="utf-8")
        assert cli.main(["sources", "check", "--sources", str(sources_file), "--json"]) == 1
        rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
        assert set(rows) == {"good", "broken", "page"}   # enabled sources only
        assert rows["good"]["ok"] and rows["good"]["items"] == 4
        assert not rows["broken"]["ok"] and rows["broken"]["error"].startswith("HTTP 500")
        assert not rows["page"]["ok"] and "not a feed" in rows["page"]["error"]
        assert cli.main(["sources", "check", "good", "--sources", str(sources_file)]) == 0
        assert "1 ok, 0 failed" in capsys.readouterr().out
        assert cli.main(["sources", "check", "nope", "--sources", str(sources_file)]) == 2
