"""Assemble a day's digest: SQL loading, the pure selection and rendering, storage in `digests`
and as files under the outbox directory. No Dagster imports.

    from newsdedup_dagster import config
    from newsdedup_dagster.stages.digest.build import digest_langs, render_day
    settings, outbox = config.digest_settings(), config.outbox_dir()
    langs = digest_langs(conn, settings, config.llm_settings())   # configured + subscribed languages
    result = render_day(conn, date(2026, 11, 2), langs, settings, outbox_dir=outbox)
    result.files["en"].html_path              # <outbox>/digests/2026-11-02/digest-2026-11-02-en.html
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import psycopg

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.models.settings import LLMSettings
from newsdedup_dagster.shared.presentation.categories import story_category
from newsdedup_dagster.shared.presentation.stories import (
    DigestView,
    Selected,
    StoryRecord,
    build_view,
    load_records,
    outlet_name,
)
from newsdedup_dagster.shared.presentation.taxonomy import CATEGORIES
from newsdedup_dagster.shared.presentation.write import atomic_write, private_dirs
from newsdedup_dagster.stages.digest.editions import Edition, read_as_is
from newsdedup_dagster.stages.digest.render import RenderedDigest, render
from newsdedup_dagster.stages.digest.select import DigestCandidate, select_stories
from newsdedup_dagster.stages.digest.settings import DigestSettings
from newsdedup_dagster.stages.digest.updates import StoryNews, mark_updates

__all__ = ["DigestFiles", "DayDigest", "digest_langs", "load_candidates", "load_editions", "load_records", "render_day",
           "digest_html_path", "parse_day"]


@dataclass(frozen=True)
class DigestFiles:
    digest_id: int
    lang: str
    html_path: Path
    text_path: Path
    rendered: RenderedDigest


@dataclass
class DayDigest:
    day: date
    selected: list[Selected]
    candidates: int
    files: dict[str, DigestFiles] = field(default_factory=dict)
    # The readers' editions (stages/digest/editions.py), by (language, edition key).
    editions: dict[tuple[str, str], DigestFiles] = field(default_factory=dict)

    def by_digest_id(self) -> dict[int, tuple[str, str, str]]:
        return {f.digest_id: (f.rendered.subject, f.rendered.html, f.rendered.text)
                for f in [*self.files.values(), *self.editions.values()]}


def parse_day(value: str | date) -> date:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a date (expected YYYY-MM-DD)") from exc


def digest_langs(conn: psycopg.Connection, settings: DigestSettings, llm_settings: LLMSettings) -> list[str]:
    """The configured languages (default: pivot + translation languages) plus every language an
    active subscriber asked for."""
    configured = list(settings.langs) or [llm_settings.pivot_lang, *llm_settings.translation_langs]
    subscribed = [r[0] for r in conn.execute(db.load_sql("digest_subscriber_langs"))]
    conn.commit()
    return list(dict.fromkeys([*configured, *subscribed]))


def _day_bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time(0), tzinfo=UTC)
    return start, start + timedelta(days=1)


def load_candidates(conn: psycopg.Connection, day: date) -> list[DigestCandidate]:
    start, end = _day_bounds(day)
    rows = conn.execute(db.load_sql("digest_candidates"), {"start": start, "end": end}).fetchall()
    conn.commit()
    return [DigestCandidate(sid, float(sig), eid, region, int(sources), int(articles))
            for sid, sig, eid, region, sources, articles in rows]






def digest_html_path(day: date, lang: str, outbox_dir: Path, edition: Edition | None = None) -> Path:
    """The plain digest of a language, or an edition (named by a hash of its key: keys are long)."""
    folder = outbox_dir / "digests" / day.isoformat()
    if edition is not None and edition.key:
        return folder / f"digest-{day.isoformat()}-{lang}-{hashlib.sha256(edition.key.encode()).hexdigest()[:12]}.html"
    return folder / f"digest-{day.isoformat()}-{lang}.html"


def _write(path: Path, content: str, outbox_dir: Path) -> None:
    # A unique temporary name per writer: two digest runs of one day may render at once. Private:
    # the outbox is the deployment's, not the published site.
    private_dirs(path.parent, outbox_dir)
    atomic_write(path, content, private=True)


def load_editions(conn: psycopg.Connection) -> list[Edition]:
    """The editions active readers chose besides the plain one of their language."""
    rows = conn.execute(db.load_sql("digest_subscriber_editions")).fetchall()
    conn.commit()
    return [Edition(lang, tuple(also), tuple(categories), tuple(countries)) for lang, also, categories, countries in rows]


def render_day(
    conn: psycopg.Connection,
    day: date | str,
    langs: list[str],
    settings: DigestSettings | None = None,
    *,
    outbox_dir: Path,
    editions: list[Edition] | None = None,
) -> DayDigest:
    """Select, render in each of `langs` (digest_langs()), store in `digests` and write the files
    under `outbox_dir`; then each edition readers chose (`editions`, default: load_editions()).
    Idempotent."""
    day = parse_day(day)
    candidates = load_candidates(conn, day)
    selected = select_stories(candidates, settings or DigestSettings())
    records = load_records(conn, selected)
    result = DayDigest(day, selected, len(candidates))
    for lang in langs:
        rendered = render(_as_updates(conn, day, lang, "", build_view(day, lang, records),
                                      lambda more, lang=lang: build_view(day, lang, more)))
        html_path = digest_html_path(day, lang, outbox_dir)
        text_path = html_path.with_suffix(".txt")
        _write(html_path, rendered.html, outbox_dir)
        _write(text_path, rendered.text, outbox_dir)
        digest_id = conn.execute(db.load_sql("digest_upsert"), {
            "day": day, "lang": lang, "edition": "", "subject": rendered.subject, "html": rendered.html, "text": rendered.text,
            "story_ids": rendered.story_ids, "event_ids": rendered.event_ids,
            "html_path": str(html_path), "text_path": str(text_path)}).fetchone()[0]
        result.files[lang] = DigestFiles(digest_id, lang, html_path, text_path, rendered)
    conn.commit()
    if editions is None:
        editions = load_editions(conn)
    if editions:
        choices = _story_choices(conn, [c.story_id for c in candidates])
        for edition in editions:
            result.editions[(edition.lang, edition.key)] = _render_edition(
                conn, day, edition, candidates, choices, settings or DigestSettings(), outbox_dir)
        conn.commit()
    return result


def _as_updates(conn: psycopg.Connection, day: date, lang: str, edition: str, view: DigestView,
                make_view: Callable[[list[StoryRecord]], DigestView]) -> DigestView:
    """`view` followed by the stories the previous day's same edition carried that gained articles
    since that day ended, marked as updates (stages/digest/updates.py); `make_view` builds their view the
    way `view` was built."""
    row = conn.execute(db.load_sql("digest_previous_edition"),
                       {"day": day - timedelta(days=1), "lang": lang, "edition": edition}).fetchone()
    conn.commit()
    if row is None:
        return view
    previous, previous_events = list(row[0] or ()), set(row[1] or ())
    news = {sid: StoryNews(int(articles), tuple(outlet_name(*outlet) for outlet in outlets or ()), int(event_stories))
            for sid, articles, outlets, event_stories in conn.execute(
                db.load_sql("digest_story_news"), {"story_ids": previous, "since": _day_bounds(day)[0]})}
    grown = [sid for sid in previous if news.get(sid, StoryNews()).anything]
    updates = make_view(load_records(conn, [Selected(n, sid, None, None, 0.0) for n, sid in enumerate(grown, 1)]))
    return mark_updates(view, updates, news, previous_events)


def _story_choices(conn: psycopg.Connection, story_ids: list[str]) -> dict[str, tuple[str | None, tuple[str, ...]]]:
    """story id -> (its one category, its outlets' countries): what editions filter on. The category
    is the one the site files the story under (`story_category`): its briefing's, else the offline
    one from the text the site reads it from."""
    if not story_ids:
        return {}
    briefed = dict(conn.execute(db.load_sql("story_categories"), {"story_ids": story_ids}).fetchall())
    conn.commit()
    categories = {sid: category for sid, category in briefed.items() if category in CATEGORIES}
    unfiled = [sid for sid in story_ids if sid not in categories]
    for record in load_records(conn, [Selected(n, sid, None, None, 0.0) for n, sid in enumerate(unfiled, 1)]):
        categories[record.story_id] = story_category(briefed.get(record.story_id),
                                                     (record.headline, record.original_title), (record.summary,))
    countries: dict[str, list[str]] = {}
    for sid, country in conn.execute(db.load_sql("story_outlet_countries"), {"story_ids": story_ids}):
        countries.setdefault(sid, []).append(country)
    conn.commit()
    return {sid: (categories.get(sid), tuple(countries.get(sid, ()))) for sid in story_ids}


def _render_edition(conn: psycopg.Connection, day: date, edition: Edition, candidates: list[DigestCandidate],
                    choices: dict, settings: DigestSettings, outbox_dir: Path) -> DigestFiles:
    """One edition: the day's selection among the stories it wants, in its language, each story's
    articles in the reader's other languages shown as they are (editions.read_as_is)."""
    wanted = [c for c in candidates if edition.wants(*choices.get(c.story_id, (None, ())))]
    records = load_records(conn, select_stories(wanted, settings))
    def make_view(stories: list[StoryRecord]) -> DigestView:
        return read_as_is(build_view(day, edition.lang, stories), stories, edition)

    view = _as_updates(conn, day, edition.lang, edition.key, make_view(records), make_view)
    rendered = render(view)
    html_path = digest_html_path(day, edition.lang, outbox_dir, edition)
    text_path = html_path.with_suffix(".txt")
    _write(html_path, rendered.html, outbox_dir)
    _write(text_path, rendered.text, outbox_dir)
    digest_id = conn.execute(db.load_sql("digest_upsert"), {
        "day": day, "lang": edition.lang, "edition": edition.key, "subject": rendered.subject, "html": rendered.html,
        "text": rendered.text, "story_ids": rendered.story_ids, "event_ids": rendered.event_ids,
        "html_path": str(html_path), "text_path": str(text_path)}).fetchone()[0]
    return DigestFiles(digest_id, edition.lang, html_path, text_path, rendered)
