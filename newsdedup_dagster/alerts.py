"""Operator alerts for failed runs: one short mail (or an .eml file in the outbox when no SMTP
server or no recipient is configured). No Dagster imports: the sensor in sensors.py passes plain
values in. Every line passes through the one redaction (redaction.py): a step's error may quote
what a provider echoed back (an API key, a URL with its password)."""

from __future__ import annotations

import logging
import re
import smtplib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

from newsdedup_dagster.shared.presentation.write import atomic_write, private_dirs
from newsdedup_dagster.shared.redaction import redact
from newsdedup_dagster.stages.digest.send import _connect, _quit
from newsdedup_dagster.stages.digest.settings import SmtpSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FailedRun:
    run_id: str
    job_name: str
    partition: str | None = None
    backfill_id: str | None = None
    # (step key, first line of its error), in the order the steps failed
    failed_steps: list[tuple[str, str]] = field(default_factory=list)
    run_error: str = ""                      # the run failure event's message (first line)
    run_url: str | None = None


def first_line(text: str | None, limit: int = 300) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def retried(retries: int) -> str:
    """What to add to a step's error line when the orchestrator retried the step first."""
    return f" (after {retries} {'retry' if retries == 1 else 'retries'})" if retries else ""


def compose(run: FailedRun, secrets: tuple[str, ...] = ()) -> tuple[str, str]:
    """(subject, plain-text body). The subject names job, partition and the first failing step;
    `secrets` (configured keys and passwords) and secret-shaped values never appear in either."""
    step = run.failed_steps[0][0] if run.failed_steps else "run"
    subject = f"[newsdedup] run failed: {run.job_name}" + (f" {run.partition}" if run.partition else "") + f" ({step})"
    lines = [f"run:       {run.run_id}", f"job:       {run.job_name}", f"partition: {run.partition or '-'}"]
    if run.backfill_id:
        lines.append(f"backfill:  {run.backfill_id}")
    for key, error in run.failed_steps or [("(none: the run failed outside a step)", run.run_error)]:
        lines.append(f"step:      {key}")
        lines.append(f"error:     {error or '-'}")
    if run.run_error and run.failed_steps:
        lines.append(f"run error: {run.run_error}")
    if run.run_url:
        lines.append(f"details:   {run.run_url}")
    return redact(re.sub(r"\s+", " ", subject), secrets), redact("\n".join(lines), secrets) + "\n"


def _message(subject: str, body: str, from_addr: str, recipients: tuple[str, ...]) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = subject
    msg["From"] = from_addr
    msg["To"] = ", ".join(recipients) or "operator@localhost"
    msg["Date"] = format_datetime(datetime.now(UTC))
    msg["Message-ID"] = make_msgid(domain="newsdedup.alerts")
    msg["Auto-Submitted"] = "auto-generated"
    msg.set_content(body, charset="utf-8")
    return msg


def deliver(run: FailedRun, smtp: SmtpSettings, recipients: tuple[str, ...], outbox_dir: Path,
            secrets: tuple[str, ...] = ()) -> str:
    """Mail the alert when SMTP and recipients are configured, else (or when sending fails) write it
    to <outbox>/alerts/. Returns where it went, for the sensor's log."""
    subject, body = compose(run, secrets)
    return deliver_text(subject, body, run.run_id, smtp, recipients, outbox_dir, secrets)


def deliver_text(subject: str, body: str, name: str, smtp: SmtpSettings, recipients: tuple[str, ...],
                 outbox_dir: Path, secrets: tuple[str, ...] = ()) -> str:
    """Any operator alert (a failed run, sources failing or quiet) by the same way: mailed, else
    <outbox>/alerts/<time>-<name>.eml. Returns where it went."""
    subject, body = redact(re.sub(r"\s+", " ", subject), secrets), redact(body, secrets)
    msg = _message(subject, body, smtp.from_addr, recipients)
    if smtp.configured and recipients:
        client = None
        try:
            client = _connect(smtp)
            client.send_message(msg)
            return f"mailed to {', '.join(recipients)} via {smtp.describe()}"
        except (smtplib.SMTPException, OSError, RuntimeError) as exc:
            log.warning("alert mail %s failed (%s); writing it to the outbox", name,
                        redact(first_line(str(exc)), (*secrets, smtp.password)))
        finally:
            _quit(client)
    folder = private_dirs(outbox_dir / "alerts", outbox_dir)   # errors and addresses: private
    path = folder / f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{name}.eml"
    atomic_write(path, bytes(msg), private=True)
    return f"written to {path}"
