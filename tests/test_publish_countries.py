"""Per-country pages and feeds against the real database, beside the category pages: per published
language a page, an Atom feed and a JSON Feed for every country whose outlets carried a story in
the feed window, holding exactly those stories; an aggregator's copy counts for no country, a
code CLDR does not know makes no page; the front page links each country by its name in the
page's language (Arabic right to left); a country that leaves the window keeps its page; every
feed passes the validators and every page the Nu Html Checker."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from feed_validators import VNU_JAR, atom_errors, atom_warnings, html_errors, java, json_feed_errors
from lxml import etree
from test_events_fixtures import add_story, at, hour_of
from test_publish_categories import _missing_targets, _story_ids

from newsdedup_dagster.config import PublishSettings
from newsdedup_dagster.shared.presentation.labels import labels_for, locale_of
from newsdedup_dagster.stages.publish.build import publish_hour

H = datetime(2026, 11, 2, 10, tzinfo=UTC)
LANGS = ("en", "ja", "ar")
BASE = "https://news.example.org/site/"
ATOM = "{http://www.w3.org/2005/Atom}"
HTML = etree.HTMLParser()


def _seed(conn):
    # quake: a Japanese and a French outlet; storm: a French one; vote: an outlet of no country and
    # one whose sources file says "ZZ"; probe: Japanese, but all its articles are older than the window.
    add_story(conn, "quake", "quake", 8.6, 9.2, titles={"en": "Quake off Ibaraki", "ja": "茨城沖で地震",
                                                       "fr": "Séisme au Japon"},
              countries={"ja": "JP", "fr": "FR"}, significance=7.0,
              translations={"ar": ("زلزال قبالة إيباراكي", "لا أضرار.")})
    add_story(conn, "storm", "storm", 9.5, titles={"fr": "Tempête sur la côte"}, countries={"fr": "FR"},
              significance=5.0)
    conn.execute("UPDATE sources SET country = ' fr ' WHERE id = 'src-fr-fr'")   # as a sources file may write it
    add_story(conn, "vote", "vote", 9.4, titles={"en": "Parliament vote", "de": "Abstimmung"},
              countries={"de": "ZZ"}, significance=6.0)
    add_story(conn, "probe", "probe", -20.0, titles={"ja": "探査機が小惑星に到着"}, countries={"ja": "JP"},
              significance=8.0)
    # An aggregator in the United States carrying the vote: the aggregator's country is no outlet's.
    conn.execute("INSERT INTO sources (id, name, feed_url, language, country, syndicator)"
                 " VALUES ('gnews-us', 'Google News', 'https://news.google.com/rss', 'en', 'US', true)")
    conn.execute("INSERT INTO items (id, canonical_url, url, title, lang, published_at, partition_hour, source_id)"
                 " VALUES ('it-vote-gn', 'https://a.example/v', 'https://a.example/v', 'Vote', 'en', %s, %s,"
                 " 'gnews-us')", (at(9.4), hour_of(at(9.4))))
    conn.execute("INSERT INTO story_items (item_id, story_id, pass, similarity, partition_hour)"
                 " VALUES ('it-vote-gn', 'vote', 1, 0.9, %s)", (hour_of(at(9.4)),))
    conn.commit()


def _publish(conn, out: Path, hour: datetime = H):
    return publish_hour(conn, hour, PublishSettings(output_dir=out, base_url=BASE), list(LANGS),
                        now=hour + timedelta(hours=2))


@pytest.fixture()
def site(clean_db, conn, tmp_path):
    _seed(conn)
    assert _publish(conn, tmp_path).skipped is None
    return tmp_path


def _page(path: Path):
    return etree.parse(str(path), HTML)


def test_a_page_and_both_feeds_per_country_and_language(site):
    for lang in LANGS:
        assert sorted(p.name for p in (site / lang / "country").iterdir()) == ["fr", "jp"], lang
        names = locale_of(lang).territories
        for code, expected in (("fr", ["storm", "quake"]), ("jp", ["quake"])):
            folder = site / lang / "country" / code
            atom_bytes = (folder / "atom.xml").read_bytes()
            assert atom_errors(atom_bytes) == [] and atom_warnings(atom_bytes) == [], (lang, code)
            atom = etree.fromstring(atom_bytes)
            assert _story_ids(atom) == expected, (lang, code)
            assert atom.findtext(f"{ATOM}title") == f"newsdedup — {names[code.upper()]}"
            assert atom.findtext(f"{ATOM}id").endswith(f":feed/{lang}/country/{code}")
            links = {link.get("rel") + " " + link.get("type"): link.get("href") for link in atom.findall(f"{ATOM}link")}
            assert links["self application/atom+xml"] == f"{BASE}{lang}/country/{code}/atom.xml"
            text = (folder / "feed.json").read_text(encoding="utf-8")
            assert json_feed_errors(text) == []
            data = json.loads(text)
            assert [i["_newsdedup"]["story_id"] for i in data["items"]] == expected
            assert data["feed_url"] == f"{BASE}{lang}/country/{code}/feed.json"
            page = _page(folder / "index.html")
            assert page.xpath("//main//article[@class='story']/@id") == [f"s-{sid}" for sid in expected]
            assert page.xpath("string(//h1)") == names[code.upper()]
            assert page.xpath("//nav[@class='countries']//a[@aria-current='page']/@href") == [
                f"../../country/{code}/index.html"]
    assert _missing_targets(site) == []


def test_the_front_page_links_each_country_by_its_name(site):
    for lang in LANGS:
        nav = _page(site / lang / "index.html").xpath("//nav[@class='countries']")
        assert len(nav) == 1 and nav[0].get("aria-label") == labels_for(lang)["countries"]
        names = locale_of(lang).territories
        # Most stories first: France (two), then Japan.
        assert [(a.get("href"), a.text) for a in nav[0].xpath(".//a")] == [
            ("country/fr/index.html", names["FR"]), ("country/jp/index.html", names["JP"])]
    assert _page(site / "ja" / "index.html").xpath("//nav[@class='countries']//a/text()") == ["フランス", "日本"]
    ar = _page(site / "ar" / "index.html").xpath("//nav[@class='countries']//a/text()")
    assert ar == ["فرنسا", "اليابان"]


def test_a_country_that_leaves_the_window_keeps_its_page(site, conn):
    japan = site / "en" / "country" / "jp"
    kept = {name: (japan / name).read_bytes() for name in ("index.html", "atom.xml", "feed.json")}
    later = H + timedelta(hours=23)          # quake (and so Japan) is out of the 24-hour window
    add_story(conn, "flood", "flood", 32.0, titles={"fr": "Crue de la Seine"}, countries={"fr": "FR"},
              significance=6.0)
    result = _publish(conn, site, later)
    assert result.languages["en"].countries == ["FR"]
    assert {name: (japan / name).read_bytes() for name in kept} == kept
    assert _page(site / "en" / "index.html").xpath("//nav[@class='countries']//a/@href") == ["country/fr/index.html"]
    assert _story_ids(etree.parse(str(site / "en" / "country" / "fr" / "atom.xml")).getroot()) == ["flood"]
    assert _missing_targets(site) == []
    again = _publish(conn, site, later)
    assert again.files_changed == 0


@pytest.mark.skipif(not VNU_JAR.exists() or not java(),
                    reason="Nu Html Checker not installed (.ci/run: npm install --prefix tests/data/vnu vnu-jar)")
def test_every_country_page_passes_the_nu_html_checker(site):
    pages = sorted(site.rglob("country/*/index.html")) + [site / lang / "index.html" for lang in LANGS]
    assert len(pages) == len(LANGS) * 3
    assert html_errors(pages) == []
