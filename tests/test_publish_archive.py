"""The site's archive against the real database: every published day's front page stays per
language at `archive/<day>.html`, with the days before and after it and its month's calendar (in
the page language's week, Arabic right to left), the front page and every feed link it, a day's
page keeps what it showed after its stories change, a republished hour rewrites nothing, and
`prune` keeps it by default and otherwise removes exactly the days it reports, the next hour
linking the remaining days around the gap. Every page passes the Nu Html Checker."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from feed_validators import VNU_JAR, atom_errors, html_errors, java, json_feed_errors
from lxml import etree
from test_events_fixtures import add_story
from test_publish_categories import _missing_targets

from newsdedup_dagster.config import PublishSettings
from newsdedup_dagster.shared.presentation.labels import labels_for, locale_of, long_date
from newsdedup_dagster.stages.publish.archive import archive_navigation, calendar_month, week_locale
from newsdedup_dagster.stages.publish.build import publish_hour
from newsdedup_dagster.stages.retention.prune import prune
from newsdedup_dagster.stages.retention.settings import RetentionSettings

BASE = "https://news.example.org/site/"
LANGS = ["en", "ar"]
ATOM = "{http://www.w3.org/2005/Atom}"
HTML = etree.HTMLParser()
# Hours from 2026-11-02 00:00 UTC: Oct 30 and Nov 1 (Oct 31 has no published hour), then Nov 2.
DAYS = {date(2026, 10, 30): -62.0, date(2026, 11, 1): -14.0, date(2026, 11, 2): 9.0}


def _hour(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, 23 if day != date(2026, 11, 2) else 10, tzinfo=UTC)


def _publish(conn, out: Path, day: date):
    hour = _hour(day)
    result = publish_hour(conn, hour, PublishSettings(output_dir=out, base_url=BASE), LANGS,
                          now=hour + timedelta(hours=1), force=True)
    assert result.skipped is None
    return result


@pytest.fixture()
def site(clean_db, conn, tmp_path):
    for day, start in DAYS.items():
        add_story(conn, f"s{day:%m%d}", f"topic{day:%d}", start, titles={"en": f"What happened on {day:%B %d}"},
                  translations={"ar": (f"ما حدث يوم {day.day}", "ملخص.")}, significance=6.0)
        conn.commit()
        _publish(conn, tmp_path, day)
    return tmp_path


def _page(path: Path):
    return etree.parse(str(path), HTML)


def _headlines(doc) -> list[str]:
    return [h.xpath("string(.)") for h in doc.xpath("//main//article[@class='story']/h2")]


def test_every_day_keeps_its_front_page_with_the_days_around_it(site):
    for lang in LANGS:
        archive = site / lang / "archive"
        assert sorted(p.name for p in archive.iterdir()) == ["2026-10-30.html", "2026-11-01.html",
                                                            "2026-11-02.html", "index.html"]
        labels = labels_for(lang)
        expected = {"2026-10-30": (None, "2026-11-01"), "2026-11-01": ("2026-10-30", "2026-11-02"),
                    "2026-11-02": ("2026-11-01", None)}
        for day, (before, after) in expected.items():
            doc = _page(archive / f"{day}.html")
            assert doc.xpath("string(//h1)") == labels["today"].format(date=long_date(lang, date.fromisoformat(day)))
            # The day's own story only: a page is its day's front page, not today's.
            assert doc.xpath("//main//article[@class='story']/@id") == [f"s-s{day[5:7]}{day[8:]}"], (lang, day)
            assert doc.xpath("//a[@rel='prev']/@href") == ([f"{before}.html"] if before else [])
            assert doc.xpath("//a[@rel='next']/@href") == ([f"{after}.html"] if after else [])
            # The story link leads from archive/ to the story's permanent page.
            href = doc.xpath("//main//article[@class='story']/h2/a/@href")[0]
            assert href == f"../story/s{day[5:7]}{day[8:]}.html" and (archive / href).resolve().exists()
        # November's calendar links the two November days, the shown one as the current page, and
        # leads back to October's last day.
        nov = _page(archive / "2026-11-01.html")
        calendar = nov.xpath("//table[@class='calendar']")[0]
        assert calendar.xpath("./caption/text()") == [calendar_month(lang, 2026, 11).title]
        assert calendar.xpath(".//a/@href") == ["2026-11-01.html", "2026-11-02.html"]
        assert calendar.xpath(".//a[@aria-current='page']/@href") == ["2026-11-01.html"]
        assert len(calendar.xpath(".//td")) % 7 == 0 and len(calendar.xpath(".//td[a or text()]")) == 30
        assert nov.xpath("//a[@class='previous-month']/@href") == ["2026-10-30.html"]
        assert nov.xpath("//a[@class='next-month']/@href") == []
        assert _page(archive / "2026-10-30.html").xpath("//a[@class='next-month']/@href") == ["2026-11-01.html"]
        # The archive's index: every month, newest first.
        index = _page(archive / "index.html")
        assert [c.xpath("string(caption)") for c in index.xpath("//table[@class='calendar']")] == [
            calendar_month(lang, 2026, 11).title, calendar_month(lang, 2026, 10).title]
        assert index.xpath("//table[@class='calendar']//a/@href") == [
            "2026-11-01.html", "2026-11-02.html", "2026-10-30.html"]
    assert _missing_targets(site) == []


def test_the_calendar_follows_the_page_language_s_week_and_direction(site):
    for lang in LANGS:
        locale = locale_of(lang)
        doc = _page(site / lang / "archive" / "2026-11-02.html")
        headers = doc.xpath("//table[@class='calendar']//th/abbr/@title")
        first = week_locale(lang).first_week_day
        assert headers == [locale.days["stand-alone"]["wide"][(first + i) % 7] for i in range(7)]
    # English (United States) weeks start on Sunday, Arabic (Egypt) weeks on Saturday.
    assert _page(site / "en" / "archive" / "2026-11-02.html").xpath("//th/abbr/@title")[0] == "Sunday"
    assert _page(site / "ar" / "archive" / "2026-11-02.html").xpath("//th/abbr/@title")[0] == "السبت"
    ar = (site / "ar" / "archive" / "2026-11-02.html").read_text(encoding="utf-8")
    assert '<html lang="ar" dir="rtl">' in ar and "اليوم السابق" in ar


def test_the_front_page_and_every_feed_link_the_archive(site):
    for lang in LANGS:
        front = _page(site / lang / "index.html")
        nav = front.xpath("//main/nav[@class='archive']")[0]
        assert nav.get("aria-label") == labels_for(lang)["archive"]
        assert nav.xpath(".//a/@href") == ["archive/2026-11-01.html", "archive/index.html"]
        atom = etree.parse(str(site / lang / "atom.xml")).getroot()
        assert [link.get("href") for link in atom.findall(f"{ATOM}link[@rel='archives']")] == [
            f"{BASE}{lang}/archive/index.html"]
        assert atom_errors((site / lang / "atom.xml").read_bytes()) == []
        feed = (site / lang / "feed.json").read_text(encoding="utf-8")
        assert json.loads(feed)["_newsdedup"]["archive"] == f"{BASE}{lang}/archive/index.html"
        assert json_feed_errors(feed) == []
        # The feed keeps its window: the older days' stories are in the archive only.
        ids = [e.findtext(f"{ATOM}id") for e in atom.iter(f"{ATOM}entry")]
        assert [i.split("/")[-2] for i in ids] == ["s1102"]


def test_a_day_keeps_what_it_showed_and_a_rerun_rewrites_nothing(site, conn):
    files = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in site.rglob("*") if p.is_file()}
    again = _publish(conn, site, date(2026, 11, 2))
    assert again.files_changed == 0 and all(x.archive_pages == 0 for x in again.languages.values())
    assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in site.rglob("*") if p.is_file()} == files
    # Nov 2's story gets a new headline and its day is over: on Nov 3 the page of Nov 2 is written
    # again (it gains its next day) with the stories it showed, not with today's version of them.
    conn.execute("UPDATE story_scores SET headline = 'A corrected headline' WHERE story_id = 's1102'")
    conn.commit()
    nov3 = _publish(conn, site, date(2026, 11, 3))
    assert all(x.archive_pages == 3 for x in nov3.languages.values())   # Nov 3, and Nov 1-2's calendar
    nov2 = _page(site / "en" / "archive" / "2026-11-02.html")
    assert nov2.xpath("//a[@rel='next']/@href") == ["2026-11-03.html"]
    assert _headlines(nov2) == ["What happened on November 02"]
    assert _headlines(_page(site / "en" / "archive" / "2026-11-03.html")) == []
    assert _missing_targets(site) == []


def test_prune_keeps_the_archive_by_default_and_removes_what_it_reports(site, conn):
    kept = prune(conn, RetentionSettings(), now=datetime(2027, 6, 1, tzinfo=UTC))
    step = next(s for s in kept.steps if s.name == "archive_days")
    assert step.cutoff is None and step.rows == 0
    assert len(list(site.rglob("archive/*.html"))) == 2 * 4
    # Older than one day as of Nov 2, 12:00: Oct 30 goes, in each language; a dry run counts it only.
    settings = RetentionSettings(archive_days=1)
    now = datetime(2026, 11, 2, 12, tzinfo=UTC)
    dry = next(s for s in prune(conn, settings, now=now, dry_run=True).steps if s.name == "archive_days")
    assert dry.rows == len(LANGS) and (site / "en" / "archive" / "2026-10-30.html").exists()
    real = next(s for s in prune(conn, settings, now=now).steps if s.name == "archive_days")
    assert real.rows == len(LANGS)
    for lang in LANGS:
        assert not (site / lang / "archive" / "2026-10-30.html").exists()
        assert (site / lang / "archive" / "2026-11-01.html").exists()
    # The next hour links the remaining days around the gap: no link leads to a removed page.
    result = _publish(conn, site, date(2026, 11, 2))
    # Nov 1 lost its previous day, both November days their previous month; nothing else changed.
    assert all(x.archive_pages == 2 for x in result.languages.values())
    doc = _page(site / "en" / "archive" / "2026-11-01.html")
    assert doc.xpath("//a[@rel='prev']") == [] and doc.xpath("//a[@class='previous-month']") == []
    assert _missing_targets(site) == []


def test_navigation_of_days_with_gaps_and_months():
    days = [date(2026, 12, 31), date(2026, 10, 3), date(2027, 1, 2), date(2026, 10, 1)]
    nav = archive_navigation(days)
    assert (nav[date(2026, 10, 3)].previous, nav[date(2026, 10, 3)].next) == (date(2026, 10, 1), date(2026, 12, 31))
    assert nav[date(2026, 10, 1)].month_days == (date(2026, 10, 1), date(2026, 10, 3))
    assert nav[date(2026, 12, 31)].previous_month == date(2026, 10, 3)
    assert nav[date(2026, 12, 31)].next_month == date(2027, 1, 2)
    assert nav[date(2027, 1, 2)].next is None and nav[date(2027, 1, 2)].next_month is None
    assert archive_navigation([]) == {}
    february = calendar_month("de", 2027, 2)
    assert all(len(week) == 7 for week in february.weeks)
    assert [d for week in february.weeks for d in week if d] == [date(2027, 2, n) for n in range(1, 29)]
    assert february.weeks[0][0] == date(2027, 2, 1)       # a Monday, the first day of a German week


@pytest.mark.skipif(not VNU_JAR.exists() or not java(),
                    reason="Nu Html Checker not installed (.ci/run: npm install --prefix tests/data/vnu vnu-jar)")
def test_every_archive_page_passes_the_nu_html_checker(site):
    pages = sorted(site.rglob("archive/*.html")) + [site / lang / "index.html" for lang in LANGS]
    assert len(pages) == len(LANGS) * 5
    assert html_errors(pages) == []
