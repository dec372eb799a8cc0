"""Ingestion against a real PostgreSQL (conftest's embedded server) and a real HTTP server."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from feedserver import FAST, FeedServer, rss

from newsdedup_dagster.shared.http.fetch import FetchResult
from newsdedup_dagster.shared.sources import Source
from newsdedup_dagster.stages.ingest.store import (
    LIVE_GRACE,
    archive_fetches,
    choose_mode,
    ingest_jsonl_partition,
    ingest_partition,
    load_archived_fetches,
    sync_sources,
)

H = datetime(2026, 11, 2, 10, tzinfo=UTC)
SHARED_URL = "https://wire.example.com/2026/11/02/quake-hits-coast"


def feed_one():
    return rss([
        {"title": "Quake hits coast", "link": SHARED_URL + "?utm_source=one", "guid": "one-1",
         "pubDate": "Mon, 02 Nov 2026 09:40:00 +0000"},
        {"title": "Markets rally", "link": "https://one.example.com/markets", "guid": "one-2",
         "pubDate": "Mon, 02 Nov 2026 09:50:00 +0000"},
        {"title": "Undated note", "link": "https://one.example.com/note", "guid": "one-3"},
    ])


def feed_two():
    return rss([
        {"title": "Strong quake hits the coast", "link": "http://www.wire.example.com/2026/11/02/quake-hits-coast/",
         "guid": "two-1", "pubDate": "Mon, 02 Nov 2026 09:45:00 +0000"},
        {"title": "Election results", "link": "https://two.example.com/election", "guid": "two-2",
         "pubDate": "Mon, 02 Nov 2026 09:55:00 +0000"},
    ])


def make_sources(server: FeedServer, *, bad: bool = True) -> list[Source]:
    sources = [
        Source(id="one", name="One", feed_url=server.url("/one.xml"), language="en", country="GB", allow_private=True),
        Source(id="two", name="Two", feed_url=server.url("/two.xml"), language="en", country="US", allow_private=True),
    ]
    if bad:
        sources.append(Source(id="broken", name="Broken", feed_url=server.url("/broken.xml"), language="en",
                              country="US", allow_private=True))
    return sources


def snapshot(conn):
    items = conn.execute(
        "SELECT id, canonical_url, url, guid, title, summary, content, author, lang, lang_origin, published_at,"
        " date_flag, partition_hour, source_id, fetch_id, ingested_at FROM items ORDER BY id").fetchall()
    links = conn.execute("SELECT item_id, source_id, url, guid, fetch_id, partition_hour, first_seen_at"
                         " FROM item_sources ORDER BY item_id, source_id").fetchall()
    fetches = conn.execute("SELECT id, source_id, partition_hour, mode, status, http_status, etag, last_modified,"
                           " body_gzip, body_bytes, parse_error, items_parsed FROM feed_fetches ORDER BY id").fetchall()
    sources = conn.execute("SELECT id, name, feed_url, enabled, etag, last_modified, disabled_at"
                           " FROM sources ORDER BY id").fetchall()
    return items, links, fetches, sources


@pytest.fixture()
def server(feed_server):
    feed_server.conditional("/one.xml", feed_one(), etag='"one-v1"')
    feed_server.conditional("/two.xml", feed_two(), last_modified="Mon, 02 Nov 2026 09:58:00 GMT")
    feed_server.add("/broken.xml", b"down", status=500, content_type="text/plain")
    return feed_server


# ------------------------------------------------------------------ sources


def test_sync_sources_adds_changes_disables_never_deletes(conn):
    base = [Source(id="a", name="A", feed_url="https://a.example.com/rss", language="en", country="GB"),
            Source(id="b", name="B", feed_url="https://b.example.com/rss", language="fr", country="FR")]
    with conn.transaction():
        first = sync_sources(conn, base)
    assert (first.added, first.changed, first.disabled) == (("a", "b"), (), ())
    conn.execute("UPDATE sources SET etag = 'e', last_modified = 'lm'")
    with conn.transaction():
        same = sync_sources(conn, base)
    assert (same.added, same.changed, same.disabled) == ((), (), ())
    moved = [replace(base[0], feed_url="https://a.example.com/rss2", name="A2"),
             Source(id="c", name="C", feed_url="https://b.example.com/rss", language="fr", country="FR")]
    with conn.transaction():
        second = sync_sources(conn, moved)
    assert (second.added, second.changed, second.disabled, second.retired_urls) == (("c",), ("a",), ("b",), ("b",))
    rows = {r[0]: r[1:] for r in conn.execute(
        "SELECT id, feed_url, enabled, etag, last_modified, disabled_at IS NOT NULL FROM sources")}
    assert rows["a"] == ("https://a.example.com/rss2", True, None, None, False)  # new URL: validators dropped
    assert rows["b"] == ("https://b.example.com/rss#retired-for=c", False, "e", "lm", True)  # kept, disabled
    assert rows["c"][:2] == ("https://b.example.com/rss", True)
    with conn.transaction():
        third = sync_sources(conn, moved + [replace(base[1], feed_url="https://b.example.com/rss-new")])
    assert third.changed == ("b",)
    assert conn.execute("SELECT enabled, disabled_at FROM sources WHERE id = 'b'").fetchone() == (True, None)


# ------------------------------------------------------------------ live ingestion


def test_live_ingest_archives_dedups_and_reruns_identically(conn, server):
    sources = make_sources(server)
    report = ingest_partition(conn, sources, H, mode="live", fetch_config=FAST)
    rows = {row.source_id: row for row in report.rows}
    assert (rows["one"].status, rows["one"].items, rows["one"].new_items) == ("ok", 3, 3)
    assert (rows["two"].status, rows["two"].items, rows["two"].new_items) == ("ok", 2, 1)  # the quake is shared
    assert rows["two"].new_links == 2
    assert rows["broken"].status == "error" and rows["broken"].error.startswith("HTTP 500")
    assert report.sources_sync.added == ("broken", "one", "two")
    assert (report.items_seen, report.new_items, report.partition_items) == (4, 4, 5)
    assert "| broken | fetched | error | 500 |" in report.as_markdown()

    shared = conn.execute("SELECT i.id, i.source_id, array_agg(s.source_id ORDER BY s.source_id) FROM items i"
                          " JOIN item_sources s ON s.item_id = i.id WHERE i.canonical_url = %s GROUP BY i.id",
                          ("https://wire.example.com/2026/11/02/quake-hits-coast",)).fetchall()
    assert len(shared) == 1 and shared[0][1] == "one" and shared[0][2] == ["one", "two"]
    fetches = conn.execute("SELECT source_id, status, body_gzip, body_bytes, items_parsed FROM feed_fetches"
                           " ORDER BY source_id").fetchall()
    assert [(f[0], f[1]) for f in fetches] == [("broken", "error"), ("one", "ok"), ("two", "ok")]
    assert gzip.decompress(fetches[1][2]) == feed_one() and fetches[1][3] == len(feed_one())
    assert fetches[1][4] == 3
    assert conn.execute("SELECT etag, last_modified FROM sources WHERE id = 'one'").fetchone() == ('"one-v1"', None)
    assert conn.execute("SELECT etag, last_modified FROM sources WHERE id = 'two'").fetchone() == (
        None, "Mon, 02 Nov 2026 09:58:00 GMT")

    before = snapshot(conn)
    hits = (server.count("/one.xml"), server.count("/two.xml"))
    again = ingest_partition(conn, sources, H, mode="live", fetch_config=FAST)
    after = snapshot(conn)
    # The healthy sources are re-parsed from the archive (no refetch); the broken one is retried.
    assert (server.count("/one.xml"), server.count("/two.xml")) == hits
    assert {r.source_id: r.origin for r in again.rows} == {"broken": "fetched", "one": "archive", "two": "archive"}
    assert again.new_items == 0 and again.partition_items == 5
    assert before[0] == after[0] and before[1] == after[1]  # items and item_sources identical
    assert after[2][:3] == before[2] and len(after[2]) == 4  # one more archived error for the retried source


def test_next_hour_conditional_get_and_backfill_from_archive(conn, server):
    sources = make_sources(server, bad=False)
    ingest_partition(conn, sources, H, mode="live", fetch_config=FAST)
    next_hour = ingest_partition(conn, sources, H + timedelta(hours=1), mode="live", fetch_config=FAST)
    assert {r.source_id: r.status for r in next_hour.rows} == {"one": "not_modified", "two": "not_modified"}
    assert next_hour.new_items == 0
    sent = server.requests_for("/one.xml")[-1].headers
    assert sent["if-none-match"] == '"one-v1"'
    assert server.requests_for("/two.xml")[-1].headers["if-modified-since"] == "Mon, 02 Nov 2026 09:58:00 GMT"

    # Backfill H from its archive: drop the hour's items, re-parse, compare.
    before = snapshot(conn)
    conn.execute("DELETE FROM items WHERE partition_hour = %s", (H,))
    conn.commit()
    hits = len(server.requests)
    backfill = ingest_partition(conn, sources, H, mode="archive", fetch_config=FAST)
    assert len(server.requests) == hits  # never fetched
    assert {r.origin for r in backfill.rows} == {"archive"} and backfill.new_items == 4
    after = snapshot(conn)
    strip = lambda rows: [r[:-1] for r in rows]  # noqa: E731 - ingested_at / first_seen_at are insert times
    assert strip(after[0]) == strip(before[0]) and strip(after[1]) == strip(before[1])

    # An hour that was never fetched has nothing to backfill, and is not fetched either.
    empty = ingest_partition(conn, sources, H - timedelta(days=3), mode="archive")
    assert {r.status for r in empty.rows} == {"no_archive"} and len(server.requests) == hits


def test_archived_bozo_and_html_are_recorded(conn):
    with FeedServer() as server:
        server.add("/html.xml", b"<html><body>Not a feed</body></html>", content_type="text/html")
        server.add("/bozo.xml", b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
                               b"<item><title>Kept</title><link>https://ex.com/kept</link></item><item><title>x")
        sources = [Source(id="html", name="h", feed_url=server.url("/html.xml"), language="en", country="US",
                          allow_private=True),
                   Source(id="bozo", name="b", feed_url=server.url("/bozo.xml"), language="en", country="US",
                          allow_private=True)]
        report = ingest_partition(conn, sources, H, mode="live", fetch_config=FAST)
    rows = {r.source_id: r for r in report.rows}
    assert rows["html"].status == "ok" and rows["html"].error.startswith("not a feed")
    assert rows["bozo"].items >= 1 and rows["bozo"].bozo_error
    parse_errors = dict(conn.execute("SELECT source_id, parse_error FROM feed_fetches").fetchall())
    assert parse_errors["html"].startswith("not a feed") and parse_errors["bozo"].startswith("malformed feed")


# ------------------------------------------------------------------ replay


def test_replay_mode_hour_by_hour_is_complete_and_repeatable(conn, tmp_path):
    entries = [{"title": f"Story {h}", "link": f"/s/{h}", "guid": f"g{h}",
                "pubDate": f"Mon, 02 Nov 2026 {h:02d}:15:00 +0000"} for h in range(8, 14)]
    (tmp_path / "paper.xml").write_bytes(rss(entries, link=""))
    sources = [Source(id="paper", name="Paper", feed_url="https://paper.example.com/rss", language="en",
                      country="GB", replay_file=tmp_path / "paper.xml"),
               Source(id="nofile", name="No file", feed_url="https://nofile.example.com/rss", language="en",
                      country="GB")]
    new_by_hour = {}
    for hour in range(9, 14):
        report = ingest_partition(conn, sources, H.replace(hour=hour), mode="replay")
        new_by_hour[hour] = report.new_items
        assert {r.source_id: r.status for r in report.rows} == {"paper": "ok", "nofile": "no_replay_file"}
    assert new_by_hour == {9: 2, 10: 1, 11: 1, 12: 1, 13: 1}
    assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == 6
    urls = [r[0] for r in conn.execute("SELECT url FROM items ORDER BY url")]
    assert urls[0] == "https://paper.example.com/s/10"
    before = snapshot(conn)
    rerun = ingest_partition(conn, sources, H.replace(hour=11), mode="replay")
    assert rerun.rows[1].origin == "archive" and rerun.new_items == 0
    assert snapshot(conn) == before
    modes = {r[0] for r in conn.execute("SELECT DISTINCT mode FROM feed_fetches")}
    assert modes == {"replay"}


def test_jsonl_ingest(conn, tmp_path):
    rows = [
        {"id": "x1", "title": "Quake hits coast", "text": "A strong quake.", "lang": "en",
         "published_at": "2026-11-02T10:05:00+00:00", "source": "en.example.org"},
        {"id": "x2", "title": "Séisme sur la côte", "text": "Un séisme.", "lang": "fr",
         "published_at": "2026-11-02T10:06:00+00:00", "source": "fr.example.org", "url": "https://fr.example.org/s"},
        {"id": "x3", "title": "Later", "text": "", "lang": "en", "published_at": "2026-11-02T12:00:00+00:00",
         "source": "en.example.org"},
    ]
    path = tmp_path / "dump.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    report = ingest_jsonl_partition(conn, path, H)
    assert report.new_items == 2 and report.partition_items == 2
    assert sorted(r.source_id for r in report.rows) == ["en-example-org", "fr-example-org"]
    assert ingest_jsonl_partition(conn, path, H).new_items == 0
    stored = conn.execute("SELECT id, feed_url, language, country FROM sources ORDER BY id").fetchall()
    assert stored[0] == ("en-example-org", "replay:jsonl/dump.jsonl/en-example-org", "en", None)
    with conn.transaction():
        sync = sync_sources(conn, [Source(id="cfg", name="c", feed_url="https://c.example.com/", language="en",
                                          country="US")])
    assert sync.disabled == ()  # dump sources are not part of the configuration


# ------------------------------------------------------------------ pieces


def test_archive_roundtrip(conn):
    with conn.transaction():
        sync_sources(conn, [Source(id="s", name="s", feed_url="https://s.example.com/", language="en", country="US")])
        result = FetchResult(source_id="s", url="https://s.example.com/", final_url="https://s.example.com/feed",
                             status="ok", http_status=200, elapsed_ms=12, etag='"e"', last_modified=None,
                             body=b"<rss/>" * 100, content_type="application/rss+xml", attempts=2,
                             fetched_at=H + timedelta(minutes=5))
        ids = archive_fetches(conn, [result], H, "live")
    archived = load_archived_fetches(conn, H)
    assert len(archived) == 1 and archived[0].fetch_id == ids["s"]
    back = archived[0].result
    assert (back.body, back.etag, back.final_url, back.attempts, back.fetched_at) == (
        result.body, '"e"', result.final_url, 2, result.fetched_at)
    assert load_archived_fetches(conn, H + timedelta(hours=1)) == []


def test_choose_mode():
    now = datetime(2026, 11, 2, 12, 5, tzinfo=UTC)
    assert choose_mode(datetime(2026, 11, 2, 11, tzinfo=UTC), "live", now) == "live"
    assert choose_mode(datetime(2026, 11, 2, 12, tzinfo=UTC), "live", now) == "live"
    # H = 10:00 ends 11:00; live until 13:00. H = 09:00 ended 10:00; at 12:05 it is a backfill.
    assert choose_mode(now.replace(minute=0) - LIVE_GRACE, "live", now) == "live"
    assert choose_mode(now.replace(minute=0) - LIVE_GRACE - timedelta(hours=1), "live", now) == "archive"
    assert choose_mode(datetime(2020, 1, 1, tzinfo=UTC), "replay", now) == "replay"
    with pytest.raises(ValueError):
        choose_mode(datetime(2026, 11, 2, 11, 30, tzinfo=UTC), "live", now)
