"""What a reader of the site, the feeds and the mail sees in detail, against the real database and
publisher: a story nothing has scored says so (in every site language) instead of "0.0/10"; people
and organisations hold neither laws nor an acronym beside its own name; the source list is numbered
as the briefing's citations are; every category page is linked; a headline never ends in the
" - Outlet" its feed appended, while a headline's own last clause stays."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from lxml import etree
from test_events_fixtures import add_story

from newsdedup_dagster.config import LLMSettings, PublishSettings
from newsdedup_dagster.shared.presentation.labels import LABELS, decimal, labels_for
from newsdedup_dagster.shared.presentation.taxonomy import category_name
from newsdedup_dagster.shared.text.players import key_players
from newsdedup_dagster.stages.briefings.briefing import Article
from newsdedup_dagster.stages.digest.build import render_day
from newsdedup_dagster.stages.llm.report import format_top_stories, top_stories
from newsdedup_dagster.stages.publish.build import publish_hour

H = datetime(2026, 11, 2, 10, tzinfo=UTC)
BASE = "https://news.example.org/"
PUBLISHED = (LLMSettings().pivot_lang, *LLMSettings().translation_langs)
HTML = etree.HTMLParser()
TIGERS = "Tigers beat Hawks in Game 6 to win Japan Series"
ETNA = "Ätna bricht aus – Flughafen Catania geschlossen"


def _publish(conn, out: Path, langs=("en",), hour: datetime = H):
    result = publish_hour(conn, hour, PublishSettings(output_dir=out, base_url=BASE), list(langs),
                          now=hour + timedelta(hours=2))
    assert result.skipped is None
    return out


def _page(path: Path):
    return etree.parse(str(path), HTML)


def _text(element) -> str:
    return " ".join(element.xpath("string(.)").split())


def _brief(conn, story_id: str, category: str, briefing: dict) -> None:
    conn.execute("INSERT INTO story_briefings (story_id, material, lang, method, category, briefing, partition_hour)"
                 " VALUES (%s, 'm', 'en', 'extractive', %s, %s, %s)", (story_id, category, json.dumps(briefing), H))
    conn.commit()


# ------------------------------------------------------------------------------ not scored
def test_every_site_language_names_a_story_without_a_score(clean_db, conn, tmp_path):
    english = LABELS["en"]["not_scored"]
    for lang in PUBLISHED:
        label = LABELS[lang]["not_scored"]
        assert label and (lang == "en" or label != english), lang
    add_story(conn, "lone", "lone", 9.0, titles={"en": "Gold edges higher before the Fed meeting"}, significance=0.0)
    add_story(conn, "big", "big", 9.2, titles={"en": "Storm warning for the coast"}, significance=6.4)
    site = _publish(conn, tmp_path, PUBLISHED)
    for lang in PUBLISHED:
        labels = labels_for(lang)
        zero = labels["significance"].format(value=decimal(lang, 0.0))
        for page in (site / lang / "index.html", site / lang / "story" / "lone.html"):
            doc = _page(page)
            shown = [_text(x) for x in doc.xpath("//article[@id='s-lone' or @class='story']"
                                                 "//span[@class='significance']")]
            assert labels["not_scored"] in shown, (lang, page.name, shown)
            assert zero not in page.read_text(encoding="utf-8"), (lang, page.name)
        # A story with a score keeps it.
        assert labels["significance"].format(value=decimal(lang, 6.4)) in \
            (site / lang / "index.html").read_text(encoding="utf-8")


# ------------------------------------------------------------------ people and organisations
AI_RULES = [
    Article("r1", "Reuters", "en", "EU agrees AI rules",
            "The European Union agreed to revise the AI Act on Tuesday. Ursula von der Leyen said the EU "
            "would cut paperwork for smaller firms."),
    Article("p1", "Politico", "en", "Brussels eases AI Act",
            "Ursula von der Leyen told reporters the European Union wanted simpler rules. The AI Act took effect "
            "last year and the EU now delays parts of it."),
]


def test_people_and_organisations_hold_no_law_and_no_acronym_of_a_listed_name(clean_db, conn, tmp_path):
    players = [name for name, _ in key_players(AI_RULES, "en")]
    assert "Ursula von der Leyen" in players and "European Union" in players
    assert "AI Act" not in players and "EU" not in players

    # A briefing that lists them anyway (stored before, or a model's list): the page leaves them out.
    add_story(conn, "rules", "rules", 9.0, titles={"en": "EU strikes deal to revise landmark AI rules"})
    _brief(conn, "rules", "technology", {
        "points": [{"text": "The EU agreed to revise its AI rules.", "citations": ["it-rules-en"], "lang": "en"}],
        "players": ["AI Act", "EU", "European Union", "NATO", "Ursula von der Leyen", "Paris Agreement"],
        "named": {}})
    site = _publish(conn, tmp_path)
    doc = _page(site / "en" / "story" / "rules.html")
    label = labels_for("en")["players"]
    (line,) = [p for p in doc.xpath("//p[@class='meta names']") if _text(p).startswith(label)]
    assert [b.text for b in line.xpath("./bdi")] == ["European Union", "NATO", "Ursula von der Leyen"]


# ------------------------------------------------------------------------- numbered sources
def test_the_source_list_is_numbered_as_the_citations_are(clean_db, conn, tmp_path):
    add_story(conn, "quake", "quake", 8.6, 9.2,
              titles={"en": "Magnitude 5.4 quake off Ibaraki", "fr": "Séisme au Japon", "ja": "茨城沖で地震"})
    _brief(conn, "quake", "disasters", {
        "summary": {"text": "A quake struck off Ibaraki.", "citations": ["it-quake-en", "it-quake-ja"], "lang": "en"},
        "points": [{"text": "It was felt in Tokyo.", "citations": ["it-quake-fr"], "lang": "en"}]})
    doc = _page(_publish(conn, tmp_path) / "en" / "story" / "quake.html")
    numbered = {li.get("id"): _text(li) for li in doc.xpath("//ul[@class='sources']/li[@id]")}
    assert len(numbered) == 3
    for source_id, text in numbered.items():
        assert text.startswith(f"[{source_id.removeprefix('src-')}] "), text
    refs = doc.xpath("//section[@class='briefing']//a[@class='ref']")
    assert len(refs) == 3
    for ref in refs:
        # "[2]" leads to the source shown as "[2]".
        assert numbered[ref.get("href")[1:]].startswith(ref.text + " ")


# ------------------------------------------------------------------------ category pages
def test_every_category_page_is_linked_and_lists_only_its_stories(clean_db, conn, tmp_path):
    add_story(conn, "strike", "strike", 9.0, titles={"en": "Train drivers call a 48-hour strike"})
    _brief(conn, "strike", "society", {"points": []})
    _publish(conn, tmp_path)
    # Re-briefed an hour later under another category: the first category's page stays.
    conn.execute("UPDATE story_briefings SET category = 'travel' WHERE story_id = 'strike'")
    conn.commit()
    site = _publish(conn, tmp_path, hour=H + timedelta(hours=1))
    pages = {p.parent.name for p in (site / "en" / "category").glob("*/index.html")}
    assert pages == {"society", "travel"}
    linked = set(_page(site / "en" / "index.html").xpath("//nav[@class='categories']//a/@href"))
    assert linked == {f"category/{name}/index.html" for name in pages}
    for name in pages:
        cards = _page(site / "en" / "category" / name / "index.html").xpath("//article[@class='story']")
        assert all(category_name(name, "en") in _text(c.xpath(".//span[@class='category']")[0]) for c in cards)
    assert not _page(site / "en" / "category" / "society" / "index.html").xpath("//article[@class='story']")


# ------------------------------------------------------------------------ outlet suffixes
@pytest.fixture()
def suffixed(clean_db, conn):
    # An aggregator's copy of a Japan Times article, titled as the aggregator's feed writes it.
    add_story(conn, "tigers", "tigers", 9.0, titles={"en": f"{TIGERS} - The Japan Times", "ja": "阪神、日本一"},
              significance=6.0)
    conn.execute("UPDATE sources SET name = 'Google News (English)', syndicator = true,"
                 " feed_url = 'https://news.google.com/rss?hl=en' WHERE id = 'src-en-xx'")
    conn.execute("UPDATE items SET url = 'https://news.google.com/rss/articles/CBMi123?oc=5',"
                 " outlet = 'japantimes.co.jp' WHERE id = 'it-tigers-en'")
    # A German headline whose last clause is its own.
    add_story(conn, "etna", "etna", 9.5, titles={"de": ETNA}, pivot_lang="de", significance=5.0)
    conn.commit()


def test_displayed_headlines_lose_the_outlet_their_feed_appended(suffixed, conn, tmp_path):
    site = _publish(conn, tmp_path, ("en", "de"))
    index = (site / "en" / "index.html").read_text(encoding="utf-8")
    assert TIGERS in index and "The Japan Times" not in index
    story = (site / "en" / "story" / "tigers.html").read_text(encoding="utf-8")
    assert f"<h1 dir=\"auto\">{TIGERS}</h1>" in story and "The Japan Times" not in story
    assert "The Japan Times" not in (site / "en" / "atom.xml").read_text(encoding="utf-8")
    assert ETNA in (site / "de" / "index.html").read_text(encoding="utf-8")

    mail = render_day(conn, date(2026, 11, 2), ["en"], outbox_dir=tmp_path / "outbox", editions=[]).files["en"]
    assert TIGERS in mail.rendered.text and "The Japan Times" not in mail.rendered.text

    # The operators' lists: the demo's and the story_scores metadata's top stories.
    rows = top_stories(conn, limit=5)
    assert {r["headline"] for r in rows} == {TIGERS, ETNA}
    assert "The Japan Times" not in format_top_stories(rows)
