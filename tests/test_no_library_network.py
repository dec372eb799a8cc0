"""No request leaves the process except through the fetcher: the libraries that read pages and feeds
(trafilatura, htmldate, feedparser, tldextract, py3langid) are handed trees, streams and text, never
a string they would read as a URL to download.

Hostile pages and feeds whose text is a URL pointing at a real server on 127.0.0.1 are extracted
and parsed while that server listens (it must see no request), and again, with the bundled sample
day, while every socket connect and name lookup in the process is refused and recorded (there
must be no attempt)."""

from __future__ import annotations

import importlib
import json
import socket
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import feedparser
import htmldate
import pytest
import tldextract
from feedserver import FeedServer, unused_port
from hypothesis import HealthCheck, given, settings, strategies as st

from newsdedup_dagster.shared.http.canonical_url import canonical_outlet, feed_outlet, outlet_of, registrable_domain
from newsdedup_dagster.shared.http.fetch import FetchResult
from newsdedup_dagster.shared.sources import load_sources
from newsdedup_dagster.stages.articles.extract import extract_page
from newsdedup_dagster.stages.articles.store import replay_page_name
from newsdedup_dagster.stages.ingest.feed_parse import parse_fetch_result

# The module, not the function of the same name the ingest package exports.
urls = importlib.import_module("newsdedup_dagster.shared.http.canonical_url")
SAMPLE = Path(__file__).resolve().parent.parent / "newsdedup_dagster" / "sample_data"
REASONS = {None, "not_html", "paywall", "too_large", "extraction_empty", "extraction_failed"}
FETCHED_AT = datetime(2026, 11, 2, 12, tzinfo=UTC)
# Tabs, never a space: htmldate reads a str that starts with "http" and has no space as a URL.
WORDS = "\t".join(["council", "budget", "vote", "approved", "Tuesday"] * 8)
HTML_TAIL = f"?<html>\t<body>\t<article>\t<p>{WORDS}</p></article></body></html>"


@contextmanager
def network_refused():
    """Every connect and name lookup in the process is recorded and fails as a refused connection
    would; yields the list of attempts."""
    attempts: list[str] = []

    def refuse(what: str, error: type[OSError]):
        def refused(*args, **kwargs):
            attempts.append(f"{what}{args}")
            raise error(f"{what}: no network in this test")
        return refused

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", refuse("connect", ConnectionRefusedError))
        patch.setattr(socket.socket, "connect_ex", refuse("connect_ex", ConnectionRefusedError))
        patch.setattr(socket, "create_connection", refuse("create_connection", ConnectionRefusedError))
        patch.setattr(socket, "getaddrinfo", refuse("getaddrinfo", socket.gaierror))
        yield attempts


def hostile_pages(base: str) -> dict[str, tuple[bytes, str | None]]:
    """Pages (body, Content-Type) whose text is, or points at, a URL on `base`."""
    secure = base.replace("http://", "https://", 1)
    local_name = base.replace("127.0.0.1", "localhost", 1)
    html = "text/html; charset=utf-8"
    article = f"<p>{' '.join(['The council approved the budget on Tuesday after a long debate.'] * 4)}</p>"
    references = (
        f'<!DOCTYPE html SYSTEM "{base}/dtd"><?xml-stylesheet href="{base}/xsl"?>'
        f'<html xmlns:xi="http://www.w3.org/2001/XInclude"><head><base href="{base}/base/">'
        f'<meta http-equiv="refresh" content="0; url={base}/refresh"><link rel="canonical" href="{base}/canonical">'
        f'<meta property="og:url" content="{base}/og"><link rel="stylesheet" href="{base}/css">'
        f'<script src="{base}/js"></script><link rel="alternate" type="application/rss+xml" href="{base}/feed">'
        f'</head><body><article><h1>{base}/headline</h1><p>{base}/first-paragraph</p>{article}'
        f'<img src="{base}/img"><iframe src="{base}/frame"></iframe><xi:include href="{base}/xinclude"/>'
        f'<a href="{base}/link">{base}/link</a><time datetime="{base}/time">{base}/date</time></article>'
        f'</body></html>')
    return {
        "url-then-html": (f"{base}/latest/meta-data/iam{HTML_TAIL}".encode(), html),
        "only-a-url": (f"{base}/latest/meta-data/iam".encode(), html),
        "url-then-words": (f"{base}/story.html\t{WORDS}".encode(), html),
        "https-url": (f"{secure}/latest/meta-data/iam{HTML_TAIL}".encode(), html),
        "local-name": (f"{local_name}/latest/meta-data/iam{HTML_TAIL}".encode(), html),
        "file-url": (f"file:///etc/passwd{HTML_TAIL}".encode(), html),
        "byte-order-mark": (f"\ufeff{base}/latest/meta-data/iam{HTML_TAIL}".encode(), html),
        "utf-16": (f"{base}/latest/meta-data/iam{HTML_TAIL}".encode("utf-16"), "text/html"),
        "declared-latin-1": (f"{base}/latest/meta-data/iam{HTML_TAIL}é".encode("latin-1"),
                             "text/html; charset=iso-8859-1"),
        "xhtml": (f"{base}/latest/meta-data/iam{HTML_TAIL}".encode(), "application/xhtml+xml"),
        "references": (references.encode(), html),
    }


def hostile_feeds(base: str) -> dict[str, bytes]:
    """Feed bodies that are a URL on `base`, or refer to it."""
    rss = (f'<?xml version="1.0"?><!DOCTYPE rss SYSTEM "{base}/dtd" [<!ENTITY ext SYSTEM "{base}/entity">]>'
           f'<rss version="2.0" xml:base="{base}/base/"><channel><title>&ext;</title><link>{base}/</link>'
           f'<item><title>{base}/title</title><link>{base}/item</link><guid>{base}/guid</guid>'
           f'<enclosure url="{base}/enclosure" type="audio/mpeg"/><description>{base}/description</description>'
           f'</item></channel></rss>')
    return {
        "only-a-url": f"{base}/feed.xml".encode(),
        "url-then-words": f"{base}/feed.xml\t{WORDS}".encode(),
        "https-url": f"{base.replace('http://', 'https://', 1)}/feed.xml".encode(),
        "file-url": b"file:///etc/passwd",
        "references": rss.encode(),
    }


def parse_feed_body(body: bytes, url: str):
    result = FetchResult(source_id="hostile", url=url, final_url=url, status="ok", http_status=200,
                         elapsed_ms=1, etag=None, last_modified=None, body=body,
                         content_type="application/rss+xml", headers={}, fetched_at=FETCHED_AT)
    return parse_fetch_result(result)


@pytest.fixture(scope="module")
def server():
    with FeedServer() as running:
        yield running


@pytest.mark.parametrize("name", sorted(hostile_pages("http://127.0.0.1:1")))
def test_a_page_that_is_a_url_makes_no_request(server, name):
    body, content_type = hostile_pages(server.base_url)[name]
    before = len(server.requests)
    result = extract_page(body, content_type, server.url("/article"))
    assert result.reason in REASONS
    assert server.requests[before:] == []


@pytest.mark.parametrize("name", sorted(hostile_feeds("http://127.0.0.1:1")))
def test_a_feed_that_is_a_url_makes_no_request(server, name):
    before = len(server.requests)
    parsed = parse_feed_body(hostile_feeds(server.base_url)[name], server.url("/feed.xml"))
    assert server.requests[before:] == []
    if name == "references":  # parsed as a feed, its links kept as text
        assert [item.url for item in parsed.items] == [server.url("/item")]


def test_hostile_pages_and_feeds_open_no_socket(server):
    with network_refused() as attempts:
        for name, (body, content_type) in hostile_pages(server.base_url).items():
            assert extract_page(body, content_type, server.url("/article")).reason in REASONS, name
            assert attempts == [], name
        for name, body in hostile_feeds(server.base_url).items():
            parse_feed_body(body, server.url("/feed.xml"))
            assert attempts == [], name
    assert server.requests == []


def test_the_sample_day_is_read_without_a_socket(monkeypatch):
    links = {replay_page_name(json.loads(line)["url"]): json.loads(line)["url"]
             for line in (SAMPLE / "gold.jsonl").read_text(encoding="utf-8").splitlines()}
    pages = sorted((SAMPLE / "pages").glob("*.html"))
    sources = load_sources(SAMPLE / "sources.yaml")
    # The suffix list loads on first use: make that use happen here (the cache holds only answers).
    monkeypatch.setattr(urls._SUFFIXES, "_extractor", None)
    urls._registrable_domain.cache_clear()
    with network_refused() as attempts:
        extracted = [extract_page(path.read_bytes(), "text/html; charset=utf-8", links[path.name]) for path in pages]
        items = []
        for source in sources:
            body = (SAMPLE / "feeds" / f"{source.id}.xml").read_bytes()
            result = FetchResult(source_id=source.id, url=source.feed_url, final_url=source.feed_url, status="ok",
                                 http_status=200, elapsed_ms=1, etag=None, last_modified=None, body=body,
                                 content_type="application/xml", headers={}, fetched_at=FETCHED_AT)
            items += parse_fetch_result(result, source).items
            feed_outlet(source.feed_url)
        outlets = {canonical_outlet(item.canonical_url) for item in items} | {outlet_of(item.url) for item in items}
    assert attempts == []
    assert len(pages) > 200 and sum(r.reason is None for r in extracted) > 200
    assert sum(r.published_at is not None for r in extracted) > 200
    assert len(items) > 200 and "bbc.co.uk" in outlets


def test_the_public_suffix_list_is_the_bundled_one(monkeypatch):
    monkeypatch.setattr(urls._SUFFIXES, "_extractor", None)
    urls._registrable_domain.cache_clear()
    with network_refused() as attempts:
        domains = [registrable_domain(host) for host in ("news.bbc.co.uk", "someone.blogspot.com", "a.b.example.jp")]
    assert attempts == []
    assert domains == ["bbc.co.uk", "someone.blogspot.com", "example.jp"]


@pytest.mark.parametrize("call", ["htmldate.find_date", "feedparser.parse", "tldextract.TLDExtract"])
def test_the_guard_sees_what_each_library_would_fetch(call):
    """The libraries' own clients go through the refused calls: the tests above can see a fetch."""
    url = f"http://127.0.0.1:{unused_port()}/x"
    with network_refused() as attempts:
        if call == "htmldate.find_date":
            with pytest.raises(ValueError, match="URL couldn't be processed"):
                htmldate.find_date(url)
        elif call == "feedparser.parse":
            feedparser.parse(url)
        else:
            tldextract.TLDExtract(suffix_list_urls=(url,), cache_dir=None)("news.bbc.co.uk")
    assert attempts


PORT = unused_port()  # nothing listens: a connect would be refused anyway, and is recorded first
url_like = st.builds(
    lambda scheme, host, path, tail: f"{scheme}://{host}/{path}{tail}",
    st.sampled_from(["http", "https", "HTTP", "httpx", "file"]),
    st.sampled_from(["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "169.254.169.254"]),
    st.text(st.characters(blacklist_categories=("Cs", "Zs", "Cc")), max_size=30),
    st.sampled_from(["", HTML_TAIL, f"\t{WORDS}", "?<html><body><p>" + WORDS + "</p>"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(url_like, st.sampled_from(["utf-8", "utf-16", "utf-8-sig"]),
       st.sampled_from(["text/html", "application/xhtml+xml", "application/rss+xml"]))
def test_no_url_like_page_or_feed_is_fetched(text, encoding, content_type):
    text = text.replace("{port}", str(PORT))
    body = text.encode(encoding, errors="replace")
    with network_refused() as attempts:
        assert extract_page(body, content_type, "https://a.example/x").reason in REASONS
        parse_feed_body(body, "https://a.example/feed.xml")
    assert attempts == []

