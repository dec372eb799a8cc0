"""The site's archive: every language's front page of every UTC day stays, at
`<lang>/archive/<YYYY-MM-DD>.html`, with the previous and the next archived day and the month's
calendar, and `<lang>/archive/index.html` holds every month's calendar. Plain links only: no
script is needed to move through it.

A day's stories are kept as the HTML its front page showed after the day's last published hour
(`publish_archive_days`), so the page keeps what it said whatever later hours, re-clustering or
retention do to the stories; the page around them is written again only when its navigation
changes (a day added, or pruned by `newsdedup prune`), which the stored page hash tells.

    days = update_archive(conn, settings.output_dir, meta, hour.date(), day_views, langs, files)
    days.front_page_links()     # what the language's front page links: the archive, the day before

The calendar, the navigation and the page hashes are plain functions (no database).
"""

from __future__ import annotations

import calendar
import hashlib
from dataclasses import dataclass, field
from datetime import date
from functools import partial
from pathlib import Path

import psycopg
from babel.core import Locale, UnknownLocaleError, get_global
from babel.dates import format_skeleton

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.presentation.labels import locale_of, long_date, number
from newsdedup_dagster.shared.presentation.site_paths import day_page
from newsdedup_dagster.stages.publish.files import SiteFiles
from newsdedup_dagster.stages.publish.model import StoryView
from newsdedup_dagster.stages.publish.render import ARCHIVE_INDEX, FeedMeta, _page, _switch, _templates_hash

__all__ = ["ARCHIVE_INDEX", "ArchiveDays", "CalendarMonth", "DayNavigation", "archive_navigation", "calendar_month",
           "day_page", "render_archive_day", "render_archive_index", "render_day_stories", "update_archive"]





# ------------------------------------------------------------------------------ pure parts
@dataclass(frozen=True)
class DayNavigation:
    """What an archived day's page links besides its stories."""

    day: date
    previous: date | None          # the archived day before it (a day without stories may be missing)
    next: date | None
    month_days: tuple[date, ...]   # the archived days of its month: the calendar's links
    previous_month: date | None    # the last archived day before its month
    next_month: date | None        # the first archived day after its month


def archive_navigation(days: list[date]) -> dict[date, DayNavigation]:
    """Each archived day's navigation, from the list of archived days (any order, no duplicates)."""
    ordered = sorted(set(days))
    by_month: dict[tuple[int, int], list[date]] = {}
    for d in ordered:
        by_month.setdefault((d.year, d.month), []).append(d)
    months = sorted(by_month)
    out = {}
    for i, d in enumerate(ordered):
        m = months.index((d.year, d.month))
        out[d] = DayNavigation(
            d, ordered[i - 1] if i else None, ordered[i + 1] if i + 1 < len(ordered) else None,
            tuple(by_month[(d.year, d.month)]),
            by_month[months[m - 1]][-1] if m else None,
            by_month[months[m + 1]][0] if m + 1 < len(months) else None)
    return out


@dataclass(frozen=True)
class CalendarMonth:
    """One month as a table of weeks in the page language's order (its first day of the week,
    its weekday and month names, its digits); `linked` days have a page."""

    first: date
    title: str
    weekdays: tuple[tuple[str, str], ...]     # (abbreviated, full name), in week order
    weeks: tuple[tuple[date | None, ...], ...]  # None: a cell of the previous or next month
    linked: frozenset[date] = field(default_factory=frozenset)
    numbers: tuple[str, ...] = ()             # the day numbers 1..31 written the language's way

    def number(self, day: date) -> str:
        return self.numbers[day.day - 1]


def week_locale(lang: str) -> Locale:
    """The locale whose week a calendar in `lang` follows: a bare language has no territory, so
    CLDR's likely one (en -> en_US, weeks from Sunday; ar -> ar_EG, from Saturday), else the world's."""
    locale = locale_of(lang)
    if locale.territory:
        return locale
    try:
        return Locale.parse(get_global("likely_subtags").get(str(locale), str(locale)))
    except (UnknownLocaleError, ValueError):
        return locale


def calendar_month(lang: str, year: int, month: int, linked: frozenset[date] | set[date] = frozenset()
                   ) -> CalendarMonth:
    locale = locale_of(lang)
    first_weekday = week_locale(lang).first_week_day      # 0 = Monday, as in `calendar`
    order = [(first_weekday + i) % 7 for i in range(7)]
    names = locale.days["stand-alone"]
    weekdays = tuple((names["abbreviated"][d], names["wide"][d]) for d in order)
    weeks = tuple(tuple(d if d.month == month else None for d in week)
                  for week in calendar.Calendar(first_weekday).monthdatescalendar(year, month))
    first = date(year, month, 1)
    return CalendarMonth(first, format_skeleton("yMMMM", first, locale=locale), weekdays, weeks,
                         frozenset(d for d in linked if (d.year, d.month) == (year, month)),
                         tuple(number(lang, n) for n in range(1, 32)))


def _hash(*parts) -> str:
    return hashlib.sha256(repr(parts).encode("utf-8", "surrogatepass")).hexdigest()


def stories_hash(stories_html: str) -> str:
    return _hash(stories_html)


def day_page_hash(meta: FeedMeta, nav: DayNavigation, stories: str, switch: list[str]) -> str:
    """Everything an archived day's page shows: its stories (their hash), its navigation, the
    languages it links, the labels and the templates."""
    return _hash(stories, nav, switch, meta.lang, meta.dir, meta.title, meta.site_title,
                 repr(sorted(meta.labels.items())), _templates_hash())


# ------------------------------------------------------------------------------------ pages
def _helpers(lang: str) -> dict:
    return {"calendar_month": lambda first, linked: calendar_month(lang, first.year, first.month, linked),
            "day_page": day_page}


def render_day_stories(meta: FeedMeta, day: date, stories: list[StoryView]) -> str:
    """The day's stories as its archived page shows them (the front page's story cards, linking
    from `archive/` to the story and event pages)."""
    return _page("archive_stories.html.j2", meta, meta.lang, meta.dir, meta.labels, "../../", "", meta.site_title,
                 None, None, stories=stories, here="../").strip()


def render_archive_day(meta: FeedMeta, nav: DayNavigation, stories_html: str, story_count: int,
                       langs: list[str]) -> str:
    """`langs`: the languages that have this day's page (the language switcher)."""
    page = day_page(nav.day)
    shown_day = long_date(meta.lang, nav.day)
    return _page("archive_day.html.j2", meta, meta.lang, meta.dir, meta.labels, "../../",
                 f"{meta.labels['today'].format(date=shown_day)} · {meta.site_title}", meta.site_title, None,
                 _switch(langs, "../../", page), day=shown_day, nav=nav, stories_html=stories_html,
                 story_count=story_count, **_helpers(meta.lang))


def render_archive_index(meta: FeedMeta, days: list[date], langs: list[str]) -> str:
    """Every month with an archived day, newest first, each as its calendar."""
    months = sorted({date(d.year, d.month, 1) for d in days}, reverse=True)
    return _page("archive_index.html.j2", meta, meta.lang, meta.dir, meta.labels, "../../",
                 f"{meta.labels['archive']} · {meta.site_title}", meta.site_title, None,
                 _switch(langs, "../../", ARCHIVE_INDEX), months=months, linked=frozenset(days),
                 **_helpers(meta.lang))


# --------------------------------------------------------------------------------- database
@dataclass
class ArchiveDays:
    """One language's archive after an hour was published."""

    days: list[date]
    today: date
    pages_written: int = 0

    def front_page_links(self) -> tuple[str, str | None]:
        """(the archive's index, the archived day before `today` or None) under the language directory."""
        before = [d for d in self.days if d < self.today]
        return ARCHIVE_INDEX, day_page(before[-1]) if before else None


def update_archive(conn: psycopg.Connection, output_dir: Path, meta: FeedMeta, today: date, stories: list[StoryView],
                   langs: list[str], files: SiteFiles) -> ArchiveDays:
    """Store `today`'s stories for `meta.lang` and write (into `files`) every archived day's page
    whose stories or navigation changed, and the archive's index. The caller commits."""
    lang_dir = output_dir / meta.lang
    key = {"output_dir": str(output_dir), "lang": meta.lang}
    html = render_day_stories(meta, today, stories)
    conn.execute(db.load_sql("publish_archive_day_upsert"),
                 {**key, "day": today, "stories_html": html, "stories_hash": stories_hash(html),
                  "story_count": len(stories)})
    rows = conn.execute(db.load_sql("publish_archive_days"), key).fetchall()
    days = [r[0] for r in rows]
    result = ArchiveDays(days, today)
    navigation = archive_navigation(days)
    stale: dict[date, tuple[str, list[str]]] = {}
    for day, s_hash, _count, stored_hash in rows:
        # Other languages' page of the day: each published now has today's; an older day only
        # where it was archived (a language added later starts its archive then).
        switch = [lang for lang in langs
                  if lang == meta.lang or day == today or files.exists(output_dir / lang / day_page(day))]
        page_hash = day_page_hash(meta, navigation[day], s_hash, switch)
        if page_hash != stored_hash or not files.exists(lang_dir / day_page(day)):
            stale[day] = (page_hash, switch)
    if stale:
        stored = dict(conn.execute(db.load_sql("publish_archive_stories"), {**key, "days": sorted(stale)}).fetchall())
        counts = {r[0]: r[2] for r in rows}
        for day, (_page_hash, switch) in sorted(stale.items()):
            files.write(lang_dir / day_page(day),
                        partial(render_archive_day, meta, navigation[day], stored[day], counts[day], switch))
            result.pages_written += 1
        conn.execute(db.load_sql("publish_archive_page_hashes_set"),
                     {**key, "days": sorted(stale), "page_hashes": [stale[d][0] for d in sorted(stale)]})
    files.write(lang_dir / ARCHIVE_INDEX, partial(render_archive_index, meta, days, langs))
    return result
