"""Fetch + parse against a real HTTP server on 127.0.0.1 (tests/feedserver.py).

Every failure scenario runs inside one fetch_feeds call together with two
healthy feeds: the healthy ones must succeed with all their items, the
failing one must carry its error, and a second run must parse identically.
"""

from __future__ import annotations

import gzip
import threading
import time
import tracemalloc
import zlib
from dataclasses import replace

import pytest
from feedserver import (
    FAST,
    GOOD_A,
    GOOD_B,
    FeedServer,
    Request,
    Response,
    run_scenario,
    unused_port,
)

from newsdedup_dagster.shared.http.fetch import (
    USER_AGENT,
    FetchRequest,
    fetch_feeds,
    fetch_feeds_sync,
    with_validators,
)

# ------------------------------------------------------------------ network failures


def test_connection_refused(feed_server):
    url = f"http://127.0.0.1:{unused_port()}/feed.xml"
    result, parsed = run_scenario(feed_server, FetchRequest("bad", url, allow_private=True))
    assert result.status == "error"
    assert result.error.startswith("connection failed")
    assert result.attempts == 3  # connection errors are retried
    assert parsed.items == ()


def test_timeout_before_headers(feed_server):
    feed_server.add("/slow.xml", GOOD_A, delay=1.0)
    result, _ = run_scenario(feed_server, FetchRequest("bad", feed_server.url("/slow.xml"), allow_private=True))
    assert result.status == "error"
    assert "timeout" in result.error
    assert result.elapsed_ms < 2500


def test_slow_drip_body_hits_total_timeout(feed_server):
    def drip():
        yield b'<?xml version="1.0"?><rss version="2.0"><channel>'
        while True:
            yield b"<!-- still here -->"

    feed_server.add("/drip.xml", drip, chunk_delay=0.05)  # every read arrives well within read_timeout
    started = time.monotonic()
    result, _ = run_scenario(feed_server, FetchRequest("bad", feed_server.url("/drip.xml"), allow_private=True))
    assert result.status == "error"
    assert result.error.startswith("total timeout")
    assert time.monotonic() - started < 8


def test_404_is_not_retried(feed_server):
    result, parsed = run_scenario(feed_server, FetchRequest("bad", feed_server.url("/missing.xml"), allow_private=True))
    assert (result.status, result.http_status, result.attempts) == ("error", 404, 1)
    assert result.error == "HTTP 404 Not Found"
    assert parsed.items == ()


def test_500_then_success_on_retry(feed_server):
    calls = {"n": 0}

    def flaky(request: Request) -> Response:
        calls["n"] += 1
        if calls["n"] % 2 == 1:  # first attempt of each run fails
            return Response(status=500, body=b"oops")
        return Response(body=GOOD_A.replace(b"/a/", b"/flaky/"), headers={"Content-Type": "application/rss+xml"})

    feed_server.route("/flaky.xml", flaky)
    result, parsed = run_scenario(feed_server, FetchRequest("flaky", feed_server.url("/flaky.xml"), allow_private=True))
    assert result.status == "ok"
    assert result.attempts == 2
    assert len(parsed.items) == 5


def test_500_every_time_records_attempts(feed_server):
    feed_server.add("/down.xml", b"down", status=503, content_type="text/plain")
    result, _ = run_scenario(feed_server, FetchRequest("bad", feed_server.url("/down.xml"), allow_private=True))
    assert (result.status, result.http_status, result.attempts) == ("error", 503, 3)
    assert result.error == "HTTP 503 Service Unavailable (after 3 attempts)"


# ------------------------------------------------------------------ conditional GET


def test_conditional_get_with_etag(feed_server):
    feed_server.conditional("/etag.xml", GOOD_A, etag='"v1"', last_modified="Mon, 02 Nov 2026 10:00:00 GMT")
    request = FetchRequest("etag", feed_server.url("/etag.xml"), allow_private=True)
    first = fetch_feeds_sync([request], FAST)[0]
    assert (first.status, first.etag, first.last_modified) == ("ok", '"v1"', "Mon, 02 Nov 2026 10:00:00 GMT")
    second_request = with_validators(request, first)
    result, parsed = run_scenario(feed_server, second_request)
    assert (result.status, result.http_status, result.body) == ("not_modified", 304, None)
    assert result.etag == '"v1"' and result.last_modified == "Mon, 02 Nov 2026 10:00:00 GMT"
    assert parsed.items == ()
    sent = feed_server.requests_for("/etag.xml")[-1].headers
    assert sent["if-none-match"] == '"v1"'
    assert sent["if-modified-since"] == "Mon, 02 Nov 2026 10:00:00 GMT"
    assert sent["user-agent"] == USER_AGENT


def test_conditional_get_with_last_modified_only(feed_server):
    feed_server.conditional("/lm.xml", GOOD_A, last_modified="Mon, 02 Nov 2026 10:00:00 GMT")
    request = FetchRequest("lm", feed_server.url("/lm.xml"), allow_private=True)
    first = fetch_feeds_sync([request], FAST)[0]
    assert first.status == "ok" and first.etag is None
    result, _ = run_scenario(feed_server, with_validators(request, first))
    assert result.status == "not_modified"
    assert result.etag is None and result.last_modified == "Mon, 02 Nov 2026 10:00:00 GMT"
    assert "if-none-match" not in feed_server.requests_for("/lm.xml")[-1].headers


def test_validators_change_independently(feed_server):
    feed_server.conditional("/v.xml", GOOD_A, etag='"v1"', last_modified="Mon, 02 Nov 2026 10:00:00 GMT")
    request = FetchRequest("v", feed_server.url("/v.xml"), allow_private=True)
    first = fetch_feeds_sync([request], FAST)[0]
    # New version: only the ETag changes.
    feed_server.conditional("/v.xml", GOOD_B, etag='"v2"', last_modified="Mon, 02 Nov 2026 10:00:00 GMT")
    second = fetch_feeds_sync([with_validators(request, first)], FAST)[0]
    assert (second.status, second.etag, second.last_modified) == ("ok", '"v2"', "Mon, 02 Nov 2026 10:00:00 GMT")
    # Next version drops the ETag entirely and changes Last-Modified: the old ETag must not survive.
    feed_server.conditional("/v.xml", GOOD_A, last_modified="Mon, 02 Nov 2026 11:00:00 GMT")
    third = fetch_feeds_sync([with_validators(request, second)], FAST)[0]
    assert (third.status, third.etag, third.last_modified) == ("ok", None, "Mon, 02 Nov 2026 11:00:00 GMT")
    fourth = fetch_feeds_sync([with_validators(request, third)], FAST)[0]
    assert fourth.status == "not_modified"


def test_error_keeps_stored_validators(feed_server):
    request = FetchRequest("bad", feed_server.url("/missing.xml"), etag='"old"', last_modified="x", allow_private=True)
    result = fetch_feeds_sync([request], FAST)[0]
    assert (result.status, result.etag, result.last_modified) == ("error", '"old"', "x")


# ------------------------------------------------------------------ redirects


def test_redirect_loop(feed_server):
    feed_server.redirect("/loop-a", feed_server.url("/loop-b"))
    feed_server.redirect("/loop-b", "/loop-a")  # relative Location
    result, _ = run_scenario(feed_server, FetchRequest("bad", feed_server.url("/loop-a"), allow_private=True))
    assert result.status == "error" and result.error.startswith("redirect loop:")
    assert result.attempts == 1


def test_too_many_redirects_and_exactly_five(feed_server):
    for i in range(7):
        feed_server.redirect(f"/r{i}", f"/r{i + 1}", status=301 if i % 2 else 307)
    feed_server.add("/r7", GOOD_A)
    long_chain, _ = run_scenario(feed_server, FetchRequest("bad", feed_server.url("/r0"), allow_private=True))
    assert long_chain.status == "error" and long_chain.error.startswith("too many redirects (more than 5)")
    five = fetch_feeds_sync([FetchRequest("ok", feed_server.url("/r2"), allow_private=True)], FAST)[0]
    assert five.status == "ok" and five.final_url == feed_server.url("/r7")


def test_redirect_to_non_http_scheme_refused(feed_server, tmp_path):
    secret = tmp_path / "secret.xml"
    secret.write_bytes(GOOD_A)
    feed_server.redirect("/to-file", secret.as_uri())
    feed_server.redirect("/to-ftp", "ftp://example.com/feed.xml")
    config = replace(FAST, allowed_file_dir=tmp_path)  # even an allowed folder is not a redirect target
    result, _ = run_scenario(feed_server, FetchRequest("bad", feed_server.url("/to-file"), allow_private=True), config)
    assert result.status == "error" and "non-http(s)" in result.error
    ftp = fetch_feeds_sync([FetchRequest("bad", feed_server.url("/to-ftp"), allow_private=True)], FAST)[0]
    assert ftp.status == "error" and "ftp://example.com" in ftp.error


def test_file_urls_only_inside_allowed_dir(tmp_path):
    inside = tmp_path / "replay" / "feed.xml"
    inside.parent.mkdir()
    inside.write_bytes(GOOD_A)
    outside = tmp_path / "other.xml"
    outside.write_bytes(GOOD_A)
    allowed = replace(FAST, allowed_file_dir=inside.parent)
    ok, refused = fetch_feeds_sync([FetchRequest("in", inside.as_uri()), FetchRequest("out", outside.as_uri())],
                                   allowed)
    assert ok.status == "ok" and ok.body == GOOD_A and ok.http_status is None
    assert refused.status == "error" and "outside the allowed replay directory" in refused.error
    not_configured = fetch_feeds_sync([FetchRequest("in", inside.as_uri())], FAST)[0]
    assert not_configured.status == "error" and "not allowed" in not_configured.error


# ------------------------------------------------------------------ body size and compression


def _zeros(total: int, chunk: int = 64 * 1024):
    sent = 0
    block = b"0" * chunk
    while sent < total:
        yield block
        sent += chunk


def test_50mb_body_cut_off_without_buffering(feed_server):
    feed_server.add("/huge.xml", lambda: _zeros(50 * 1024 * 1024), content_type="application/xml")
    config = replace(FAST, total_timeout=10.0, read_timeout=5.0, max_body_bytes=2 * 1024 * 1024)
    tracemalloc.start()
    try:
        result, parsed = run_scenario(feed_server, FetchRequest("bad", feed_server.url("/huge.xml"),
                                                                allow_private=True), config)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.status == "error"
    assert result.error == f"body too large: cut off after {2 * 1024 * 1024} bytes"
    assert result.body is None and parsed.items == ()
    assert peak < 16 * 1024 * 1024, f"peak traced memory {peak} bytes: the body was buffered"


def test_declared_content_length_over_limit_fails_before_reading(feed_server):
    feed_server.add("/big.xml", lambda: _zeros(50 * 1024 * 1024), headers={"Content-Length": str(50 * 1024 * 1024)})
    result, _ = run_scenario(feed_server, FetchRequest("bad", feed_server.url("/big.xml"),
                                                       allow_private=True), replace(FAST, max_body_bytes=1_000_000))
    assert result.status == "error" and "Content-Length 52428800 exceeds" in result.error


def test_endless_body_with_default_limits_stops(feed_server):
    feed_server.add("/endless.xml", lambda: _zeros(10**12), content_type="application/xml")
    config = replace(FAST, total_timeout=20.0, read_timeout=5.0)  # default 10 MiB cap
    result = fetch_feeds_sync([FetchRequest("bad", feed_server.url("/endless.xml"), allow_private=True)], config)[0]
    assert result.status == "error" and result.error.startswith("body too large")


def test_gzip_bomb_stopped_by_decoded_cap(feed_server):
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\0" * (1024 * 1024)
    bomb = b"".join(compressor.compress(block) for _ in range(64)) + compressor.flush()  # 64 MiB -> ~64 KiB
    assert len(bomb) < 200_000
    feed_server.add("/bomb.xml", bomb, headers={"Content-Encoding": "gzip"}, content_type="application/xml")
    config = replace(FAST, max_decoded_bytes=4 * 1024 * 1024)
    tracemalloc.start()
    try:
        result, _ = run_scenario(feed_server, FetchRequest("bad", feed_server.url("/bomb.xml"),
                                                           allow_private=True), config)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.status == "error" and result.error.startswith("decoded body too large")
    assert peak < 20 * 1024 * 1024


@pytest.mark.parametrize("encoding", ["gzip", "deflate-zlib", "deflate-raw"])
def test_compressed_feeds_are_decoded(feed_server, encoding):
    if encoding == "gzip":
        body = gzip.compress(GOOD_A)
    elif encoding == "deflate-zlib":
        body = zlib.compress(GOOD_A)
    else:
        raw = zlib.compressobj(6, zlib.DEFLATED, -15)
        body = raw.compress(GOOD_A) + raw.flush()
    feed_server.add("/z.xml", body, headers={"Content-Encoding": encoding.split("-")[0]})
    result, parsed = run_scenario(feed_server, FetchRequest("z", feed_server.url("/z.xml"), allow_private=True))
    assert result.status == "ok" and result.body == GOOD_A
    assert len(parsed.items) == 5


def _layered(body: bytes, codings: list[str]) -> bytes:
    """`body` with each coding applied in turn (the order Content-Encoding lists them)."""
    for coding in codings:
        body = gzip.compress(body, mtime=0) if coding in ("gzip", "x-gzip") else zlib.compress(body)
    return body


@pytest.mark.parametrize(("codings", "repeated"), [
    (["gzip"] * 6000, "'gzip' repeated"),  # a 30 KB header: the layers that grew the process by 197 MB
    (["gzip", "gzip"], "'gzip' repeated"),
    (["x-gzip", "gzip"], "'gzip' repeated"),  # one coding under two names
    (["deflate", "deflate"], "'deflate' repeated"),
    (["deflate", "gzip", "identity", "deflate"], "'deflate' repeated"),
])
def test_stacked_content_encoding_is_refused(feed_server, codings, repeated):
    """A real server sends each stack of codings (the body truly layered): the fetch fails at once
    with an error naming the stack, without decoding it, and the healthy feeds are unaffected."""
    feed_server.add("/stacked.xml", _layered(GOOD_A, [c for c in codings if c != "identity"]),
                    headers={"Content-Encoding": ", ".join(codings)}, content_type="application/rss+xml")
    # The refusal comes from the headers; the time budget only has to outlast a loaded machine's
    # handling of a 30 KB header (1.5 s did not, under four test workers on two cores).
    result, parsed = run_scenario(feed_server, FetchRequest("stacked", feed_server.url("/stacked.xml"),
                                                            allow_private=True),
                                  replace(FAST, total_timeout=10.0, read_timeout=5.0))
    assert result.status == "error" and result.body is None and result.attempts == 1  # never retried
    assert result.error.startswith("stacked Content-Encoding refused") and repeated in result.error
    assert len(result.error) <= 300 and parsed.items == ()


def test_three_different_codings_are_refused_and_two_are_decoded(feed_server):
    feed_server.add("/two.xml", _layered(GOOD_A, ["deflate", "gzip"]), headers={"Content-Encoding": "deflate, gzip"})
    feed_server.add("/three.xml", _layered(GOOD_A, ["deflate", "gzip"]),
                    headers={"Content-Encoding": "deflate, gzip, br"})
    two, three = fetch_feeds_sync([FetchRequest("two", feed_server.url("/two.xml"), allow_private=True),
                                   FetchRequest("three", feed_server.url("/three.xml"), allow_private=True)], FAST)
    assert two.status == "ok" and two.body == GOOD_A
    assert three.status == "error" and three.error.startswith("stacked Content-Encoding refused: 3 codings")


# ------------------------------------------------------------------ concurrency


def test_concurrency_bounds_total_and_per_host():
    state = {"now": 0, "max": 0, "per_host": {}, "max_per_host": {}}
    lock = threading.Lock()

    def slow(request: Request) -> Response:
        host = request.server_host
        with lock:
            state["now"] += 1
            state["per_host"][host] = state["per_host"].get(host, 0) + 1
            state["max"] = max(state["max"], state["now"])
            state["max_per_host"][host] = max(state["max_per_host"].get(host, 0), state["per_host"][host])
        time.sleep(0.15)
        with lock:
            state["now"] -= 1
            state["per_host"][host] -= 1
        return Response(body=GOOD_A, headers={"Content-Type": "application/rss+xml"})

    with FeedServer(hosts=["127.0.0.1", "127.0.0.2", "127.0.0.3"]) as server:
        server.route("/slow.xml", slow)
        requests = [FetchRequest(f"s{i}", server.url(f"/slow.xml?i={i}", host_index=i % 3),
                                 allow_private=True) for i in range(12)]
        config = replace(FAST, max_concurrency=5, max_per_host=2, total_timeout=10.0, read_timeout=5.0)
        started = time.monotonic()
        results = fetch_feeds_sync(requests, config)
        elapsed = time.monotonic() - started
    assert all(r.status == "ok" for r in results)
    assert state["max"] <= 5
    assert max(state["max_per_host"].values()) <= 2
    assert state["max"] >= 4  # it did run concurrently
    assert elapsed < 12 * 0.15  # faster than sequential


def test_async_api_and_sync_wrapper_inside_running_loop(feed_server):
    import asyncio

    async def main():
        direct = await fetch_feeds([FetchRequest("a", feed_server.url("/good-a.xml"), allow_private=True)], FAST)
        wrapped = fetch_feeds_sync([FetchRequest("a", feed_server.url("/good-a.xml"),
                                                 allow_private=True)], FAST)  # loop already running
        return direct, wrapped

    direct, wrapped = asyncio.run(main())
    assert direct[0].body == wrapped[0].body == GOOD_A


def test_429_with_retry_after_is_retried(feed_server):
    calls = {"n": 0}

    def limited(request: Request) -> Response:
        calls["n"] += 1
        if calls["n"] % 2 == 1:
            return Response(status=429, headers={"Retry-After": "0"})
        return Response(body=GOOD_B, headers={"Content-Type": "application/rss+xml"})

    feed_server.route("/limited.xml", limited)
    result, parsed = run_scenario(feed_server, FetchRequest("limited", feed_server.url("/limited.xml"),
                                                            allow_private=True))
    assert (result.status, result.attempts, len(parsed.items)) == ("ok", 2, 7)


def test_iter_fetch_feeds_yields_every_result(feed_server):
    import asyncio

    from newsdedup_dagster.shared.http.fetch import iter_fetch_feeds

    requests = [FetchRequest("a", feed_server.url("/good-a.xml"),
                             allow_private=True), FetchRequest("b", feed_server.url("/good-b.xml"), allow_private=True),
                FetchRequest("missing", feed_server.url("/nope.xml"), allow_private=True)]

    async def collect():
        return [result async for result in iter_fetch_feeds(requests, FAST)]

    results = asyncio.run(collect())
    assert sorted((r.source_id, r.status) for r in results) == [("a", "ok"), ("b", "ok"), ("missing", "error")]
