"""Readers' editions in three time zones, exactly once, against a real SMTP server on 127.0.0.1
and the real database: each reader gets the edition of their choices (languages, categories,
countries) at their local delivery time on their local day after the UTC day, never before;
two runs at once at each moment of the day mail each reader once; a run killed between the
server accepting a message and the run recording it costs at most one duplicate; the sensor
asks for the day again when a zone's readers fall due."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
from datetime import UTC, date, datetime, time

import pytest
from dagster import build_sensor_context
from helpers import mailer_environment, materialize_digest, smtp_mailer
from smtp_server import SmtpServer
from test_delivery_exactly_once import _CRASH_MAILER, _CRASHING_RUN, TESTS_DIR, _received, _smtp, _statuses
from test_events_fixtures import add_story, at, hour_of

from newsdedup_dagster.assets.digest import digest_deliveries_due
from newsdedup_dagster.resources import PostgresResource
from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.presentation.labels import labels_for, long_date
from newsdedup_dagster.stages.digest.build import render_day
from newsdedup_dagster.stages.digest.send import CRASH_EXIT_CODE, days_due, deliver_day

DAY = date(2026, 11, 2)
KEY = DAY.isoformat()
SUBSCRIBED = datetime(2026, 11, 1, tzinfo=UTC)
# (zone, local time, languages, categories, countries) of each third of the readers.
ZONES = (
    ("Asia/Tokyo", time(7, 0), ["ja", "en"], [], []),               # 07:00 JST comes before the day ends
    ("America/New_York", time(7, 0), ["en", "fr"], [], ["FR", "US"]),
    ("Europe/Paris", time(18, 0), ["fr"], ["sports"], []),
)
# When each zone's edition of Nov 2 falls due (UTC).
DUE = {"Asia/Tokyo": datetime(2026, 11, 3, 0, tzinfo=UTC), "America/New_York": datetime(2026, 11, 3, 12, tzinfo=UTC),
       "Europe/Paris": datetime(2026, 11, 3, 17, tzinfo=UTC)}


@pytest.fixture(autouse=True)
def old_days_may_be_mailed(monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_DIGEST_ALLOW_OLD_SEND", "true")


def _brief(conn, story_id: str, category: str) -> None:
    conn.execute("INSERT INTO story_briefings (story_id, material, lang, method, category, briefing, partition_hour)"
                 " VALUES (%s, 'm', 'en', 'extractive', %s, %s, %s)",
                 (story_id, category, json.dumps({"points": []}), hour_of(at(9))))


def _seed(conn, readers: int) -> dict[str, list[str]]:
    """Three stories (a US business story with an English article, a French sports story, a Japanese
    disaster story with a French article) and `readers` readers spread over the three zones."""
    add_story(conn, "rates", "rates", 8.0, titles={"en": "Fed holds rates"}, countries={"en": "US"},
              significance=7.0)
    add_story(conn, "final", "final", 10.0, titles={"fr": "La finale de la coupe"}, countries={"fr": "FR"},
              pivot_lang="fr", significance=6.0)
    add_story(conn, "quake", "quake", 11.0, titles={"ja": "茨城沖で地震", "fr": "Séisme au Japon"},
              countries={"ja": "JP", "fr": "FR"}, headline="Quake off Ibaraki", significance=5.0)
    _brief(conn, "rates", "business")
    _brief(conn, "final", "sports")
    _brief(conn, "quake", "disasters")
    by_zone: dict[str, list[str]] = collections.defaultdict(list)
    for i in range(readers):
        zone, when, langs, categories, countries = ZONES[i % 3]
        address = f"reader{i:03d}@example.com"
        conn.execute("INSERT INTO subscribers (email, lang, also_reads, categories, countries, delivery_time,"
                     " time_zone, subscribed_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                     (address, langs[0], langs[1:], categories, countries, when, zone, SUBSCRIBED))
        by_zone[zone].append(address)
    conn.commit()
    return by_zone


def _edition_stories(server) -> dict[str, set[str]]:
    """Reader -> the story ids their message's text names (by any of their headlines)."""
    names = {"rates": ("Fed holds rates",), "final": ("La finale de la coupe",),
             "quake": ("茨城沖で地震", "Quake off Ibaraki", "Séisme au Japon")}
    out = {}
    for m in server.messages:
        body = m.message.get_body(("plain",)).get_content()
        out[m.rcpt_tos[0]] = {sid for sid, headlines in names.items() if any(h in body for h in headlines)}
    return out


def test_two_runs_at_once_at_each_local_time_mail_each_reader_their_edition_once(clean_db, conn, tmp_path):
    by_zone = _seed(conn, 60)
    clock = [DUE["Asia/Tokyo"], datetime(2026, 11, 3, 6, tzinfo=UTC), DUE["America/New_York"], DUE["Europe/Paris"]]
    expected_after = [{"Asia/Tokyo"}, {"Asia/Tokyo"}, {"Asia/Tokyo", "America/New_York"}, set(by_zone)]
    with SmtpServer(data_delay_s=0.02) as server:
        for now, zones in zip(clock, expected_after, strict=True):
            start = threading.Barrier(2)
            reports, errors = [], []

            def one_run(now=now, start=start, reports=reports, errors=errors):
                try:
                    with db.connection(clean_db) as c:
                        start.wait(timeout=30)   # both runs render, seed and deliver together
                        result = render_day(c, DAY, ["en", "fr", "ja"], outbox_dir=tmp_path)
                        reports.append(deliver_day(c, DAY, result.by_digest_id(), _smtp(server, batch_size=3),
                                                   tmp_path, now=now))
                except Exception as exc:  # surfaced below
                    errors.append(exc)

            threads = [threading.Thread(target=one_run) for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=120)
            assert not errors, errors
            received = _received(server)
            # Exactly the readers whose local time has come, each once; the others wait, not failed.
            assert sorted(received) == sorted(a for z in zones for a in by_zone[z]), now
            assert set(received.values()) == {1}
            assert all(r.retryable == 0 for r in reports)
            assert min(r.scheduled for r in reports) == sum(len(by_zone[z]) for z in by_zone if z not in zones)
    assert _statuses(conn) == {"sent": 60}
    rows = conn.execute("SELECT s.time_zone, d.due_at, d.local_day, d.sent_at >= d.due_at FROM deliveries d"
                        " JOIN subscribers s ON s.id = d.subscriber_id").fetchall()
    conn.commit()
    for zone, due, local, not_early in rows:
        assert (due, local, not_early) == (DUE[zone], date(2026, 11, 3), True)
    # Each reader's edition: Tokyo everything, New York the US and French outlets' stories, Paris sports only.
    stories = _edition_stories(server)
    assert {stories[a] == {"rates", "final", "quake"} for a in by_zone["Asia/Tokyo"]} == {True}
    assert {stories[a] == {"rates", "final", "quake"} for a in by_zone["America/New_York"]} == {True}
    assert {stories[a] == {"final"} for a in by_zone["Europe/Paris"]} == {True}
    tokyo = next(m.message for m in server.messages if m.rcpt_tos[0] == by_zone["Asia/Tokyo"][0])
    # In the reader's first language (the subject's date too).
    assert tokyo["Subject"] == labels_for("ja")["subject"].format(date=long_date("ja", DAY))


def test_a_reader_of_two_languages_gets_the_other_one_s_article_as_it_is(clean_db, conn, tmp_path):
    by_zone = _seed(conn, 3)
    result = render_day(conn, DAY, ["en", "fr", "ja"], outbox_dir=tmp_path)
    new_york = result.editions[("en", "also=fr;countries=FR,US")].rendered
    # The French final has no English text: a reader of French gets its own title, marked French,
    # not the pivot language's; its French outlet is linked first.
    plain_en = result.files["en"].rendered
    assert "La finale de la coupe" in new_york.text
    assert 'lang="fr"' in new_york.html
    paris = result.editions[("fr", "categories=sports")].rendered
    assert paris.story_ids == ["final"] and sorted(plain_en.story_ids) == ["final", "quake", "rates"]
    assert len(by_zone["Europe/Paris"]) == 1


def test_the_sensor_asks_for_the_day_when_a_zone_falls_due(clean_db, conn, tmp_path):
    _seed(conn, 6)
    result = render_day(conn, DAY, ["en", "fr", "ja"], outbox_dir=tmp_path)
    with SmtpServer() as server:
        first = deliver_day(conn, DAY, result.by_digest_id(), _smtp(server), tmp_path, now=DUE["Asia/Tokyo"])
    assert first.sent == 2 and first.scheduled == 4
    assert days_due(conn, DUE["Asia/Tokyo"]) == []                       # Tokyo's are sent
    assert days_due(conn, DUE["America/New_York"]) == [(DAY, DUE["America/New_York"])]
    assert days_due(conn, DUE["Europe/Paris"]) == [(DAY, DUE["Europe/Paris"])]
    # The sensor reads the database's clock, long past the fixture's day: both zones are due.
    context = build_sensor_context(resources={"postgres": PostgresResource(database_url=clean_db)})
    requests = list(digest_deliveries_due(context))
    assert [(r.partition_key, r.run_key) for r in requests] == [(KEY, f"digest-{KEY}-20261103T1700")]


def test_crash_between_accepted_and_recorded_in_three_zones_costs_at_most_one_duplicate(clean_db, conn, tmp_path,
                                                                                         monkeypatch):
    by_zone = _seed(conn, 12)
    emails = sorted(a for addresses in by_zone.values() for a in addresses)
    with SmtpServer() as server:
        env = {**os.environ, **mailer_environment(server.port, tmp_path, **_CRASH_MAILER),
               "NEWSDEDUP_TEST_DELIVERY_CRASH": "accepted:3", "NEWSDEDUP_DIGEST_LANGS": "en,fr,ja",
               "PYTHONPATH": os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")])}
        proc = subprocess.run([sys.executable, "-c", _CRASHING_RUN, clean_db, KEY], env=env, capture_output=True,
                              timeout=300)
        assert proc.returncode == CRASH_EXIT_CODE, proc.stderr.decode()[-2000:]
        assert _statuses(conn)["sent"] == 2
        monkeypatch.setenv("NEWSDEDUP_DIGEST_LANGS", "en,fr,ja")
        rerun = materialize_digest(clean_db, smtp_mailer(monkeypatch, server.host, server.port, tmp_path,
                                                         **_CRASH_MAILER), KEY)
        assert rerun.success
        received = _received(server)
        stories = _edition_stories(server)
    assert _statuses(conn) == {"sent": 12}
    assert sorted(received) == emails
    assert [a for a, n in received.items() if n > 1] == [emails[2]] and received[emails[2]] == 2
    # Every copy, the resent one too, is the reader's own edition.
    assert {stories[a] == {"final"} for a in by_zone["Europe/Paris"]} == {True}
    local_days = conn.execute("SELECT DISTINCT local_day FROM deliveries").fetchall()
    conn.commit()
    assert local_days == [(date(2026, 11, 3),)]
