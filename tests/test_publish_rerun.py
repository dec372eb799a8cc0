"""A rerun of a published hour stores exactly what the first run stored: `publish_entries` row for
row (page hashes included) and no story page rewritten. The stamps a run decides carry
timezone.utc; the same stamps read back from the database carry the session's zone; the page
hash must not tell the two apart (a rerun after an in-run retry of an upstream step used to leave
every page hash of the hour different from an uninterrupted run's)."""

from __future__ import annotations

from test_events_fixtures import add_story
from test_publish_asset import H, _run, _seed

ENTRIES = ("SELECT story_id, lang, entry_id, published_at, updated_at, fingerprint, page_hash, article_count,"
           " first_partition, updated_partition FROM publish_entries ORDER BY story_id, lang")


def test_rerun_of_a_published_hour_changes_nothing(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_LANGS", "en,fr")
    _seed(conn)
    add_story(conn, "s3", "storm", 9.2, titles={"fr": "Tempête", "ja": "嵐"}, significance=5.0)
    conn.commit()
    assert _run(clean_db, H, tmp_path).success
    first = conn.execute(ENTRIES).fetchall()
    conn.commit()
    assert len(first) == 6
    pages = sorted((tmp_path).glob("*/story/*.html"))
    assert len(pages) == 6
    written = {p: p.stat().st_mtime_ns for p in pages}

    rerun = _run(clean_db, H, tmp_path)
    assert rerun.success
    assert conn.execute(ENTRIES).fetchall() == first
    assert {p: p.stat().st_mtime_ns for p in pages} == written
    md = rerun.metadata
    assert md["files_changed"].value == 0
