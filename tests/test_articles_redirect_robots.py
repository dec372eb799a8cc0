"""A redirected page fetch is polite at every hop: each redirect target is checked against its own
origin's robots.txt and waits for its own host's turn and delay, through the same address checks.
Real servers: the page's origin on 127.0.0.1 and another origin on 127.0.0.2, which the address
checks are told to read as a public address (a redirect to another origin reaches public addresses
only; without that, 127.0.0.2 is refused, as the last tests show)."""

from __future__ import annotations

import ipaddress
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from feedserver import FAST, FeedServer, Request, Response

from newsdedup_dagster.shared.http import netguard
from newsdedup_dagster.stages.articles.fetch import PageRequest, Politeness
from newsdedup_dagster.stages.articles.robots import UNREACHABLE
from newsdedup_dagster.stages.articles.settings import ArticleSettings
from newsdedup_dagster.stages.articles.store import fetch_and_extract, page_fetch_config

TEXT = ("The city council approved the new budget on Tuesday after a long debate about public transport, "
        "housing and the cost of energy for schools. The mayor said the plan would cut waiting times for "
        "buses and add two thousand homes by the end of next year, while critics warned that the figures "
        "relied on optimistic forecasts of tax revenue.")
PAGE = (f"<!doctype html><html lang='en'><head><title>Council approves budget</title></head><body><main><article>"
        f"<h1>Council approves budget</h1>{''.join(f'<p>{s}.</p>' for s in TEXT.split('. '))}</article></main>"
        f"</body></html>").encode()
HTML = {"Content-Type": "text/html; charset=utf-8"}
ROBOTS = {"Content-Type": "text/plain"}
POLITE = Politeness(user_agent="newsdedup/test (+https://example.org/contact)", min_host_delay=0.0,
                    hosts_in_parallel=4, page_timeout=2.0, hour_budget=30.0)


def run(pages, *, politeness=POLITE, robots=None):
    article_settings = ArticleSettings(min_words=20, extract_timeout=5.0)
    config = page_fetch_config(replace(FAST, connect_timeout=5.0), article_settings)
    return fetch_and_extract(pages, article_settings, politeness, config, robots or {})


def outcome(result, item_id):
    return next(o for o in result.outcomes if o.item_id == item_id)


def stamped(server: FeedServer, path: str, response: Response, stamps: list[tuple[str, float]]) -> None:
    def serve(request: Request) -> Response:
        stamps.append((request.path, time.monotonic()))
        return response

    server.route(path, serve)


@pytest.fixture()
def public_stand_in(monkeypatch):
    """127.0.0.2 is read as a public address; every other check is the deployed one."""
    real = netguard.non_global_reason
    stand_in = ipaddress.ip_address("127.0.0.2")
    monkeypatch.setattr(netguard, "non_global_reason", lambda address: None if address == stand_in else real(address))


@pytest.fixture()
def home():
    with FeedServer("127.0.0.1") as server:
        server.add("/robots.txt", b"User-agent: *\nDisallow: /private/\n", headers=ROBOTS)
        yield server


@pytest.fixture()
def elsewhere():
    with FeedServer("127.0.0.2") as server:
        yield server


def test_a_redirect_to_a_disallowed_path_of_the_same_origin_is_not_followed(home):
    home.redirect("/open", "/private/page")
    home.add("/private/page", PAGE, headers=HTML)
    result = run([PageRequest("a", home.url("/open"), private_ok=True)])
    got = result.outcomes[0]
    assert (got.status, got.reason, got.final_url) == ("failed", "robots", home.url("/private/page"))
    assert "disallows the redirect target" in got.detail
    assert home.count("/open") == 1 and home.count("/private/page") == 0 and home.count("/robots.txt") == 1


def test_a_redirect_to_another_origin_reads_that_origins_robots_txt(home, elsewhere, public_stand_in):
    elsewhere.add("/robots.txt", b"User-agent: *\nDisallow: /paid/\n", headers=ROBOTS)
    elsewhere.add("/paid/story", PAGE, headers=HTML)
    elsewhere.add("/news/story", PAGE, headers=HTML)
    home.redirect("/to-paid", elsewhere.url("/paid/story"))
    home.redirect("/to-news", elsewhere.url("/news/story"))
    result = run([PageRequest("paid", home.url("/to-paid"), private_ok=True),
                  PageRequest("news", home.url("/to-news"), private_ok=True)])
    paid, news = outcome(result, "paid"), outcome(result, "news")
    assert (paid.status, paid.reason, paid.final_url) == ("failed", "robots", elsewhere.url("/paid/story"))
    assert elsewhere.url("/paid/story") in paid.detail
    assert elsewhere.count("/paid/story") == 0
    assert news.status == "ok" and news.final_url == elsewhere.url("/news/story")
    assert "approved the new budget" in news.payload.text
    # The other origin's robots.txt: asked once, kept for later hours under its own origin.
    assert elsewhere.count("/robots.txt") == 1
    assert any(key.startswith("http://127.0.0.2:") for key in result.robots_changed)


def test_a_redirect_hop_waits_for_its_own_hosts_delay(home, elsewhere, public_stand_in):
    stamps: list[tuple[str, float]] = []
    stamped(elsewhere, "/robots.txt", Response(body=b"User-agent: *\nCrawl-delay: 1\n", headers=ROBOTS), stamps)
    for path in ("/news/1", "/news/2"):
        stamped(elsewhere, path, Response(body=PAGE, headers=HTML), stamps)
    home.redirect("/go", elsewhere.url("/news/2"))
    result = run([PageRequest("direct", elsewhere.url("/news/1"), private_ok=True),
                  PageRequest("hop", home.url("/go"), private_ok=True)])
    assert [o.status for o in result.outcomes] == ["ok", "ok"], result.outcomes
    assert sorted(path for path, _ in stamps) == ["/news/1", "/news/2", "/robots.txt"]
    assert stamps[0][0] == "/robots.txt"
    gaps = [b - a for (_, a), (_, b) in zip(stamps, stamps[1:])]
    assert all(gap >= 0.95 for gap in gaps), (stamps, gaps)


def test_retry_after_from_a_redirect_target_stops_that_host(home, elsewhere, public_stand_in):
    elsewhere.add("/busy", b"slow down", status=429, headers={"Retry-After": "3600"})
    elsewhere.add("/later", PAGE, headers=HTML)
    home.redirect("/go", elsewhere.url("/busy"))
    home.add("/own", PAGE, headers=HTML)
    result = run([PageRequest("hop", home.url("/go"), private_ok=True)])
    assert outcome(result, "hop").reason == "retry_after"
    by_origin = {key.split("//")[1].split(":")[0]: entry for key, entry in result.robots.items()}
    assert by_origin["127.0.0.2"].not_before > datetime.now(UTC) + timedelta(minutes=55)
    assert by_origin["127.0.0.1"].not_before is None
    again = run([PageRequest("later", elsewhere.url("/later"), private_ok=True),
                 PageRequest("own", home.url("/own"), private_ok=True)], robots=result.robots)
    assert outcome(again, "later").status == "deferred" and outcome(again, "own").status == "ok"
    assert elsewhere.count("/later") == 0


def test_redirect_loops_and_long_chains_stop(home):
    home.redirect("/loop-a", "/loop-b")
    home.redirect("/loop-b", "/loop-a")
    for i in range(8):
        home.redirect(f"/chain/{i}", f"/chain/{i + 1}")
    result = run([PageRequest("loop", home.url("/loop-a"), private_ok=True),
                  PageRequest("chain", home.url("/chain/0"), private_ok=True)])
    loop, chain = outcome(result, "loop"), outcome(result, "chain")
    assert loop.reason == "redirect_refused" and "redirect loop" in loop.detail
    assert chain.reason == "redirect_refused" and "too many redirects (more than 5)" in chain.detail
    assert home.count("/loop-a") == home.count("/loop-b") == 1
    assert [home.count(f"/chain/{i}") for i in range(8)] == [1] * 6 + [0] * 2


def test_the_page_timeout_bounds_all_hops_together(home):
    for i in range(4):
        home.route(f"/slow/{i}", Response(status=302, headers={"Location": f"/slow/{i + 1}", "Content-Length": "0"},
                                          delay=0.6))
    home.add("/slow/4", PAGE, headers=HTML)
    result = run([PageRequest("slow", home.url("/slow/0"), private_ok=True)],
                 politeness=replace(POLITE, page_timeout=1.5))
    assert result.outcomes[0].reason == "timeout"
    assert home.count("/slow/4") == 0


def test_a_redirect_into_a_private_network_is_refused_before_its_robots_txt(home):
    with FeedServer("127.0.0.3") as intranet:
        intranet.add("/robots.txt", b"User-agent: *\nAllow: /\n", headers=ROBOTS)
        intranet.add("/secret", PAGE, headers=HTML)
        home.redirect("/go", intranet.url("/secret"))
        result = run([PageRequest("hop", home.url("/go"), private_ok=True)])
        got = result.outcomes[0]
        assert (got.reason, got.final_url) == ("refused_address", intranet.url("/secret"))
        assert "redirect to another origin" in got.detail
        assert intranet.requests == []
        assert not any(key.startswith("http://127.0.0.3:") for key in result.robots)


def test_an_address_refusal_is_not_an_unreadable_robots_txt(home):
    """A page whose sources may not reach this origin is refused; the origin's robots.txt is not
    marked unreadable for the pages that may."""
    home.add("/a", PAGE, headers=HTML)
    home.add("/b", PAGE, headers=HTML)
    result = run([PageRequest("public-only", home.url("/a"), private_ok=False),
                  PageRequest("allowed", home.url("/b"), private_ok=True)])
    assert outcome(result, "public-only").reason == "refused_address"
    assert outcome(result, "allowed").status == "ok"
    assert all(entry.status != UNREACHABLE for entry in result.robots.values())
    assert home.count("/a") == 0 and home.count("/b") == 1
