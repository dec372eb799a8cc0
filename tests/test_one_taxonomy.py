"""One taxonomy: a story has one category, the same on its card (the language index), its own page,
its feed entries (Atom and JSON Feed), the category pages and the readers' editions. The category
is its briefing's; a story without a briefing gets the offline one from its own headline. Real
parts: the embedded PostgreSQL, the publisher and the digest as the pipeline runs them."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from lxml import etree
from test_events_fixtures import add_story

from newsdedup_dagster.config import PublishSettings
from newsdedup_dagster.shared.presentation.categories import offline_category
from newsdedup_dagster.shared.presentation.labels import labels_for
from newsdedup_dagster.shared.presentation.taxonomy import CATEGORIES, category_name
from newsdedup_dagster.stages.digest.build import render_day
from newsdedup_dagster.stages.digest.editions import Edition
from newsdedup_dagster.stages.publish.build import publish_hour

H = datetime(2026, 11, 2, 10, tzinfo=UTC)
DAY = date(2026, 11, 2)
LANGS = ("en", "ja")
BASE = "https://news.example.org/"
ATOM = "{http://www.w3.org/2005/Atom}"
HTML = etree.HTMLParser()
# A headline whose words also name other subjects (a summit, a minister): the briefing's category wins.
HEAT = "Ministers at climate summit warn the world is on course for 2.6C of heating"
VOTE = "Parliament vote on the budget"


def _brief(conn, story_id: str, category: str) -> None:
    points = [{"text": f"What {story_id} reported.", "citations": [f"it-{story_id}-en"], "lang": "en"}]
    conn.execute("INSERT INTO story_briefings (story_id, material, lang, method, category, briefing, partition_hour)"
                 " VALUES (%s, 'm', 'en', 'extractive', %s, %s, %s)",
                 (story_id, category, json.dumps({"points": points, "quotes": []}), H))


@pytest.fixture()
def filed(clean_db, conn, tmp_path):
    """story id -> the category it is filed under, after the site and the day's editions are written."""
    add_story(conn, "heat", "heat", 8.5, titles={"en": HEAT, "ja": "温暖化2.6度の見通し"}, significance=7.0)
    add_story(conn, "final", "final", 9.0, titles={"en": "Tigers beat Hawks in Game 6 to win the series"},
              significance=6.0)
    # No briefing yet: filed by its own headline.
    add_story(conn, "vote", "vote", 9.4, titles={"en": VOTE}, significance=5.0)
    _brief(conn, "heat", "environment")
    _brief(conn, "final", "sports")
    conn.commit()
    expected = {"heat": "environment", "final": "sports", "vote": offline_category([VOTE])}
    assert expected["vote"] == "politics"
    return expected


def _page(path: Path):
    return etree.parse(str(path), HTML)


def _site(conn, out: Path):
    result = publish_hour(conn, H, PublishSettings(output_dir=out, base_url=BASE), list(LANGS),
                          now=H + timedelta(hours=2))
    assert result.skipped is None
    return out


def test_the_card_the_page_the_feeds_and_the_category_pages_agree(filed, conn, tmp_path):
    site = _site(conn, tmp_path)
    for lang in LANGS:
        labels = labels_for(lang)
        index = _page(site / lang / "index.html")
        atom = etree.parse(str(site / lang / "atom.xml")).getroot()
        entries = {e.findtext(f"{ATOM}id").split("/")[-2]: e for e in atom.iter(f"{ATOM}entry")}
        items = {i["_newsdedup"]["story_id"]: i
                 for i in json.loads((site / lang / "feed.json").read_text(encoding="utf-8"))["items"]}
        on_pages = {}
        for folder in (site / lang / "category").iterdir():
            for sid in (a.get("id")[2:] for a in _page(folder / "index.html").xpath("//article[@class='story']")):
                on_pages.setdefault(sid, []).append(folder.name)
        for sid, category in filed.items():
            name = category_name(category, lang)
            card = index.xpath(f"//article[@id='s-{sid}']")[0]
            # The card names one category, by the taxonomy's name, and no other classification.
            assert [" ".join(x.split()) for x in card.xpath(".//span[@class='category']/text()")] == \
                [f"{labels['category']}: {name}"], (lang, sid)
            assert not card.xpath(".//span[@class='topic']")
            # Its page: the same category, named once.
            page = _page(site / lang / "story" / f"{sid}.html")
            named = [" ".join(p.xpath("string(.)").split()) for p in page.xpath("//p[@class='meta']")
                     if p.xpath("string(.)").strip().startswith(labels["category"])
                     or p.xpath(".//span[@class='category']")]
            assert len(named) == 1 and name in named[0], (lang, sid, named)
            assert all(other == category or category_name(other, lang) not in named[0]
                       for other in CATEGORIES), (lang, sid)
            # Its feed entries.
            term = entries[sid].find(f"{ATOM}category")
            assert (term.get("term"), term.get("label")) == (category, name), (lang, sid)
            assert items[sid]["tags"] == [name]
            # The category pages: its own, and only its own.
            assert on_pages.get(sid) == [category], (lang, sid)
            feed = etree.parse(str(site / lang / "category" / category / "atom.xml")).getroot()
            assert sid in {e.findtext(f"{ATOM}id").split("/")[-2] for e in feed.iter(f"{ATOM}entry")}


def test_the_readers_editions_file_each_story_where_the_site_does(filed, conn, tmp_path):
    editions = [Edition("en", categories=(category,)) for category in CATEGORIES]
    day = render_day(conn, DAY, ["en"], outbox_dir=tmp_path, editions=editions)
    for category in CATEGORIES:
        carried = set(day.editions[("en", f"categories={category}")].rendered.story_ids)
        assert carried == {sid for sid, c in filed.items() if c == category}, category
    # The mail names a briefed story's category as the site does.
    text = day.files["en"].rendered.text
    assert f"{category_name('environment', 'en')} · " in text
