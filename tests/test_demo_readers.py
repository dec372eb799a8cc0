"""The demo's sample readers against the real database: three readers with different choices
(languages, categories, countries, three time zones) get their own edition of the day as outbox
files, once however often the demo runs, and the demo's lines say where each went."""

from __future__ import annotations

import email
import email.policy
import json
from datetime import date
from pathlib import Path

from test_events_fixtures import add_story, at, hour_of

from newsdedup_dagster.commands.demo_readers import SAMPLE_READERS, add_sample_readers, deliver_to_sample_readers
from newsdedup_dagster.shared.presentation.labels import labels_for, long_date
from newsdedup_dagster.stages.digest.build import render_day

DAY = date(2026, 11, 2)


def test_each_sample_reader_gets_their_edition_once(clean_db, conn, tmp_path):
    add_story(conn, "vote", "vote", 8.0, titles={"en": "Parliament passes the budget"}, countries={"en": "GB"},
              significance=7.0)
    add_story(conn, "final", "final", 10.0, titles={"es": "La final de la copa"}, countries={"es": "ES"},
              pivot_lang="es", significance=6.0)
    conn.execute("INSERT INTO story_briefings (story_id, material, lang, method, category, briefing, partition_hour)"
                 " VALUES ('vote', 'm', 'en', 'extractive', 'politics', %s, %s)",
                 (json.dumps({"points": []}), hour_of(at(8))))
    # Briefed, as every scored story is: unbriefed, its title names no category's term and it would be
    # filed under "world", which Amira reads.
    conn.execute("INSERT INTO story_briefings (story_id, material, lang, method, category, briefing, partition_hour)"
                 " VALUES ('final', 'm', 'es', 'extractive', 'sports', %s, %s)",
                 (json.dumps({"points": []}), hour_of(at(10))))
    conn.commit()
    add_sample_readers(conn, DAY)
    render_day(conn, DAY, ["en", "ja", "ar", "es"], outbox_dir=tmp_path)     # what the demo's digest run does
    lines = deliver_to_sample_readers(conn, DAY, tmp_path)
    again = deliver_to_sample_readers(conn, DAY, tmp_path)          # a second demo: nothing sent twice
    assert lines == again and len(lines) == 3
    mails = sorted((tmp_path / "mail" / DAY.isoformat()).glob("*.eml"))
    assert len(mails) == 3
    by_reader = {}
    for path in mails:
        message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        by_reader[message["To"]] = (message["Subject"], message.get_body(("plain",)).get_content())
    for address, langs, *_ in SAMPLE_READERS:
        subject, text = by_reader[address]
        assert subject == labels_for(langs[0])["subject"].format(date=long_date(langs[0], DAY))
        line = next(line for line in lines if address in line)
        assert "-> outbox:" in line and Path(line.rsplit(": ", 1)[1]).exists()
    # Amira reads politics, world and conflict: the budget vote only. Maria reads outlets of Spain,
    # the US and Britain, and Spanish: both stories, the final by its own Spanish title.
    assert "Parliament passes the budget" in by_reader["amira@example.org"][1]
    assert "La final de la copa" not in by_reader["amira@example.org"][1]
    assert "La final de la copa" in by_reader["maria@example.org"][1]
    assert "Asia/Tokyo" in next(line for line in lines if "kenji@" in line)


def test_the_sample_readers_choices_are_stored_as_the_command_stores_them():
    from newsdedup_dagster.stages.digest.editions import parse_categories, parse_countries, parse_langs, parse_time_zone

    for _address, langs, categories, countries, _at, zone in SAMPLE_READERS:
        assert parse_langs(",".join(langs)) == langs
        assert parse_categories(",".join(categories)) == categories
        assert parse_countries(",".join(countries)) == countries
        assert parse_time_zone(zone) == zone
