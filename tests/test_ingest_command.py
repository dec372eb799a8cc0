"""`newsdedup ingest --json` end to end: a real local feed server, one healthy and two broken
sources, materialised through Dagster; a rerun re-parses the archive and never refetches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from feedserver import FeedServer, Response, rss, rss_entries

REPO = Path(__file__).resolve().parent.parent


def _run(args, database_url, tmp_path):
    env = {**os.environ, "NEWSDEDUP_DATABASE_URL": database_url, "DAGSTER_HOME": str(tmp_path / "dagster")}
    return subprocess.run([sys.executable, "-m", "newsdedup_dagster.cli", "ingest", *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_ingest_command_json_isolates_broken_sources_and_rerun_uses_archive(clean_db, tmp_path):
    hour = datetime.now(timezone.utc).strftime("%Y-%m-%d-%H:00")
    with FeedServer() as server:
        server.add("/good.xml", rss(rss_entries(6, prefix="good")))
        server.add("/missing.xml", b"not here", status=404)
        server.add("/html.xml", b"<html><body>Not a feed</body></html>", headers={"Content-Type": "text/html"})
        sources = tmp_path / "sources.yaml"
        sources.write_text(
            "sources:\n"
            f"  - {{id: good, name: Good, feed_url: '{server.url('/good.xml')}', language: en, country: GB}}\n"
            f"  - {{id: missing, name: Missing, feed_url: '{server.url('/missing.xml')}', language: en, country: GB}}\n"
            f"  - {{id: html, name: Html, feed_url: '{server.url('/html.xml')}', language: fr, country: FR}}\n"
        )
        first = _run(["--sources", str(sources), "--partition", hour, "--mode", "live", "--json"], clean_db, tmp_path)
        assert first.returncode == 0, first.stderr[-2000:]
        report = json.loads(first.stdout.strip().splitlines()[-1])
        assert report["partition"] == hour
        by_id = {s["id"]: s for s in report["sources"]}
        assert set(by_id) == {"good", "missing", "html"}
        assert by_id["good"]["status"] == "ok" and by_id["good"]["new_items"] == 6
        assert by_id["missing"]["status"] == "error" and "404" in (by_id["missing"]["error"] or "")
        assert by_id["html"]["error"]  # an HTML page instead of a feed is reported, not fatal
        assert report["new_items"] == 6 and report["errors"] >= 1
        fetched = server.count("/good.xml")

        second = _run(["--sources", str(sources), "--partition", hour, "--mode", "live", "--json"], clean_db, tmp_path)
        assert second.returncode == 0, second.stderr[-2000:]
        again = json.loads(second.stdout.strip().splitlines()[-1])
        assert again["new_items"] == 0
        assert server.count("/good.xml") == fetched  # re-parsed from the archive, not refetched


def test_ingest_command_rejects_invalid_sources_file(tmp_path, database_url):
    bad = tmp_path / "bad.yaml"
    bad.write_text("sources:\n  - {id: a, name: A, feed_url: 'ftp://x.example/feed', language: en}\n"
                   "  - {id: a, name: B, feed_url: 'https://y.example/feed', language: en}\n")
    result = _run(["--sources", str(bad)], database_url, tmp_path)
    assert result.returncode == 2
    assert "feed_url" in result.stdout and "duplicate" in result.stdout.lower()
