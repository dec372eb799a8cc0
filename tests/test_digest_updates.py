"""Updates as updates against the real database: a story yesterday's edition carried comes back
after the day's new stories only when it gained articles, marked with what is new (articles,
outlets); one that gained nothing is left out; a new story of an event yesterday's edition
carried is marked as that event's development; a reader of an edition with no previous day gets
every story as new; the marks are in the reader's language, HTML and text alike."""

from __future__ import annotations

from datetime import date

from test_events_fixtures import add_story, at, ensure_source, hour_of

from newsdedup_dagster.stages.digest.build import render_day
from newsdedup_dagster.stages.digest.updates import UPDATE_LABELS

YESTERDAY, TODAY = date(2026, 11, 1), date(2026, 11, 2)


def _add_article(conn, story_id: str, item_id: str, source_id: str, hours: float) -> None:
    moment = at(hours)
    ensure_source(conn, source_id, "en", "GB", name=source_id.title())
    url = f"https://{source_id}.example/{item_id}"
    conn.execute("INSERT INTO items (id, canonical_url, url, title, lang, published_at, partition_hour, source_id)"
                 " VALUES (%s, %s, %s, 'More on it', 'en', %s, %s, %s)",
                 (item_id, url, url, moment, hour_of(moment), source_id))
    conn.execute("INSERT INTO story_items (item_id, story_id, pass, similarity, partition_hour)"
                 " VALUES (%s, %s, 1, 0.9, %s)", (item_id, story_id, hour_of(moment)))


def _event(conn, event_id: str, story_ids: list[str]) -> None:
    for sid in story_ids:
        conn.execute("INSERT INTO events (id, model, title, centroid, first_published_at, last_published_at,"
                     " created_partition, updated_partition, story_count)"
                     " SELECT %s, model, 'Storm season', centroid, %s, %s, %s, %s, %s FROM stories WHERE id = %s"
                     " ON CONFLICT (id) DO NOTHING",
                     (event_id, at(-20), at(10), hour_of(at(-20)), hour_of(at(10)), len(story_ids), sid))
        conn.execute("INSERT INTO event_stories (story_id, event_id, partition_hour) VALUES (%s, %s, %s)",
                     (sid, event_id, hour_of(at(10))))


def test_yesterday_s_stories_come_back_as_updates_only_when_something_is_new(clean_db, conn, tmp_path):
    add_story(conn, "storm", "storm", -20.0, titles={"en": "Storm reaches the coast"}, significance=7.0)
    add_story(conn, "vote", "vote", -18.0, titles={"en": "Council votes on the budget"}, significance=6.0)
    conn.commit()
    first = render_day(conn, YESTERDAY, ["en"], outbox_dir=tmp_path)
    assert sorted(first.files["en"].rendered.story_ids) == ["storm", "vote"]
    # Today: the storm gains two articles, one from an outlet new to it; the vote gains nothing;
    # a new story of the storm's event breaks.
    _add_article(conn, "storm", "it-storm-2", "harbour-news", 6.0)
    _add_article(conn, "storm", "it-storm-3", "src-en-xx", 7.0)
    add_story(conn, "flood", "flood", 9.0, titles={"en": "Rivers flood after the storm"}, significance=5.0)
    _event(conn, "ev-storm", ["storm", "flood"])
    conn.commit()
    render_day(conn, YESTERDAY, ["en"], outbox_dir=tmp_path)   # yesterday's edition as the storm's event stands
    today = render_day(conn, TODAY, ["en", "fr"], outbox_dir=tmp_path)
    en = today.files["en"].rendered
    assert en.story_ids == ["flood", "storm"]                         # the new story first, the update after
    labels = UPDATE_LABELS["en"]
    lines = [line.strip() for line in en.text.splitlines()]
    flood, storm = lines.index("1. Rivers flood after the storm"), lines.index("2. Storm reaches the coast")
    assert lines[flood + 1] == labels["since"].format(what=labels["event_development"])
    assert lines[storm + 1] == "Since yesterday: new articles: 2 · new outlets: Harbour-News · new stories in the event: 1"
    assert "Council votes on the budget" not in en.text
    assert 'class="since"' in en.html and "new outlets: Harbour-News" in en.html
    # French had no edition yesterday: everything of today is new to its readers, nothing marked.
    fr = today.files["fr"].rendered
    assert fr.story_ids == ["flood"] and "Depuis hier" not in fr.text
    # A rerun of the day writes the same digest.
    assert render_day(conn, TODAY, ["en", "fr"], outbox_dir=tmp_path).files["en"].rendered.text == en.text


def test_a_new_story_of_an_event_of_yesterday_s_edition_is_its_development_in_japanese(clean_db, conn, tmp_path):
    add_story(conn, "storm", "storm", -20.0, titles={"en": "Storm reaches the coast"}, significance=7.0)
    add_story(conn, "flood", "flood", 9.0, titles={"en": "Rivers flood after the storm"}, significance=5.0)
    _event(conn, "ev-storm", ["storm", "flood"])
    conn.commit()
    render_day(conn, YESTERDAY, ["ja"], outbox_dir=tmp_path)     # yesterday's edition carried the event
    today = render_day(conn, TODAY, ["ja"], outbox_dir=tmp_path).files["ja"].rendered
    # The new story, as the event's development; the storm, whose event grew, as an update.
    assert today.story_ids == ["flood", "storm"]
    labels = UPDATE_LABELS["ja"]
    assert labels["since"].format(what=labels["event_development"]) in today.text
    assert labels["since"].format(what=labels["new_event_stories"].format(n=1)) in today.text
