"""The published site in a real browser: `newsdedup serve` on a free port, Debian's chromium
driven by Playwright (system binary, nothing downloaded), JavaScript off (the site needs none)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from dagster import materialize
from test_events_fixtures import add_story

from newsdedup_dagster.assets.publish import story_feeds
from newsdedup_dagster.resources import LLMResource, PostgresResource

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
EVIL_SOURCE = "<i>Evil & Co</i>"
EVIL_TITLE = "<b>Breaking</b> news"
HEADLINE = 'Flood <img src=x onerror="document.title=1"> warning'

pytestmark = pytest.mark.slow


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
    result = materialize([story_feeds], partition_key="2026-11-02-10:00",
                         resources={"postgres": PostgresResource(database_url=clean_db), "llm": LLMResource()})
    assert result.success
    return out


@pytest.fixture()
def server(site):
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
            assert "Languages: en, fr, ja" in story.inner_text()
            assert "Sources: 3" in story.inner_text()
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
            assert "Languages: en, fr, ja" in body and "All sources" in body
            assert page.locator("main ul.sources a").count() == 3
            assert EVIL_SOURCE in body
            # Other languages of the same story are one click away.
            page.locator("ul.langs a[hreflang=fr]").click()
            page.wait_for_load_state()
            assert page.url.endswith("/fr/story/s1.html")
            assert page.locator("h1").inner_text() == "Alerte aux inondations"
            assert dialogs == []
        finally:
            browser.close()
