"""Each source's health on the real embedded PostgreSQL (newsdedup_dagster/sources/health.py,
`sources_health` in sql/queries/sources.sql): states from a fetch record and items written as ingestion writes
them, one alert per source going bad and one when it recovers, `sources list`, and the counts
`raw_items` puts on its hourly metadata with the alert in the operator outbox."""

from __future__ import annotations

import email
import email.policy
import json
import logging
from datetime import UTC, datetime, timedelta

import pytest

from newsdedup_dagster import cli
from newsdedup_dagster.assets.source_health import hour_source_health
from newsdedup_dagster.shared.sources import Source
from newsdedup_dagster.sources.health import HealthPolicy, record_alerts, source_health, state_counts
from newsdedup_dagster.stages.ingest.store import sync_sources

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def source(source_id: str, enabled: bool = True) -> Source:
    return Source(id=source_id, name=source_id, feed_url=f"https://{source_id}.example/rss", language="en",
                  country="GB", enabled=enabled)


def fetch(conn, source_id: str, at: datetime, status: str = "ok", error: str | None = None,
          parse_status: str | None = "ok", parse_error: str | None = None) -> None:
    hour = at.replace(minute=0, second=0, microsecond=0)
    conn.execute("INSERT INTO feed_fetches (source_id, partition_hour, url, fetched_at, status, error, parse_status, "
                 "parse_error) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                 (source_id, hour, f"https://{source_id}.example/rss", at, status, error, parse_status, parse_error))


def item(conn, source_id: str, at: datetime, number: int) -> None:
    hour = at.replace(minute=0, second=0, microsecond=0)
    url = f"https://{source_id}.example/{number}"
    item_id = f"{source_id}-{number}"
    conn.execute("INSERT INTO items (id, canonical_url, url, title, published_at, partition_hour, source_id) "
                 "VALUES (%s, %s, %s, %s, %s, %s, %s)", (item_id, url, url, f"title {number}", at, hour, source_id))
    conn.execute("INSERT INTO item_sources (item_id, source_id, url, partition_hour, first_seen_at) "
                 "VALUES (%s, %s, %s, %s, %s)", (item_id, source_id, url, hour, at))


def history(conn, now: datetime) -> list[Source]:
    """Eight sources, each in one state as of `now`."""
    sources = [source("steady"), source("dead"), source("flaky"), source("stale"), source("notfeed"),
               source("paused", enabled=False), source("fresh"), source("gone")]
    sync_sources(conn, sources)
    for hours_ago in range(1, 24 * 14):
        at = now - hours_ago * HOUR + timedelta(minutes=5)
        fetch(conn, "steady", at)
        if hours_ago % 2 == 0:
            item(conn, "steady", at, hours_ago)
        # dead: fine until 30 hours ago, then every fetch fails
        fetch(conn, "dead", at, *(("error", "HTTP 404 Not Found") if hours_ago < 30 else ("ok", None)))
        fetch(conn, "flaky", at, *(("error", "connect timeout after 10s") if hours_ago < 3 else ("ok", None)))
        if hours_ago % 6 == 0:
            item(conn, "flaky", at, hours_ago)
        # stale: fetched fine every hour, a new item every hour until 20 hours ago, none since
        fetch(conn, "stale", at, "not_modified" if hours_ago < 20 else "ok")
        if hours_ago >= 20:
            item(conn, "stale", at, hours_ago)
        # notfeed: answers 200 with a page the parser refuses, for 26 hours
        if hours_ago < 27:
            fetch(conn, "notfeed", at, parse_status="failed", parse_error="not a feed: got an HTML page (text/html)")
        else:
            fetch(conn, "notfeed", at)
        fetch(conn, "paused", at, "error", "HTTP 410 Gone")
        # gone: answers 304 every hour, and published its last item 20 days ago
        fetch(conn, "gone", at, "not_modified")
    for hours_ago in range(480, 720):
        item(conn, "gone", now - hours_ago * HOUR, hours_ago)
    conn.commit()
    return sources


def test_each_state_from_the_fetch_record_and_the_items(conn):
    sources = history(conn, NOW)
    health = {h.source_id: h for h in source_health(conn, sources, NOW)}
    assert {k: h.state for k, h in health.items()} == {
        "steady": "ok", "dead": "failing", "flaky": "erroring", "stale": "quiet", "notfeed": "failing",
        "paused": "disabled", "fresh": "new", "gone": "quiet"}
    dead = health["dead"]
    assert dead.failures == 29 and dead.last_error == "HTTP 404 Not Found"
    assert dead.last_success == NOW - 30 * HOUR + timedelta(minutes=5)
    assert health["notfeed"].last_error == "not a feed: got an HTML page (text/html)"
    steady = health["steady"]
    # one item every two hours: 84 in the last seven days (hours 2, 4, ... 168), 12 a day
    assert steady.items_week == 84 and steady.items_per_day == 12.0
    assert steady.last_item == NOW - 2 * HOUR + timedelta(minutes=5) and steady.usual_gap_hours == 2.0
    assert health["stale"].usual_gap_hours == 1.0 and "no new item for 20 h" in health["stale"].detail(NOW)
    assert health["flaky"].failures == 2 and health["gone"].usual_gap_hours == 1.0
    assert health["gone"].items_week == 0 and "no new item for 480 h" in health["gone"].detail(NOW)
    assert state_counts(health.values())["failing"] == 2
    # A looser policy: a day and a half before failing, and quiet only after 25 usual gaps.
    loose = HealthPolicy(failing_after=timedelta(hours=36), quiet_factor=25)
    assert {h.source_id: h.state for h in source_health(conn, sources, NOW, loose)}["dead"] == "erroring"
    assert {h.source_id: h.state for h in source_health(conn, sources, NOW, loose)}["stale"] == "ok"


def test_one_alert_when_a_source_goes_bad_and_one_when_it_recovers(conn):
    sources = history(conn, NOW)
    sent: list[tuple[str, str]] = []

    def send(subject: str, body: str) -> str:
        sent.append((subject, body))
        return "test"

    changes, where = record_alerts(conn, source_health(conn, sources, NOW), NOW, send)
    assert where == "test" and len(sent) == 1
    subject, body = sent[0]
    assert subject == "[newsdedup] sources: 2 failing, 2 quiet"
    assert "dead: failing: 29 failed fetches since" in body and "HTTP 404 Not Found" in body
    assert "stale: quiet: no new item for 20 h (usually one every 1.0 h)" in body
    # The next hour: the same states raise nothing again.
    later = NOW + HOUR
    record_alerts(conn, source_health(conn, sources, later), later, send)
    assert len(sent) == 1
    # The dead feed answers again and the stale one publishes: one message, both recovered.
    fetch(conn, "dead", later + timedelta(minutes=10))
    item(conn, "stale", later + timedelta(minutes=10), 9999)
    conn.commit()
    after = later + timedelta(minutes=20)
    changes, _ = record_alerts(conn, source_health(conn, sources, after), after, send)
    assert len(sent) == 2
    assert sent[1][0] == "[newsdedup] sources: 2 recovered"
    assert "dead: recovered from failing" in sent[1][1] and "stale: recovered from quiet" in sent[1][1]
    # notfeed is taken out of the file: its alert closes without a message.
    remaining = [s for s in sources if s.id != "notfeed"]
    changes, where = record_alerts(conn, source_health(conn, remaining, after), after, send)
    assert [(c.source_id, c.kind) for c in changes] == [("notfeed", "closed")] and where is None and len(sent) == 2
    assert conn.execute("SELECT source_id, state FROM source_alerts").fetchall() == [("gone", "quiet")]


def test_sources_list_shows_each_source(conn, tmp_path, capsys):
    now = datetime.now(UTC)
    sources = history(conn, now)
    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n" + "".join(
        f"  - {{id: {s.id}, name: {s.name}, feed_url: '{s.feed_url}', language: en, country: GB, "
        f"enabled: {str(s.enabled).lower()}}}\n" for s in sources), encoding="utf-8")
    assert cli.main(["sources", "list", "--sources", str(path), "--json"]) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["dead"]["state"] == "failing" and rows["dead"]["error_streak"] == 29
    assert rows["dead"]["last_error"] == "HTTP 404 Not Found" and rows["paused"]["enabled"] is False
    assert rows["steady"]["items_per_day"] == 12.0 and rows["fresh"]["last_success"] is None
    assert cli.main(["sources", "list", "--sources", str(path)]) == 0
    table = capsys.readouterr().out
    assert "dead" in table and "HTTP 404 Not Found" in table and "2 failing, 2 quiet, 1 erroring, 1 disabled" in table


@pytest.mark.parametrize("mode, in_backfill, alerts_expected", [("live", False, 1), ("replay", False, 0),
                                                               ("live", True, 0)])
def test_raw_items_hour_metadata_counts_and_alerts_in_the_outbox(conn, tmp_path, monkeypatch, mode, in_backfill,
                                                                 alerts_expected):
    now = datetime.now(UTC)
    sources = history(conn, now)
    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n" + "".join(
        f"  - {{id: {s.id}, name: {s.name}, feed_url: '{s.feed_url}', language: en, country: GB, "
        f"enabled: {str(s.enabled).lower()}}}\n" for s in sources), encoding="utf-8")
    outbox = tmp_path / "outbox"
    monkeypatch.setenv("NEWSDEDUP_SOURCES", str(path))
    monkeypatch.setenv("NEWSDEDUP_OUTBOX", str(outbox))
    monkeypatch.delenv("NEWSDEDUP_SMTP_HOST", raising=False)
    partition = now.strftime("%Y-%m-%d-%H:00")
    metadata = hour_source_health(conn, partition, mode=mode, in_backfill=in_backfill,
                                  log=logging.getLogger("test"))
    assert (metadata["sources_failing"], metadata["sources_quiet"]) == (2, 2)
    assert {row.data["source"] for row in metadata["source_health"].value.records} == {
        "dead", "flaky", "stale", "notfeed", "fresh", "gone"}
    written = sorted((outbox / "alerts").glob("*-sources.eml")) if (outbox / "alerts").exists() else []
    assert len(written) == alerts_expected
    if written:
        message = email.message_from_bytes(written[0].read_bytes(), policy=email.policy.default)
        assert message["Subject"] == "[newsdedup] sources: 2 failing, 2 quiet"
        assert "HTTP 404 Not Found" in message.get_content()
        # The next run of the hour raises nothing new.
        hour_source_health(conn, partition, mode=mode, in_backfill=in_backfill, log=logging.getLogger("test"))
        assert len(list((outbox / "alerts").glob("*-sources.eml"))) == 1


def test_the_hourly_raw_items_run_shows_the_counts_and_raises_the_alert(conn, clean_db, tmp_path, monkeypatch):
    """raw_items materialised by Dagster for the current hour, live, from a local feed server: one
    healthy feed and one that has answered 404 for 30 hours. The hour's metadata carries the counts
    the UI shows, and the alert is in the operator outbox."""
    from feedserver import FeedServer, rss, rss_entries
    from hourly_helpers import stage_hour

    now = datetime.now(UTC)
    with FeedServer() as server:
        server.add("/good.xml", rss(rss_entries(3, prefix="good")))
        server.add("/dead.xml", b"gone", status=404)
        sources = [Source(id=name, name=name, feed_url=server.url(f"/{name}.xml"), language="en", country="GB",
                          allow_private=True) for name in ("good", "dead")]
        sync_sources(conn, sources)
        for hours_ago in range(1, 40):
            fetch(conn, "dead", now - hours_ago * HOUR, *(("error", "HTTP 404 Not Found") if hours_ago < 30 else ("ok", None)))
        conn.commit()
        path = tmp_path / "sources.yaml"
        path.write_text("sources:\n" + "".join(
            f"  - {{id: {s.id}, name: {s.name}, feed_url: '{s.feed_url}', language: en, country: GB, "
            "allow_private: true}\n" for s in sources), encoding="utf-8")
        for name, value in {"NEWSDEDUP_SOURCES": str(path), "NEWSDEDUP_FETCH_MODE": "live",
                            "NEWSDEDUP_FETCH_ALLOW_PRIVATE": "127.0.0.0/8", "NEWSDEDUP_OUTBOX": str(tmp_path / "outbox")
                            }.items():
            monkeypatch.setenv(name, value)
        result = stage_hour("raw_items", now.strftime("%Y-%m-%d-%H:00"), clean_db)
    assert result.success
    assert result.metadata["sources_failing"].value == 1 and result.metadata["sources_quiet"].value == 0
    [alert] = (tmp_path / "outbox" / "alerts").glob("*-sources.eml")
    message = email.message_from_bytes(alert.read_bytes(), policy=email.policy.default)
    assert message["Subject"] == "[newsdedup] sources: 1 failing"
    assert "dead: failing: 30 failed fetches" in message.get_content()
