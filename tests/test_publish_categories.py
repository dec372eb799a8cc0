"""Category pages and feeds against the real database: per published language, a page, an Atom
feed and a JSON Feed for every category with stories in the feed window, holding exactly those
stories, newest change first; the language index and the story pages link them, by their names in
the page's language (Japanese, Arabic right to left); a story without a briefing is on the page of
its offline category; an unchanged hour rewrites nothing; a category that leaves the window keeps
its page, still linked, without the stories that left, and no feed ever links a page that is not
there."""

from __future__ import annotations

import json
import posixpath
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from lxml import etree
from test_events_fixtures import add_story, hour_of

from newsdedup_dagster.config import PublishSettings
from newsdedup_dagster.shared.presentation.labels import labels_for
from newsdedup_dagster.shared.presentation.taxonomy import category_name
from newsdedup_dagster.stages.publish.build import publish_hour

H = datetime(2026, 11, 2, 10, tzinfo=UTC)
LANGS = ("en", "fr", "ja", "ar")
BASE = "https://news.example.org/site/"
ATOM = "{http://www.w3.org/2005/Atom}"
HTML = etree.HTMLParser()


def _brief(conn, story_id: str, category: str, langs: tuple[str, ...] = ("en",)) -> None:
    points = [{"text": f"What {story_id} reported in {lang}.", "citations": [f"it-{story_id}-{lang}"], "lang": lang}
              for lang in langs]
    conn.execute("INSERT INTO story_briefings (story_id, material, lang, method, category, briefing, partition_hour)"
                 " VALUES (%s, 'm', 'en', 'extractive', %s, %s, %s)",
                 (story_id, category, json.dumps({"points": points, "quotes": []}), H))


def _seed(conn):
    # Two disasters (the storm changed last), one sports story, one story without a briefing (filed
    # under politics by its headline), and a science story whose articles are all older than the
    # feed's 24 hours.
    add_story(conn, "quake", "quake", 8.6, 9.2, titles={"en": "Magnitude 5.4 quake off Ibaraki", "ja": "茨城沖で地震"},
              significance=7.0, translations={"ja": ("茨城沖でM5.4の地震", "被害の報告はない。"),
                                              "ar": ("زلزال قبالة إيباراكي", "لا أضرار.")})
    add_story(conn, "storm", "storm", 9.5, titles={"en": "Storm warning for the coast"}, significance=5.0)
    add_story(conn, "match", "match", 7.0, titles={"fr": "La finale de la coupe"}, significance=4.0, pivot_lang="fr")
    add_story(conn, "vote", "vote", 9.4, titles={"de": "Wahl im Bundestag"}, headline="Parliament vote on the budget",
              significance=6.0)
    add_story(conn, "probe", "probe", -20.0, titles={"en": "Probe reaches the asteroid"}, significance=8.0)
    _brief(conn, "quake", "disasters", ("en", "ja"))
    _brief(conn, "storm", "disasters")
    _brief(conn, "match", "sports", ("fr",))
    _brief(conn, "probe", "science")
    conn.commit()


def _publish(conn, out: Path, hour: datetime = H):
    settings = PublishSettings(output_dir=out, base_url=BASE)
    return publish_hour(conn, hour, settings, list(LANGS), now=hour + timedelta(hours=2))


@pytest.fixture()
def site(clean_db, conn, tmp_path):
    _seed(conn)
    result = _publish(conn, tmp_path)
    assert result.skipped is None
    return tmp_path


def _atom(path: Path) -> etree._Element:
    return etree.parse(str(path)).getroot()


def _story_ids(atom: etree._Element) -> list[str]:
    return [e.findtext(f"{ATOM}id").split("/")[-2] for e in atom.iter(f"{ATOM}entry")]


def _page(path: Path):
    return etree.parse(str(path), HTML)


def _local_path(out: Path, url: str) -> Path:
    assert url.startswith(BASE), url
    return out / urlsplit(url).path[len(urlsplit(BASE).path):]


def _missing_targets(out: Path) -> list[str]:
    """Every link of the site that leads nowhere: relative links of every page, and every link
    under the base URL in every feed (self, alternate, entries, links inside entry content)."""
    missing = []
    for page in out.rglob("*.html"):
        for href in _page(page).xpath("//a/@href | //link/@href"):
            if "://" in href or href.startswith("#"):
                continue
            target = Path(posixpath.normpath(posixpath.join(page.parent.as_posix(), href.split("#")[0])))
            if not target.exists():
                missing.append(f"{page.relative_to(out)} -> {href}")
    urls = []
    for feed in out.rglob("atom.xml"):
        doc = _atom(feed)
        urls += [(feed, link.get("href")) for link in doc.iter(f"{ATOM}link")]
        for content in doc.iter(f"{ATOM}content"):
            urls += [(feed, href) for href in etree.fromstring(f"<div>{content.text}</div>", HTML).xpath("//a/@href")]
    for feed in out.rglob("feed.json"):
        data = json.loads(feed.read_text(encoding="utf-8"))
        urls += [(feed, data["home_page_url"]), (feed, data["feed_url"])]
        for item in data["items"]:
            urls.append((feed, item["url"]))
            urls += [(feed, href) for href in etree.fromstring(f"<div>{item['content_html']}</div>", HTML)
                     .xpath("//a/@href")]
    for feed, url in urls:
        if url.startswith(BASE) and not _local_path(out, url.split("#")[0]).exists():
            missing.append(f"{feed.relative_to(out)} -> {url}")
    return missing


def test_a_page_and_both_feeds_per_category_and_language(site):
    for lang in LANGS:
        categories = sorted(p.name for p in (site / lang / "category").iterdir())
        # The story without a briefing is on its offline category's page; no page for one outside the window.
        assert categories == ["disasters", "politics", "sports"], lang
        language_feed = _atom(site / lang / "atom.xml")
        for category, expected in (("disasters", ["storm", "quake"]), ("sports", ["match"]), ("politics", ["vote"])):
            folder = site / lang / "category" / category
            atom = _atom(folder / "atom.xml")
            assert _story_ids(atom) == expected, (lang, category)     # newest change first
            title = f"newsdedup — {category_name(category, lang)}"
            assert atom.findtext(f"{ATOM}title") == title
            assert atom.findtext(f"{ATOM}id").endswith(f":feed/{lang}/category/{category}")
            assert atom.findtext(f"{ATOM}id") != language_feed.findtext(f"{ATOM}id")
            links = {link.get("rel") + " " + link.get("type"): link.get("href") for link in atom.findall(f"{ATOM}link")}
            assert links["self application/atom+xml"] == f"{BASE}{lang}/category/{category}/atom.xml"
            assert links["alternate text/html"] == f"{BASE}{lang}/category/{category}/index.html"
            # The entries are the language feed's own (same ids), linking the story pages.
            language_entries = {e.findtext(f"{ATOM}id") for e in language_feed.iter(f"{ATOM}entry")}
            assert {e.findtext(f"{ATOM}id") for e in atom.iter(f"{ATOM}entry")} <= language_entries
            data = json.loads((folder / "feed.json").read_text(encoding="utf-8"))
            assert data["title"] == title and data["language"] == lang
            assert data["feed_url"] == f"{BASE}{lang}/category/{category}/feed.json"
            assert data["home_page_url"] == f"{BASE}{lang}/category/{category}/index.html"
            assert [i["_newsdedup"]["story_id"] for i in data["items"]] == expected
            page = _page(folder / "index.html")
            assert page.xpath("//article[@class='story']/@id") == [f"s-{sid}" for sid in expected]
            assert page.xpath("string(//h1)") == category_name(category, lang)
            assert page.xpath("//link[@type='application/atom+xml']/@href")[0] == "atom.xml"
            # Back to the language index.
            assert "../../index.html" in page.xpath("//main//a/@href")
    assert _missing_targets(site) == []


def test_the_index_links_each_category_by_its_translated_name(site):
    for lang in LANGS:
        index = _page(site / lang / "index.html")
        nav = index.xpath("//nav[@class='categories']")
        assert len(nav) == 1, lang
        assert nav[0].get("aria-label") == labels_for(lang)["categories"]
        # Taxonomy order (politics, sports, then disasters), each named in the page's language.
        links = [(a.get("href"), a.text) for a in nav[0].xpath(".//a")]
        assert links == [("category/politics/index.html", category_name("politics", lang)),
                         ("category/sports/index.html", category_name("sports", lang)),
                         ("category/disasters/index.html", category_name("disasters", lang))]
        page = _page(site / lang / "category" / "sports" / "index.html")
        current = page.xpath("//nav[@class='categories']//a[@aria-current='page']")
        assert [a.get("href") for a in current] == ["../../category/sports/index.html"]
    ja = _page(site / "ja" / "index.html").xpath("//nav[@class='categories']//a/text()")
    assert ja == ["政治", "スポーツ", "災害・気象"]
    ar_index = (site / "ar" / "index.html").read_text(encoding="utf-8")
    assert '<html lang="ar" dir="rtl">' in ar_index
    ar = _page(site / "ar" / "index.html").xpath("//nav[@class='categories']//a/text()")
    assert ar == ["سياسة", "رياضة", "كوارث وطقس"]
    ar_page = (site / "ar" / "category" / "disasters" / "index.html").read_text(encoding="utf-8")
    assert '<html lang="ar" dir="rtl">' in ar_page and "<h1>كوارث وطقس</h1>" in ar_page
    assert _atom(site / "ar" / "category" / "disasters" / "atom.xml").findtext(f"{ATOM}title") == \
        "newsdedup — كوارث وطقس"
    assert _atom(site / "ja" / "category" / "sports" / "atom.xml").findtext(f"{ATOM}title") == "newsdedup — スポーツ"
    # The language switcher of a category page leads to the same category in each language.
    switch = _page(site / "ja" / "category" / "sports" / "index.html").xpath("//nav[@class='langs']//a/@href")
    assert switch == [f"../../../{lang}/category/sports/index.html" for lang in LANGS]


def test_story_pages_and_entries_link_their_category(site):
    for lang in LANGS:
        quake = _page(site / lang / "story" / "quake.html")
        link = quake.xpath("//section[@class='briefing']//a[@class='category']")
        assert [(a.get("href"), a.text) for a in link] == [("../category/disasters/index.html",
                                                            category_name("disasters", lang))]
        assert not _page(site / lang / "story" / "vote.html").xpath("//a[@class='category']")
    entry = next(e for e in _atom(site / "ja" / "atom.xml").iter(f"{ATOM}entry") if "/quake/" in e.findtext(f"{ATOM}id"))
    content = entry.findtext(f"{ATOM}content")
    assert f'<a href="{BASE}ja/category/disasters/index.html">災害・気象</a>' in content


def test_republishing_an_unchanged_hour_rewrites_nothing(site, conn):
    files = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in site.rglob("*") if p.is_file()}
    assert sum(1 for p in files if "category" in p.parts) == len(LANGS) * 3 * 3
    again = _publish(conn, site)
    assert again.files_changed == 0
    assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in site.rglob("*") if p.is_file()} == files


def test_a_category_that_leaves_the_window_keeps_its_page(site, conn):
    sports = site / "en" / "category" / "sports"
    # A day later the sports story is out of the 24-hour window; a new disaster came in.
    add_story(conn, "flood", "flood", 31.2, titles={"en": "Flood on the river"}, significance=6.0)
    conn.execute("INSERT INTO story_briefings (story_id, material, lang, method, category, briefing, partition_hour)"
                 " VALUES ('flood', 'm', 'en', 'extractive', 'disasters', %s, %s)",
                 (json.dumps({"points": [{"text": "The river rose.", "citations": ["it-flood-en"], "lang": "en"}]}),
                  hour_of(H + timedelta(hours=21))))
    conn.commit()
    later = H + timedelta(hours=22)
    result = _publish(conn, site, later)
    assert result.languages["en"].categories == ["politics", "disasters"]
    # Its page and feeds stay (permanent links), linked from the index, without the story that left.
    assert _page(sports / "index.html").xpath("//article[@class='story']") == []
    assert _story_ids(_atom(sports / "atom.xml")) == []
    assert json.loads((sports / "feed.json").read_text(encoding="utf-8"))["items"] == []
    index = _page(site / "en" / "index.html")
    assert index.xpath("//nav[@class='categories']//a/@href") == [
        "category/politics/index.html", "category/sports/index.html", "category/disasters/index.html"]
    assert _story_ids(_atom(site / "en" / "category" / "disasters" / "atom.xml")) == ["flood", "storm", "quake"]
    assert (site / "en" / "story" / "flood.html").exists()
    assert _missing_targets(site) == []
