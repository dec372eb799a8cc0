"""The archive in a real browser (Debian's chromium through Playwright, JavaScript off): from the
front page to the archive, then by the month calendar and the previous/next links from day to
day and month to month, in English (left to right) and Arabic (right to left, the calendar's
first column on the right). Screenshots go to the test's tmp directory."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from test_events_fixtures import add_story
from test_publish_browser import CHROMIUM, CHROMIUM_ARGS, serve_site

from newsdedup_dagster.config import PublishSettings
from newsdedup_dagster.stages.publish.build import publish_hour

pytestmark = [pytest.mark.slow, pytest.mark.browser]

LANGS = ["en", "ar"]
# Hours from 2026-11-02 00:00 UTC of one story per day: Oct 30, Nov 1, Nov 2.
DAYS = {date(2026, 10, 30): -62.0, date(2026, 11, 1): -14.0, date(2026, 11, 2): 9.0}
HEADLINES = {"en": "Story of {day:%Y-%m-%d}", "ar": "خبر يوم {day:%Y-%m-%d}"}


@pytest.fixture()
def archive_server(clean_db, conn, tmp_path):
    out = tmp_path / "public"
    for day, start in DAYS.items():
        add_story(conn, f"s{day:%m%d}", f"topic{day:%d}", start, titles={"en": HEADLINES["en"].format(day=day)},
                  translations={"ar": (HEADLINES["ar"].format(day=day), "ملخص.")}, significance=6.0)
        hour = datetime(day.year, day.month, day.day, 10 if day == date(2026, 11, 2) else 23, tzinfo=UTC)
        assert publish_hour(conn, hour, PublishSettings(output_dir=out), LANGS, now=hour + timedelta(hours=1),
                            force=True).skipped is None
    with serve_site(out) as url:
        yield url


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed (apt-get install -y chromium)")
def test_the_archive_is_navigated_by_its_calendar_in_both_directions(archive_server, tmp_path):
    from playwright.sync_api import sync_playwright

    shots = tmp_path / "screenshots"
    shots.mkdir()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(java_script_enabled=False, viewport={"width": 900, "height": 900}).new_page()

            def follow(locator, path: str) -> None:
                locator.click()
                page.wait_for_load_state()
                assert page.url.endswith(path), (page.url, path)

            def headlines() -> list[str]:
                return page.locator("main article.story h2").all_inner_texts()

            for lang in LANGS:
                page.goto(f"{archive_server}{lang}/index.html")
                # The front page: the day before, and the whole archive.
                follow(page.locator("main nav.archive a[rel=prev]"), f"/{lang}/archive/2026-11-01.html")
                assert headlines() == [HEADLINES[lang].format(day=date(2026, 11, 1))]
                # The calendar: November 2 is a link in its week row; clicking it opens that day.
                calendar = page.locator("table.calendar")
                assert calendar.locator("a[aria-current=page]").inner_text() in ("1", "١")
                follow(calendar.locator("a[href='2026-11-02.html']"), f"/{lang}/archive/2026-11-02.html")
                assert headlines() == [HEADLINES[lang].format(day=date(2026, 11, 2))]
                page.screenshot(path=str(shots / f"{lang}-archive-day.png"), full_page=True)
                # Back a month, then forward by the next-day link across the month's end.
                follow(page.locator("a.previous-month"), f"/{lang}/archive/2026-10-30.html")
                assert headlines() == [HEADLINES[lang].format(day=date(2026, 10, 30))]
                assert page.locator("table.calendar a").count() == 1
                follow(page.locator("a[rel=next]"), f"/{lang}/archive/2026-11-01.html")
                follow(page.locator("a.archive-index"), f"/{lang}/archive/index.html")
                assert page.locator("table.calendar").count() == 2
                follow(page.locator("table.calendar a[href='2026-10-30.html']"), f"/{lang}/archive/2026-10-30.html")
                # The calendar's first column is on the side the page's text starts.
                cells = page.locator("table.calendar thead th")
                first, last = cells.first.bounding_box(), cells.last.bounding_box()
                assert (first["x"] > last["x"]) == (lang == "ar"), (lang, first, last)
                assert page.locator("html").get_attribute("dir") == ("rtl" if lang == "ar" else "ltr")
                width = page.evaluate("document.documentElement.scrollWidth")
                assert width <= 900, (lang, width)
                page.screenshot(path=str(shots / f"{lang}-archive-calendar.png"), full_page=True)
        finally:
            browser.close()
