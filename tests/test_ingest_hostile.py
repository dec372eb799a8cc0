"""Hostile feeds through the real ingest path: a real HTTP server on 127.0.0.1, the real
fetcher, parser worker processes and the embedded PostgreSQL. Each hostile feed is served
between two healthy ones; the healthy ones must be stored whole, the hostile one must only
affect itself (entries skipped with a counted reason, or the source recorded as failed),
and a rerun of the hour (re-parsing the archive) must leave the database identical."""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import subprocess
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from feedserver import FAST, GOOD_A, GOOD_B, FeedServer, rss, rss_entries
from helpers import calibrate

from newsdedup_dagster.shared.sources import Source
from newsdedup_dagster.stages.ingest.feed_parse import parse_feed
from newsdedup_dagster.stages.ingest.parse_types import ParseConfig
from newsdedup_dagster.stages.ingest.store import ingest_partition

H = datetime(2026, 11, 2, 10, tzinfo=UTC)
FETCH = replace(FAST, total_timeout=30.0, read_timeout=10.0)
REPO = Path(__file__).resolve().parent.parent
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def snapshot(conn):
    items = conn.execute("SELECT id, canonical_url, url, guid, title, summary, content, author, lang, published_at,"
                         " date_flag, source_id, fetch_id FROM items ORDER BY id").fetchall()
    links = conn.execute("SELECT item_id, source_id, url, guid, fetch_id FROM item_sources"
                         " ORDER BY item_id, source_id").fetchall()
    fetches = conn.execute("SELECT id, source_id, status, error, parse_error, parse_status, items_parsed,"
                           " entries_total, skipped, repairs FROM feed_fetches ORDER BY id").fetchall()
    return items, links, fetches


def hostile_hour(conn, body: bytes, *, parse_config: ParseConfig = ParseConfig(), headers=None,
                 content_type="application/rss+xml; charset=utf-8", rerun=True):
    """Ingest [good-a, hostile, good-b] for hour H, check isolation and an identical rerun;
    return (hostile report row, elapsed seconds of the first run)."""
    with FeedServer() as server:
        server.add("/good-a.xml", GOOD_A)
        server.add("/good-b.xml", GOOD_B)
        server.add("/hostile.xml", body, content_type=content_type, headers=headers)
        sources = [Source(id=name, name=name, feed_url=server.url(f"/{name}.xml"), language="en", country="GB",
                          allow_private=True)
                   for name in ("good-a", "hostile", "good-b")]
        started = time.monotonic()
        report = ingest_partition(conn, sources, H, mode="live", fetch_config=FETCH, parse_config=parse_config)
        elapsed = time.monotonic() - started
        rows = {row.source_id: row for row in report.rows}
        for name, expected in (("good-a", 5), ("good-b", 7)):
            assert (rows[name].status, rows[name].error, rows[name].items) == ("ok", None, expected)
            assert rows[name].parse_status == "ok"
        stored = dict(conn.execute("SELECT source_id, count(*) FROM item_sources GROUP BY source_id").fetchall())
        assert stored.get("good-a") == 5 and stored.get("good-b") == 7
        # Nothing PostgreSQL or a reader would choke on was stored.
        for row in conn.execute("SELECT title, summary, coalesce(content, ''), url, canonical_url, coalesce(guid, ''),"
                                " coalesce(author, '') FROM items").fetchall():
            for value in row:
                assert not CONTROL.search(value), value[:80]
        if rerun:
            before = snapshot(conn)
            hits = server.count("/hostile.xml")
            again = ingest_partition(conn, sources, H, mode="live", fetch_config=FETCH, parse_config=parse_config)
            if rows["hostile"].status != "error":
                assert server.count("/hostile.xml") == hits  # re-parsed from the archive, not refetched
                assert snapshot(conn) == before
                again_row = {r.source_id: r for r in again.rows}["hostile"]
                assert (again_row.items, again_row.skipped, again_row.error, again_row.parse_status) == (
                    rows["hostile"].items, rows["hostile"].skipped, rows["hostile"].error, rows["hostile"].parse_status)
    return rows["hostile"], elapsed


def fetch_row(conn, source_id="hostile"):
    return conn.execute("SELECT status, error, parse_error, parse_status, items_parsed, entries_total, skipped, repairs"
                        " FROM feed_fetches WHERE source_id = %s ORDER BY id LIMIT 1", (source_id,)).fetchone()


# ------------------------------------------------------------------ character references


def test_issue_reproduction_parses_instead_of_raising():
    body = b"<rss version='2.0'><channel><item><title>x &#x110000; y</title><link>http://a.example/1</link></item></channel></rss>"
    parsed = parse_feed(body, source_id="s", fetched_at=H)
    assert parsed.error is None and [item.title for item in parsed.items] == ["x \ufffd y"]
    assert parsed.repairs == {"charrefs_replaced": 1}


def test_character_references_outside_unicode_and_surrogates(conn):
    body = rss([
        {"title": "Out of range &#x110000; title", "link": "https://ex.com/1", "description": "ok"},
        {"title": "Huge &#99999999999; number", "link": "https://ex.com/2&#x110000;", "description": "s &#xD800; s"},
        {"title": "Surrogate &#xD800;&#xDFFF; pair", "link": "https://ex.com/3", "guid": "g&#99999999999;"},
        {"title": "Double escaped &amp;#x110000; and &amp;#xD800;", "link": "https://ex.com/4&#xDC00;"},
        {"title": "Very long reference &#" + "9" * 5000 + ";", "link": "https://ex.com/5"},
        {"title": "Plain neighbour", "link": "https://ex.com/6"},
    ])
    row, _ = hostile_hour(conn, body)
    assert row.error is None and row.items == 6 and row.skipped == {}
    assert row.repairs["charrefs_replaced"] >= 8
    titles = dict(conn.execute("SELECT url, title FROM items WHERE source_id = 'hostile'").fetchall())
    assert titles["https://ex.com/1"] == "Out of range \ufffd title"
    # Escaped twice, the reference reaches the HTML stripper, which decodes it as browsers do.
    assert "Double escaped \ufffd and \ufffd" in titles.values()
    assert "Surrogate \ufffd\ufffd pair" in titles.values()
    assert fetch_row(conn)[3] == "ok"


# ------------------------------------------------------------------ control characters


def test_nul_and_control_characters_in_every_field(conn):
    raw = ('<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Ctl\x00 feed</title>'
           '<item><title>NUL\x00 in title\x01\x1b</title><link>https://ex.com/a\x00b</link>'
           '<guid isPermaLink="false">g\x00uid-1</guid><description>sum\x00mary \x07bell</description>'
           '<author>au\x00thor</author></item>'
           '<item><title>Escaped &#0; and &#x1B; refs</title><link>https://ex.com/c&#0;d\x0b</link></item>'
           '<item><title>C1 \u0085 next line \u009b csi</title><link>https://ex.com/e\u0085f</link></item>'
           '<item><title>Tab\tand newline\nin link</title><link>https://ex.com/g\th\ni</link></item>'
           '</channel></rss>').encode("utf-8")
    row, _ = hostile_hour(conn, raw)
    assert row.error is None and row.items == 4
    assert row.repairs["control_chars_removed"] >= 7 and row.repairs["charrefs_replaced"] >= 3
    urls = sorted(r[0] for r in conn.execute("SELECT url FROM items WHERE source_id = 'hostile'"))
    # feedparser maps C1 controls to their Windows-1252 characters (U+0085 -> U+2026) before we see them;
    # links are stored as a browser serialises them (WHATWG: non-ASCII path bytes percent-encoded).
    assert urls == ["https://ex.com/ab", "https://ex.com/cd", "https://ex.com/e%E2%80%A6f", "https://ex.com/ghi"]


# ------------------------------------------------------------------ long links and GUIDs


def test_links_and_guids_of_several_kilobytes(conn):
    prefix = "https://ex.com/" + "a" * 2900
    body = rss([
        {"title": "Long link one", "link": prefix + "/one", "guid": "long-1"},
        {"title": "Long link two", "link": prefix + "/two", "guid": "long-2"},  # same 2.9 KB prefix
        {"title": "Long link, URL guid", "link": prefix + "/three", "guid": "https://ex.com/three"},
        {"title": "Long guid one", "link": "https://ex.com/g1", "guid": "G" * 8000 + "1"},
        {"title": "Long guid two", "link": "https://ex.com/g2", "guid": "G" * 8000 + "2"},
        {"title": "Link of 9 KB without guid", "link": "https://ex.com/" + "b" * 9000},
        {"title": "Normal", "link": "https://ex.com/normal"},
    ])
    row, _ = hostile_hour(conn, body)
    assert row.error is None and row.items == 7
    assert row.repairs["links_dropped"] == 4 and row.repairs["guids_cut"] == 2
    stored = conn.execute("SELECT title, url, canonical_url, guid FROM items WHERE source_id = 'hostile'"
                          " ORDER BY title").fetchall()
    assert max(len(r[1]) for r in stored) <= 2048 and max(len(r[2]) for r in stored) <= 2048
    by_title = {r[0]: r for r in stored}
    assert by_title["Long link, URL guid"][1] == "https://ex.com/three"  # the guid's URL stands in
    assert by_title["Long link one"][2] != by_title["Long link two"][2]  # distinct synthetic identities
    guids = [by_title["Long guid one"][3], by_title["Long guid two"][3]]
    assert len(set(guids)) == 2 and all(len(g) <= 1024 for g in guids)


# ------------------------------------------------------------------ entity expansion


def entity_bomb(references: int = 20_000, value_chars: int = 20_000, items: int = 100) -> bytes:
    """~87 KB: one internal entity of 20,000 characters referenced 20,000 times (expat refuses
    it; feedparser's loose parser then expands it to hundreds of MB)."""
    head = ('<?xml version="1.0"?>\n<!DOCTYPE rss [\n<!ENTITY a "' + "x" * value_chars + '">\n]>\n'
            '<rss version="2.0"><channel><title>Bomb</title>')
    per_item = references // items
    body = "".join(f"<item><title>story {k} " + "&a;" * per_item + f"</title><link>https://bomb.example/{k}</link>"
                   "</item>" for k in range(items))
    return (head + body + "</channel></rss>").encode()


def test_doctype_with_internal_entities_is_not_expanded(conn):
    row, elapsed = hostile_hour(conn, entity_bomb())
    assert row.error is None and row.items == 100
    assert row.repairs["declarations_removed"] == 1 and "DOCTYPE/ENTITY declarations removed" in row.bozo_error
    longest = conn.execute("SELECT max(length(title)) FROM items WHERE source_id = 'hostile'").fetchone()[0]
    assert longest <= 500
    nested = (b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
              b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>'
              b'<rss version="2.0"><channel><item><title>laughs &d;</title><link>https://b.example/l</link></item>'
              b'</channel></rss>')
    parsed = parse_feed(nested, source_id="s", fetched_at=H)
    assert [item.title for item in parsed.items] == ["laughs &d;"]


_PEAK_SCRIPT = """
import json, resource, sys
from datetime import datetime, timezone
from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.http.fetch import FetchConfig
from newsdedup_dagster.shared.http.netguard import AddressPolicy
from newsdedup_dagster.shared.sources import Source
from newsdedup_dagster.stages.ingest.store import ingest_partition
url, hour, feeds = sys.argv[1], datetime.fromisoformat(sys.argv[2]), json.loads(sys.argv[3])
sources = [Source(id=k, name=k, feed_url=v, language="en", country="GB", allow_private=True) for k, v in feeds.items()]
config = FetchConfig(trust_env=False, address_policy=AddressPolicy.from_entries(["127.0.0.0/8"]))
with db.connection(url) as conn:
    report = ingest_partition(conn, sources, hour, mode="live", fetch_config=config)
peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(json.dumps({"peak_kb": peak, "items": report.items_seen}))
"""


def test_entity_bomb_peak_memory_within_200_mb_of_the_same_hour_without_it(clean_db):
    """Peak RSS (the ingest process and its parser workers) of one hour with the bomb vs the
    same hour without it, each in a fresh process on its own hour."""
    with FeedServer() as server:
        server.add("/good-a.xml", GOOD_A)
        server.add("/good-b.xml", GOOD_B)
        server.add("/bomb.xml", entity_bomb())
        peaks = {}
        for label, hour, names in (("without", H, ["good-a", "good-b"]),
                                   ("with", H + timedelta(hours=1), ["good-a", "bomb", "good-b"])):
            feeds = {name: server.url(f"/{name}.xml") for name in names}
            done = subprocess.run([sys.executable, "-c", _PEAK_SCRIPT, clean_db, hour.isoformat(), json.dumps(feeds)],
                                  cwd=REPO, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr[-2000:]
            peaks[label] = json.loads(done.stdout.strip().splitlines()[-1])
    assert peaks["with"]["items"] == peaks["without"]["items"] + 100
    assert peaks["with"]["peak_kb"] - peaks["without"]["peak_kb"] < 200 * 1024, peaks


# ------------------------------------------------------------------ markup-heavy fields


def test_one_megabyte_title_of_comment_openers_takes_seconds(conn):
    # Escaped, the markup reaches the HTML stripper (html.parser is quadratic on it).
    escaped = rss([{"title": "&lt;!--" * 250_000, "link": "https://ex.com/escaped"},
                   {"title": "Neighbour", "link": "https://ex.com/n", "description": "&lt;a " * 250_000}])
    row, elapsed = hostile_hour(conn, escaped)
    assert elapsed < 60, elapsed
    # The title is one unclosed comment, i.e. no text: that entry has no title (counted).
    assert row.error is None and row.items == 1 and row.skipped == {"no_title": 1}
    assert row.repairs.get("fields_cut") == 2
    # Raw, it opens an XML comment that never closes: the feed keeps what precedes it.
    raw = rss([{"title": "Before", "link": "https://ex.com/before"},
               {"title": "<!--" * 250_000, "link": "https://ex.com/raw"}])
    conn.execute("TRUNCATE items, item_sources, feed_fetches CASCADE")
    conn.commit()
    row, elapsed = hostile_hour(conn, raw)
    assert elapsed < 60, elapsed
    assert row.error is None or row.error.startswith("not a feed")


def test_parse_time_budget_expiry_fails_only_that_source(conn):
    slow = rss(rss_entries(20_000, prefix="slow"))
    config = ParseConfig(max_entries=50_000, time_budget=1.0)
    row, elapsed = hostile_hour(conn, slow, parse_config=config)
    assert row.status == "ok" and row.items == 0 and row.parse_status == "failed"
    assert row.error.startswith("parse time budget of 1s exceeded")
    status, error, parse_error, parse_status, *_ = fetch_row(conn)
    assert (status, error, parse_status) == ("ok", None, "failed") and parse_error.startswith("parse time budget")
    assert elapsed < 30, elapsed
    # The body is archived: a rerun with a larger budget parses it.
    with FeedServer() as server:
        archive_only = [Source(id="hostile", name="h", feed_url=server.url("/hostile.xml"), language="en",
                               country="GB", allow_private=True)]
        again = ingest_partition(conn, archive_only, H, mode="archive",
                                 parse_config=replace(config, time_budget=300.0), sync=False)
        assert server.count("/hostile.xml") == 0
    assert {r.source_id: (r.parse_status, r.items) for r in again.rows}["hostile"] == ("ok", 20_000)


# ------------------------------------------------------------------ 100,000 entries


def test_hundred_thousand_entries_keep_the_newest(conn):
    rng = random.Random(7)
    minutes = list(range(100_000))
    rng.shuffle(minutes)  # not in date order: the cap must sort by date, not position
    start = datetime(2026, 9, 1, tzinfo=UTC)
    items = "".join(
        f"<item><title>t{m}</title><link>https://big.example/{m}</link>"
        f"<pubDate>{(start + timedelta(minutes=m)).strftime('%a, %d %b %Y %H:%M:%S +0000')}</pubDate></item>"
        for m in minutes)
    body = gzip.compress(('<?xml version="1.0"?><rss version="2.0"><channel><title>Big</title>' + items
                          + "</channel></rss>").encode())
    assert len(body) < FETCH.max_body_bytes
    config = ParseConfig(max_entries=1_000, max_age=timedelta(days=3650))
    row, elapsed = hostile_hour(conn, body, parse_config=config, headers={"Content-Encoding": "gzip"})
    assert row.items == 1_000 and row.entries == 100_000
    assert row.skipped == {"over_entry_cap": 99_000} and row.parse_status == "partial"
    kept = {int(r[0][1:]) for r in conn.execute("SELECT title FROM items WHERE source_id = 'hostile'")}
    assert kept == set(range(99_000, 100_000))  # the newest thousand
    assert elapsed < 90, elapsed
    skipped = fetch_row(conn)[6]
    assert skipped == {"over_entry_cap": 99_000}


# ------------------------------------------------------------------ random, truncated, mutated


@pytest.mark.parametrize("seed", [1, 2])
def test_random_bytes_and_truncated_feeds(conn, seed):
    rng = random.Random(seed)
    noise = bytes(rng.getrandbits(8) for _ in range(50_000))
    row, _ = hostile_hour(conn, noise)
    assert row.items == 0 and row.error
    conn.execute("TRUNCATE items, item_sources, feed_fetches CASCADE")
    conn.commit()
    full = rss(rss_entries(30, prefix="cut"))
    row, _ = hostile_hour(conn, full[: rng.randrange(len(full) // 3, len(full) - 10)])
    assert row.error is None and 5 <= row.items < 30


# ------------------------------------------------------------------ bad entries, counted


def test_skipped_entries_are_counted_per_reason(conn):
    body = rss([
        {"title": "Kept", "link": "https://ex.com/k", "guid": "k"},
        {"title": "Same guid again", "link": "https://ex.com/k2", "guid": "k"},
        {"description": ""},  # neither title nor summary
        {"title": "Same link", "link": "https://ex.com/k?utm_source=x", "guid": "k3"},
        {"title": "Kept too", "link": "https://ex.com/k4"},
    ])
    row, _ = hostile_hour(conn, body)
    assert row.items == 2 and row.skipped == {"duplicate_guid": 1, "duplicate_url": 1, "no_title": 1}
    assert fetch_row(conn)[6] == {"duplicate_guid": 1, "duplicate_url": 1, "no_title": 1}


def test_an_entry_that_raises_is_skipped_alone(monkeypatch):
    # Fault injection (no real input is known to still raise): canonical_url fails on one link.
    from newsdedup_dagster.stages.ingest import feed_parse as parse_module

    real = parse_module.canonical_url

    def flaky(url):
        if "poison" in url:
            raise RuntimeError("unexpected parser state")
        return real(url)

    monkeypatch.setattr(parse_module, "canonical_url", flaky)
    body = rss([{"title": "One", "link": "https://ex.com/1"}, {"title": "Two", "link": "https://ex.com/poison"},
                {"title": "Three", "link": "https://ex.com/3"}])
    parsed = parse_feed(body, source_id="s", fetched_at=H)
    assert [item.title for item in parsed.items] == ["One", "Three"]
    assert parsed.skipped_counts == {"entry_error": 1}
    assert "RuntimeError: unexpected parser state" in parsed.skipped[0].detail


# ------------------------------------------------------------------ the database side


def test_a_source_the_database_refuses_fails_alone(conn):
    # A real refusal by PostgreSQL for one source's rows (a CHECK constraint added for the test).
    conn.execute("ALTER TABLE items ADD CONSTRAINT test_refuse_poison CHECK (title NOT LIKE '%%POISON%%')")
    conn.commit()
    try:
        body = rss([{"title": "Fine", "link": "https://ex.com/fine"}, {"title": "POISON", "link": "https://ex.com/p"}])
        row, _ = hostile_hour(conn, body)
    finally:
        conn.rollback()
        conn.execute("ALTER TABLE items DROP CONSTRAINT IF EXISTS test_refuse_poison")
        conn.commit()
    assert row.items == 0 and row.parse_status == "failed" and row.error.startswith("store failed: CheckViolation")
    status, _, parse_error, parse_status, *_ = fetch_row(conn)
    assert status == "ok" and parse_status == "failed" and "test_refuse_poison" in parse_error


def test_raw_items_fails_when_the_database_is_unreachable(conn, database_url):
    """The connection is terminated while the feeds are being fetched: the hour fails (and
    is retried by Dagster) instead of reporting every source as failed."""
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    conn.commit()

    def kill_then_serve(request):
        from feedserver import Response

        with psycopg.connect(database_url, autocommit=True) as killer:
            killer.execute("SELECT pg_terminate_backend(%s)", (pid,))
        return Response(body=GOOD_A, headers={"Content-Type": "application/rss+xml"})

    with FeedServer() as server:
        server.route("/a.xml", kill_then_serve)
        sources = [Source(id="a", name="a", feed_url=server.url("/a.xml"), language="en", country="GB",
                          allow_private=True)]
        with pytest.raises(psycopg.OperationalError):
            ingest_partition(conn, sources, H, mode="live", fetch_config=FETCH)


def test_settings_reach_the_asset(monkeypatch, tmp_path):
    from newsdedup_dagster import config
    from newsdedup_dagster.stages.ingest.store import configs_for

    monkeypatch.setenv("NEWSDEDUP_FETCH_ALLOW_PRIVATE", "10.1.0.0/16, feeds.corp.example")
    calibrate(monkeypatch, tmp_path, ingest={"max_entries": 250, "parse_time_budget": 4.5})
    fetch_config, parse_config = configs_for(config.ingest_settings())
    assert parse_config.max_entries == 250 and parse_config.time_budget == 4.5
    assert [str(n) for n in fetch_config.address_policy.allowed_networks] == ["10.1.0.0/16"]
    assert fetch_config.address_policy.allowed_hosts == ("feeds.corp.example",)
    calibrate(monkeypatch, tmp_path, ingest={"max_url_chars": 5000})
    with pytest.raises(ValueError, match="max_url_chars"):
        config.ingest_settings()
    assert "max_entries = 250" in Path(os.environ["NEWSDEDUP_CALIBRATION_FILE"]).read_text()
