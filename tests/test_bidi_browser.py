"""Mixed directions read right, in a real browser (Debian's chromium through Playwright, JavaScript
off): an event of two English-language stories, grouped and narrated offline by the `events` stage,
published in English, Japanese, Arabic and Hindi by `story_feeds`, and the day's Arabic digest
rendered to a file. On the Arabic event page and in the Arabic mail the narrative's own words are
Arabic and run right to left, each English headline is its own left-to-right isolate (its full
stop stays right of its last word, where an English sentence ends) and every date reads in the
order an Arabic reader reads it. Screenshots of the story and event pages in the four languages and
of the Arabic mail go to the test's temporary directory."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from feed_validators import VNU_JAR, html_errors, java
from hourly_helpers import stage_hour
from test_events_fixtures import add_story
from test_publish_browser import CHROMIUM, CHROMIUM_ARGS, serve_site

from newsdedup_dagster.config import DigestSettings
from newsdedup_dagster.resources import LLMResource
from newsdedup_dagster.stages.digest.build import render_day
from newsdedup_dagster.stages.digest.render import personalised
from newsdedup_dagster.stages.events.grouping import event_id_for
from newsdedup_dagster.stages.publish.model import safe_name

pytestmark = [pytest.mark.slow, pytest.mark.browser]

LANGS = ("en", "ja", "ar", "hi")
QUAKE = "Strong earthquake strikes off Ibaraki."
AFTERSHOCK = "Aftershock felt in Ibaraki."
# How an Arabic reader finds the day the event was first reported in the narrative: "2 نوفمبر 2026".
DAY, MONTH, YEAR = "2", "نوفمبر", "2026"

# Every "." that ends a word in Latin letters, with the box of that letter and of the stop (a Range
# over the text nodes, so it measures what is drawn whatever the markup).
SENTENCE_ENDS = """el => {
  const out = [], walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const t = node.textContent;
    for (let i = 1; i < t.length; i++) {
      if (t[i] !== "." || !/[A-Za-z]/.test(t[i - 1])) continue;
      const box = (a, b) => { const r = document.createRange(); r.setStart(node, a); r.setEnd(node, b);
                              const x = r.getBoundingClientRect(); return [x.left, x.right, x.top]; };
      out.push({text: t.slice(Math.max(0, i - 12), i + 1), letter: box(i - 1, i), stop: box(i, i + 1)});
    }
  }
  return out;
}"""
# The horizontal centre of each part of an element's text: {part: [x, ...]} (every occurrence).
CENTRES = """(el, parts) => {
  const node = document.createTreeWalker(el, NodeFilter.SHOW_TEXT).nextNode(), t = node.textContent, out = {};
  for (const part of parts) {
    out[part] = [];
    for (let i = t.indexOf(part); i >= 0; i = t.indexOf(part, i + 1)) {
      const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + part.length);
      const x = r.getBoundingClientRect(); out[part].push((x.left + x.right) / 2);
    }
  }
  return out;
}"""


@pytest.fixture()
def world(clean_db, conn, tmp_path, monkeypatch):
    """(the published site's directory, the Arabic mail's HTML file, the event's page)."""
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_LANGS", ",".join(LANGS))
    add_story(conn, "quake", "quake", 8.6, 8.8, titles={"en": QUAKE, "ja": "茨城県沖で強い地震"},
              headline=QUAKE, summary="The quake struck at 08:36 UTC.", significance=7.2,
              translations={"ja": ("茨城県沖で強い地震", "地震は協定世界時8時36分に発生した。"),
                            "hi": ("इबाराकी तट पर तेज़ भूकंप", "भूकंप 08:36 UTC पर आया।")})
    conn.commit()
    assert stage_hour("events", "2026-11-02-08:00", clean_db, llm=LLMResource()).success
    add_story(conn, "aftershock", "quake", 9.5, titles={"en": AFTERSHOCK}, headline=AFTERSHOCK,
              summary="Trains resumed after checks.", significance=5.1)
    conn.commit()
    assert stage_hour("events", "2026-11-02-09:00", clean_db, llm=LLMResource()).success
    event = event_id_for("quake")
    assert conn.execute("SELECT story_count, narrative_offline FROM events WHERE id = %s", (event,)).fetchone() == (
        2, True)
    conn.commit()
    site = tmp_path / "public"
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(site))
    assert stage_hour("story_feeds", "2026-11-02-10:00", clean_db, llm=LLMResource()).success
    digest = render_day(conn, date(2026, 11, 2), ["ar"], DigestSettings(), outbox_dir=tmp_path / "outbox",
                        editions=[]).files["ar"].rendered
    mail_html, _text = personalised(digest.html, digest.text, "ar", "https://news.example.org/unsubscribe?t=1")
    mail = tmp_path / "mail-ar.html"
    mail.write_text(mail_html, encoding="utf-8")
    return site, mail, f"event/{safe_name(event)}.html"


def _sentences_end_right(page, selector: str) -> int:
    """Every English sentence in the elements of `selector` ends with its full stop to the right of
    its last letter, on the same line; how many there are."""
    ends = [end for el in page.locator(selector).all() for end in el.evaluate(SENTENCE_ENDS)]
    for end in ends:
        (_, letter_right, letter_top), (stop_left, _, stop_top) = end["letter"], end["stop"]
        assert abs(stop_top - letter_top) < 3 and stop_left >= letter_right - 1, end
    return len(ends)


def _date_reads_right_to_left(locator) -> None:
    """An Arabic date inside right-to-left text: the day right of the month, the year left of it,
    the year's own digits left to right."""
    at = locator.evaluate(CENTRES, [DAY, MONTH, YEAR, "20", "26"])
    day, month, year = at[DAY][0], at[MONTH][0], at[YEAR][0]
    assert day > month > year, at
    assert at["20"][0] < at["26"][0], at


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed (apt-get install -y chromium)")
def test_arabic_event_page_and_mail_read_right_in_chromium(world, tmp_path):
    from playwright.sync_api import sync_playwright

    site, mail, event_page = world
    shots = tmp_path / "screenshots"
    shots.mkdir()
    with serve_site(site) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(java_script_enabled=False, viewport={"width": 900, "height": 900}).new_page()
            for lang in LANGS:
                for kind, path in (("story", "story/quake.html"), ("event", event_page)):
                    assert page.goto(f"{server}{lang}/{path}").status == 200, (lang, kind)
                    page.screenshot(path=str(shots / f"{lang}-{kind}.png"), full_page=True)
                    assert page.evaluate("document.documentElement.scrollWidth") <= 900, (lang, kind)

            # The Arabic event page: each section a right-to-left paragraph in Arabic words...
            page.goto(f"{server}ar/{event_page}")
            sections = page.locator("main h2 + p")
            assert sections.count() == 4
            assert all(p.evaluate("e => getComputedStyle(e).direction") == "rtl" for p in sections.all())
            background = sections.nth(1)
            assert "أول خبر في" in background.inner_text() and "الإنجليزية" in background.inner_text()
            assert "يبقى الحدث مفتوحًا حتى تمر 72 ساعة دون خبر جديد." in sections.nth(3).inner_text()
            # ...the English headlines isolated left to right, named as English, their full stops at their end.
            english = sections.nth(3).locator("bdi[lang=en]")
            assert english.inner_text() == AFTERSHOCK
            assert english.evaluate("e => getComputedStyle(e).direction") == "ltr"
            assert "الإنجليزية" in sections.nth(3).locator(".untranslated").inner_text()
            assert _sentences_end_right(page, "main h2 + p") >= 4
            assert _sentences_end_right(page, "main ol li") == 2      # the event's stories
            _date_reads_right_to_left(background.locator("time"))
            page.screenshot(path=str(shots / "ar-event-narrative.png"), full_page=True)

            # The Arabic mail, opened as the file a mail client shows.
            page.goto(mail.as_uri())
            assert page.locator("html").get_attribute("dir") == "rtl"
            narrative = page.locator("div.event p")
            lines = [p.inner_text() for p in narrative.all()]
            assert any("أول خبر في" in line for line in lines), lines
            assert not any(word in " ".join(lines) for word in ("First reported", "languages:", "stays open")), lines
            assert all(p.evaluate("e => getComputedStyle(e).direction") == "rtl" for p in narrative.all())
            assert _sentences_end_right(page, "div.event p") >= 4
            assert _sentences_end_right(page, "div.story") >= 5
            _date_reads_right_to_left(page.locator("div.event p", has_text="أول خبر في").locator("bdi:not([lang])"))
            assert "الإنجليزية" in page.locator("div.event .untranslated").first.inner_text()
            page.screenshot(path=str(shots / "ar-mail.png"), full_page=True)
        finally:
            browser.close()
    assert sorted(p.name for p in shots.iterdir()) == sorted(
        [f"{lang}-{kind}.png" for lang in LANGS for kind in ("story", "event")] + ["ar-event-narrative.png", "ar-mail.png"])
    # The isolates and notes are valid HTML: the pages and the mail pass the Nu Html Checker.
    if VNU_JAR.exists() and java():
        assert html_errors([*sorted(site.rglob("*.html")), mail]) == []
