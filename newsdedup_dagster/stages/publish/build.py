"""Publish one hour: load the stories (the digest's queries), decide each entry's stamps, write
every language's feeds and pages atomically, remember what was published. No Dagster imports;
settings are passed in.

    from newsdedup_dagster.stages.publish.build import publish_hour
    result = publish_hour(conn, hour, config.publish_settings(), ["en", "fr"], now=datetime.now(timezone.utc))
    result.languages["en"].atom_path      # <output_dir>/en/atom.xml

Layout of the output directory:
    index.html                     languages, with links to each feed
    <lang>/index.html              today's stories (the hour's UTC day), most significant first
    <lang>/atom.xml, feed.json     the feed: stories of the last N hours (top N by significance)
    <lang>/story/<story id>.html   one page per story (kept when the story leaves the feed)
    <lang>/event/<event id>.html   one page per event with its narrative and stories
    <lang>/category/<category>/    index.html, atom.xml, feed.json: the feed's stories of one category
                                   (the page stays, empty, when the category leaves the feed)
    <lang>/country/<cc>/           index.html, atom.xml, feed.json: the feed's stories carried by an
                                   outlet of one country (stages/publish/countries.py)
    <lang>/archive/<YYYY-MM-DD>.html  every UTC day's front page, with the days around it and its
                                   month's calendar; archive/index.html: every month (stages/publish/archive.py)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

import psycopg

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.presentation.labels import labels_for, text_direction
from newsdedup_dagster.shared.presentation.stories import Selected, StoryRecord, load_records
from newsdedup_dagster.shared.presentation.taxonomy import CATEGORIES, category_name
from newsdedup_dagster.shared.text.headline import strip_named_outlet
from newsdedup_dagster.stages.publish.archive import update_archive
from newsdedup_dagster.stages.publish.countries import (
    country_feed_tag_uri,
    country_name,
    load_story_countries,
    render_country,
    stories_by_country,
)
from newsdedup_dagster.stages.publish.files import SiteFiles
from newsdedup_dagster.stages.publish.model import (
    EventView,
    FeedCandidate,
    SourceArticle,
    StoredBriefing,
    StoryView,
    category_feed_tag_uri,
    category_page,
    decide_stamp,
    feed_tag_uri,
    fingerprint,
    outlet_name,
    safe_name,
    story_views,
)
from newsdedup_dagster.stages.publish.render import (
    FAVICON,
    ICON,
    STATIC_DIR,
    EventStoryLine,
    FeedMeta,
    RootLanguage,
    build_atom,
    build_json_feed,
    render_category,
    render_event,
    render_index,
    render_root,
    render_story,
    story_page_hash,
)
from newsdedup_dagster.stages.publish.select import load_since, select_day, select_feed
from newsdedup_dagster.stages.publish.settings import PublishSettings

__all__ = ["LanguageOutput", "PublishResult", "load_candidates", "publish_hour"]


@dataclass
class LanguageOutput:
    lang: str
    atom_path: Path
    json_path: Path
    index_path: Path
    feed_entries: int = 0
    index_stories: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    story_pages: int = 0
    event_pages: int = 0
    categories: list[str] = field(default_factory=list)   # those with stories in the feed this hour
    archive_pages: int = 0                                 # archived days' pages written this hour
    countries: list[str] = field(default_factory=list)    # those with a page and feeds written this hour
    files_changed: int = 0


@dataclass
class PublishResult:
    hour: datetime
    output_dir: Path
    skipped: str | None = None
    candidates: int = 0
    feed_stories: list[str] = field(default_factory=list)
    index_stories: list[str] = field(default_factory=list)
    events: int = 0
    languages: dict[str, LanguageOutput] = field(default_factory=dict)

    @property
    def files_changed(self) -> int:
        return sum(x.files_changed for x in self.languages.values())

    def counts(self) -> dict[str, int]:
        return {
            "candidates": self.candidates, "feed_stories": len(self.feed_stories),
            "index_stories": len(self.index_stories), "events": self.events, "languages": len(self.languages),
            "new_entries": sum(x.new for x in self.languages.values()),
            "updated_entries": sum(x.updated for x in self.languages.values()),
            "unchanged_entries": sum(x.unchanged for x in self.languages.values()),
            "files_changed": self.files_changed,
        }


def load_candidates(conn: psycopg.Connection, since: datetime | None, until: datetime,
                    min_significance: float = 0.0) -> list[FeedCandidate]:
    rows = conn.execute(db.load_sql("publish_candidates"),
                        {"since": since, "until": until, "min_significance": min_significance}).fetchall()
    return [FeedCandidate(sid, float(sig), eid, first, latest, int(articles), int(sources), tuple(langs), h)
            for sid, sig, eid, first, latest, articles, sources, langs, h in rows]


def _records(conn: psycopg.Connection, story_ids: list[str]) -> list[StoryRecord]:
    return load_records(conn, [Selected(n + 1, sid, None, None, 0.0) for n, sid in enumerate(story_ids)])


def _source_articles(conn: psycopg.Connection, story_ids: list[str]) -> dict[str, list[SourceArticle]]:
    out: dict[str, list[SourceArticle]] = {}
    if story_ids:
        for sid, source, url, lang, title, published, syndicator, outlet, feed_outlet in conn.execute(
                db.load_sql("publish_story_sources"), {"story_ids": story_ids}):
            name = outlet_name(source, syndicator, outlet, feed_outlet)
            # Shown beside the outlet's name: the title without the " - Outlet" its feed appended.
            title = strip_named_outlet(title or "", (source, name, outlet or ""))
            out.setdefault(sid, []).append(SourceArticle(name, url, lang, title, published, outlet=outlet or ""))
    return out


def _briefings(conn: psycopg.Connection, story_ids: list[str]) -> dict[str, StoredBriefing]:
    out: dict[str, StoredBriefing] = {}
    if story_ids:
        for sid, category, method, _lang, briefing, outlets in conn.execute(
                db.load_sql("publish_briefings"), {"story_ids": story_ids}):
            out[sid] = StoredBriefing(category, method, briefing or {}, outlets or {})
    return out


def _briefings_in(lang: str, briefings: dict[str, StoredBriefing], records: list[StoryRecord]
                  ) -> dict[str, StoredBriefing]:
    """The briefings as a reader of `lang` reads them: each line translated into `lang` where the
    briefing's current version has a translation (load_records read them with the digest's
    records), the citations, quotes and category unchanged."""
    translated = {r.story_id: r.briefing.translated[lang] for r in records
                  if r.briefing is not None and lang in r.briefing.translated}
    return {sid: dataclasses.replace(stored, briefing=translated[sid]) if sid in translated else stored
            for sid, stored in briefings.items()}


def _event_stories(conn: psycopg.Connection, event_ids: list[str]) -> dict[str, list[tuple[str, datetime, int]]]:
    out: dict[str, list[tuple[str, datetime, int]]] = {}
    if event_ids:
        for eid, sid, first, sources in conn.execute(db.load_sql("publish_event_stories"), {"event_ids": event_ids}):
            out.setdefault(eid, []).append((sid, first, int(sources)))
    return out


def publish_hour(conn: psycopg.Connection, hour: datetime, settings: PublishSettings,
                 langs: list[str] | tuple[str, ...], *, now: datetime, force: bool = False,
                 files: SiteFiles | None = None) -> PublishResult:
    """Write the feeds and site as of the end of `hour`. Idempotent: unchanged stories keep their
    stamps, so a rerun writes the same bytes. An hour older than the newest one already written
    to the directory is skipped unless `force` (a backfill must not roll a live feed back).
    `files`: the run's view of the directory (stages/publish/files.py); while it defers, the
    hour's rows are written and its files held for a later hour of the run; else the hour writes
    what earlier hours held and it did not replace, then its own files."""
    files = files if files is not None else SiteFiles()
    lock = {"output_dir": str(settings.output_dir)}
    conn.execute(db.load_sql("publish_lock"), lock)
    conn.commit()
    held = dict(files.held)
    try:
        return _publish_locked(conn, hour, settings, list(dict.fromkeys(langs)), now, force, files)
    except BaseException:
        files.held = held  # a failed hour's rows are rolled back: none of its files is written either
        raise
    finally:
        conn.rollback()  # a failed statement must not keep the unlock from running
        conn.execute(db.load_sql("publish_unlock"), lock)
        conn.commit()


def _publish_locked(conn: psycopg.Connection, hour: datetime, settings: PublishSettings, langs: list[str],
                    now: datetime, force: bool, files: SiteFiles) -> PublishResult:
    out_dir = settings.output_dir
    until = hour + timedelta(hours=1)
    result = PublishResult(hour, out_dir)
    row = conn.execute(db.load_sql("publish_state_get"), {"output_dir": str(out_dir)}).fetchone()
    if row and hour < row[0] and not force:
        conn.commit()
        result.skipped = f"{out_dir} already holds the newer hour {row[0]:%Y-%m-%d %H:%M} UTC"
        return result

    candidates = load_candidates(conn, load_since(hour, settings.window_hours), until, settings.min_significance)
    by_id = {c.story_id: c for c in candidates}
    feed = select_feed(candidates, until, settings.window_hours, settings.max_stories, settings.min_significance)
    day = select_day(candidates, hour, settings.max_stories, settings.min_significance)
    result.candidates = len(candidates)
    result.feed_stories = [c.story_id for c in feed]
    result.index_stories = [c.story_id for c in day]
    shown_ids = list(dict.fromkeys([*result.feed_stories, *result.index_stories]))
    records = _records(conn, shown_ids)
    event_ids = sorted({r.event.event_id for r in records if r.event is not None})
    event_members = _event_stories(conn, event_ids)
    extra_ids = sorted({sid for members in event_members.values() for sid, _, _ in members} - set(shown_ids))
    extra_records = _records(conn, extra_ids)
    articles = _source_articles(conn, shown_ids)
    briefings = _briefings(conn, shown_ids)
    story_countries = load_story_countries(conn, result.feed_stories)
    first_published = dict(conn.execute(db.load_sql("publish_feed_first")).fetchall())
    stamp = min(until, now)
    shown = set(shown_ids)

    upserts: dict[str, list] = {k: [] for k in ("story_ids", "langs", "entry_ids", "published", "updated",
                                                "fingerprints", "page_hashes", "article_counts", "partitions")}
    root_langs: list[RootLanguage] = []
    root_stamp = None
    # The icons before any page or feed that names them.
    for name in (ICON, FAVICON):
        files.write(out_dir / name, (STATIC_DIR / name).read_bytes)
    timelines = {eid: [(sid, first) for sid, first, _ in members] for eid, members in event_members.items()}
    for lang in langs:
        labels = labels_for(lang)
        # The stories with a page in this language once this hour is written: an earlier story is cited by it.
        pages = shown | {sid for sid in extra_ids if files.exists(out_dir / lang / f"story/{safe_name(sid)}.html")}
        views = story_views(hour.date(), lang, records + extra_records, by_id, articles,
                            _briefings_in(lang, briefings, records), timelines, pages)
        view_of = {v.story_id: v for v in views}
        stored, stored_pages = {}, {}
        for sid, eid, pub, upd, fp, page_hash in conn.execute(db.load_sql("publish_entries_load"),
                                                               {"lang": lang, "story_ids": shown_ids}):
            stored[sid], stored_pages[sid] = (eid, pub, upd, fp), page_hash
        lang_out = LanguageOutput(lang, out_dir / lang / "atom.xml", out_dir / lang / "feed.json",
                                  out_dir / lang / "index.html")
        decisions = {}
        for sid in shown_ids:
            view = view_of.get(sid)
            if view is None:
                continue
            view.fingerprint = fingerprint(view, by_id[sid].articles_hash)
            decided = decide_stamp(stored.get(sid), view.fingerprint, stamp, settings.tag_authority, sid, lang,
                                   by_id[sid].first_published_at, by_id[sid].latest_published_at)
            view.entry_id, view.published_at, view.updated_at = decided.entry_id, decided.published_at, decided.updated_at
            setattr(lang_out, decided.status, getattr(lang_out, decided.status) + 1)
            decisions[sid] = decided
        feed_views = [view_of[s] for s in result.feed_stories if s in view_of]
        # Newest change first: what a reader scrolling the raw feed expects.
        feed_views.sort(key=lambda v: (v.updated_at, v.significance, v.story_id), reverse=True)
        day_views = [view_of[s] for s in result.index_stories if s in view_of]
        updated = max((v.updated_at for v in feed_views + day_views), default=stamp)
        minted = min(first_published.get(lang, hour), hour)
        meta = FeedMeta(lang, text_direction(lang), labels["feed_title"].format(site=settings.title),
                        labels["feed_subtitle"], settings.title, settings.base_url,
                        feed_tag_uri(settings.tag_authority, minted, lang), updated, labels)
        lang_dir = out_dir / lang
        # The feed's stories by their one category, newest change first as in the feed.
        by_category: dict[str, list[StoryView]] = {}
        for v in feed_views:
            by_category.setdefault(v.category, []).append(v)
        lang_out.categories = [c for c in CATEGORIES if c in by_category]
        # A category page, once written, keeps its address; it is written again every hour with the
        # category's stories of now (none once they left the window), so it never lists a story filed
        # elsewhere since, and every one is linked from the index and the other category pages.
        paged = [c for c in CATEGORIES if c in by_category or files.exists(lang_dir / category_page(c))]
        for sid in decisions:
            view = view_of[sid]
            if view.category in paged:
                view.category_page = category_page(view.category)
        # Pages first, feeds last: a feed never links to a page that is not there yet.
        for sid in decisions:
            view, decided = view_of[sid], decisions[sid]
            page_hash = story_page_hash(meta, view, langs)
            if page_hash != stored_pages.get(sid) or not files.exists(lang_dir / view.page):
                files.write(lang_dir / view.page, partial(render_story, meta, view, langs))
                lang_out.story_pages += 1
            if decided.status != "unchanged" or page_hash != stored_pages.get(sid):
                for key, value in (("story_ids", sid), ("langs", lang), ("entry_ids", decided.entry_id),
                                   ("published", decided.published_at), ("updated", decided.updated_at),
                                   ("fingerprints", view.fingerprint), ("page_hashes", page_hash),
                                   ("article_counts", view.article_count), ("partitions", hour)):
                    upserts[key].append(value)
        events: dict[str, EventView] = {v.event.event_id: v.event for v in view_of.values()
                                        if v.story_id in shown and v.event is not None}
        for eid, event in events.items():
            lines = []
            for sid, first, sources in event_members.get(eid, []):
                v = view_of.get(sid)
                if v is None:
                    continue
                lines.append(EventStoryLine(sid, v.headline, v.headline_lang, first, sources, v.page,
                                            linked=files.exists(lang_dir / v.page)))
            files.write(lang_dir / event.page, partial(render_event, meta, event, lines, langs))
            lang_out.event_pages += 1
        category_feeds = []
        for cat in paged:
            cat_views = by_category.get(cat, [])
            cat_meta = dataclasses.replace(
                meta, title=f"{settings.title} — {category_name(cat, lang)}",
                feed_id=category_feed_tag_uri(settings.tag_authority, minted, lang, cat),
                updated=max((v.updated_at for v in cat_views), default=meta.updated), feed_path=f"category/{cat}/")
            cat_dir = lang_dir / "category" / cat
            files.write(cat_dir / "index.html",
                                   partial(render_category, meta, cat_meta, cat, cat_views, langs, paged))
            category_feeds.append((cat_dir, cat_meta, cat_views))
        # The feed's stories by their outlets' countries, as by category.
        by_country = stories_by_country(feed_views, story_countries)
        lang_out.countries = list(by_country)
        country_feeds = []
        for code, country_views in by_country.items():
            country_meta = dataclasses.replace(
                meta, title=f"{settings.title} — {country_name(code, lang)}",
                feed_id=country_feed_tag_uri(meta.feed_id, code),
                updated=max(v.updated_at for v in country_views), feed_path=f"country/{code.lower()}/")
            country_dir = lang_dir / "country" / code.lower()
            files.write(country_dir / "index.html", partial(
                render_country, meta, country_meta, code, country_views, langs, lang_out.countries))
            country_feeds.append((country_dir, country_meta, country_views))
        archive = update_archive(conn, out_dir, meta, hour.date(), day_views, langs, files)
        lang_out.archive_pages = archive.pages_written
        files.write(lang_out.index_path,
                               partial(render_index, meta, hour.date(), day_views, langs, paged,
                                       archive.front_page_links(), lang_out.countries))
        for cat_dir, cat_meta, cat_views in category_feeds:
            files.write(cat_dir / "atom.xml", partial(build_atom, cat_meta, cat_views))
            files.write(cat_dir / "feed.json", partial(build_json_feed, cat_meta, cat_views))
        for country_dir, country_meta, country_views in country_feeds:
            files.write(country_dir / "atom.xml", partial(build_atom, country_meta, country_views))
            files.write(country_dir / "feed.json", partial(build_json_feed, country_meta, country_views))
        files.write(lang_out.atom_path, partial(build_atom, meta, feed_views))
        files.write(lang_out.json_path, partial(build_json_feed, meta, feed_views))
        lang_out.feed_entries, lang_out.index_stories = len(feed_views), len(day_views)
        result.languages[lang] = lang_out
        result.events = max(result.events, len(events))
        root_langs.append(RootLanguage(lang, meta.title, len(feed_views)))
        root_stamp = max(root_stamp or updated, updated)

    if langs:
        root_labels = labels_for(langs[0])
        files.write(out_dir / "index.html", partial(render_root, settings.title, langs[0], text_direction(langs[0]),
                                                    root_labels, root_langs, root_stamp or stamp))
    if not files.deferring:
        # This hour's files, after what earlier hours of the run held and this one did not write again.
        for path in files.write_held():
            lang_dir = path.relative_to(out_dir).parts[0]
            if lang_dir in result.languages:
                result.languages[lang_dir].files_changed += 1
    if upserts["story_ids"]:
        conn.execute(db.load_sql("publish_entries_upsert"), upserts)
    conn.execute(db.load_sql("publish_state_set"), {"output_dir": str(out_dir), "partition": hour})
    conn.commit()
    return result
