"""Deliver rendered digests: SMTP (smtplib) in batches, or outbox .eml files when no SMTP host
is configured. No Dagster imports.

Delivery log (`deliveries`, one row per day and subscriber) makes sending idempotent: a row is
created once ('pending'), and only 'pending' rows and transient 'failed' rows with attempts left
are ever picked; 'sent' and 'outbox' rows never are. Each recipient's outcome is written and
committed right after its SMTP transaction (one small UPDATE per mail, deliberately not
batched): if the process dies mid-batch, the recipients already served are recorded, so a
retry does not mail them twice.

Failures are per recipient: a refused address (SMTP 5xx) is a permanent failure, recorded and
not retried; a 4xx or a dropped connection is transient, retried once more in the same run
after reconnecting and again on later runs until NEWSDEDUP_SMTP_MAX_ATTEMPTS. One recipient
failing never blocks the others. Wrong credentials fail the run (a configuration error must be
seen, not recorded against every subscriber).

Environment (all optional; no host = outbox delivery):
  NEWSDEDUP_SMTP_HOST, NEWSDEDUP_SMTP_PORT (default 587 starttls / 465 ssl / 25 none),
  NEWSDEDUP_SMTP_SECURITY (starttls | ssl | none, default starttls), NEWSDEDUP_SMTP_USER,
  NEWSDEDUP_SMTP_PASSWORD, NEWSDEDUP_SMTP_FROM, NEWSDEDUP_SMTP_BATCH_SIZE (50),
  NEWSDEDUP_SMTP_TIMEOUT (30 s), NEWSDEDUP_SMTP_MAX_ATTEMPTS (3).
"""

from __future__ import annotations

import logging
import os
import re
import smtplib
import ssl
import time
from dataclasses import dataclass, field
from datetime import date
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime, parseaddr
from pathlib import Path
from typing import Callable

import psycopg

from .. import db

log = logging.getLogger(__name__)

__all__ = ["SmtpSettings", "MailerConfigError", "DeliveryReport", "build_message", "deliver_day",
           "message_id_for", "valid_email"]

SECURITY_MODES = ("starttls", "ssl", "none")
DEFAULT_PORTS = {"starttls": 587, "ssl": 465, "none": 25}


class MailerConfigError(RuntimeError):
    """SMTP configuration is wrong (bad credentials, STARTTLS refused): fail the run."""


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else None


@dataclass(frozen=True)
class SmtpSettings:
    host: str | None = None
    port: int | None = None
    security: str = "starttls"
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    from_addr: str = "newsdedup <digest@localhost>"
    batch_size: int = 50            # recipients per SMTP connection (providers cap messages per session)
    timeout_s: float = 30.0
    max_attempts: int = 3           # per recipient, across runs
    retry_delay_s: float = 2.0      # before the in-run retry pass (after reconnecting)

    def __post_init__(self) -> None:
        if self.security not in SECURITY_MODES:
            raise ValueError(f"NEWSDEDUP_SMTP_SECURITY={self.security!r}: expected one of {', '.join(SECURITY_MODES)}")
        if self.batch_size < 1 or self.max_attempts < 1:
            raise ValueError("NEWSDEDUP_SMTP_BATCH_SIZE and NEWSDEDUP_SMTP_MAX_ATTEMPTS must be >= 1")

    @classmethod
    def from_env(cls, **overrides) -> "SmtpSettings":
        values = {
            "host": _env("NEWSDEDUP_SMTP_HOST"),
            "port": int(_env("NEWSDEDUP_SMTP_PORT")) if _env("NEWSDEDUP_SMTP_PORT") else None,
            "security": (_env("NEWSDEDUP_SMTP_SECURITY") or "starttls").lower(),
            "user": _env("NEWSDEDUP_SMTP_USER"),
            "password": _env("NEWSDEDUP_SMTP_PASSWORD"),
            "from_addr": _env("NEWSDEDUP_SMTP_FROM") or "newsdedup <digest@localhost>",
            "batch_size": int(_env("NEWSDEDUP_SMTP_BATCH_SIZE") or 50),
            "timeout_s": float(_env("NEWSDEDUP_SMTP_TIMEOUT") or 30),
            "max_attempts": int(_env("NEWSDEDUP_SMTP_MAX_ATTEMPTS") or 3),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    @property
    def configured(self) -> bool:
        return bool(self.host)

    @property
    def effective_port(self) -> int:
        return self.port or DEFAULT_PORTS[self.security]

    def describe(self) -> str:
        """For metadata and logs: never the password."""
        if not self.configured:
            return "outbox files (no NEWSDEDUP_SMTP_HOST configured)"
        user = f"{self.user}@" if self.user else ""
        return f"smtp://{user}{self.host}:{self.effective_port} ({self.security})"


_EMAIL = re.compile(r"^[^@\s<>\"',;]+@[^@\s<>\"',;]+\.[^@\s<>\"',;]+$|^[^@\s<>\"',;]+@localhost$")


def valid_email(email: str) -> bool:
    return bool(_EMAIL.match(email or "")) and len(email) <= 254


def message_id_for(day: date, subscriber_id: int, digest_id: int, from_addr: str) -> str:
    """Deterministic Message-ID: a resend after a crash carries the same id, so mail systems
    that deduplicate by Message-ID drop it."""
    domain = parseaddr(from_addr)[1].rpartition("@")[2] or "localhost"
    return f"<newsdedup.digest.{day.isoformat()}.{subscriber_id}.{digest_id}@{domain}>"


def build_message(subject: str, html: str, text: str, to_addr: str, from_addr: str, message_id: str,
                  lang: str, when=None) -> EmailMessage:
    """multipart/alternative: text/plain first, text/html last (the preferred part), UTF-8.
    The subject is RFC 2047-encoded by the email package when it is not ASCII."""
    msg = EmailMessage()
    msg["Subject"] = " ".join(subject.split())  # no line breaks: no header injection
    name, addr = parseaddr(from_addr)
    msg["From"] = str(Address(display_name=name, addr_spec=addr)) if name else addr
    msg["To"] = to_addr
    msg["Message-ID"] = message_id
    msg["Content-Language"] = lang
    if when is not None:
        msg["Date"] = format_datetime(when)
    msg["Auto-Submitted"] = "auto-generated"
    msg.set_content(text, subtype="plain", charset="utf-8")
    msg.add_alternative(html, subtype="html", charset="utf-8")
    return msg


@dataclass
class DeliveryReport:
    mode: str
    attempted: int = 0
    sent: int = 0
    outbox: int = 0
    failed: int = 0
    permanent_failures: int = 0
    skipped_reason: str | None = None
    errors: list[str] = field(default_factory=list)
    totals: dict[str, int] = field(default_factory=dict)   # whole day, from the delivery log

    def as_metadata(self) -> dict:
        return {"mode": self.mode, "attempted": self.attempted, "sent": self.sent, "outbox": self.outbox,
                "failed": self.failed, "permanent_failures": self.permanent_failures,
                "skipped_reason": self.skipped_reason, "errors": self.errors[:10], "day_totals": self.totals}


@dataclass(frozen=True)
class _Due:
    subscriber_id: int
    email: str
    lang: str
    digest_id: int
    attempts: int


def _record(conn, day, due: _Due, status: str, error: str | None = None, permanent: bool = False,
            message_id: str | None = None, outbox_path: str | None = None) -> None:
    conn.execute(db.load_sql("digest_delivery_result"), {
        "day": day, "subscriber_id": due.subscriber_id, "status": status, "error": (error or None) and error[:500],
        "permanent": permanent, "message_id": message_id, "outbox_path": outbox_path, "email": due.email})
    conn.commit()


def _connect(smtp: SmtpSettings) -> smtplib.SMTP:
    try:
        if smtp.security == "ssl":
            client: smtplib.SMTP = smtplib.SMTP_SSL(smtp.host, smtp.effective_port, timeout=smtp.timeout_s,
                                                   context=ssl.create_default_context())
        else:
            client = smtplib.SMTP(smtp.host, smtp.effective_port, timeout=smtp.timeout_s)
            client.ehlo()
            if smtp.security == "starttls":
                if not client.has_extn("starttls"):
                    client.quit()
                    raise MailerConfigError(
                        f"{smtp.host}:{smtp.effective_port} does not offer STARTTLS; "
                        "set NEWSDEDUP_SMTP_SECURITY=ssl or none")
                client.starttls(context=ssl.create_default_context())
                client.ehlo()
        if smtp.user:
            client.login(smtp.user, smtp.password or "")
        return client
    except smtplib.SMTPAuthenticationError as exc:
        raise MailerConfigError(f"SMTP login refused for user {smtp.user!r} at {smtp.host}: {exc.smtp_code}") from None


def _quit(client: smtplib.SMTP | None) -> None:
    if client is None:
        return
    try:
        client.quit()
    except (smtplib.SMTPException, OSError):
        client.close()


def _classify(exc: Exception, email: str) -> tuple[str, bool]:
    """(error text, permanent?) for one recipient's failure."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        code, msg = exc.recipients.get(email, next(iter(exc.recipients.values()), (0, b"")))
        text = msg.decode("utf-8", "replace") if isinstance(msg, bytes) else str(msg)
        return f"recipient refused: {code} {text}", 500 <= int(code) < 600
    if isinstance(exc, (smtplib.SMTPDataError, smtplib.SMTPSenderRefused)):
        code = exc.smtp_code
        text = exc.smtp_error.decode("utf-8", "replace") if isinstance(exc.smtp_error, bytes) else str(exc.smtp_error)
        return f"{type(exc).__name__}: {code} {text}", 500 <= int(code) < 600
    return f"{type(exc).__name__}: {exc}", False


def deliver_day(
    conn: psycopg.Connection,
    day: date,
    digests: dict[int, tuple[str, str, str]],      # digest_id -> (subject, html, text)
    smtp: SmtpSettings,
    outbox_dir: Path,
    fallback_lang: str = "en",
    sleep: Callable[[float], None] = time.sleep,
) -> DeliveryReport:
    """Seed the day's delivery rows and deliver every due one. Returns counts for this run and
    the day's totals."""
    report = DeliveryReport(mode=smtp.describe())
    conn.execute(db.load_sql("digest_deliveries_seed"), {"day": day, "fallback_lang": fallback_lang})
    conn.commit()
    rows = conn.execute(db.load_sql("digest_deliveries_due"), {"day": day, "max_attempts": smtp.max_attempts}).fetchall()
    conn.commit()
    due = [_Due(*row) for row in rows if row[3] in digests]
    report.attempted = len(due)
    if not smtp.configured:
        _deliver_to_outbox(conn, day, due, digests, smtp, outbox_dir, report)
    else:
        retry = _deliver_smtp(conn, day, due, digests, smtp, report)
        if retry:
            sleep(smtp.retry_delay_s)
            log.info("retrying %d transient SMTP failures after reconnecting", len(retry))
            report.failed -= len(retry)
            _deliver_smtp(conn, day, retry, digests, smtp, report)
    report.totals = day_totals(conn, day)
    return report


def day_totals(conn: psycopg.Connection, day: date) -> dict[str, int]:
    totals: dict[str, int] = {}
    for status, permanent, count in conn.execute(db.load_sql("digest_delivery_counts"), {"day": day}):
        key = f"{status}_permanent" if (status == "failed" and permanent) else status
        totals[key] = totals.get(key, 0) + int(count)
    conn.commit()
    return totals


def _deliver_to_outbox(conn, day, due, digests, smtp, outbox_dir: Path, report: DeliveryReport) -> None:
    folder = outbox_dir / "mail" / day.isoformat()
    folder.mkdir(parents=True, exist_ok=True)
    for d in due:
        subject, html, text = digests[d.digest_id]
        message_id = message_id_for(day, d.subscriber_id, d.digest_id, smtp.from_addr)
        msg = build_message(subject, html, text, d.email, smtp.from_addr, message_id, d.lang)
        path = folder / f"{d.subscriber_id:06d}-{d.lang}.eml"
        tmp = path.with_suffix(".eml.tmp")
        tmp.write_bytes(bytes(msg))
        tmp.replace(path)
        _record(conn, day, d, "outbox", message_id=message_id, outbox_path=str(path))
        report.outbox += 1


def _deliver_smtp(conn, day, due: list[_Due], digests, smtp: SmtpSettings, report: DeliveryReport) -> list[_Due]:
    """Send in batches of smtp.batch_size per connection. Returns the transient failures that
    deserve one more try in this run (attempts left)."""
    retry: list[_Due] = []
    for start in range(0, len(due), smtp.batch_size):
        batch = due[start:start + smtp.batch_size]
        client = None
        try:
            client = _connect(smtp)
        except MailerConfigError:
            raise
        except (smtplib.SMTPException, OSError) as exc:
            error = f"cannot connect to {smtp.host}:{smtp.effective_port}: {type(exc).__name__}: {exc}"
            report.errors.append(error)
            for d in batch:
                _record(conn, day, d, "failed", error)
                report.failed += 1
                if d.attempts + 1 < smtp.max_attempts:
                    retry.append(_Due(d.subscriber_id, d.email, d.lang, d.digest_id, d.attempts + 1))
            continue
        try:
            for d in batch:
                subject, html, text = digests[d.digest_id]
                message_id = message_id_for(day, d.subscriber_id, d.digest_id, smtp.from_addr)
                msg = build_message(subject, html, text, d.email, smtp.from_addr, message_id, d.lang)
                try:
                    if client is None:  # the previous recipient broke the connection
                        client = _connect(smtp)
                    client.send_message(msg, from_addr=parseaddr(smtp.from_addr)[1], to_addrs=[d.email])
                except MailerConfigError:
                    raise
                except (smtplib.SMTPException, OSError) as exc:
                    error, permanent = _classify(exc, d.email)
                    _record(conn, day, d, "failed", error, permanent=permanent)
                    report.failed += 1
                    report.permanent_failures += permanent
                    report.errors.append(f"{d.email}: {error}")
                    if not permanent and d.attempts + 1 < smtp.max_attempts:
                        retry.append(_Due(d.subscriber_id, d.email, d.lang, d.digest_id, d.attempts + 1))
                    if isinstance(exc, (smtplib.SMTPServerDisconnected, OSError)):
                        _quit(client)
                        client = None
                    else:
                        try:  # a refused transaction leaves the session usable after RSET
                            client.rset()
                        except (smtplib.SMTPException, OSError):
                            _quit(client)
                            client = None
                    continue
                _record(conn, day, d, "sent", message_id=message_id)
                report.sent += 1
        finally:
            _quit(client)
    return retry
