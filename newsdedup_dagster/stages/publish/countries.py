"""Per-country pages and feeds of each published language, beside the category pages: the
feed's stories carried by at least one outlet of a country (the country of the outlet's own feed;
an aggregator's copy counts for no country), at `<lang>/country/<cc>/` (index.html, atom.xml,
feed.json), named in the page's language (CLDR). A country with no story in the window keeps its
page and feeds as last written (permanent links) and leaves the front page's list.

The grouping is a plain function; `load_story_countries` reads the database.
"""

from __future__ import annotations

import re

import psycopg

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.presentation.labels import locale_of
from newsdedup_dagster.stages.publish.model import StoryView
from newsdedup_dagster.stages.publish.render import FeedMeta, _page, _switch

__all__ = ["country_name", "country_page", "country_feed_tag_uri", "load_story_countries", "render_country",
           "stories_by_country"]

_ALPHA2 = re.compile(r"^[A-Z]{2}$")
# ISO 3166-1's user-assigned codes (AA, QM-QZ, XA-XZ, ZZ: CLDR names ZZ "Unknown Region") and
# CLDR's groupings that are no country.
_NOT_A_COUNTRY = re.compile(r"^(AA|Q[M-Z]|X[A-Z]|ZZ|EU|EZ|UN)$")


def load_story_countries(conn: psycopg.Connection, story_ids: list[str]) -> dict[str, tuple[str, ...]]:
    """story id -> the ISO 3166-1 alpha-2 codes of its outlets' countries (countries CLDR names
    only: a sources file's typo, "XX" or "ZZ" makes no page)."""
    out: dict[str, list[str]] = {}
    if story_ids:
        known = locale_of("en").territories
        for sid, country in conn.execute(db.load_sql("story_outlet_countries"), {"story_ids": story_ids}):
            if _ALPHA2.match(country) and not _NOT_A_COUNTRY.match(country) and country in known:
                out.setdefault(sid, []).append(country)
    return {sid: tuple(codes) for sid, codes in out.items()}


def stories_by_country(stories: list[StoryView], countries: dict[str, tuple[str, ...]]) -> dict[str, list[StoryView]]:
    """Country code -> the stories (in the given order) one of its outlets carried; countries with
    the most stories first, then by code (the same order in every language)."""
    grouped: dict[str, list[StoryView]] = {}
    for story in stories:
        for code in countries.get(story.story_id, ()):
            grouped.setdefault(code, []).append(story)
    return dict(sorted(grouped.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def country_name(code: str, lang: str) -> str:
    return locale_of(lang).territories.get(code, code)


def country_page(code: str) -> str:
    """A country's page under the language directory (its feeds sit beside it)."""
    return f"country/{code.lower()}/index.html"


def country_feed_tag_uri(language_feed_id: str, code: str) -> str:
    """A country feed's id: under its language feed's (minted on the same date), so it never changes."""
    return f"{language_feed_id}/country/{code.lower()}"


def render_country(meta: FeedMeta, country_meta: FeedMeta, code: str, stories: list[StoryView], langs: list[str],
                   countries: list[str]) -> str:
    """One country's page: its stories as the front page shows them, its own feeds, the other
    countries with a page."""
    page = country_page(code)
    root = "../" * (page.count("/") + 1)
    return _page("country.html.j2", meta, meta.lang, meta.dir, meta.labels, root,
                 f"{country_name(code, meta.lang)} · {meta.site_title}", meta.site_title, country_meta.updated,
                 _switch(langs or [meta.lang], root, page), stories=stories, countries=countries,
                 here="../" * page.count("/"), current_country=code, country_feeds=country_meta)
