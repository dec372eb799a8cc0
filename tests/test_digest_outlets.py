"""The digest counts and lists a story's outlets the way the site does (item_outlet(), migration
076): an aggregator's copy of a publisher's article is that publisher's, listed and counted once,
the publisher's own item first. Real embedded PostgreSQL, the digest's own queries."""

from __future__ import annotations

from datetime import date

from test_publish_validity import _seed

from newsdedup_dagster.shared.presentation.stories import Selected, load_records
from newsdedup_dagster.stages.digest.build import load_candidates


def test_an_aggregator_copy_is_its_publisher_in_the_digest(clean_db, conn):
    _seed(conn)
    candidates = {c.story_id: c for c in load_candidates(conn, date(2026, 11, 2))}
    quake = candidates["quake"]
    # Reuters (own item + Google News' copy), the Guardian (via Google Actualités), franceinfo, Source RU
    assert quake.source_count == 4 and quake.item_count == 5
    [record] = load_records(conn, [Selected(1, "quake", None, None, quake.significance)])
    assert record.source_total == 4
    names = sorted(link.name for link in record.sources)
    assert "Google News (English)" not in names
    reuters = [link for link in record.sources if "reuters.com" in link.url]
    assert [link.name for link in reuters] == ["Reuters"]   # the publisher's own item, not the copy
    # Google Actualités' copy of a Guardian article is listed as the Guardian's
    assert "theguardian.com" in names and "Google Actualités" not in names


def test_an_attributed_outlet_wins_over_the_link_host(clean_db, conn):
    """items.outlet (set at ingest, e.g. a feed on feeds.bbci.co.uk attributed to bbc.co.uk) is
    the outlet; the link's host only stands in for rows stored without one."""
    _seed(conn)
    conn.execute("UPDATE items SET outlet = 'reuters.com' WHERE id = 'it-quake-gnews-guardian'")
    conn.commit()
    quake = {c.story_id: c for c in load_candidates(conn, date(2026, 11, 2))}["quake"]
    assert quake.source_count == 3
