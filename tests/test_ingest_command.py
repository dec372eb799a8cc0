"""`newsdedup ingest --json` end to end: a real local feed server, one healthy and two broken
sources, materialised through Dagster; a rerun re-parses the archive and never refetches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from feedserver import FeedServer, rss, rss_entries

REPO = Path(__file__).resolve().parent.parent


def _run(args, database_url, tmp_path, allow_private="127.0.0.0/8"):
    # The local feed server is on loopback, which fetches refuse unless the setting allows it.
    env = {**os.environ, "NEWSDEDUP_DATABASE_URL": database_url, "DAGSTER_HOME": str(tmp_path / "dagster"),
           "NEWSDEDUP_FETCH_ALLOW_PRIVATE": allow_private}
    return subprocess.run([sys.executable, "-m", "newsdedup_dagster.cli", "ingest", *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_ingest_command_json_isolates_broken_sources_and_rerun_uses_archive(clean_db, tmp_path):
    hour = datetime.now(UTC).strftime("%Y-%m-%d-%H:00")
    with FeedServer() as server:
        server.add("/good.xml", rss(rss_entries(6, prefix="good")))
        server.add("/missing.xml", b"not here", status=404)
        server.add("/html.xml", b"<html><body>Not a feed</body></html>", headers={"Content-Type": "text/html"})
        poisoned = rss([*rss_entries(3, prefix="p"), {"title": "x &#x110000; y", "link": "http://a.example/1"},
                        {"title": "dup", "link": "http://a.example/2", "guid": "p-dup"},
                        {"title": "dup again", "link": "http://a.example/3", "guid": "p-dup"}])
        server.add("/poisoned.xml", poisoned)
        sources = tmp_path / "sources.yaml"
        sources.write_text(
            "sources:\n"
            f"  - {{id: good, name: Good, feed_url: '{server.url('/good.xml')}', language: en, country: GB,"
            " allow_private: true}\n"
            f"  - {{id: missing, name: Missing, feed_url: '{server.url('/missing.xml')}', language: en, country: GB,"
            " allow_private: true}\n"
            f"  - {{id: html, name: Html, feed_url: '{server.url('/html.xml')}', language: fr, country: FR,"
            " allow_private: true}\n"
            f"  - {{id: poisoned, name: P, feed_url: '{server.url('/poisoned.xml')}', language: en, country: GB,"
            " allow_private: true}\n"
        )
        first = _run(["--sources", str(sources), "--partition", hour, "--mode", "live", "--json"], clean_db, tmp_path)
        assert first.returncode == 0, first.stderr[-2000:]
        report = json.loads(first.stdout.strip().splitlines()[-1])
        assert report["partition"] == hour
        by_id = {s["id"]: s for s in report["sources"]}
        assert set(by_id) == {"good", "missing", "html", "poisoned"}
        assert by_id["good"]["status"] == "ok" and by_id["good"]["new_items"] == 6
        # One bad entry and one duplicate: the feed's other entries are kept, the skip is counted.
        assert by_id["poisoned"]["new_items"] == 5 and by_id["poisoned"]["skipped"] == {"duplicate_guid": 1}
        assert by_id["poisoned"]["repairs"] == {"charrefs_replaced": 1}
        assert report["skipped"] == {"duplicate_guid": 1}
        assert by_id["missing"]["status"] == "error" and "404" in (by_id["missing"]["error"] or "")
        assert by_id["html"]["error"]  # an HTML page instead of a feed is reported, not fatal
        assert report["new_items"] == 11 and report["errors"] == 2
        fetched = server.count("/good.xml")

        second = _run(["--sources", str(sources), "--partition", hour, "--mode", "live", "--json"], clean_db, tmp_path)
        assert second.returncode == 0, second.stderr[-2000:]
        again = json.loads(second.stdout.strip().splitlines()[-1])
        assert again["new_items"] == 0
        assert server.count("/good.xml") == fetched  # re-parsed from the archive, not refetched


def test_ingest_command_refuses_loopback_without_the_allow_list(clean_db, tmp_path):
    hour = datetime.now(UTC).strftime("%Y-%m-%d-%H:00")
    with FeedServer() as server:
        server.add("/good.xml", rss(rss_entries(2, prefix="good")))
        sources = tmp_path / "sources.yaml"
        sources.write_text(f"sources:\n  - {{id: good, name: Good, feed_url: '{server.url('/good.xml')}', "
                           "language: en, country: GB}\n")
        done = _run(["--sources", str(sources), "--partition", hour, "--mode", "live", "--json"], clean_db, tmp_path,
                    allow_private="")
        assert done.returncode == 0, done.stderr[-2000:]
        assert server.count("/good.xml") == 0
    report = json.loads(done.stdout.strip().splitlines()[-1])
    [row] = report["sources"]
    assert row["status"] == "error" and "loopback address" in row["error"] and report["errors"] == 1


def test_ingest_command_rejects_invalid_sources_file(tmp_path, database_url):
    bad = tmp_path / "bad.yaml"
    bad.write_text("sources:\n  - {id: a, name: A, feed_url: 'ftp://x.example/feed', language: en}\n"
                   "  - {id: a, name: B, feed_url: 'https://y.example/feed', language: en}\n")
    result = _run(["--sources", str(bad)], database_url, tmp_path)
    assert result.returncode == 2
    assert "feed_url" in result.stdout and "duplicate" in result.stdout.lower()
