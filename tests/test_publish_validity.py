"""`story_feeds` in all eleven published languages against the real database, checked by the
standard validators (`tests/feed_validators.py`): every `atom.xml` against RFC 4287's RELAX NG
schema plus the Feed Validation Service's URI and entry checks, every `feed.json` against the
JSON Feed 1.1 schema, every page with the Nu Html Checker; the same for every category page and
its two feeds. Also: an aggregator's copy is its
publisher's article (one outlet), entry times are the story's own, every entry has authors and
a category, and every feed names its icons."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from feed_validators import VNU_JAR, atom_errors, atom_warnings, html_errors, java, json_feed_errors
from hourly_helpers import stage_hour
from lxml import etree
from test_events_fixtures import add_story, at, ensure_source, hour_of

from newsdedup_dagster.config import LLMSettings
from newsdedup_dagster.resources import LLMResource
from newsdedup_dagster.shared.presentation.labels import labels_for
from newsdedup_dagster.stages.publish.model import BriefingView

H = "2026-11-02-10:00"
# The seeded stories' categories: their briefings', and the offline one of the story without a
# briefing ("Parliament vote on the budget": politics).
CATEGORIES = ("business", "disasters", "politics")
ATOM = "{http://www.w3.org/2005/Atom}"
LANGS = (LLMSettings().pivot_lang, *LLMSettings().translation_langs)
# franceinfo's real links carry this fragment; "[" and "]" may not stand in a URI fragment.
FRANCEINFO = "https://www.francetvinfo.fr/monde/seisme.html#xtor=RSS-3-[lestitres]"


def _add_item(conn, story_id, item_id, source_id, url, title, lang, hours):
    moment = at(hours)
    conn.execute(
        "INSERT INTO items (id, canonical_url, url, title, lang, published_at, partition_hour, source_id)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (item_id, url, url, title, lang, moment, hour_of(moment), source_id))
    conn.execute("INSERT INTO story_items (item_id, story_id, pass, similarity, partition_hour)"
                 " VALUES (%s, %s, 1, 0.9, %s)", (item_id, story_id, hour_of(moment)))


def _seed(conn):
    # 08:36 first report, 09:12 last article: exact minutes, not hours.
    add_story(conn, "quake", "quake", 8.6, 9.2, titles={"en": "Magnitude 5.4 quake off Ibaraki.", "ru": "Землетрясение"},
              significance=7.0, summary="No immediate report of damage.",
              translations={"ja": ("茨城沖でM5.4の地震", "被害の報告はない。")})
    # The same Reuters article from Reuters and from an aggregator; a French outlet's odd fragment.
    conn.execute("UPDATE items SET url = 'https://www.reuters.com/world/quake-ibaraki' WHERE id = 'it-quake-en'")
    conn.execute("UPDATE sources SET name = 'Reuters' WHERE id = 'src-en-xx'")
    conn.execute("INSERT INTO sources (id, name, feed_url, language, syndicator) VALUES"
                 " ('gnews-en', 'Google News (English)', 'https://news.google.com/rss?hl=en', 'en', true),"
                 " ('gnews-fr', 'Google Actualités', 'https://news.google.com/rss?hl=fr', 'fr', true)")
    ensure_source(conn, "franceinfo", "fr", "FR", name="franceinfo")
    _add_item(conn, "quake", "it-quake-gnews", "gnews-en", "https://reuters.com/world/quake-ibaraki?utm_source=gn",
              "Magnitude 5.4 quake off Ibaraki - Reuters", "en", 8.8)
    _add_item(conn, "quake", "it-quake-gnews-guardian", "gnews-fr", "https://www.theguardian.com/world/quake",
              "Séisme au Japon", "fr", 8.9)
    _add_item(conn, "quake", "it-quake-fi", "franceinfo", FRANCEINFO, "Séisme au large du Japon", "fr", 9.0)
    conn.execute("UPDATE stories SET item_count = 5 WHERE id = 'quake'")
    # Its briefing: points citing Reuters (through the aggregator's copy too) and franceinfo, a quote.
    briefing = {"points": [
        {"text": "The quake struck off Ibaraki at 00:36 & no tsunami followed <b>.", "citations": ["it-quake-en"],
         "lang": "en"},
        {"text": "Le séisme a été ressenti à Tokyo.", "citations": ["it-quake-fi", "it-quake-gnews"], "lang": "fr"},
        {"text": "A line citing nothing shown.", "citations": ["no-such-item"], "lang": "en"}],
        "quotes": [{"text": "We felt it in Tokyo", "speaker": "Aiko Tanaka", "role": "a resident",
                    "article_id": "it-quake-en", "lang": "en"}],
        "summary": {"text": "A magnitude 5.4 quake struck off Ibaraki.", "citations": ["it-quake-en", "it-quake-fi"],
                    "lang": "en"},
        "perspectives": [
            {"text": "Reuters stresses the tsunami warning.", "citations": ["it-quake-en"], "country": "GB",
             "lang": "en"},
            {"text": "La presse française insiste sur Tokyo.", "citations": ["it-quake-fi"], "country": "FR",
             "lang": "fr"}]}
    conn.execute("INSERT INTO story_briefings (story_id, material, lang, method, category, briefing, partition_hour)"
                 " VALUES ('quake', 'm', 'en', 'extractive', 'disasters', %s, %s)",
                 (json.dumps(briefing), hour_of(at(9.2))))
    # A story outside every event, about an election: its category is a topic.
    add_story(conn, "vote", "vote", 9.4, titles={"de": "Wahl im Bundestag"}, headline="Parliament vote on the budget",
              significance=4.0)
    # A second briefing category, so each language has two category pages and feeds.
    add_story(conn, "rates", "rates", 9.7, titles={"en": "Central bank holds rates"}, significance=5.0)
    conn.execute("INSERT INTO story_briefings (story_id, material, lang, method, category, briefing, partition_hour)"
                 " VALUES ('rates', 'm', 'en', 'extractive', 'business', %s, %s)",
                 (json.dumps({"points": [{"text": "The bank held its rate at 4%.", "citations": ["it-rates-en"],
                                          "lang": "en"}]}), hour_of(at(9.7))))
    conn.commit()


@pytest.fixture()
def site(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_LANGS", ",".join(LANGS))
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(tmp_path))
    _seed(conn)
    result = stage_hour("story_feeds", H, clean_db, llm=LLMResource())
    assert result.success
    return tmp_path


def _entries(site: Path, lang: str) -> dict[str, etree._Element]:
    doc = etree.parse(str(site / lang / "atom.xml")).getroot()
    return {e.findtext(f"{ATOM}id").split("/")[-2]: e for e in doc.iter(f"{ATOM}entry")}


def test_every_feed_is_valid_atom_and_json_feed(site):
    for lang in LANGS:
        atom = (site / lang / "atom.xml").read_bytes()
        assert atom_errors(atom) == [], lang
        assert atom_warnings(atom) == [], lang      # distinct story times: no DuplicateUpdated
        assert json_feed_errors((site / lang / "feed.json").read_text(encoding="utf-8")) == [], lang
    fr = (site / "fr" / "atom.xml").read_text(encoding="utf-8")
    assert "#xtor=RSS-3-%5Blestitres%5D" in fr and "[lestitres]" not in fr


def test_every_category_feed_is_valid_atom_and_json_feed(site):
    for lang in LANGS:
        folders = sorted((site / lang / "category").iterdir())
        assert [f.name for f in folders] == sorted(CATEGORIES), lang
        for folder in folders:
            atom = (folder / "atom.xml").read_bytes()
            assert atom_errors(atom) == [], (lang, folder.name)
            assert atom_warnings(atom) == [], (lang, folder.name)
            assert json_feed_errors((folder / "feed.json").read_text(encoding="utf-8")) == [], (lang, folder.name)


def test_the_validators_reject_what_the_service_rejected(site):
    """The same checks fail on the faults the W3C service reported before: an unencoded fragment,
    and (JSON) a missing required field."""
    atom = (site / "fr" / "atom.xml").read_text(encoding="utf-8").replace("%5Blestitres%5D", "[lestitres]")
    assert any("InvalidUriChar" in e for e in atom_errors(atom.encode()))
    # RFC 4287's schema: an entry without an id is no Atom entry.
    no_id = re.sub(r"<id>tag:[^<]*story/quake/fr</id>", "", atom, count=1)
    assert any("RELAX NG" in e for e in atom_errors(no_id.encode()))
    broken = json.loads((site / "fr" / "feed.json").read_text(encoding="utf-8"))
    del broken["items"][0]["id"]
    assert json_feed_errors(json.dumps(broken))


def test_aggregator_items_are_their_publishers_articles(site):
    quake = _entries(site, "en")["quake"]
    authors = [a.findtext(f"{ATOM}name") for a in quake.iter(f"{ATOM}author")]
    # Reuters once (its own item and Google's copy are one outlet), the Guardian by its host.
    assert sorted(authors) == sorted(["Reuters", "theguardian.com", "franceinfo", "Source RU"])
    assert "Google News (English)" not in authors and "Google Actualités" not in authors
    uris = {a.findtext(f"{ATOM}name"): a.findtext(f"{ATOM}uri") for a in quake.iter(f"{ATOM}author")}
    assert uris["Reuters"] == "https://www.reuters.com/"
    data = json.loads((site / "en" / "feed.json").read_text(encoding="utf-8"))
    item = next(i for i in data["items"] if i["_newsdedup"]["story_id"] == "quake")
    assert item["_newsdedup"]["source_count"] == 4 and item["_newsdedup"]["article_count"] == 5
    assert sorted(a["name"] for a in item["authors"]) == sorted(authors)
    page = (site / "en" / "story" / "quake.html").read_text(encoding="utf-8")
    assert "4 sources" in page and "Google News" not in page


def test_entry_times_are_the_story_s_own(site):
    entry = _entries(site, "en")["quake"]
    assert entry.findtext(f"{ATOM}published") == "2026-11-02T08:36:00Z"   # first seen
    assert entry.findtext(f"{ATOM}updated") == "2026-11-02T09:12:00Z"     # newest article
    page = (site / "en" / "story" / "quake.html").read_text(encoding="utf-8")
    assert "November 2, 2026 08:36 UTC" in page


def test_every_entry_has_a_category_and_every_feed_its_icons(site):
    for lang in LANGS:
        doc = etree.parse(str(site / lang / "atom.xml")).getroot()
        icon = doc.findtext(f"{ATOM}icon")
        assert icon.startswith("http") and icon.endswith("/favicon.png")
        for entry in doc.iter(f"{ATOM}entry"):
            assert entry.find(f"{ATOM}category") is not None
        data = json.loads((site / lang / "feed.json").read_text(encoding="utf-8"))
        assert data["icon"].endswith("/icon.png") and data["favicon"].endswith("/favicon.png")
        assert all(item["tags"] for item in data["items"])
    assert (site / "icon.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    vote = _entries(site, "en")["vote"].find(f"{ATOM}category")
    assert (vote.get("term"), vote.get("label")) == ("politics", "Politics")
    vote_ja = _entries(site, "ja")["vote"].find(f"{ATOM}category")
    assert vote_ja.get("label") == "政治"


@pytest.mark.skipif(not VNU_JAR.exists() or not java(),
                    reason="Nu Html Checker not installed (.ci/run: npm install --prefix tests/data/vnu vnu-jar)")
def test_every_page_passes_the_nu_html_checker(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 1 + len(LANGS) * 6
    assert len([p for p in pages if "category" in p.parts]) == len(LANGS) * len(CATEGORIES)
    assert html_errors(pages) == []


def test_the_story_page_shows_its_briefing_with_numbered_sources(site):
    page = next(p for p in (site / "en" / "story").glob("*.html") if "Ibaraki" in p.read_text(encoding="utf-8"))
    doc = etree.parse(str(page), etree.HTMLParser())
    briefing = doc.xpath("//section[@class='briefing']")[0]
    points = briefing.xpath(".//ul[@class='points']/li")
    # The line whose citation is no shown source is left out; markup in a line is text.
    assert [p.xpath("string(text())").strip() for p in points] == [
        "The quake struck off Ibaraki at 00:36 & no tsunami followed <b>.", "Le séisme a été ressenti à Tokyo."]
    assert points[1].get("lang") == "fr"
    sources = {li.get("id"): li.xpath("string(.)") for li in doc.xpath("//ul[@class='sources']/li[@id]")}
    for ref in briefing.xpath(".//a[@class='ref']"):
        assert ref.get("href")[1:] in sources
    reuters = next(k for k, v in sources.items() if "Reuters" in v)
    assert {r.get("href")[1:] for r in points[0].xpath(".//a[@class='ref']")} == {reuters}
    # The aggregator's copy is Reuters' article: citing it points at Reuters' line.
    assert reuters in {r.get("href")[1:] for r in points[1].xpath(".//a[@class='ref']")}
    assert "Aiko Tanaka, a resident" in briefing.xpath("string(.//figcaption)")
    # The summary above the points, with its sources numbered the same way.
    (summary,) = briefing.xpath("./p[@class='summary']")
    assert summary.xpath("string(text())").strip() == "A magnitude 5.4 quake struck off Ibaraki."
    assert len(summary.xpath(".//a[@class='ref']")) == 2 and summary.get("lang") is None
    assert "Climate" not in briefing.xpath("string(.//p[@class='meta'])")
    assert "Disasters and weather" in briefing.xpath("string(.//p[@class='meta'])")


def _briefing_of(content: str):
    """The entry's content as HTML (a feed reader's view of it)."""
    return etree.fromstring(f"<div>{content}</div>", etree.HTMLParser())


@pytest.mark.parametrize("lang", ["en", "ja", "ar"])
def test_feed_entries_carry_the_whole_briefing_with_its_outlets(site, lang):
    """Summary, points, the quote with its speaker and the perspectives, each line followed by the
    outlets it cites, each outlet linking its own article; the labels in the entry's language."""
    labels = labels_for(lang)
    atom_content = _entries(site, lang)["quake"].findtext(f"{ATOM}content")
    feed = json.loads((site / lang / "feed.json").read_text(encoding="utf-8"))
    item = next(i for i in feed["items"] if i["_newsdedup"]["story_id"] == "quake")
    assert item["content_html"] == atom_content
    doc = _briefing_of(atom_content)
    text = " ".join(doc.xpath("string(.)").split())
    for label in ("briefing", "key_points", "quotes", "perspectives", "extractive_note"):
        assert labels[label] in text, label
    summary = doc.xpath("//p[contains(., 'A magnitude 5.4 quake struck off Ibaraki.')]")[0]
    assert [a.xpath("string(.)") for a in summary.xpath(".//a")] == ["Reuters", "franceinfo"]
    assert summary.xpath(".//a/@href") == ["https://www.reuters.com/world/quake-ibaraki",
                                           "https://www.francetvinfo.fr/monde/seisme.html#xtor=RSS-3-%5Blestitres%5D"]
    assert (summary.get("lang"), summary.get("dir")) == (None if lang == "en" else "en", "auto")
    point = doc.xpath("//li[contains(., 'no tsunami followed <b>.')]")[0]
    assert point.xpath(".//a/text()") == [] and point.xpath(".//a/bdi/text()") == ["Reuters"]
    assert "The quake struck off Ibaraki at 00:36 &amp; no tsunami followed &lt;b&gt;." in atom_content
    assert "A line citing nothing shown." not in atom_content
    assert "We felt it in Tokyo" in doc.xpath("string(//blockquote)")
    assert "Aiko Tanaka, a resident" in text
    uk, fr = (BriefingView.country_name(code, lang) for code in ("GB", "FR"))
    assert f"{uk}: Reuters stresses the tsunami warning. (Reuters)" in text
    assert f"{fr}: La presse française insiste sur Tokyo. (franceinfo)" in text
