"""Digest delivery exactly once, as far as SMTP allows, against a real SMTP server on 127.0.0.1
(aiosmtpd) and the real database: concurrent runs of the same day, a server down then back up,
and a process killed between the server accepting a message and the run recording it."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from helpers import free_port, mailer_environment, materialize_digest, smtp_mailer
from smtp_server import SmtpServer
from test_events_fixtures import add_story

from newsdedup_dagster.shared import db
from newsdedup_dagster.stages.digest.build import render_day
from newsdedup_dagster.stages.digest.send import CRASH_EXIT_CODE, LOCK_SPACE, deliver_day, seed_deliveries
from newsdedup_dagster.stages.digest.settings import SmtpSettings

DAY = date(2026, 11, 2)
KEY = DAY.isoformat()
SUBSCRIBED = datetime(2026, 11, 1, tzinfo=UTC)   # the readers subscribed before the day
TESTS_DIR = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def old_days_may_be_mailed(monkeypatch):
    """The fixtures' day is fixed, and soon older than deployment.digest_send_max_age_days: this
    deployment mails it (the age bound has its own tests in test_digest_past_days.py)."""
    monkeypatch.setenv("NEWSDEDUP_DIGEST_ALLOW_OLD_SEND", "true")


def _seed(conn, readers: int) -> list[str]:
    add_story(conn, "s1", "t1", 8.0, titles={"en": "Market rally"}, headline="Market rally", significance=7.0)
    add_story(conn, "s2", "t2", 10.0, titles={"fr": "Grève nationale"}, pivot_lang="fr", significance=5.0)
    emails = [f"reader{i:03d}@example.com" for i in range(readers)]
    for i, addr in enumerate(emails):
        conn.execute("INSERT INTO subscribers (email, lang, subscribed_at) VALUES (%s, %s, %s)",
                     (addr, "fr" if i % 3 == 0 else "en", SUBSCRIBED))
    conn.commit()
    return emails


def _received(server) -> collections.Counter:
    return collections.Counter(m.rcpt_tos[0] for m in server.messages)


def _statuses(conn) -> collections.Counter:
    rows = conn.execute("SELECT status FROM deliveries").fetchall()
    conn.commit()
    return collections.Counter(r[0] for r in rows)


def _smtp(server_or_port, **kw) -> SmtpSettings:
    port = server_or_port if isinstance(server_or_port, int) else server_or_port.port
    return SmtpSettings(host="127.0.0.1", port=port, security="none", from_addr="Digest <digest@news.example>",
                        retry_delay_s=0, timeout_s=5, lease_s=60, **kw)


def test_two_runs_of_the_same_day_at_once_mail_each_reader_once(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_DIGEST_LANGS", "en,fr")
    emails = _seed(conn, 60)
    start = threading.Barrier(2)
    reports, errors = [], []

    def one_run():
        try:
            with db.connection(clean_db) as c:
                start.wait(timeout=30)   # both materialisations begin together: render, then deliver
                result = render_day(c, DAY, ["en", "fr"], outbox_dir=tmp_path)
                reports.append(deliver_day(c, DAY, result.by_digest_id(), _smtp(server, batch_size=3), tmp_path))
        except Exception as exc:  # surfaced below
            errors.append(exc)

    # a slow DATA keeps both runs sending at the same time
    with SmtpServer(data_delay_s=0.05) as server:
        threads = [threading.Thread(target=one_run) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    assert not errors, errors
    received = _received(server)
    assert sorted(received) == emails and set(received.values()) == {1}
    # the runs claimed disjoint rows: together exactly one attempt per reader, and both did work
    assert sum(r.attempted for r in reports) == 60 and sum(r.sent for r in reports) == 60
    assert all(r.attempted > 0 for r in reports)   # both really sent: the test is not vacuous
    assert all(r.retryable == 0 for r in reports)
    assert _statuses(conn) == {"sent": 60}
    ids = conn.execute("SELECT count(DISTINCT message_id) FROM deliveries").fetchone()[0]
    conn.commit()
    assert ids == 60


def test_server_down_for_the_first_attempt_and_up_for_the_retry_delivers_everyone_once(clean_db, conn, tmp_path,
                                                                                       monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_DIGEST_LANGS", "en,fr")
    emails = _seed(conn, 6)
    port = free_port()
    mailer = smtp_mailer(monkeypatch, "127.0.0.1", port, tmp_path, timeout_s=5, lease_s=60,
                         batch_size=4, outage_retries=2, outage_delay_s=2)
    servers = []

    def bring_server_up_after_the_first_attempt():
        with db.connection(clean_db) as c:
            for _ in range(600):
                failed = c.execute("SELECT count(*) FROM deliveries WHERE status = 'failed'").fetchone()[0]
                c.commit()
                if failed:
                    break
                threading.Event().wait(0.1)
        servers.append(SmtpServer(port=port).__enter__())

    helper = threading.Thread(target=bring_server_up_after_the_first_attempt)
    helper.start()
    try:
        # One materialisation: attempt 1 finds nothing listening, records, asks Dagster for a retry;
        # the retry (Dagster's own step retry) delivers.
        result = materialize_digest(clean_db, mailer, KEY)
        helper.join(timeout=60)
        assert result.success
        assert any(e.event_type_value == "STEP_UP_FOR_RETRY" for e in result.all_events)
        md = result.asset_materializations_for_node("digest")[-1].metadata
        assert md["sent"].value == 6 and md["this_run"].value["retryable"] == 0
        received = _received(servers[0])
    finally:
        for server in servers:
            server.__exit__(None, None, None)
    assert sorted(received) == emails and set(received.values()) == {1}
    # an unreachable server used up no recipient's attempts
    assert conn.execute("SELECT max(attempts) FROM deliveries").fetchone()[0] == 1
    conn.commit()


def test_server_down_past_the_retries_fails_the_run_and_the_next_run_delivers(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_DIGEST_LANGS", "en,fr")
    emails = _seed(conn, 6)
    port = free_port()
    mailer = smtp_mailer(monkeypatch, "127.0.0.1", port, tmp_path, timeout_s=5, lease_s=60,
                         batch_size=4, outage_retries=0)
    # Nothing listens on the port: the run records, then FAILS (it must not show green).
    first = materialize_digest(clean_db, mailer, KEY, raise_on_error=False)
    assert not first.success
    failure = [e for e in first.all_events if e.is_step_failure][0].step_failure_data
    assert "6 deliveries still to do" in failure.error.message
    assert failure.user_failure_data.metadata["this_run"].value["retryable"] == 6
    rows = conn.execute("SELECT status, attempts, error FROM deliveries ORDER BY subscriber_id").fetchall()
    conn.commit()
    # the first batch was tried (no attempt used: nobody was reached); the rest was left pending
    assert [(s, a) for s, a, _ in rows] == [("failed", 0)] * 4 + [("pending", 0)] * 2
    assert "cannot connect" in rows[0][2]
    # The server is back; the next materialisation of the day delivers everyone once.
    with SmtpServer(port=port) as server:
        second = materialize_digest(clean_db, mailer, KEY)
        assert second.success
        md = second.asset_materializations_for_node("digest")[-1].metadata
        assert md["sent"].value == 6 and md["this_run"].value["retryable"] == 0
        third = materialize_digest(clean_db, mailer, KEY)
        assert third.asset_materializations_for_node("digest")[-1].metadata["this_run"].value["attempted"] == 0
    received = _received(server)
    assert sorted(received) == emails and set(received.values()) == {1}


def test_transient_4xx_fails_the_run_and_5xx_does_not(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_DIGEST_LANGS", "en,fr")
    _seed(conn, 3)
    refuse = {"reader001@example.com": "550 5.1.1 no such user", "reader002@example.com": "452 4.2.2 mailbox full"}
    with SmtpServer(refuse=refuse, refuse_times=2) as server:
        mailer = smtp_mailer(monkeypatch, server.host, server.port, tmp_path, max_attempts=3,
                             outage_retries=0)
        first = materialize_digest(clean_db, mailer, KEY, raise_on_error=False)
        assert not first.success   # 452 twice (first try + in-run retry): one attempt left
        second = materialize_digest(clean_db, mailer, KEY)
        assert second.success       # 452 gone; the 550 is recorded, not retried, and does not fail the run
        assert server.refused.count("reader001@example.com") == 1
    assert _received(server) == {"reader000@example.com": 1, "reader002@example.com": 1}
    permanent = conn.execute("SELECT email FROM deliveries WHERE permanent").fetchall()
    conn.commit()
    assert permanent == [("reader001@example.com",)]


# The server's port, the outbox and the limits reach the killed run through its environment.
_CRASHING_RUN = """
import sys
from helpers import materialize_digest
from newsdedup_dagster.assets.digest import MailerResource
url, key = sys.argv[1:3]
materialize_digest(url, MailerResource(host="127.0.0.1"), key)
"""
# The mailer settings of the killed run and of the rerun, besides the server's port and the outbox.
_CRASH_MAILER = {"timeout_s": 5, "lease_s": 60, "batch_size": 4}


def _crash_then_rerun(clean_db, conn, tmp_path, monkeypatch, point: str):
    emails = _seed(conn, 10)
    with SmtpServer() as server:
        env = {**os.environ, **mailer_environment(server.port, tmp_path, **_CRASH_MAILER),
               "NEWSDEDUP_TEST_DELIVERY_CRASH": point, "NEWSDEDUP_DIGEST_LANGS": "en,fr",
               "PYTHONPATH": os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")])}
        proc = subprocess.run([sys.executable, "-c", _CRASHING_RUN, clean_db, KEY],
                              env=env, capture_output=True, timeout=300)
        assert proc.returncode == CRASH_EXIT_CODE, proc.stderr.decode()[-2000:]
        left = _statuses(conn)
        # the killed run left claimed rows behind (its advisory lock died with its connection)
        assert left["sending"] >= 1 and left["sent"] == 2
        rerun = materialize_digest(clean_db, smtp_mailer(monkeypatch, server.host, server.port, tmp_path,
                                                         **_CRASH_MAILER), KEY)
        assert rerun.success
        md = rerun.asset_materializations_for_node("digest")[-1].metadata
    assert _statuses(conn) == {"sent": 10}
    return emails, _received(server), server, md["this_run"].value


def test_crash_between_accepted_and_recorded_costs_at_most_one_duplicate(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_DIGEST_LANGS", "en,fr")
    # killed right after the server accepted the 3rd message, before it was recorded
    emails, received, server, this_run = _crash_then_rerun(clean_db, conn, tmp_path, monkeypatch, "accepted:3")
    assert sorted(received) == emails
    twice = [addr for addr, n in received.items() if n > 1]
    assert twice == [emails[2]] and received[emails[2]] == 2
    assert this_run["reclaimed"] == 2 and this_run["uncertain_resends"] == 1   # rows 3 (handed over) and 4 (claimed)
    copies = [m.message["Message-ID"] for m in server.messages if m.rcpt_tos[0] == emails[2]]
    assert len(set(copies)) == 1   # the resend carries the same Message-ID
    resends = conn.execute("SELECT email FROM deliveries WHERE uncertain_resends > 0").fetchall()
    conn.commit()
    assert resends == [(emails[2],)]


def test_crash_before_the_handover_costs_no_duplicate(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_DIGEST_LANGS", "en,fr")
    emails, received, _server, this_run = _crash_then_rerun(clean_db, conn, tmp_path, monkeypatch, "handed_over:3")
    assert sorted(received) == emails and set(received.values()) == {1}
    assert this_run["uncertain_resends"] == 1 and this_run["reclaimed"] == 2


def test_live_claims_are_left_alone_and_lapsed_ones_taken_over(clean_db, conn, tmp_path):
    emails = _seed(conn, 4)
    result = render_day(conn, DAY, ["en", "fr"], outbox_dir=tmp_path)
    with SmtpServer() as server:
        deliver_day(conn, DAY, result.by_digest_id(), _smtp(server), tmp_path)   # seeds and sends all 4
        # Another run, alive (its session holds its lock), has claimed two rows of the day again.
        conn.execute("UPDATE deliveries SET status = 'sending', claim_token = 42, claimed_until = now() + interval '1 hour'"
                     " WHERE email = ANY(%s)", (emails[:2],))
        conn.commit()
        with db.connection(clean_db) as other:
            other.execute("SELECT pg_advisory_lock(%s, 42)", (LOCK_SPACE,))
            other.commit()
            try:
                live = deliver_day(conn, DAY, result.by_digest_id(), _smtp(server), tmp_path)
                assert live.attempted == 0 and live.retryable == 0      # that run's job, not ours
                conn.execute("UPDATE deliveries SET claimed_until = now() - interval '1 second' WHERE claim_token = 42")
                conn.commit()
                lapsed = deliver_day(conn, DAY, result.by_digest_id(), _smtp(server), tmp_path)
                assert lapsed.reclaimed == 2 and lapsed.sent == 2       # stuck for longer than the lease
            finally:
                other.execute("SELECT pg_advisory_unlock_all()")
                other.commit()
    assert sorted(_received(server).elements()) == sorted(emails + emails[:2])
    assert json.dumps(lapsed.as_metadata())   # metadata stays JSON


def test_a_claim_in_flight_in_another_run_is_not_counted_as_left_undone(clean_db, conn, tmp_path):
    """Another run's claim of the last rows has locked them but not committed when this run finds
    nothing left to claim and counts what is left: it waits for that claim instead of reading the
    rows as still pending (which failed the run and asked Dagster for a retry for nothing)."""
    emails = _seed(conn, 4)
    result = render_day(conn, DAY, ["en", "fr"], outbox_dir=tmp_path)
    digest_ids = list(result.by_digest_id())
    with SmtpServer() as server, db.connection(clean_db) as other:
        seed_deliveries(conn, DAY, "en")
        conn.commit()
        other.execute("SELECT pg_advisory_lock(%s, 42)", (LOCK_SPACE,))   # the other run, alive
        other.commit()
        # Its claim, in flight: the gate held shared and every row of the day locked, not committed.
        other.execute(db.load_sql("digest_claim_gate_shared"), {"lock_space": LOCK_SPACE})
        other.execute("SELECT 1 FROM deliveries WHERE digest_date = %s AND digest_id = ANY(%s) FOR UPDATE",
                      (DAY, digest_ids))
        reports = []
        this_run = threading.Thread(target=lambda: reports.append(
            deliver_day(conn, DAY, result.by_digest_id(), _smtp(server), tmp_path)))
        this_run.start()
        this_run.join(timeout=2)
        assert this_run.is_alive()          # waiting for the claim in flight before counting
        other.execute("UPDATE deliveries SET status = 'sending', claim_token = 42,"
                      " claimed_until = now() + interval '1 hour' WHERE digest_date = %s", (DAY,))
        other.commit()
        this_run.join(timeout=30)
        assert not this_run.is_alive()
        other.execute("SELECT pg_advisory_unlock_all()")
        other.commit()
    assert reports[0].attempted == 0 and reports[0].retryable == 0, reports[0]   # the other run's job
    assert _statuses(conn) == {"sending": len(emails)}
