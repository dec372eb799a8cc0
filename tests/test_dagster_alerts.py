"""Run-failure alerts: the message names run, partition, failing step and the error's first line;
it goes through a real SMTP server (aiosmtpd) when configured, else (or when the server is down)
to <outbox>/alerts/. The sensor itself is evaluated on a real failed run."""

from __future__ import annotations

import email
import email.policy

import pytest
from dagster import (
    DagsterEventType,
    DagsterInstance,
    Definitions,
    RetryPolicy,
    RetryRequested,
    asset,
    build_run_status_sensor_context,
    define_asset_job,
)
from helpers import free_port
from smtp_server import SmtpServer

from newsdedup_dagster.alerts import FailedRun, compose, deliver
from newsdedup_dagster.resources import MailerResource
from newsdedup_dagster.sensors import alert_on_run_failure
from newsdedup_dagster.stages.digest.settings import SmtpSettings

# The hourly assets are one step (`hourly_chain`); its error names the asset and hour that failed.
RUN = FailedRun(run_id="r-1", job_name="hourly_pipeline", partition="2026-11-02-07:00", backfill_id="bf1",
                failed_steps=[("hourly_chain", "newsdedup_dagster.assets.hourly.StageFailed: stories[2026-11-02-07:00]: "
                                               "RaiseException: injected")],
                run_error="Execution of run for \"hourly_pipeline\" failed. Steps failed: ['hourly_chain'].")


def test_message_names_run_partition_step_and_error():
    subject, body = compose(RUN)
    assert subject == "[newsdedup] run failed: hourly_pipeline 2026-11-02-07:00 (hourly_chain)"
    for part in ("r-1", "2026-11-02-07:00", "bf1", "step:      hourly_chain", "stories[2026-11-02-07:00]", "injected"):
        assert part in body


def test_alert_is_mailed_through_smtp(tmp_path):
    with SmtpServer() as server:
        smtp = SmtpSettings(host=server.host, port=server.port, security="none")
        where = deliver(RUN, smtp, ("ops@example.org",), tmp_path)
        assert where.startswith("mailed to ops@example.org")
        assert len(server.messages) == 1
        mail = server.messages[0]
    assert mail.rcpt_tos == ["ops@example.org"]
    assert "hourly_chain" in mail.message["Subject"] and "stories[" in mail.message.get_content()
    assert "injected" in mail.message.get_content()
    assert not (tmp_path / "alerts").exists()


@pytest.mark.parametrize("case", ["no smtp", "no recipient", "smtp down"])
def test_alert_falls_back_to_the_outbox(tmp_path, case):
    smtp = {"no smtp": SmtpSettings(), "no recipient": SmtpSettings(host="127.0.0.1", port=free_port(), security="none"),
            "smtp down": SmtpSettings(host="127.0.0.1", port=free_port(), security="none", timeout_s=2)}[case]
    recipients = () if case == "no recipient" else ("ops@example.org",)
    where = deliver(RUN, smtp, recipients, tmp_path)
    files = list((tmp_path / "alerts").glob("*.eml"))
    assert where.startswith("written to") and len(files) == 1
    message = email.message_from_bytes(files[0].read_bytes(), policy=email.policy.default)
    assert "2026-11-02-07:00" in message["Subject"] and "injected" in message.get_content()


@asset
def always_fails():
    raise ValueError("feed archive unreadable\nsecond line not in the alert")


def alert_for(monkeypatch, tmp_path, failing_asset) -> str:
    """Run `failing_asset` for real (in process, an ephemeral instance with its event log),
    evaluate the sensor on the failed run with its outbox in `tmp_path`, and return the alert's
    body from the outbox."""
    job = define_asset_job("failing_job", selection=[failing_asset])
    defs = Definitions(assets=[failing_asset], jobs=[job])
    with DagsterInstance.ephemeral() as instance:
        result = defs.resolve_job_def("failing_job").execute_in_process(instance=instance, raise_on_error=False)
        assert not result.success
        failure = next(e for e in result.all_events if e.event_type == DagsterEventType.RUN_FAILURE)
        monkeypatch.setenv("NEWSDEDUP_OUTBOX", str(tmp_path))
        context = build_run_status_sensor_context(
            sensor_name="alert_on_run_failure", dagster_instance=instance, dagster_run=result.dagster_run,
            dagster_event=failure, resources={"mailer": MailerResource()},
        ).for_run_failure()
        alert_on_run_failure(context)
    files = list((tmp_path / "alerts").glob("*.eml"))
    assert len(files) == 1
    return email.message_from_bytes(files[0].read_bytes(), policy=email.policy.default).get_content()


def test_sensor_reports_a_real_failed_run(tmp_path, monkeypatch):
    body = alert_for(monkeypatch, tmp_path, always_fails)
    assert "step:      always_fails" in body and "feed archive unreadable" in body
    assert "second line" not in body and "retr" not in body


@asset(retry_policy=RetryPolicy(max_retries=2, delay=0))
def fails_every_attempt():
    raise ConnectionError("server closed the connection unexpectedly\nThis probably means ...")


@asset
def asks_for_retries():
    try:
        raise TimeoutError("another clustering run held the lock")
    except TimeoutError as exc:
        raise RetryRequested(max_retries=1, seconds_to_wait=0) from exc


@pytest.mark.parametrize("failing_asset, line", [
    (fails_every_attempt, "ConnectionError: server closed the connection unexpectedly (after 2 retries)"),
    (asks_for_retries, "TimeoutError: another clustering run held the lock (after 1 retry)"),
])
def test_a_step_dagster_retried_is_reported_with_its_own_error(tmp_path, monkeypatch, failing_asset, line):
    """Dagster's last failure event of a retried step says "Exceeded max_retries of N"; the alert
    carries the asset's own error, and how often it was retried."""
    body = alert_for(monkeypatch, tmp_path, failing_asset)
    assert f"step:      {failing_asset.key.to_user_string()}" in body
    assert f"error:     {line}\n" in body
    assert "Exceeded max_retries" not in body and "This probably means" not in body
