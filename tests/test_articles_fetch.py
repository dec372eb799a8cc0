"""The article stage's fetching and extraction against real HTTP servers on 127.0.0.x: robots.txt,
politeness, and hostile pages (50 MB of markup, deep nesting, a redirect chain into 127.0.0.2, a
robots.txt that disallows, times out or is 10 MB, a slow drip, a wrong charset, another language
than the feed's), each of which affects its own page only."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from feedserver import FAST, FeedServer, Response

from newsdedup_dagster.stages.articles.extract import Extraction, ExtractLimits, extract_page
from newsdedup_dagster.stages.articles.fetch import PageOutcome, PageRequest, Politeness, fetch_pages
from newsdedup_dagster.stages.articles.robots import ALLOW_ALL, RULES, UNREACHABLE, entry_from_fetch
from newsdedup_dagster.stages.articles.settings import ArticleSettings
from newsdedup_dagster.stages.articles.store import fetch_and_extract, page_fetch_config

ENGLISH = ("The city council approved the new budget on Tuesday after a long debate about public transport, "
           "housing and the cost of energy for schools. The mayor said the plan would cut waiting times for "
           "buses and add two thousand homes by the end of next year, while critics warned that the figures "
           "relied on optimistic forecasts of tax revenue.")
FRENCH = ("Le conseil municipal a approuvé mardi le nouveau budget après un long débat sur les transports "
          "publics, le logement et le coût de l'énergie pour les écoles. Le maire a déclaré que le plan "
          "réduirait les temps d'attente des bus et ajouterait deux mille logements d'ici la fin de l'année "
          "prochaine, tandis que les critiques ont averti que les chiffres reposaient sur des prévisions "
          "optimistes des recettes fiscales.")


def page(body_text: str, *, lang: str = "en", title: str = "Council approves budget", charset: str = "utf-8",
         extra_head: str = "") -> str:
    paragraphs = "".join(f"<p>{sentence.strip()}.</p>" for sentence in body_text.split(". ") if sentence.strip())
    return (f'<!doctype html><html lang="{lang}"><head><meta charset="{charset}"><title>{title} | The Daily</title>'
            f'<meta name="author" content="Jane Reporter"><link rel="canonical" href="https://daily.example/a/1">'
            f'<meta property="article:published_time" content="2026-11-02T04:30:00+00:00">{extra_head}</head>'
            f'<body><nav><a href="/">Home</a> <a href="/world">World</a> <a href="/sport">Sport</a></nav>'
            f'<div id="cookie-banner">We use cookies to improve your experience. Accept all</div>'
            f'<main><article><h1>{title}</h1>{paragraphs}</article></main>'
            f'<aside class="ad">Advertisement: buy now</aside><section class="comments"><h3>Comments</h3>'
            f'<p>First! Great article.</p></section><footer>© The Daily</footer>'
            f'<script>document.body.innerHTML = "script ran"</script></body></html>')


HTML = {"Content-Type": "text/html; charset=utf-8"}
POLITE = Politeness(user_agent="newsdedup/test (+https://example.org/contact)", min_host_delay=0.0,
                    hosts_in_parallel=4, page_timeout=1.5, hour_budget=30.0)


def settings(**overrides) -> ArticleSettings:
    return replace(ArticleSettings(min_words=20, extract_timeout=5.0), **overrides)


def run(pages, *, politeness=POLITE, robots=None, article_settings=None, feed_config=FAST):
    article_settings = article_settings or settings()
    config = page_fetch_config(feed_config, article_settings)
    return fetch_and_extract(pages, article_settings, politeness, config, robots or {})


def outcome_of(result, item_id) -> PageOutcome:
    return next(o for o in result.outcomes if o.item_id == item_id)


@pytest.fixture()
def site():
    """Two loopback addresses sharing routes, with an allow-all robots.txt."""
    with FeedServer(hosts=["127.0.0.1", "127.0.0.2"]) as server:
        server.add("/robots.txt", b"User-agent: *\nDisallow: /private/\n", headers={"Content-Type": "text/plain"})
        yield server


def test_a_hostile_hour_each_page_affects_only_itself(site):
    fifty_mb = lambda: (b"<div>" + b"x" * 65_531 for _ in range(800))  # noqa: E731 - 50 MB streamed, never held
    site.add("/good", page(ENGLISH).encode(), headers=HTML)
    site.add("/big", fifty_mb, headers=HTML)
    site.add("/deep", ("<html><body>" + "<div>" * 200_000 + ENGLISH + "</div>" * 200_000 + "</body></html>").encode(),
             headers=HTML)
    site.redirect("/hop1", "/hop2")
    site.redirect("/hop2", site.url("/good", host_index=1))  # into 127.0.0.2: another origin, never private
    site.route("/drip", Response(body=lambda: (b"<p>" + b"a" * 10 for _ in range(1000)), chunk_delay=0.3,
                                 headers=HTML))
    # Declared UTF-8, written in Windows-1252 (curly quotes, accents): repaired, not replaced.
    site.add("/charset", page(ENGLISH.replace("The mayor said", "The mayor said “café prices” would fall and"),
                              charset="utf-8").encode("cp1252"), headers={"Content-Type": "text/html; charset=utf-8"})
    site.add("/french", page(FRENCH, lang="fr", title="Le budget adopté").encode(), headers=HTML)
    site.add("/private/secret", page(ENGLISH).encode(), headers=HTML)
    site.add("/pdf", b"%PDF-1.7 binary", headers={"Content-Type": "text/html"})
    site.add("/feed", b'<?xml version="1.0"?><rss><channel></channel></rss>', headers={"Content-Type": "text/html"})
    site.add("/gone", b"gone", status=404)
    ids = ["good", "big", "deep", "hop1", "drip", "charset", "french", "private/secret", "pdf", "feed", "gone"]
    pages = [PageRequest(item_id=i, url=site.url("/" + i), private_ok=True, language_hint="en") for i in ids]
    started = time.monotonic()
    # A page gets one attempt; FAST's 1 s to connect can pass on a loaded machine while the server
    # still streams the 50 MB page, and connecting is not what this hour tests (the drip page's
    # timeout is the politeness page timeout).
    result = run(pages, feed_config=replace(FAST, connect_timeout=10.0))
    assert time.monotonic() - started < 25
    by_id = {o.item_id: o for o in result.outcomes}
    good = by_id["good"]
    assert good.status == "ok", good
    text = good.payload.text
    assert "approved the new budget" in text and "critics warned" in text
    for boilerplate in ("cookies", "Advertisement", "First! Great", "script ran", "Sport"):
        assert boilerplate not in text
    assert good.payload.language == "en" and good.payload.byline == "Jane Reporter"
    assert good.payload.canonical_url == "https://daily.example/a/1"
    assert good.payload.published_at == datetime(2026, 11, 2, 4, 30, tzinfo=UTC)
    assert (by_id["big"].status, by_id["big"].reason) == ("failed", "too_large")
    assert by_id["deep"].status == "failed" and by_id["deep"].reason in ("too_large", "extraction_empty",
                                                                       "extraction_failed")
    assert (by_id["hop1"].reason, by_id["hop1"].final_url) == ("refused_address", site.url("/good", host_index=1))
    assert (by_id["drip"].status, by_id["drip"].reason) == ("failed", "timeout")
    charset = by_id["charset"]
    assert charset.status == "ok" and "“café prices”" in charset.payload.text and "\ufffd" not in charset.payload.text
    french = by_id["french"]
    assert french.status == "ok" and french.payload.language == "fr"  # the page's language, not the feed's
    assert (by_id["private/secret"].reason, by_id["pdf"].reason, by_id["feed"].reason) == (
        "robots", "not_html", "not_html")
    assert (by_id["gone"].reason, by_id["gone"].http_status) == ("http_error", 404)
    # robots.txt asked for once for the origin; every page at most once.
    assert site.count("/robots.txt") == 1
    assert all(site.count("/" + i) <= 1 for i in ids)
    assert site.count("/private/secret") == 0
    agents = {r.headers.get("user-agent") for r in site.requests}
    assert agents == {POLITE.user_agent}


def test_robots_that_times_out_or_is_10_mb_stops_only_its_own_origin():
    with FeedServer() as slow, FeedServer() as huge, FeedServer() as fine:
        slow.route("/robots.txt", Response(body=b"User-agent: *\nAllow: /\n", delay=3.0))
        ten_mb = lambda: (b"# " + b"x" * 65_533 for _ in range(160))  # noqa: E731
        huge.route("/robots.txt", Response(body=ten_mb, headers={"Content-Type": "text/plain"}))
        for server in (slow, huge, fine):
            server.add("/a", page(ENGLISH).encode(), headers=HTML)
        pages = [PageRequest("slow", slow.url("/a"), private_ok=True), PageRequest("huge", huge.url("/a"), private_ok=True),
                 PageRequest("fine", fine.url("/a"), private_ok=True)]
        result = run(pages)
        assert outcome_of(result, "slow").reason == "robots_unreachable"
        assert outcome_of(result, "huge").reason == "robots_unreachable"
        assert outcome_of(result, "fine").status == "ok"
        assert slow.count("/a") == huge.count("/a") == 0
        entry = result.robots[next(k for k in result.robots if k.endswith(f":{huge._servers[0].server_address[1]}"))]
        assert entry.status == UNREACHABLE and entry.expires_at - entry.fetched_at <= timedelta(hours=1)
        # fine's robots.txt is missing (404): everything may be fetched.
        assert result.robots[next(k for k in result.robots if k.endswith(f":{fine._servers[0].server_address[1]}"))
                             ].status == ALLOW_ALL


def test_one_request_at_a_time_per_host_with_the_minimum_delay(site):
    for i in range(3):
        site.add(f"/p{i}", page(ENGLISH).encode(), headers=HTML)
    pages = [PageRequest(f"p{i}", site.url(f"/p{i}"), private_ok=True) for i in range(3)]
    stamps: list[float] = []
    served = {f"/p{i}": site.routes[f"/p{i}"] for i in range(3)}

    def stamped(request):
        stamps.append(time.monotonic())
        return served[request.path]

    for path in served:
        site.route(path, stamped)
    result = run(pages, politeness=replace(POLITE, min_host_delay=0.4))
    assert [o.status for o in result.outcomes] == ["ok"] * 3
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    assert len(stamps) == 3 and all(gap >= 0.38 for gap in gaps), gaps


def test_retry_after_stops_the_host_for_this_hour_and_later_ones(site):
    site.add("/busy", b"slow down", status=429, headers={"Retry-After": "3600"})
    site.add("/next", page(ENGLISH).encode(), headers=HTML)
    pages = [PageRequest("busy", site.url("/busy"), private_ok=True),
             PageRequest("next", site.url("/next"), private_ok=True)]
    result = run(pages)
    assert (outcome_of(result, "busy").reason, outcome_of(result, "next").status) == ("retry_after", "deferred")
    assert site.count("/next") == 0
    entry = next(iter(result.robots.values()))
    assert entry.not_before is not None and entry.not_before > datetime.now(UTC) + timedelta(minutes=55)
    # A later hour with the stored entry does not ask the host either.
    again = run([PageRequest("next", site.url("/next"), private_ok=True)], robots=result.robots)
    assert again.outcomes[0].status == "deferred" and site.count("/next") == 0


def test_a_page_without_private_permission_cannot_reach_loopback(site):
    site.add("/a", page(ENGLISH).encode(), headers=HTML)
    result = run([PageRequest("a", site.url("/a"), private_ok=False)])
    assert result.outcomes[0].reason in ("robots_unreachable", "refused_address")
    assert site.count("/a") == 0


def test_the_hour_budget_defers_the_pages_it_did_not_reach(site):
    # One host, one page at a time: six pages of 1 s each cannot fit a 3 s budget, while the first fits
    # it with room for a loaded machine.
    for i in range(6):
        site.route(f"/s{i}", Response(body=page(ENGLISH).encode(), headers=HTML, delay=1.0))
    pages = [PageRequest(f"s{i}", site.url(f"/s{i}"), private_ok=True) for i in range(6)]
    result = run(pages, politeness=replace(POLITE, hour_budget=3.0, page_timeout=5.0),
                 feed_config=replace(FAST, read_timeout=5.0, total_timeout=5.0))
    statuses = [o.status for o in result.outcomes]
    assert statuses[0] == "ok" and "deferred" in statuses, result.outcomes
    deferred = [o for o in result.outcomes if o.status == "deferred"]
    assert all(not o.attempted and o.reason == "hour_budget" for o in deferred)


def test_robots_entries_follow_rfc_9309():
    now = datetime(2026, 11, 2, tzinfo=UTC)
    rules = entry_from_fetch("https://a.example:443", http_status=200, now=now, ttl=timedelta(hours=24), error=None,
                             body=b"User-agent: newsdedup\nDisallow: /paid/\nCrawl-delay: 500\n\nUser-agent: *\nDisallow: /\n")
    assert rules.status == RULES and rules.allows("https://a.example/news/1") and not rules.allows("https://a.example/paid/x")
    assert rules.crawl_delay() == 60.0  # capped
    other = entry_from_fetch("https://b.example:443", http_status=200, body=b"User-agent: *\nDisallow: /\n",
                             error=None, now=now, ttl=timedelta(hours=24))
    assert not other.allows("https://b.example/news/1")
    assert entry_from_fetch("x", http_status=404, body=None, error="HTTP 404", now=now,
                            ttl=timedelta(hours=24)).allows("https://x/anything")
    for status in (500, 429, None):
        entry = entry_from_fetch("x", http_status=status, body=None, error="boom", now=now, ttl=timedelta(hours=24))
        assert entry.status == UNREACHABLE and not entry.allows("https://x/a")
        assert entry.expires_at == now + timedelta(hours=1)


def test_paywalled_and_empty_pages_keep_no_text():
    paywalled = page(ENGLISH, extra_head='<script type="application/ld+json">{"@type": "NewsArticle", '
                                         '"isAccessibleForFree": false}</script>')
    assert extract_page(paywalled.encode(), "text/html", "https://a.example/1").reason == "paywall"
    empty = "<html><body><nav><a href='/'>Home</a></nav><p>Subscribe.</p></body></html>"
    result = extract_page(empty.encode(), "text/html", "https://a.example/2", limits=ExtractLimits())
    assert result.reason == "extraction_empty" and result.text is None


def test_fetch_pages_never_raises_for_a_bad_link():
    async def handle(page, result):  # never reached: no page is fetched
        return PageOutcome(page.item_id, page.url, "ok", payload=Extraction(None))

    result = asyncio.run(fetch_pages([PageRequest("bad", "http://[::1/x")], politeness=POLITE, page_config=FAST,
                                     robots_cache={}, handle=handle))
    assert result.outcomes[0].status == "failed" and result.outcomes[0].reason == "refused_address"


def test_fetch_article_in_the_sources_file_is_a_flag():
    from newsdedup_dagster.shared.sources import SourcesConfigError, parse_sources_yaml

    entry = "sources:\n  - {id: a, name: A, feed_url: 'https://a.example/f', language: en, country: GB%s}\n"
    assert parse_sources_yaml(entry % "")[0].fetch_article is True
    assert parse_sources_yaml(entry % ", fetch_article: false")[0].fetch_article is False
    with pytest.raises(SourcesConfigError, match="fetch_article.*true or false"):
        parse_sources_yaml(entry % ", fetch_article: 'no'")
