"""The published site in a real browser: `newsdedup serve` on a free port, Debian's chromium
driven by Playwright (system binary, nothing downloaded), JavaScript off (the site needs none).
Screenshots of the index, a story, an event and a category page in English, Japanese, Arabic and
Hindi are written to the test's tmp directory (look at them after a change to the templates);
`make screenshots` (NEWSDEDUP_UPDATE_SCREENSHOTS=1) keeps three of them in docs/screenshots/."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from helpers import keep_screenshots
from hourly_helpers import stage_hour
from test_events_fixtures import add_story, at, hour_of

from newsdedup_dagster.resources import LLMResource

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
EVIL_SOURCE = "<i>Evil & Co</i>"
EVIL_TITLE = "<b>Breaking</b> news"
HEADLINE = 'Flood <img src=x onerror="document.title=1"> warning'

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture()
def site(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_LANGS", "en,fr")
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_TITLE", EVIL_TITLE)
    add_story(conn, "s1", "flood", 9.0, titles={"en": HEADLINE, "fr": "Alerte aux inondations", "ja": "洪水警報"},
              headline=HEADLINE, significance=7.5)
    conn.execute("UPDATE sources SET name = %s WHERE id = 'src-fr-xx'", (EVIL_SOURCE,))
    conn.commit()
    out = tmp_path / "public"
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(out))
    result = stage_hour("story_feeds", "2026-11-02-10:00", clean_db, llm=LLMResource())
    assert result.success
    return out


@contextlib.contextmanager
def serve_site(site: Path):
    """`newsdedup serve` on a free port over `site`; yields its base URL."""
    newsdedup = shutil.which("newsdedup") or str(Path(sys.executable).with_name("newsdedup"))
    proc = subprocess.Popen([newsdedup, "serve", "--port", "0", "--dir", str(site)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=dict(os.environ))
    try:
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, line
        yield f"http://127.0.0.1:{match.group(1)}/"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture()
def server(site):
    with serve_site(site) as url:
        yield url


def test_server_is_read_only_and_serves_feed_types(server):
    with httpx.Client(base_url=server, timeout=10) as client:
        assert client.get("en/atom.xml").headers["content-type"].startswith("application/atom+xml")
        assert client.get("en/feed.json").headers["content-type"].startswith("application/feed+json")
        page = client.get("en/index.html")
        assert page.status_code == 200 and "script-src" not in page.headers["content-security-policy"]
        assert client.post("en/index.html", content=b"x").status_code == 501
        assert client.put("en/new.html", content=b"x").status_code == 501
        assert client.get("en/story/").status_code == 404          # no directory listings
        assert client.get("../../../etc/passwd").status_code == 404


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed (apt-get install -y chromium)")
def test_index_and_story_page_in_chromium(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(java_script_enabled=False)
            page = context.new_page()
            dialogs: list[str] = []
            page.on("dialog", lambda d: dialogs.append(d.message))
            page.goto(server + "en/index.html")
            story = page.locator("article.story").first
            headline = story.locator("h2 a")
            assert headline.inner_text() == HEADLINE              # markup shown as text
            assert page.locator("img").count() == 0
            assert "Languages: English, French, and Japanese" in story.inner_text()
            assert "3 sources" in story.inner_text()
            links = story.locator("ul.sources a")
            assert links.count() == 3
            names = [links.nth(i).inner_text() for i in range(3)]
            assert EVIL_SOURCE in names                           # a feed title with markup reads as text
            assert story.locator("ul.sources i").count() == 0
            assert all(links.nth(i).get_attribute("href").startswith("https://") for i in range(3))
            # The site title (a setting) with markup is text too, in the page title and the header.
            assert page.title().endswith(EVIL_TITLE)
            assert page.locator("header b").count() == 0 and EVIL_TITLE in page.locator("header").inner_text()

            headline.click()                                       # a plain link: no JavaScript needed
            page.wait_for_load_state()
            assert page.url.endswith("/en/story/s1.html")
            assert page.locator("h1").inner_text() == HEADLINE
            body = page.locator("main").inner_text()
            assert "Languages: English, French, and Japanese" in body and "All sources" in body
            assert page.locator("main ul.sources a").count() == 3
            assert EVIL_SOURCE in body
            # Other languages of the same story are one click away.
            page.locator("nav.langs a[hreflang=fr]").click()
            page.wait_for_load_state()
            assert page.url.endswith("/fr/story/s1.html")
            assert page.locator("h1").inner_text() == "Alerte aux inondations"
            assert dialogs == []
        finally:
            browser.close()


# ------------------------------------------------------------------- four scripts, two directions
SHOT_LANGS = ("en", "ja", "ar", "hi")
# The screenshots the README and docs/OPERATING.md show: {this test's file: its name in docs/screenshots/}
KEPT_SCREENSHOTS = {"en-index.png": "site-en-index.png", "ar-index.png": "site-ar-index.png",
                    "ja-story.png": "site-ja-story.png"}
QUAKE_EN = "Magnitude 5.4 earthquake strikes off Japan's Ibaraki, no tsunami risk."
QUAKE_SUMMARY = "The quake struck at 08:36 UTC; there was no immediate report of damage."


@pytest.fixture()
def world_site(clean_db, conn, tmp_path, monkeypatch):
    """Two stories of one event: the first translated into Japanese and Hindi, not into Arabic
    (the Arabic pages show the English headline, marked); the second only in Japanese sources."""
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_LANGS", ",".join(SHOT_LANGS))
    add_story(conn, "quake", "quake", 8.6, 9.2, titles={"en": QUAKE_EN, "ja": "茨城県沖でM5.4の地震 津波の心配なし",
                                                      "ru": "Землетрясение у побережья Японии"},
              headline=QUAKE_EN, summary=QUAKE_SUMMARY, significance=7.2,
              translations={"ja": ("茨城県沖でM5.4の地震、津波の心配なし", "地震は協定世界時8時36分に発生し、被害の報告は今のところない。"),
                            "hi": ("जापान के इबाराकी तट पर 5.4 तीव्रता का भूकंप, सुनामी का खतरा नहीं",
                                   "भूकंप 08:36 UTC पर आया; नुकसान की तत्काल कोई खबर नहीं है।")})
    add_story(conn, "aftershock", "quake", 9.5, titles={"ja": "茨城県で震度3の余震"},
              headline="Aftershock of magnitude 4.1 felt in Ibaraki.", summary="Trains resumed after checks.",
              significance=5.1)
    for sid in ("quake", "aftershock"):
        conn.execute("INSERT INTO events (id, model, title, centroid, first_published_at, last_published_at,"
                     " created_partition, updated_partition, story_count, narrative, narrative_lang, narrative_offline)"
                     " SELECT 'ev-quake', model, 'Earthquakes off Ibaraki', centroid, %s, %s, %s, %s, 2,"
                     " '{\"what_happened\": \"A magnitude 5.4 quake struck off Ibaraki at 08:36 UTC.\","
                     " \"what_to_watch\": \"Aftershocks over the coming days.\"}'::jsonb, 'en', true"
                     " FROM stories WHERE id = %s ON CONFLICT (id) DO NOTHING",
                     (at(8.6), at(9.5), hour_of(at(9.5)), hour_of(at(9.5)), sid))
        conn.execute("INSERT INTO event_stories (story_id, event_id, partition_hour) VALUES (%s, 'ev-quake', %s)",
                     (sid, hour_of(at(9.5))))
    # The aftershock's briefing files it under disasters: a category page in every language.
    conn.execute("INSERT INTO story_briefings (story_id, material, lang, method, category, briefing, partition_hour)"
                 " VALUES ('aftershock', 'm', 'ja', 'extractive', 'disasters', %s, %s)",
                 (json.dumps({"points": [{"text": "茨城県で震度3を観測した。", "citations": ["it-aftershock-ja"],
                                          "lang": "ja"}]}), hour_of(at(9.5))))
    conn.commit()
    out = tmp_path / "public"
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(out))
    result = stage_hour("story_feeds", "2026-11-02-10:00", clean_db, llm=LLMResource())
    assert result.success
    return out


@pytest.fixture()
def world_server(world_site):
    with serve_site(world_site) as url:
        yield url


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed (apt-get install -y chromium)")
def test_pages_in_four_scripts_and_two_directions(world_server, tmp_path):
    from playwright.sync_api import sync_playwright

    shots = tmp_path / "screenshots"
    shots.mkdir()
    pages = {"index": "index.html", "story": "story/quake.html", "event": "event/ev-quake.html",
             "category": "category/disasters/index.html"}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(java_script_enabled=False, viewport={"width": 900, "height": 900})
            page = context.new_page()
            for lang in SHOT_LANGS:
                for kind, path in pages.items():
                    response = page.goto(f"{world_server}{lang}/{path}")
                    assert response.status == 200, (lang, kind)
                    page.screenshot(path=str(shots / f"{lang}-{kind}.png"), full_page=True)
                    assert page.locator("html").get_attribute("dir") == ("rtl" if lang == "ar" else "ltr")
                    # Every page has the language switcher, each language named in itself.
                    names = page.locator("nav.langs a").all_inner_texts()
                    assert names == ["English", "日本語", "العربية", "हिन्दी"], (lang, kind, names)
                    # Nothing wider than the window (a long unbroken string would push it).
                    width = page.evaluate("document.documentElement.scrollWidth")
                    assert width <= 900, (lang, kind, width)
            # Arabic story page: the English headline and summary keep their own direction, so the
            # full stop stays at the end of the sentence; the labels around them are Arabic.
            page.goto(f"{world_server}ar/story/quake.html")
            h1 = page.locator("h1")
            assert h1.get_attribute("lang") == "en" and h1.inner_text() == QUAKE_EN
            assert h1.evaluate("e => getComputedStyle(e).direction") == "ltr"
            summary = page.locator("main p[lang=en]").first
            assert summary.evaluate("e => getComputedStyle(e).direction") == "ltr"
            assert page.locator("main h2").first.inner_text() == "جميع المصادر"
            assert "العنوان باللغة الإنجليزية" in page.locator("p.note").inner_text()
            assert page.locator("main").evaluate("e => getComputedStyle(e).direction") == "rtl"
            # Japanese and Hindi: the translation is the headline.
            page.goto(f"{world_server}ja/story/quake.html")
            assert page.locator("h1").inner_text() == "茨城県沖でM5.4の地震、津波の心配なし"
            page.goto(f"{world_server}hi/event/ev-quake.html")
            assert "2 खबरें" in page.locator("main").inner_text()
            # The briefing on an Arabic and a Japanese page: the labels in the page's language, the
            # Japanese point left to right (on the Arabic page marked as Japanese), with its source.
            for lang, label in (("ar", "النقاط الرئيسية"), ("ja", "要点")):
                page.goto(f"{world_server}{lang}/story/aftershock.html")
                briefing = page.locator("section.briefing")
                assert label in briefing.inner_text(), (lang, briefing.inner_text())
                point = briefing.locator("ul.points li", has_text="茨城県で震度3を観測した。")
                assert point.count() == 1 and point.locator("a.ref").count() >= 1, lang
                assert point.get_attribute("lang") == ("ja" if lang == "ar" else None), lang
                assert point.evaluate("e => getComputedStyle(e).direction") == "ltr", lang
                page.screenshot(path=str(shots / f"{lang}-briefing.png"), full_page=True)
            # The category list starts at the side the page's text starts: the right in Arabic.
            for lang, name in (("en", "Disasters and weather"), ("ar", "كوارث وطقس"), ("ja", "災害・気象")):
                page.goto(f"{world_server}{lang}/index.html")
                main = page.locator("main").bounding_box()
                label = page.locator("nav.categories > span").bounding_box()
                link = page.locator("nav.categories a").first
                box = link.bounding_box()
                if lang == "ar":
                    assert abs(label["x"] + label["width"] - (main["x"] + main["width"])) < 2, (label, main)
                    assert box["x"] + box["width"] <= label["x"], (box, label)
                else:
                    assert abs(label["x"] - main["x"]) < 2, (lang, label, main)
                    assert box["x"] >= label["x"] + label["width"], (lang, box, label)
                link.click()
                page.wait_for_load_state()
                assert page.url.endswith(f"/{lang}/category/disasters/index.html")
                assert page.locator("h1").inner_text() == name
                # Both quake stories: the one without a briefing is filed by its headline.
                assert page.locator("main article.story").count() == 2
                # The story page names its category with a link back to this page.
                page.locator("main article#s-aftershock h2 a").click()
                page.wait_for_load_state()
                assert page.url.endswith(f"/{lang}/story/aftershock.html")
                page.locator("a.category").click()
                page.wait_for_load_state()
                assert page.url.endswith(f"/{lang}/category/disasters/index.html")
                page.locator("main a.back").click()
                page.wait_for_load_state()
                assert page.url.endswith(f"/{lang}/index.html")
        finally:
            browser.close()
    for copy in keep_screenshots(shots, KEPT_SCREENSHOTS):
        assert copy.stat().st_size > 10_000, copy
