"""Where a fetch may connect: public addresses only unless allowed (and what is allowed only for
the feed's own origin, never for a redirect elsewhere), checked after DNS for the first request
and every redirect, the checked address is the one connected to, no https -> http downgrade, no
validators or cookies to another origin. Real servers on 127.0.0.x."""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
import subprocess
import threading
from dataclasses import replace
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpcore
import pytest
from feedserver import FAST, GOOD_A, FeedServer, Response, rss

from newsdedup_dagster.shared.http.fetch import FetchRequest, fetch_feeds_sync, same_origin
from newsdedup_dagster.shared.http.netguard import (
    NON_PUBLIC_NETWORKS,
    AddressPolicy,
    AddressRefused,
    GuardedBackend,
    non_global_reason,
)
from newsdedup_dagster.shared.sources import Source, load_sources
from newsdedup_dagster.stages.ingest.store import ingest_partition

H = datetime(2026, 11, 2, 10, tzinfo=UTC)
# A refusal comes before any connection, so the time limits only bound a test that fails; generous
# ones keep a loaded machine's slow name lookup from turning a refusal into a timeout.
PUBLIC_ONLY = replace(FAST, address_policy=AddressPolicy(), connect_timeout=10.0, read_timeout=10.0, total_timeout=30.0)


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.8.9.10", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1",
    "0.0.0.0", "224.0.0.251", "239.255.255.250", "240.0.0.1", "255.255.255.255", "192.0.2.1", "198.18.0.1",
    "::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254",
    "::ffff:10.1.2.3", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "2001:db8::1", "::127.0.0.1",
])
def test_non_global_addresses_are_refused(address):
    assert non_global_reason(ipaddress.ip_address(address)) is not None
    assert AddressPolicy().refusal("feeds.example", ipaddress.ip_address(address))


@pytest.mark.parametrize(("network", "reason", "_source"), NON_PUBLIC_NETWORKS)
def test_every_non_public_range_is_refused_end_to_end(network, reason, _source):
    """Each entry of the table: its first, middle and last address are refused."""
    net = ipaddress.ip_network(network)
    first, last = net.network_address, net.broadcast_address
    middle = ipaddress.ip_address(int(first) + (int(last) - int(first)) // 2)
    for address in (first, middle, last):
        assert non_global_reason(address) is not None, address
        assert AddressPolicy().refusal("feeds.example", address), address
    if net.version == 4 or not (net.subnet_of(ipaddress.ip_network("::/8"))
                                or net.subnet_of(ipaddress.ip_network("2001::/32"))):
        assert non_global_reason(middle) == reason  # not judged by an embedded IPv4


@pytest.mark.parametrize("address", ["fec0::1", "fefe::1", "192.0.0.8", "192.0.0.9", "192.0.0.10",
                                     "64:ff9b:1::a00:1", "3fff::1", "5f00::1", "1fff::1", "4000::1"])
def test_ranges_python_counts_as_global_are_refused(address):
    """Python 3.11's ipaddress calls each of these global; the table does not."""
    assert non_global_reason(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ["100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0", "192.0.1.0",
                                     "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0",
                                     "223.255.255.255", "11.0.0.0", "126.255.255.255", "128.0.0.0",
                                     "2000::1", "2001:200::1", "2001:db9::1", "3ffe::1", "3fff:1000::1"])
def test_addresses_just_outside_the_ranges_are_public(address):
    assert non_global_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "2a00:1450:4001:80b::200e",
                                     "::ffff:93.184.215.14", "2002:5db8:d70e::1"])
def test_public_addresses_are_allowed(address):
    assert non_global_reason(ipaddress.ip_address(address)) is None


def test_allow_list_by_network_and_host_name():
    policy = AddressPolicy.from_entries(["10.20.0.0/16", "intranet.corp.example", "*.feeds.corp.example"])
    assert policy.refusal("x", ipaddress.ip_address("10.20.3.4")) is None
    assert policy.refusal("x", ipaddress.ip_address("::ffff:10.20.3.4")) is None
    assert policy.refusal("x", ipaddress.ip_address("10.21.0.1"))
    assert policy.refusal("intranet.corp.example", ipaddress.ip_address("192.168.0.9")) is None
    assert policy.refusal("a.feeds.corp.example", ipaddress.ip_address("192.168.0.9")) is None
    assert policy.refusal("feeds.corp.example.evil.example", ipaddress.ip_address("192.168.0.9"))
    with pytest.raises(ValueError):
        AddressPolicy.from_entries(["http://x/"])


def test_loopback_feed_is_refused_without_the_allow_list(conn):
    """Through the ingest path: the refusal is the source's recorded error, the server sees nothing."""
    with FeedServer() as server:
        server.add("/feed.xml", GOOD_A)
        port = server.base_url.rsplit(":", 1)[1]
        sources = [Source(id="loop", name="l", feed_url=server.url("/feed.xml"), language="en", country="GB"),
                   Source(id="name", name="n", feed_url=f"http://localhost:{port}/feed.xml", language="en",
                          country="GB"),
                   Source(id="decimal", name="d", feed_url=f"http://2130706433:{port}/feed.xml", language="en",
                          country="GB")]
        report = ingest_partition(conn, sources, H, mode="live", fetch_config=PUBLIC_ONLY)
        assert server.count("/feed.xml") == 0
    rows = {row.source_id: row for row in report.rows}
    for source_id in ("loop", "name", "decimal"):
        assert rows[source_id].status == "error" and rows[source_id].attempts == 1  # never retried
        assert "loopback address" in rows[source_id].error and "NEWSDEDUP_FETCH_ALLOW_PRIVATE" in rows[source_id].error
    stored = dict(conn.execute("SELECT source_id, error FROM feed_fetches WHERE status = 'error'").fetchall())
    assert set(stored) == {"loop", "name", "decimal"} and "refused to connect" in stored["loop"]

    # The same source, an intranet feed (allow_private: true), with the allow-list setting: fetched.
    with FeedServer() as server:
        server.add("/feed.xml", GOOD_A)
        sources = [Source(id="loop", name="l", feed_url=server.url("/feed.xml"), language="en", country="GB",
                          allow_private=True)]
        allowed = ingest_partition(conn, sources, H, mode="live", fetch_config=FAST)
    assert {row.source_id: (row.status, row.items) for row in allowed.rows}["loop"] == ("ok", 5)


def test_only_sources_that_allow_private_reach_the_allowed_network(conn, tmp_path):
    """NEWSDEDUP_FETCH_ALLOW_PRIVATE=127.0.0.0/8 with a sources file where one entry says
    `allow_private: true`: that feed is fetched; a feed without it on the same server (by address,
    by a name that resolves into the network, or by a decimal address) is refused with the reason,
    never retried, and the server sees no request from it."""
    with FeedServer() as server:
        for path in ("/intranet.xml", "/by-address.xml", "/by-name.xml", "/decimal.xml"):
            server.add(path, GOOD_A)
        port = server.base_url.rsplit(":", 1)[1]
        sources_file = tmp_path / "sources.yaml"
        sources_file.write_text(
            "sources:\n"
            f"  - {{id: intranet, name: I, feed_url: '{server.url('/intranet.xml')}', language: en, country: GB,\n"
            "     allow_private: true}\n"
            f"  - {{id: by-address, name: A, feed_url: '{server.url('/by-address.xml')}', language: en, country: GB,\n"
            "     allow_private: false}\n"
            f"  - {{id: by-name, name: N, feed_url: 'http://localhost:{port}/by-name.xml', language: en, country: GB}}\n"
            f"  - {{id: decimal, name: D, feed_url: 'http://2130706433:{port}/decimal.xml', language: en,"
            " country: GB}\n", encoding="utf-8")
        sources = load_sources(sources_file)
        assert [s.allow_private for s in sources] == [True, False, False, False]
        report = ingest_partition(conn, sources, H, mode="live", fetch_config=FAST)
        requested = {request.path for request in server.requests}
    rows = {row.source_id: row for row in report.rows}
    assert (rows["intranet"].status, rows["intranet"].items) == ("ok", 5)
    assert requested == {"/intranet.xml"}
    for source_id in ("by-address", "by-name", "decimal"):
        row = rows[source_id]
        assert row.status == "error" and row.attempts == 1, row
        assert "loopback address" in row.error and "allow_private: true" in row.error
    assert conn.execute("SELECT count(*) FROM items WHERE source_id <> 'intranet'").fetchone()[0] == 0


def test_allow_private_without_the_deployment_setting_reaches_public_addresses_only(conn):
    """`allow_private: true` alone opens nothing: the networks are the deployment's statement."""
    with FeedServer() as server:
        server.add("/feed.xml", GOOD_A)
        sources = [Source(id="intranet", name="i", feed_url=server.url("/feed.xml"), language="en", country="GB",
                          allow_private=True)]
        report = ingest_partition(conn, sources, H, mode="live", fetch_config=PUBLIC_ONLY)
        assert server.count("/feed.xml") == 0
    [row] = report.rows
    assert row.status == "error" and "NEWSDEDUP_FETCH_ALLOW_PRIVATE" in row.error


@pytest.mark.parametrize("target", ["http://169.254.169.254/latest/meta-data/", "http://[::ffff:127.0.0.2]:{port}/ok",
                                    "http://10.0.0.1/feed", "http://[::1]:{port}/ok", "http://127.0.0.2:{port}/ok",
                                    "http://2130706434:{port}/ok"])
def test_redirect_to_a_private_address_is_refused(target):
    with FeedServer(hosts=["127.0.0.1", "127.0.0.2"]) as server:
        port = server.base_urls[1].rsplit(":", 1)[1]
        server.add("/ok", GOOD_A)
        server.redirect("/start", target.format(port=port))
        only_first = replace(FAST, address_policy=AddressPolicy.from_entries(["127.0.0.1/32"]))
        [result] = fetch_feeds_sync([FetchRequest("r", server.url("/start"), allow_private=True)], only_first)
        assert server.count("/ok") == 0
    assert result.status == "error" and result.attempts == 1
    assert "refused to connect" in result.error and "redirected to" in result.error


def test_connects_to_the_address_it_checked():
    """The backend resolves once and hands the checked address, never the name, to the socket layer
    (a recording inner backend stands in for the socket layer: no other way to observe it)."""
    calls = []

    class Recorder(httpcore.AsyncNetworkBackend):
        async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            calls.append(host)
            raise httpcore.ConnectError("stop here")

    async def run(host):
        backend = GuardedBackend(AddressPolicy.from_entries(["localhost"]), inner=Recorder())
        with pytest.raises(httpcore.ConnectError):
            await backend.connect_tcp(host, 80, timeout=5)

    asyncio.run(run("localhost"))
    assert calls and all(ipaddress.ip_address(host).is_loopback for host in calls)

    async def refused():
        with pytest.raises(AddressRefused):
            await GuardedBackend(AddressPolicy(), inner=Recorder()).connect_tcp("localhost", 80, timeout=5)

    calls.clear()
    asyncio.run(refused())
    assert calls == []  # refused before any connection attempt


def test_validators_and_cookies_stay_with_their_origin():
    """Validators go to the feed's own origin (scheme, host and port), also after a redirect within
    it; no cookie is ever sent back."""
    with FeedServer() as server:
        server.route("/moved", Response(status=302, headers={"Location": "/feed", "Content-Length": "0",
                                                             "Set-Cookie": "session=secret; Path=/"}))
        server.route("/feed", Response(body=GOOD_A, headers={"Content-Type": "application/rss+xml", "ETag": '"x"',
                                                             "Set-Cookie": "tracker=1; Path=/"}))
        request = FetchRequest("m", server.url("/moved"), etag='"old"', last_modified="Mon, 02 Nov 2026 09:00:00 GMT",
                               allow_private=True)
        [first] = fetch_feeds_sync([request], FAST)
        [again] = fetch_feeds_sync([request], FAST)
        moved, landed = server.requests_for("/moved")[0], server.requests_for("/feed")[0]
    assert first.status == "ok" and again.status == "ok"
    assert moved.headers.get("if-none-match") == '"old"' and landed.headers.get("if-none-match") == '"old"'
    assert first.etag == '"x"'  # the feed's own origin's validator is kept
    assert all("cookie" not in r.headers for r in server.requests)


@pytest.mark.parametrize(("url", "same"), [
    ("http://127.0.0.1:8080/a", True), ("http://127.0.0.1:8080/b?c#d", True), ("HTTP://127.0.0.1:8080/", True),
    ("http://127.0.0.1:8081/a", False), ("https://127.0.0.1:8080/a", False), ("http://localhost:8080/a", False),
    ("http://127.0.0.2:8080/a", False),
])
def test_origin_is_scheme_host_and_port(url, same):
    assert same_origin(url, "http://127.0.0.1:8080/feed.xml") is same
    assert same_origin("https://feeds.example/x", "https://feeds.example:443/y")
    assert same_origin("http://feeds.example/x", "http://FEEDS.example.:80/y")


def test_redirect_to_another_port_of_an_allowed_network_is_refused(conn):
    """NEWSDEDUP_FETCH_ALLOW_PRIVATE=127.0.0.1/32 opens the feed's own origin only: its redirect to
    another port of the same host (an admin service on the allowed network) is refused, the admin
    service sees no request, with or without validators, and nothing of it is stored."""
    with FeedServer() as feed, FeedServer() as admin:
        admin.add("/admin", rss([{"title": "ADMIN SECRET token=hunter2", "link": admin.url("/admin/1"), "guid": "a"}]))
        feed.redirect("/feed.xml", admin.url("/admin"))
        feed.add("/plain.xml", GOOD_A)
        only_loopback = replace(FAST, address_policy=AddressPolicy.from_entries(["127.0.0.1/32"]))
        sources = [Source(id="redirecting", name="r", feed_url=feed.url("/feed.xml"), language="en", country="GB",
                          allow_private=True),
                   Source(id="plain", name="p", feed_url=feed.url("/plain.xml"), language="en", country="GB",
                          allow_private=True)]
        conn.execute("INSERT INTO sources (id, name, feed_url, language, etag, last_modified) VALUES "
                     "('redirecting', 'r', %s, 'en', '\"v1\"', 'Mon, 02 Nov 2026 09:00:00 GMT')", (feed.url("/feed.xml"),))
        conn.commit()
        report = ingest_partition(conn, sources, H, mode="live", fetch_config=only_loopback)
        assert admin.requests == []
        assert feed.requests_for("/feed.xml")[0].headers.get("if-none-match") == '"v1"'
    rows = {row.source_id: row for row in report.rows}
    assert rows["plain"].status == "ok" and rows["plain"].items == 5  # the feed's own origin is allowed
    assert rows["redirecting"].status == "error" and rows["redirecting"].attempts == 1
    assert "another origin" in rows["redirecting"].error and "redirected to" in rows["redirecting"].error
    assert conn.execute("SELECT count(*) FROM items WHERE title LIKE '%ADMIN%'").fetchone()[0] == 0
@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(folder / "key.pem"),
                    "-out", str(folder / "cert.pem")], check=True, capture_output=True)
    return folder / "cert.pem", folder / "key.pem"


def test_https_to_http_redirect_is_refused(tls_files, monkeypatch):
    cert, key = tls_files
    with FeedServer() as plain:
        plain.add("/feed", GOOD_A)
        target = plain.url("/feed")

        class Redirect(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                self.send_response(301)
                self.send_header("Location", target if self.path == "/down" else "/ok")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        try:
            monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trust the test certificate
            config = replace(FAST, trust_env=True, total_timeout=10.0, read_timeout=5.0)
            request = FetchRequest("tls", f"https://127.0.0.1:{httpd.server_port}/down", allow_private=True)
            [result] = fetch_feeds_sync([request], config)
        finally:
            httpd.shutdown()
            httpd.server_close()
        assert plain.count("/feed") == 0
    assert result.status == "error" and "redirect from https to http refused" in result.error
