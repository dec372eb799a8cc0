"""A past day run again (a single-partition run from the UI or by hand, not a backfill) mails
nobody when the day is older than deployment.digest_send_max_age_days (calibration file), unless the deployment allows
it; and a day is mailed only to the readers subscribed by its end. Through the `digest` asset with
the real SMTP server, on days counted back from today (UTC)."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pytest
from dagster import DagsterInstance
from helpers import calibrate, materialize_digest, smtp_mailer
from smtp_server import SmtpServer
from test_events_fixtures import T0, add_story

from newsdedup_dagster.assets.digest import send_decision
from newsdedup_dagster.cli import main

TODAY = datetime.now(UTC).date()
OLD = TODAY - timedelta(days=5)
RECENT = TODAY - timedelta(days=1)


@pytest.fixture(autouse=True)
def not_at_midnight(monkeypatch):
    if datetime.now(UTC) > datetime.combine(TODAY, time(23, 55), tzinfo=UTC) or datetime.now(UTC).date() != TODAY:
        pytest.skip("too close to midnight UTC: the days' ages would change during the test")
    monkeypatch.setenv("NEWSDEDUP_DIGEST_LANGS", "en")


def _at(day: date, hour: int) -> datetime:
    return datetime.combine(day, time(hour), tzinfo=UTC)


def _seed(conn) -> None:
    """A story on each day, and readers who joined at different times."""
    for n, day in enumerate((OLD, RECENT)):
        start_h = (_at(day, 8) - T0).total_seconds() / 3600
        add_story(conn, f"s{n}", f"t{n}", start_h, titles={"en": f"Story of {day}"}, headline=f"Story of {day}",
                  significance=7.0)
    joined = {"early@example.com": _at(OLD, 0) - timedelta(days=1),      # before both days
              "during@example.com": _at(OLD, 23),                         # during the old day
              "mid@example.com": _at(OLD + timedelta(days=2), 10),        # between the days
              "returning@example.com": _at(OLD, 0) - timedelta(days=30),  # left and came back today (below)
              "new@example.com": datetime.now(UTC)}                       # today
    for addr, at in joined.items():
        conn.execute("INSERT INTO subscribers (email, lang, subscribed_at) VALUES (%s, 'en', %s)", (addr, at))
    conn.commit()
    assert main(["subscribers", "remove", "returning@example.com"]) == 0
    assert main(["subscribers", "add", "returning@example.com", "--lang", "en"]) == 0


def _run(clean_db, monkeypatch, tmp_path, server, day: date, **kwargs):
    return materialize_digest(clean_db, smtp_mailer(monkeypatch, server.host, server.port, tmp_path), day.isoformat(),
                              **kwargs)


def _recipients(server) -> list[str]:
    return sorted(m.rcpt_tos[0] for m in server.messages)


def test_send_decision_counts_the_days_age():
    assert send_decision(True, False, False, age_days=2, max_age_days=2) == (True, None)
    send, reason = send_decision(True, False, False, age_days=3, max_age_days=2)
    assert not send and "3 days old" in reason and "NEWSDEDUP_DIGEST_ALLOW_OLD_SEND" in reason
    assert send_decision(True, False, False, age_days=30, max_age_days=2, allow_old_send=True) == (True, None)
    # A backfill allowed to send by its run config is still held to the deployment's bound.
    assert not send_decision(True, True, True, age_days=30, max_age_days=2)[0]


def test_an_old_day_is_rendered_but_mailed_to_nobody(clean_db, conn, tmp_path, monkeypatch):
    _seed(conn)
    with SmtpServer() as server, DagsterInstance.ephemeral() as instance:
        result = _run(clean_db, monkeypatch, tmp_path, server, OLD, instance=instance)
        assert result.success
        metadata = result.asset_materializations_for_node("digest")[-1].metadata
        assert metadata["stories"].value == 1 and metadata["sent"].value == 0
        assert "5 days old, more than deployment.digest_send_max_age_days=2" in metadata["delivery"].value
        warnings = [e.user_message for e in instance.all_logs(result.run_id) if e.level >= 30]
        assert any("not sending" in w and "5 days old" in w for w in warnings)
        # Run config cannot lift the bound: a backfill allowed to send still mails nobody.
        backfill = _run(clean_db, monkeypatch, tmp_path, server, OLD, tags={"dagster/backfill": "bf1"},
                        run_config={"ops": {"digest": {"config": {"allow_backfill_send": True}}}})
        assert backfill.success and server.messages == []
    assert conn.execute("SELECT count(*) FROM deliveries").fetchone()[0] == 0
    conn.commit()


@pytest.mark.parametrize("allowance", [{"NEWSDEDUP_DIGEST_ALLOW_OLD_SEND": "true"},
                                       {"deployment.digest_send_max_age_days": 7}])
def test_an_old_day_the_deployment_allows_goes_to_its_readers_only(clean_db, conn, tmp_path, monkeypatch, allowance):
    for name, value in allowance.items():
        if name.startswith("NEWSDEDUP_"):
            monkeypatch.setenv(name, value)
        else:
            section, key = name.split(".")
            calibrate(monkeypatch, tmp_path, **{section: {key: value}})
    _seed(conn)
    with SmtpServer() as server:
        assert _run(clean_db, monkeypatch, tmp_path, server, OLD).success
        # Subscribed by the end of that day; not the readers who joined (or joined again) since.
        assert _recipients(server) == ["during@example.com", "early@example.com"]
        assert all(f"Story of {OLD}" in m.message.get_body(("plain",)).get_content() for m in server.messages)


def test_yesterday_goes_to_the_readers_subscribed_by_its_end(clean_db, conn, tmp_path, monkeypatch):
    _seed(conn)
    with SmtpServer() as server:
        result = _run(clean_db, monkeypatch, tmp_path, server, RECENT)
        assert result.success
        assert _recipients(server) == ["during@example.com", "early@example.com", "mid@example.com"]
        # Rerun later today: the readers who joined today are still not mailed yesterday's digest.
        assert _run(clean_db, monkeypatch, tmp_path, server, RECENT).success
        assert len(server.messages) == 3
    rows = conn.execute("SELECT s.email FROM deliveries d JOIN subscribers s ON s.id = d.subscriber_id").fetchall()
    conn.commit()
    assert sorted(r[0] for r in rows) == ["during@example.com", "early@example.com", "mid@example.com"]
