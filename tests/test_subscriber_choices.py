"""Readers' choices: `newsdedup subscribers add|update|list` through the real CLI and database
(languages in order, categories and countries of interest, a local delivery time in an IANA time
zone), their parsers on hostile input (hypothesis), and when each reader's edition is due: on their
local day after the UTC day, at their time, never before the day is complete, one edition per
local day across the year's clock changes."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pytest
from hypothesis import given, settings, strategies as st

from newsdedup_dagster.cli import main
from newsdedup_dagster.shared import db
from newsdedup_dagster.stages.digest.editions import (
    Edition,
    delivery_moment,
    local_day,
    parse_categories,
    parse_choices,
    parse_countries,
    parse_langs,
    parse_time,
    parse_time_zone,
)


def _row(url: str, email: str):
    with db.connection(url) as conn:
        row = conn.execute("SELECT lang, also_reads, categories, countries, delivery_time, time_zone FROM subscribers"
                           " WHERE email = %s", (email,)).fetchone()
        conn.commit()
    return row


def test_add_update_and_list_take_the_choices(clean_db, capsys, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_DATABASE_URL", clean_db)
    assert main(["subscribers", "add", "kenji@example.jp", "--langs", "ja,en", "--categories", "Sports,science",
                 "--countries", "jp,fr", "--at", "7:30", "--time-zone", "Asia/Tokyo"]) == 0
    assert "added kenji@example.jp (lang ja" in capsys.readouterr().out
    # Categories in the taxonomy's order, countries sorted and upper-case.
    assert _row(clean_db, "kenji@example.jp") == ("ja", ["en"], ["science", "sports"], ["FR", "JP"], time(7, 30),
                                                  "Asia/Tokyo")
    # update changes only what it is given.
    assert main(["subscribers", "update", "kenji@example.jp", "--countries", "all", "--at", "06:00"]) == 0
    assert _row(clean_db, "kenji@example.jp") == ("ja", ["en"], ["science", "sports"], [], time(6, 0), "Asia/Tokyo")
    assert main(["subscribers", "update", "kenji@example.jp", "--langs", "en"]) == 0
    assert _row(clean_db, "kenji@example.jp")[:2] == ("en", [])
    assert main(["subscribers", "add", "plain@example.com"]) == 0      # the defaults: everything, at once
    assert _row(clean_db, "plain@example.com") == ("en", [], [], [], time(0, 0), "UTC")
    capsys.readouterr()
    assert main(["subscribers", "list"]) == 0
    out = capsys.readouterr().out
    assert "categories science, sports · countries all · at 06:00 Asia/Tokyo" in out
    assert "langs en · categories all · countries all · at 00:00 UTC" in out
    # Refused, and nothing changed: unknown zone, category, country, a time that is none, both --lang forms.
    for bad in (["--time-zone", "Mars/Olympus"], ["--time-zone", "../../etc/passwd"], ["--categories", "gossip"],
                ["--countries", "ZZ"], ["--at", "25:00"], ["--lang", "en", "--langs", "fr"], ["--langs", "<b>"]):
        assert main(["subscribers", "update", "kenji@example.jp", *bad]) == 2, bad
    assert _row(clean_db, "kenji@example.jp") == ("en", [], ["science", "sports"], [], time(6, 0), "Asia/Tokyo")
    assert main(["subscribers", "update", "nobody@example.com", "--at", "08:00"]) == 1


def test_parsers_take_what_a_reader_types():
    assert parse_langs(" ja , en,ja ") == ("ja", "en")
    assert parse_categories("all") == () and parse_categories(None) == ()
    assert parse_countries("us,GB, us") == ("GB", "US")
    assert parse_time("07:05") == time(7, 5) and parse_time("0:00") == time(0, 0)
    assert parse_time_zone("America/New_York") == "America/New_York"
    choices = parse_choices("fr,de", "politics", "fr", "18:00", "Europe/Paris")
    edition = Edition(choices.lang, choices.also_reads, choices.categories, choices.countries)
    assert edition.key == "also=de;categories=politics;countries=FR" and Edition("en").key == ""
    assert edition.wants("politics", ("FR", "DE")) and not edition.wants("politics", ("DE",))
    assert not edition.wants(None, ("FR",)) and Edition("en").wants(None, ())


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_hostile_choices_are_refused_or_clean(text):
    for parse in (parse_langs, parse_categories, parse_countries, parse_time, parse_time_zone):
        try:
            value = parse(text)
        except ValueError:
            continue
        # What passes is plain: codes and names of a known shape, never the raw text's markup.
        assert "<" not in repr(value) and "\n" not in repr(value)


ZONES = ("Asia/Tokyo", "Europe/Paris", "America/New_York", "Pacific/Kiritimati", "Pacific/Pago_Pago", "UTC")


@settings(max_examples=200, deadline=None)
@given(st.dates(min_value=date(2026, 1, 1), max_value=date(2027, 12, 31)), st.sampled_from(ZONES),
       st.times().map(lambda t: t.replace(second=0, microsecond=0)))
def test_an_edition_is_due_on_the_next_local_day_never_before_the_day_is_complete(day, zone, at):
    moment = delivery_moment(day, at, zone)
    day_end = datetime.combine(day + timedelta(days=1), time(0), tzinfo=UTC)
    assert moment >= day_end and moment - day_end < timedelta(hours=39)
    assert local_day(moment, zone) == day + timedelta(days=1)
    # The next UTC day's edition comes on the next local day, later.
    following = delivery_moment(day + timedelta(days=1), at, zone)
    assert local_day(following, zone) == day + timedelta(days=2) and following > moment


def test_three_zones_at_seven_in_the_morning():
    day = date(2026, 11, 2)
    # Tokyo's 07:00 on Nov 3 is 22:00 UTC on Nov 2: the day is not complete, so at its end (09:00 there).
    assert delivery_moment(day, time(7), "Asia/Tokyo") == datetime(2026, 11, 3, 0, tzinfo=UTC)
    assert delivery_moment(day, time(7), "Europe/Paris") == datetime(2026, 11, 3, 6, tzinfo=UTC)
    assert delivery_moment(day, time(7), "America/New_York") == datetime(2026, 11, 3, 12, tzinfo=UTC)
    # Across New York's clock change (Nov 1, 2026): 07:00 EDT the day before, 07:00 EST after.
    assert delivery_moment(date(2026, 10, 30), time(7), "America/New_York") == datetime(2026, 10, 31, 11, tzinfo=UTC)


def test_choices_of_a_removed_reader_added_again_are_the_new_ones(clean_db, monkeypatch, capsys):
    monkeypatch.setenv("NEWSDEDUP_DATABASE_URL", clean_db)
    assert main(["subscribers", "add", "a@example.com", "--langs", "de,fr", "--at", "06:00",
                 "--time-zone", "Europe/Berlin"]) == 0
    assert main(["subscribers", "remove", "a@example.com"]) == 0
    assert main(["subscribers", "update", "a@example.com", "--at", "08:00"]) == 1   # not active
    assert main(["subscribers", "add", "a@example.com", "--lang", "en"]) == 0
    assert _row(clean_db, "a@example.com") == ("en", [], [], [], time(0, 0), "UTC")


@pytest.mark.parametrize("zone", ["Europe/Paris", "America/New_York"])
def test_a_time_the_clock_skips_or_repeats_still_gives_one_moment(zone):
    # 02:30 is skipped in spring and repeated in autumn in both zones.
    for day in (date(2026, 3, 7), date(2026, 3, 28), date(2026, 10, 24), date(2026, 10, 31)):
        moment = delivery_moment(day, time(2, 30), zone)
        assert local_day(moment, zone) == day + timedelta(days=1)
