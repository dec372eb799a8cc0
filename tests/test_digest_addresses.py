"""Subscriber addresses stay in the database and the outbox: a delivery the real SMTP server refuses
(its reply quoting the address, as Postfix's does) is named by subscriber id in the run's metadata,
in the run's Dagster event log, in the step's Failure and in the alert mail the run-failure sensor
sends for it; the address appears in none of them."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from dagster import DagsterEventType, DagsterInstance, build_run_status_sensor_context, serialize_value
from helpers import materialize_digest, smtp_mailer
from smtp_server import SmtpServer
from test_events_fixtures import add_story

from newsdedup_dagster.sensors import alert_on_run_failure

KEY = "2026-11-02"
REFUSED = "Gone.Reader@example.com"
DELIVERED = "ok.reader@example.com"
OPERATOR = "ops@example.org"


@pytest.fixture(autouse=True)
def deployment(monkeypatch):
    # The fixtures' day is fixed in the past: this deployment mails it.
    monkeypatch.setenv("NEWSDEDUP_DIGEST_ALLOW_OLD_SEND", "true")
    monkeypatch.setenv("NEWSDEDUP_DIGEST_LANGS", "en")


def _seed(conn) -> dict[str, int]:
    add_story(conn, "s1", "t1", 8.0, titles={"en": "Market rally"}, headline="Market rally", significance=7.0)
    ids = {}
    for addr in (DELIVERED, REFUSED):
        ids[addr] = conn.execute("INSERT INTO subscribers (email, lang, subscribed_at) VALUES (%s, 'en', %s) RETURNING id",
                                 (addr, datetime(2026, 11, 1, tzinfo=UTC))).fetchone()[0]
    conn.commit()
    return ids


def _reply(code: str) -> str:
    """What Postfix answers for an unknown or full mailbox: the address quoted, in the server's case."""
    return f"{code} <{REFUSED.lower()}>: Recipient address rejected: try {REFUSED}"


def _event_log(instance: DagsterInstance, run_id: str) -> str:
    """Everything the run's event log holds (what the Dagster UI shows of the run), serialised."""
    return "\n".join(serialize_value(entry) for entry in instance.all_logs(run_id))


def _assert_no_address(text: str) -> None:
    assert REFUSED.lower() not in text.lower() and DELIVERED not in text.lower()
    assert "gone.reader" not in text.lower()


def test_a_refused_reader_is_named_by_id_in_metadata_and_logs(clean_db, conn, tmp_path, monkeypatch):
    ids = _seed(conn)
    with SmtpServer(refuse={REFUSED: _reply("550 5.1.1")}) as server, DagsterInstance.ephemeral() as instance:
        mailer = smtp_mailer(monkeypatch, server.host, server.port, tmp_path)
        result = materialize_digest(clean_db, mailer, KEY, instance=instance)
        assert result.success   # a permanent refusal is recorded, not a failed run
        assert server.refused == [REFUSED] and [m.rcpt_tos for m in server.messages] == [[DELIVERED]]
        metadata = result.asset_materializations_for_node("digest")[-1].metadata
        this_run = metadata["this_run"].value
        assert this_run["permanent_failures"] == 1
        [error] = this_run["errors"]
        assert error.startswith(f"subscriber {ids[REFUSED]}: recipient refused: 550")
        assert f"<subscriber-{ids[REFUSED]}>" in error   # the server's quote of the address, replaced
        _assert_no_address(json.dumps({key: str(value.value) for key, value in metadata.items()}))
        log = _event_log(instance, result.run_id)
        assert f"subscriber {ids[REFUSED]}" in log   # the warning about the failed delivery
        _assert_no_address(log)
    # The database keeps the address with its delivery and the server's error (as reported).
    row = conn.execute("SELECT email, error FROM deliveries WHERE subscriber_id = %s", (ids[REFUSED],)).fetchone()
    conn.commit()
    assert row[0] == REFUSED and "550" in row[1]


def test_a_failed_run_and_its_alert_mail_name_the_reader_by_id(clean_db, conn, tmp_path, monkeypatch):
    ids = _seed(conn)
    monkeypatch.setenv("NEWSDEDUP_ALERT_TO", OPERATOR)
    with SmtpServer(refuse={REFUSED: _reply("452 4.2.2")}) as server, DagsterInstance.ephemeral() as instance:
        # A transient refusal with no step retry left: the deliveries are recorded, the run fails.
        mailer = smtp_mailer(monkeypatch, server.host, server.port, tmp_path, outage_retries=0)
        result = materialize_digest(clean_db, mailer, KEY, instance=instance, raise_on_error=False)
        assert not result.success
        failure = next(e for e in result.all_events if e.is_step_failure).step_failure_data
        assert f"subscriber {ids[REFUSED]}: recipient refused: 452" in failure.error.message
        _assert_no_address(failure.error.to_string())
        _assert_no_address(json.dumps(failure.user_failure_data.metadata["this_run"].value))
        _assert_no_address(_event_log(instance, result.run_id))

        # The run-failure sensor mails the operator through the same server.
        run_failure = next(e for e in result.all_events if e.event_type == DagsterEventType.RUN_FAILURE)
        context = build_run_status_sensor_context(
            sensor_name="alert_on_run_failure", dagster_instance=instance, dagster_run=result.dagster_run,
            dagster_event=run_failure, resources={"mailer": mailer}).for_run_failure()
        alert_on_run_failure(context)
        [alert] = [m for m in server.messages if m.rcpt_tos == [OPERATOR]]
    body = alert.message.get_content()
    assert f"subscriber {ids[REFUSED]}" in body and "452" in body
    _assert_no_address(alert.message["Subject"] + body)
