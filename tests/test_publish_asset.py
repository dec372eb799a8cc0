"""`story_feeds` against the real database: every produced Atom feed parses with feedparser (no
bozo), every JSON Feed has the 1.1 required fields, and a reader polling an hour apart sees the
grown story updated in place, never duplicated."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import feedparser
import pytest
from helpers import calibrate
from hourly_helpers import stage_hour
from test_events_fixtures import add_story, at, ensure_source, hour_of

from newsdedup_dagster.resources import LLMResource

H = "2026-11-02-10:00"
H1 = "2026-11-02-11:00"
HOSTILE = '<script>alert(1)</script> "Quotes" & <b>bold</b>'


def _run(url, key, out_dir, **config):
    # The publish directory is the deployment's (environment), never run config.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("NEWSDEDUP_PUBLISH_DIR", str(out_dir))
        return stage_hour("story_feeds", key, url, llm=LLMResource(),
                          options={"story_feeds": config} if config else None)


def _seed(conn):
    add_story(conn, "s1", "quake", 9.0, titles={"en": "Earthquake hits coast", "fr": "Séisme sur la côte"},
              significance=7.0, translations={"fr": ("Un séisme frappe la côte", "Résumé en français.")})
    add_story(conn, "s2", "vote", 9.5, titles={"de": HOSTILE}, headline=HOSTILE, pivot_lang="de", significance=4.0)
    conn.execute("UPDATE sources SET name = %s WHERE id = 'src-de-xx'", ('<i>Evil & Co</i>',))
    # A javascript: link from a hostile feed must never become a link.
    conn.execute("UPDATE items SET url = 'javascript:alert(1)' WHERE id = 'it-s2-de'")
    conn.commit()


def _grow(conn, story_id: str, lang: str, hours: float, significance: float):
    """The story gains an article from a new source an hour later, and a new score."""
    source_id = f"src-{lang}-new"
    ensure_source(conn, source_id, lang, None, name=f"New outlet {lang}")
    item_id = f"it-{story_id}-{lang}-new"
    moment = at(hours)
    conn.execute(
        "INSERT INTO items (id, canonical_url, url, title, lang, published_at, partition_hour, source_id)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (item_id, f"https://{source_id}.example/{item_id}", f"https://{source_id}.example/{item_id}",
         f"Follow-up {story_id}", lang, moment, hour_of(moment), source_id))
    conn.execute("INSERT INTO story_items (item_id, story_id, pass, similarity, partition_hour)"
                 " VALUES (%s, %s, 1, 0.9, %s)", (item_id, story_id, hour_of(moment)))
    conn.execute("UPDATE stories SET latest_published_at = %s, item_count = item_count + 1,"
                 " updated_partition = %s WHERE id = %s", (moment, hour_of(moment), story_id))
    conn.execute("UPDATE story_scores SET significance = %s WHERE story_id = %s", (significance, story_id))
    conn.commit()


def check_output_dir(out_dir: Path) -> dict[str, feedparser.FeedParserDict]:
    """Every Atom feed parses cleanly and every JSON Feed carries the 1.1 required fields."""
    parsed = {}
    atoms = sorted(out_dir.glob("*/atom.xml"))
    jsons = sorted(out_dir.glob("*/feed.json"))
    assert atoms and len(atoms) == len(jsons)
    for path in atoms:
        feed = feedparser.parse(path.read_bytes())
        assert not feed.bozo, (path, feed.get("bozo_exception"))
        assert feed.version == "atom10" and feed.feed.title and feed.feed.id
        ids = [e.id for e in feed.entries]
        assert len(ids) == len(set(ids)), "an entry repeats within one feed"
        for e in feed.entries:
            assert e.id.startswith("tag:") and e.updated_parsed and e.title
        parsed[path.parent.name] = feed
    for path in jsons:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["version"] == "https://jsonfeed.org/version/1.1"
        assert isinstance(data["title"], str) and data["title"]
        assert isinstance(data["items"], list)
        for item in data["items"]:
            assert isinstance(item["id"], str) and item["id"]
            assert isinstance(item.get("content_html") or item.get("content_text"), str)
            for url_key in ("url", "external_url"):
                if url_key in item:
                    assert item[url_key].startswith(("http://", "https://"))
        assert len({i["id"] for i in data["items"]}) == len(data["items"])
    return parsed


def test_feeds_parse_and_a_grown_story_updates_in_place(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_LANGS", "en,fr")
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_BASE_URL", "https://news.example.org/feeds")
    _seed(conn)
    r1 = _run(clean_db, H, tmp_path)
    assert r1.success
    md = r1.metadata
    assert md["feed_stories"].value == 2 and md["new_entries"].value == 4 and md["languages"].value == 2
    first = check_output_dir(tmp_path)
    en1 = {e.id: e for e in first["en"].entries}
    assert len(en1) == 2
    s1_id = next(i for i in en1 if "/s1/" in i)
    s1_before = en1[s1_id]
    assert s1_before.link == "https://news.example.org/feeds/en/story/s1.html"
    related_before = [link.href for link in s1_before.links if link.rel == "related"]
    assert len(related_before) == 2

    # The hostile story: markup is text, the javascript: URL is no link at all.
    s2 = next(e for i, e in en1.items() if "/s2/" in i)
    assert s2.title == HOSTILE
    raw_atom = (tmp_path / "en" / "atom.xml").read_text(encoding="utf-8")
    assert "<script>" not in raw_atom and "javascript:" not in raw_atom
    assert all(link.href.startswith("http") for link in s2.links)
    # In English the German story has no translation: the entry says so, in the language it is in.
    assert "no translation yet" in s2.content[0].value and s2.title_detail.language == "de"
    # French: the translation when present.
    fr = {e.id: e for e in first["fr"].entries}
    assert fr[s1_id.replace("/en", "/fr")].title == "Un séisme frappe la côte"

    # The same hour again: nothing changes, not even a byte.
    before_bytes = raw_atom
    r_again = _run(clean_db, H, tmp_path)
    md_again = r_again.metadata
    assert md_again["new_entries"].value == 0 and md_again["updated_entries"].value == 0
    assert (tmp_path / "en" / "atom.xml").read_text(encoding="utf-8") == before_bytes

    # An hour later the story gained an article from a new outlet and a new score.
    s2_page = tmp_path / "en" / "story" / "s2.html"
    s2_mtime = s2_page.stat().st_mtime_ns
    (tmp_path / "fr" / "story" / "s2.html").unlink()  # a lost page is written again
    _grow(conn, "s1", "en", 10.5, 8.5)
    r2 = _run(clean_db, H1, tmp_path)
    assert s2_page.stat().st_mtime_ns == s2_mtime  # unchanged story: its page is not rewritten
    assert (tmp_path / "fr" / "story" / "s2.html").exists()
    assert "New outlet en" in (tmp_path / "fr" / "story" / "s1.html").read_text(encoding="utf-8")
    md2 = r2.metadata
    assert md2["new_entries"].value == 0 and md2["updated_entries"].value >= 2  # s1 in en and fr
    second = check_output_dir(tmp_path)
    en2 = {e.id: e for e in second["en"].entries}
    assert set(en2) == set(en1), "same stories, same ids: updated, not duplicated"
    s1_after = en2[s1_id]
    assert s1_after.updated_parsed > s1_before.updated_parsed
    assert s1_after.published_parsed == s1_before.published_parsed
    assert len([link for link in s1_after.links if link.rel == "related"]) == 3
    assert "New outlet en" in s1_after.content[0].value
    assert en2[next(i for i in en2 if "/s2/" in i)].updated_parsed == s2.updated_parsed  # untouched story
    # A reader merging both polls by id holds one entry per story.
    reader = {**{e.id: e for e in first["en"].entries}, **{e.id: e for e in second["en"].entries}}
    assert len(reader) == 2
    data = json.loads((tmp_path / "en" / "feed.json").read_text(encoding="utf-8"))
    item = next(i for i in data["items"] if i["id"] == s1_id)
    assert item["_newsdedup"]["source_count"] == 3 and item["_newsdedup"]["significance"] == 8.5
    assert item["date_modified"] > item["date_published"]


def test_an_older_hour_never_rolls_the_feed_back(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_LANGS", "en")
    _seed(conn)
    assert _run(clean_db, H1, tmp_path).success
    atom = (tmp_path / "en" / "atom.xml").read_bytes()
    r = _run(clean_db, H, tmp_path)
    md = r.metadata
    assert "newer hour" in md["skipped"].value
    assert (tmp_path / "en" / "atom.xml").read_bytes() == atom
    forced = _run(clean_db, H, tmp_path, force=True)
    assert "skipped" not in forced.metadata


def test_site_pages_and_window(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_LANGS", "en")
    calibrate(monkeypatch, tmp_path, publish={"window_hours": 6})
    _seed(conn)
    add_story(conn, "old", "old news", 1.0, titles={"en": "Old news"}, significance=9.0)      # 01:00: out of a 6 h window
    add_story(conn, "e1", "storm", 8.0, titles={"en": "Storm nears"}, significance=5.0)
    add_story(conn, "e2", "storm", 9.0, titles={"en": "Storm lands"}, significance=6.0)
    for sid in ("e1", "e2"):
        conn.execute("INSERT INTO events (id, model, title, centroid, first_published_at, last_published_at,"
                     " created_partition, updated_partition, story_count, narrative, narrative_lang, narrative_offline)"
                     " SELECT 'ev1', model, 'Storm season <2026>', centroid, %s, %s, %s, %s, 2,"
                     " '{\"what_happened\": \"A storm <b>formed</b>.\"}'::jsonb, 'en', true FROM stories WHERE id = %s"
                     " ON CONFLICT (id) DO NOTHING", (at(8), at(9), hour_of(at(9)), hour_of(at(9)), sid))
        conn.execute("INSERT INTO event_stories (story_id, event_id, partition_hour) VALUES (%s, 'ev1', %s)",
                     (sid, hour_of(at(9))))
    conn.commit()
    assert _run(clean_db, H, tmp_path).success
    feed = check_output_dir(tmp_path)["en"]
    ids = [e.id for e in feed.entries]
    assert not any("/old/" in i for i in ids) and len(ids) == 4
    index = (tmp_path / "en" / "index.html").read_text(encoding="utf-8")
    assert "Old news" in index  # today's index holds the whole day
    assert index.index("Old news") < index.index("Earthquake")  # most significant first
    assert "&lt;script&gt;" in index and "<script>" not in index
    assert 'href="javascript:' not in index
    story = (tmp_path / "en" / "story" / "e1.html").read_text(encoding="utf-8")
    # Each source is listed with its own article's headline and time.
    assert ('Source EN</bdi></a> <span class="meta">(English)</span>: <bdi class="article-title">Storm nears</bdi>'
            in story)
    assert '<time class="meta" dir="auto" datetime="2026-11-02T08:00:00Z">November 2, 2026 08:00 UTC</time>' in story
    assert "Storm season &lt;2026&gt;" in story and 'href="../event/ev1.html"' in story
    event = (tmp_path / "en" / "event" / "ev1.html").read_text(encoding="utf-8")
    assert "A storm &lt;b&gt;formed&lt;/b&gt;." in event
    assert 'href="../story/e1.html"' in event and 'href="../story/e2.html"' in event
    root = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert 'href="en/atom.xml"' in root and 'href="en/feed.json"' in root
    leftovers = [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_directory_lock_is_released_after_a_failure(clean_db, conn, tmp_path):
    import pytest

    from newsdedup_dagster.config import PublishSettings
    from newsdedup_dagster.stages.publish.build import publish_hour

    _seed(conn)
    settings = PublishSettings(output_dir=tmp_path)
    hour = datetime(2026, 11, 2, 10, tzinfo=UTC)
    with pytest.raises(TypeError):
        publish_hour(conn, hour, settings, ["en"], now="not a time")  # fails after taking the lock
    held = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
    assert conn.execute(held).fetchone()[0] == 0
    result = publish_hour(conn, hour, settings, ["en"], now=hour + timedelta(hours=2))
    assert result.languages["en"].feed_entries == 2
    assert conn.execute(held).fetchone()[0] == 0
