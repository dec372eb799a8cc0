"""A range of hours published as a ranged run publishes it (files held between the hours that
write the directory: the last hour of each UTC day and the range's last hour) leaves exactly the
rows and files of hourly runs, against the real database.

The same story timeline is replayed twice from an empty database, the stories changing between
hours: once hour by hour (each hour writes its files), once as one run over the range (the hours
that are neither a day's last nor the range's last write no file). The hours cross a day's end and
include stories, a country and an event that leave the feed while their files are held, so the
files the range's last hour writes for them are those an earlier hour left.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from conftest import APP_TABLES
from fingerprints import WRITE_TIME_COLUMNS, table_rows
from test_events_fixtures import add_story, at, hour_of
from test_publish_asset import _grow

from newsdedup_dagster.config import PublishSettings
from newsdedup_dagster.stages.publish.build import publish_hour
from newsdedup_dagster.stages.publish.files import SiteFiles, writing_hours

BASE = "https://news.example.org/site/"
LANGS = ["en", "fr"]
# 2026-11-01 20:00 .. 2026-11-02 04:00 UTC.
HOURS = [at(h) for h in range(-4, 5)]
PUBLISH_TABLES = ("publish_entries", "publish_archive_days", "publish_state")


def _event(conn, event_id: str, story_ids: list[str], hours: float) -> None:
    for sid in story_ids:
        conn.execute("INSERT INTO events (id, model, title, centroid, first_published_at, last_published_at,"
                     " created_partition, updated_partition, story_count, narrative, narrative_lang, narrative_offline)"
                     " SELECT %s, model, 'Storm season', centroid, %s, %s, %s, %s, %s,"
                     " '{\"what_happened\": \"A storm formed.\"}'::jsonb, 'en', true FROM stories WHERE id = %s"
                     " ON CONFLICT (id) DO UPDATE SET story_count = EXCLUDED.story_count,"
                     " last_published_at = EXCLUDED.last_published_at",
                     (event_id, at(-3.5), at(hours), hour_of(at(hours)), hour_of(at(hours)), len(story_ids), sid))
        conn.execute("INSERT INTO event_stories (story_id, event_id, partition_hour) VALUES (%s, %s, %s)"
                     " ON CONFLICT DO NOTHING", (sid, event_id, hour_of(at(hours))))
    conn.commit()


# What happens before each hour is published (hours from 2026-11-02 00:00 UTC).
TIMELINE = {
    -4: lambda c: (add_story(c, "early", "storm", -3.5, titles={"en": "Storm forms", "fr": "Une tempête se forme"},
                             countries={"fr": "FR"}, significance=6.0),
                   add_story(c, "quake", "quake", -3.8, titles={"en": "Quake off the coast"}, significance=5.0),
                   _event(c, "ev1", ["early"], -3.5)),
    -2: lambda c: add_story(c, "vote", "vote", -1.5, titles={"en": "Parliament vote", "fr": "Vote au parlement"},
                            countries={"en": "DE"}, significance=7.0),
    # The vote (a day-old story) grows and joins an event (one story is no event page): both leave
    # the feed before 04:00.
    0: lambda c: (_grow(c, "vote", "en", 0.3, 7.5), _event(c, "ev2", ["quake", "vote"], 0.3)),
    1: lambda c: (add_story(c, "storm2", "storm", 1.2, titles={"en": "Storm lands"}, significance=6.5),
                  _event(c, "ev1", ["early", "storm2"], 1.2)),
    3: lambda c: add_story(c, "late", "late", 3.4, titles={"en": "Late news", "fr": "Dernières nouvelles"},
                           countries={"fr": "FR"}, significance=4.0),
}


def _replay(conn, url: str, out: Path, ranged: bool) -> tuple[dict[str, list[str]], dict[str, bytes]]:
    conn.execute(f"TRUNCATE {APP_TABLES} RESTART IDENTITY CASCADE")
    conn.commit()
    # A short window: stories, a country (DE) and an event (ev2) leave the feed between the hours
    # that write the directory.
    settings = PublishSettings(output_dir=out, base_url=BASE, window_hours=2)
    writers = writing_hours(HOURS)
    files = SiteFiles()
    for hour in HOURS:
        change = TIMELINE.get(round((hour - at(0)) / timedelta(hours=1)))
        if change:
            change(conn)
        if not ranged:
            files = SiteFiles()
        files.deferring = ranged and writers[hour] != hour
        result = publish_hour(conn, hour, settings, LANGS, now=hour + timedelta(hours=2), files=files)
        assert result.skipped is None
        if files.deferring:
            assert result.files_changed == 0 and files.held
        else:
            assert not files.held
    rows = table_rows(url, WRITE_TIME_COLUMNS | {"written_at", "output_dir"})
    published = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    return {t: rows[t] for t in PUBLISH_TABLES}, published


def test_writing_hours_are_each_day_s_last_and_the_range_s_last():
    hours = [datetime(2026, 11, 1, 22, tzinfo=UTC) + timedelta(hours=n) for n in range(28)]
    writers = writing_hours(hours)
    nov1_end, nov2_end, last = hours[1], hours[25], hours[-1]
    assert [writers[h] for h in hours[:2]] == [nov1_end] * 2
    assert {writers[h] for h in hours[2:26]} == {nov2_end}
    assert [writers[h] for h in hours[26:]] == [last] * 2
    assert writing_hours(hours[:1]) == {hours[0]: hours[0]}


def test_a_ranged_run_leaves_the_rows_and_files_of_hourly_runs(clean_db, conn, tmp_path):
    assert sorted(set(writing_hours(HOURS).values())) == [at(-1), at(4)]
    hourly_rows, hourly_files = _replay(conn, clean_db, tmp_path / "hourly", ranged=False)
    ranged_rows, ranged_files = _replay(conn, clean_db, tmp_path / "ranged", ranged=True)
    assert len(hourly_rows["publish_entries"]) >= 8 and len(hourly_rows["publish_archive_days"]) == 4
    assert ranged_rows == hourly_rows
    # What only an earlier hour wrote: the pages of a country and an event that left the feed.
    assert "en/country/de/index.html" in hourly_files and "en/event/ev2.html" in hourly_files
    assert b"Parliament vote" in hourly_files["en/event/ev2.html"]
    de = hourly_files["en/country/de/atom.xml"].decode()
    assert "story/vote/en" in de and "Late news" not in hourly_files["en/country/de/index.html"].decode()
    assert sorted(ranged_files) == sorted(hourly_files)
    assert [name for name in hourly_files if ranged_files[name] != hourly_files[name]] == []


def test_a_ranged_run_that_stops_early_writes_the_files_its_hours_held(clean_db, conn, tmp_path, monkeypatch):
    """story_feeds alone over four hours of one day, its third hour failing: the first two were
    recorded with their files held for the range's last hour; the run writes them as it stops, so
    the directory is what hourly runs of those two hours leave."""
    import dataclasses

    from dagster import RetryPolicy, materialize

    from newsdedup_dagster.assets import hourly
    from newsdedup_dagster.assets.publish import StoryFeedsConfig
    from newsdedup_dagster.instance import QUIET_RUN_CONFIG
    from newsdedup_dagster.resources import EmbedderResource, LLMResource, PostgresResource

    hours = [at(h) for h in range(4)]
    keys = [f"{h:%Y-%m-%d-%H:%M}" for h in hours]
    for change in TIMELINE.values():
        change(conn)
    stage = hourly.stage_named("story_feeds")
    calls = []

    def materialize_hour(run, hour):
        calls.append(hour)
        if hour == keys[2]:
            raise OSError("disk full")
        return stage.materialize_hour(run, hour)

    monkeypatch.setattr(hourly, "STAGES", [dataclasses.replace(s, materialize_hour=materialize_hour)
                                           if s.key == stage.key else s for s in hourly.STAGES])
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(tmp_path / "ranged"))
    result = materialize([hourly.build_hourly_chain(RetryPolicy(max_retries=0))], selection=["story_feeds"],
                         tags={"dagster/asset_partition_range_start": keys[0],
                               "dagster/asset_partition_range_end": keys[-1]},
                         resources={"postgres": PostgresResource(database_url=clean_db),
                                    "embedder": EmbedderResource(), "llm": LLMResource()},
                         raise_on_error=False, run_config=QUIET_RUN_CONFIG)
    assert not result.success and calls == keys[:3]
    written_by = {m.partition: m.metadata["written_by"].value
                  for m in result.asset_materializations_for_node(hourly.HOURLY_OP)}
    assert written_by == {keys[0]: keys[-1], keys[1]: keys[-1]}
    ranged_rows = {t: r for t, r in table_rows(clean_db, WRITE_TIME_COLUMNS | {"written_at", "output_dir"}).items()
                   if t in PUBLISH_TABLES}

    conn.execute("TRUNCATE publish_entries, publish_archive_days, publish_state")
    conn.commit()
    settings = PublishSettings(output_dir=tmp_path / "hourly")
    langs = StoryFeedsConfig.run_languages(LLMResource().settings())
    for hour in hours[:2]:
        publish_hour(conn, hour, settings, langs, now=hour + timedelta(hours=2))
    hourly_rows = {t: r for t, r in table_rows(clean_db, WRITE_TIME_COLUMNS | {"written_at", "output_dir"}).items()
                   if t in PUBLISH_TABLES}
    assert ranged_rows == hourly_rows
    published = {how: {str(p.relative_to(tmp_path / how)): p.read_bytes()
                       for p in sorted((tmp_path / how).rglob("*")) if p.is_file()} for how in ("hourly", "ranged")}
    assert len(published["hourly"]) > 20 and published["ranged"] == published["hourly"]
