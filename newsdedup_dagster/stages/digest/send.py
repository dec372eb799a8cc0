"""Deliver rendered digests: SMTP (smtplib) in batches, or outbox .eml files when intended. No
Dagster imports.

Exactly once, as far as SMTP allows. The delivery log (`deliveries`, one row per day and
subscriber, created once) is also the work queue:

1. claim: a run takes a batch of due rows with `FOR UPDATE SKIP LOCKED` and marks them
   'sending' under its claim token, committed. Two runs of the same day take disjoint rows.
   A claim holds a shared gate until it commits; a run counting what is left of the day waits
   on the gate, so another run's claim in flight never reads as work left undone.
   The run's session holds an advisory lock on its token while it delivers; a 'sending' row
   whose token nobody holds was left by a crashed run and is taken over by the next one
   (`claimed_until` also lapses a claim whose run is alive but stuck).
2. hand-over: just before a message goes to the server, `handed_over_at` is set and
   committed, only if the run still holds the claim (a claim taken over is never sent).
3. record: right after the SMTP transaction, the outcome ('sent' with its Message-ID, or
   'failed') is written and committed, again only under the claim.

The one window SMTP cannot close: the server accepted the message (250 after DATA) and the
process died before step 3 committed. The next run finds that row 'sending' with
`handed_over_at` set and sends it again (counted in `uncertain_resends`; same deterministic
Message-ID, which many mail systems deduplicate). Because a run hands over one message at a
time and records it before the next, at most one reader per crashed run can get the day's
digest twice; rows claimed but not yet handed over are sent exactly once by the next run.
(A connection that drops after DATA but before the server's reply is the same window: the
row is recorded as a transient failure and retried.)

Failures: a refused recipient (SMTP 5xx) is permanent, recorded and never retried; so is a reader's
address that cannot go into a To header (not a plain address, a line break), never sent. A 4xx or a
dropped connection is transient: retried once in the same run after reconnecting, and again
by later runs until smtp.max_attempts. A server that cannot be reached is not the
recipient's failure: it uses up no attempt, the run stops sending and reports the day's
deliveries as outstanding (`DeliveryReport.retryable`), and the asset then asks Dagster to retry
the step (smtp.outage_retries, backing off from smtp.outage_delay_s) and
finally fails the run; any later run of the day finishes the job. Wrong credentials or a
missing SMTP host while subscribers exist fail the run outright (a configuration error must
be seen, not recorded against every subscriber).

Editions and local time (stages/digest/editions.py): each reader gets the edition of their choices
(languages, categories, countries; the plain one of their language when it was not rendered), due at
their local delivery time on their local day after the UTC day. A run delivers the rows that are due
by its clock and leaves the others pending as `scheduled` (no failure): the digest's delivery sensor
runs the day again when the next ones fall due.

Readers: a day goes only to readers subscribed by the end of that day (a past day run again is not
mailed to readers who joined since). Every message carries the reader's unsubscribe link, in the
footer and as List-Unsubscribe (RFC 2369) with List-Unsubscribe-Post (RFC 8058 one-click) when the
link is https: NEWSDEDUP_UNSUBSCRIBE_URL with the reader's random token, or a mailto: the sender.
Addresses stay in the database and the outbox: what a run reports (errors, logs) names readers by
subscriber id, and a server's reply that quotes the address has it replaced.

Settings: digest.settings.SmtpSettings, built from NEWSDEDUP_SMTP_* and NEWSDEDUP_OUTBOX_ONLY by
config.mail_settings().
"""

from __future__ import annotations

import email.policy
import logging
import os
import re
import secrets
import smtplib
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time as day_time, timedelta
from email.headerregistry import Address, HeaderRegistry, UnstructuredHeader
from email.message import EmailMessage
from email.utils import format_datetime, parseaddr
from pathlib import Path
from urllib.parse import quote, urlsplit
from zoneinfo import ZoneInfoNotFoundError

import psycopg

from newsdedup_dagster.shared import db, deployment
from newsdedup_dagster.shared.presentation.write import atomic_write, private_dirs
from newsdedup_dagster.stages.digest.editions import Edition, delivery_moment, local_day
from newsdedup_dagster.stages.digest.render import personalised
from newsdedup_dagster.stages.digest.settings import SmtpSettings

log = logging.getLogger(__name__)

__all__ = ["MailerConfigError", "OutboxRefused", "DeliveryReport", "UnsafeHeaderError", "build_message",
           "days_due", "deliver_day", "message_id_for", "seed_deliveries", "valid_email", "unsubscribe_link"]

# Advisory-lock key space of delivery claims (pg_advisory_lock(LOCK_SPACE, token)); any constant
# no other part of the project uses.
LOCK_SPACE = 0x6E6464
CRASH_EXIT_CODE = 137   # what a SIGKILL'd process reports; used by the test-only crash hook


class MailerConfigError(RuntimeError):
    """SMTP configuration is wrong (bad credentials, STARTTLS refused): fail the run."""


class OutboxRefused(MailerConfigError):
    """No SMTP host while active subscribers exist, and outbox-only delivery was not intended."""


# RFC 5322's addr-spec in its plain form: a dot-atom local part (ASCII letters, digits and
# !#$%&'*+-/=?^_`{|}~, dots only between them) at a host name of two labels or more (letters, digits,
# inner hyphens), or localhost. No quoted local parts, comments or address literals: an accepted address
# goes into a To header and an SMTP RCPT as it is, with nothing to quote and no control character.
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_EMAIL = re.compile(rf"(?P<local>{_ATOM}(?:\.{_ATOM})*)@(?:(?:{_LABEL}\.)+{_LABEL}|localhost)")


def valid_email(email: str) -> bool:
    """A plain e-mail address (see _EMAIL), whole: nothing before or after it, not even a newline."""
    match = _EMAIL.fullmatch(email) if isinstance(email, str) else None
    return match is not None and len(email) <= 254 and len(match["local"]) <= 64


def message_id_for(day: date, subscriber_id: int, digest_id: int, from_addr: str) -> str:
    """Deterministic Message-ID: a resend after a crash carries the same id, so mail systems
    that deduplicate by Message-ID drop it."""
    domain = parseaddr(from_addr)[1].rpartition("@")[2] or "localhost"
    return f"<newsdedup.digest.{day.isoformat()}.{subscriber_id}.{digest_id}@{domain}>"


# The unsubscribe token (subscribers.unsubscribe_token, migration 080): random hex, nothing else.
UNSUBSCRIBE_TOKEN = re.compile(r"^[0-9a-f]{32,128}$")
ONE_CLICK = "List-Unsubscribe=One-Click"   # RFC 8058: the body of the POST a mail client sends


def unsubscribe_link(token: str, unsubscribe_url: str | None, from_addr: str) -> str:
    """The reader's unsubscribe link: `unsubscribe_url` (deployment.unsubscribe_url(), https) with
    `token=` added to its query, or, when none is configured, a mailto: the sender whose subject
    carries the token (the operator runs `newsdedup subscribers unsubscribe --token T`)."""
    if not UNSUBSCRIBE_TOKEN.match(token or ""):
        raise ValueError("not an unsubscribe token")
    if unsubscribe_url:
        joiner = "" if unsubscribe_url.endswith(("?", "&")) else "&" if urlsplit(unsubscribe_url).query else "?"
        return f"{unsubscribe_url}{joiner}token={token}"
    return f"mailto:{quote(parseaddr(from_addr)[1] or 'digest@localhost', safe='@')}?subject=unsubscribe%20{token}"


class _UnfoldedHeader(UnstructuredHeader):
    """A header written on one line: List-Unsubscribe holds a URL longer than the 78-character
    fold, which the email package would otherwise turn into RFC 2047 encoded words that mail
    clients do not read as a URL. Its value is ASCII (a checked URL and a hex token), well
    under RFC 5322's 998 characters."""

    def fold(self, *, policy):
        value = str(self)
        if not value.isascii() or not value.isprintable() or len(value) > 900:
            return super().fold(policy=policy)
        return f"{self.name}: {value}{policy.linesep}"


_HEADERS = HeaderRegistry()
_HEADERS.map_to_type("list-unsubscribe", _UnfoldedHeader)
MESSAGE_POLICY = email.policy.default.clone(header_factory=_HEADERS)


class UnsafeHeaderError(ValueError):
    """A header value build_message refuses: CR or LF (they would end the header and start one of the
    value's choosing, such as Bcc:) or NUL, or a To that is not a plain address. Names the header,
    never the value (an address stays out of reports and logs)."""

    def __init__(self, header: str, reason: str):
        super().__init__(f"{header} header refused: {reason}")
        self.header = header


_LINE_BREAKING = re.compile(r"[\r\n\0]")


def _safe(header: str, value: str) -> str:
    if _LINE_BREAKING.search(value):
        raise UnsafeHeaderError(header, "CR, LF or NUL in its value")
    return value


def build_message(subject: str, html: str, text: str, to_addr: str, from_addr: str, message_id: str,
                  lang: str, when=None, unsubscribe: str | None = None) -> EmailMessage:
    """multipart/alternative: text/plain first, text/html last (the preferred part), UTF-8.
    The subject is RFC 2047-encoded by the email package when it is not ASCII. `unsubscribe`
    (unsubscribe_link()) becomes List-Unsubscribe, and, for an https link, the RFC 8058 one-click
    List-Unsubscribe-Post (the sending domain's DKIM signature must cover both). Raises
    UnsafeHeaderError for a header value with CR, LF or NUL, or a To that is not valid_email()."""
    msg = EmailMessage(policy=MESSAGE_POLICY)
    msg["Subject"] = _safe("Subject", " ".join(subject.split()))  # the digest's line breaks become spaces
    name, addr = parseaddr(_safe("From", from_addr))
    msg["From"] = str(Address(display_name=name, addr_spec=addr)) if name else addr
    if not valid_email(_safe("To", to_addr)):
        raise UnsafeHeaderError("To", "not a plain e-mail address")
    msg["To"] = to_addr
    msg["Message-ID"] = _safe("Message-ID", message_id)
    # Every message is dated (RFC 5322 requires it): the run's clock, else now.
    msg["Date"] = format_datetime(when if when is not None else datetime.now(UTC))
    msg["Auto-Submitted"] = "auto-generated"
    if unsubscribe:
        msg["List-Unsubscribe"] = _safe("List-Unsubscribe", f"<{unsubscribe}>")
        if unsubscribe.startswith("https://"):
            msg["List-Unsubscribe-Post"] = ONE_CLICK
    msg.set_content(text, subtype="plain", charset="utf-8")
    msg.add_alternative(html, subtype="html", charset="utf-8")
    # After the body: set_content() clears every Content-* header already set (RFC 3282).
    msg["Content-Language"] = _safe("Content-Language", lang)
    return msg



@dataclass
class DeliveryReport:
    mode: str
    attempted: int = 0              # distinct deliveries this run claimed
    sent: int = 0
    outbox: int = 0
    failed: int = 0                 # deliveries whose last attempt in this run failed
    permanent_failures: int = 0
    reclaimed: int = 0              # claims taken over from a crashed or stuck run
    uncertain_resends: int = 0      # ... of which the message may already have been accepted
    lost_claims: int = 0            # claims of this run another run took over (not sent here)
    retryable: int = 0              # the day's deliveries still to do after this run (run fails)
    scheduled: int = 0              # the day's deliveries waiting for their reader's local time
    skipped_reason: str | None = None
    errors: list[str] = field(default_factory=list)
    totals: dict[str, int] = field(default_factory=dict)   # whole day, from the delivery log

    def as_metadata(self) -> dict:
        return {"mode": self.mode, "attempted": self.attempted, "sent": self.sent, "outbox": self.outbox,
                "failed": self.failed, "permanent_failures": self.permanent_failures,
                "reclaimed": self.reclaimed, "uncertain_resends": self.uncertain_resends,
                "lost_claims": self.lost_claims, "retryable": self.retryable, "scheduled": self.scheduled,
                "skipped_reason": self.skipped_reason, "errors": self.errors[:10], "day_totals": self.totals}


@dataclass(frozen=True)
class _Due:
    subscriber_id: int
    email: str
    lang: str
    digest_id: int
    attempts: int
    unsubscribe_token: str
    reclaimed: bool = False
    uncertain: bool = False


class _CrashHook:
    """Test-only (deployment.delivery_crash_point()): `POINT[:N]` ends the process, as a SIGKILL
    would (no cleanup, no commit), the N-th time POINT is reached."""

    def __init__(self, spec: str | None):
        name, _, count = (spec or "").partition(":")
        self.point = name or None
        self.left = int(count or 1)

    def __call__(self, point: str) -> None:
        if point == self.point:
            self.left -= 1
            if self.left <= 0:
                log.error("test crash hook: exiting at %s", point)
                os._exit(CRASH_EXIT_CODE)


class _Claimant:
    """This run's identity in `deliveries.claim_token`, backed by a session advisory lock."""

    def __init__(self, conn: psycopg.Connection):
        self.conn = conn
        while True:   # a random token; another live run holding the same one is astronomically rare
            self.token = secrets.randbelow(2**31 - 1) + 1
            got = conn.execute(db.load_sql("digest_claim_lock"), {"lock_space": LOCK_SPACE, "token": self.token}).fetchone()[0]
            conn.commit()
            if got:
                return

    def release(self) -> None:
        self.conn.execute(db.load_sql("digest_claim_unlock"), {"lock_space": LOCK_SPACE, "token": self.token})
        self.conn.commit()


class _Run:
    """One deliver_day call: the claim loop over a transport (SMTP or outbox)."""

    def __init__(self, conn, day: date, digests, smtp: SmtpSettings, outbox_dir: Path, report: DeliveryReport,
                 crash: _CrashHook, unsubscribe_url: str | None, now: datetime | None = None):
        self.conn, self.day, self.digests, self.smtp, self.now = conn, day, digests, smtp, now
        self.outbox_dir, self.report, self.crash = outbox_dir, report, crash
        self.unsubscribe_url = unsubscribe_url
        self.day_end = day_end(day)
        self.claimant = _Claimant(conn)
        self.outcome: dict[int, str] = {}     # subscriber -> last outcome in this run
        self.claimed: set[int] = set()

    # ---------------------------------------------------------------- SQL
    def clock(self) -> datetime:
        """What time it is for the readers' delivery times: the caller's `now`, else the server's."""
        if self.now is not None:
            return self.now
        now = self.conn.execute(db.load_sql("server_clock")).fetchone()[0]
        self.conn.commit()
        return now

    def _claim(self, pass_started) -> list[_Due]:
        now = self.clock()
        self.conn.execute(db.load_sql("digest_claim_gate_shared"), {"lock_space": LOCK_SPACE})
        rows = self.conn.execute(db.load_sql("digest_deliveries_claim"), {
            "day": self.day, "day_end": self.day_end, "digest_ids": list(self.digests), "pass_started": pass_started,
            "max_attempts": self.smtp.max_attempts, "lock_space": LOCK_SPACE, "limit": self.smtp.batch_size,
            "token": self.claimant.token, "lease_s": self.smtp.lease_s, "now": now}).fetchall()
        self.conn.commit()
        due = sorted((_Due(*row) for row in rows), key=lambda d: d.subscriber_id)
        for d in due:
            if d.subscriber_id not in self.claimed:
                self.claimed.add(d.subscriber_id)
                self.report.attempted += 1
            self.report.reclaimed += d.reclaimed
            self.report.uncertain_resends += d.uncertain
            if d.uncertain:
                log.warning("delivery %s to subscriber %s: the run that claimed it died after handing the message "
                            "to the server; sending again (the reader may get it twice)", self.day, d.subscriber_id)
        return due

    def _hand_over(self, d: _Due) -> bool:
        row = self.conn.execute(db.load_sql("digest_delivery_handover"), {
            "day": self.day, "subscriber_id": d.subscriber_id, "email": d.email, "token": self.claimant.token,
            "lease_s": self.smtp.lease_s}).fetchone()
        self.conn.commit()
        if row is None:
            self._lost(d)
            return False
        self.crash("handed_over")
        return True

    def _lost(self, d: _Due) -> None:
        self.report.lost_claims += 1
        log.warning("delivery %s to subscriber %s: claim taken over by another run (lease lapsed)", self.day, d.subscriber_id)

    def _record(self, d: _Due, status: str, error: str | None = None, permanent: bool = False, counts: bool = True,
                message_id: str | None = None, outbox_path: str | None = None) -> None:
        row = self.conn.execute(db.load_sql("digest_delivery_result"), {
            "day": self.day, "subscriber_id": d.subscriber_id, "status": status, "error": (error or None) and error[:500],
            "permanent": permanent, "counts": int(counts), "message_id": message_id, "outbox_path": outbox_path,
            "email": d.email, "token": self.claimant.token}).fetchone()
        self.conn.commit()
        if row is None:
            self._lost(d)
            return
        self.outcome[d.subscriber_id] = "failed_permanent" if (status == "failed" and permanent) else status

    def _message(self, d: _Due) -> tuple[EmailMessage, str]:
        subject, html, text = self.digests[d.digest_id]
        message_id = message_id_for(self.day, d.subscriber_id, d.digest_id, self.smtp.from_addr)
        link = unsubscribe_link(d.unsubscribe_token, self.unsubscribe_url, self.smtp.from_addr)
        html, text = personalised(html, text, d.lang, link)
        return build_message(subject, html, text, d.email, self.smtp.from_addr, message_id, d.lang,
                             when=self.now, unsubscribe=link), message_id

    def _built(self, d: _Due) -> tuple[EmailMessage, str] | None:
        """The reader's message, or None when their own address cannot go into its To header: a
        permanent failure of this reader alone, recorded (as a refused recipient is), while the other
        readers' messages go on."""
        try:
            return self._message(d)
        except UnsafeHeaderError as exc:
            if exc.header != "To":
                raise    # the sender's settings or the digest: every reader's message would be refused
            error = without_address(str(exc), d.email, d.subscriber_id)
            self._record(d, "failed", error, permanent=True)
            self.report.errors.append(f"subscriber {d.subscriber_id}: {error}")
            return None

    # ------------------------------------------------------------ passes
    def run(self, sleep: Callable[[float], None]) -> None:
        try:
            for pass_no in range(2):
                pass_started = self.conn.execute(db.load_sql("server_clock")).fetchone()[0]
                self.conn.commit()
                transient, reachable = self._pass(pass_started)
                # An unreachable server is left to the step retry (minutes apart), not retried here.
                if not transient or not reachable or pass_no == 1:
                    break
                sleep(self.smtp.retry_delay_s)
                log.info("retrying %d transient failures after reconnecting", transient)
        finally:
            # Claims not yet handed over stay 'sending' under a token nobody holds after this:
            # the next run takes them over as never sent.
            self.claimant.release()

    def _pass(self, pass_started) -> tuple[int, bool]:
        """Claim and deliver batches until nothing is due. Returns (transient failures with
        attempts left, server reachable?)."""
        transient = 0
        while True:
            batch = self._claim(pass_started)
            if not batch:
                return transient, True
            if not self.smtp.configured:
                for d in batch:
                    self._to_outbox(d)
                continue
            failures, reachable = self._smtp_batch(batch)
            transient += failures
            if not reachable:   # the server is down: stop here; the rest stays due for the retry
                return transient, False

    def _to_outbox(self, d: _Due) -> None:
        # Subscriber addresses: only the deployment's user may list or read them.
        folder = private_dirs(self.outbox_dir / "mail" / self.day.isoformat(), self.outbox_dir)
        built = self._built(d)
        if built is None:
            return
        msg, message_id = built
        path = folder / f"{d.subscriber_id:06d}-{d.lang}.eml"
        if not self._hand_over(d):
            return
        atomic_write(path, bytes(msg), private=True)  # a rerun after a crash rewrites the same file, never a second one
        self.crash("accepted")
        self._record(d, "outbox", message_id=message_id, outbox_path=str(path))
        self.report.outbox += 1

    def _smtp_batch(self, batch: list[_Due]) -> tuple[int, bool]:
        """One SMTP connection for the batch. Returns (transient failures with attempts left,
        server reachable?)."""
        smtp = self.smtp
        transient = 0
        client = None
        try:
            for d in batch:
                built = self._built(d)
                if built is None:
                    continue
                msg, message_id = built
                if client is None:   # first message, or the previous one broke the connection
                    try:
                        client = _connect(smtp)
                    except MailerConfigError:
                        raise
                    except (smtplib.SMTPException, OSError) as exc:
                        error = f"cannot connect to {smtp.host}:{smtp.effective_port}: {type(exc).__name__}: {exc}"
                        self.report.errors.append(error)
                        # Nobody was reached: no attempt used. The whole claimed batch is released as
                        # failed (transient) so the retry pass / next run picks it up.
                        for rest in batch[batch.index(d):]:
                            self._record(rest, "failed", error, counts=False)
                            transient += 1
                        return transient, False
                if not self._hand_over(d):
                    continue
                try:
                    client.send_message(msg, from_addr=parseaddr(smtp.from_addr)[1], to_addrs=[d.email])
                except MailerConfigError:
                    raise
                except (smtplib.SMTPException, OSError) as exc:
                    error, permanent = _classify(exc, d.email)
                    # Servers quote the refused address ("550 5.1.1 <a@b>: unknown"); reports name the id.
                    error = without_address(error, d.email, d.subscriber_id)
                    self._record(d, "failed", error, permanent=permanent)
                    self.report.errors.append(f"subscriber {d.subscriber_id}: {error}")
                    if not permanent and d.attempts + 1 < smtp.max_attempts:
                        transient += 1
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
                self.crash("accepted")   # the window SMTP cannot close: accepted, not yet recorded
                self._record(d, "sent", message_id=message_id)
                self.report.sent += 1
        finally:
            _quit(client)
        return transient, True


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


def without_address(text: str, address: str, subscriber_id: int) -> str:
    """`text` with every occurrence of `address` (in any case) replaced by the subscriber's id."""
    if not address:
        return text
    return re.sub(re.escape(address), f"subscriber-{subscriber_id}", text, flags=re.IGNORECASE)


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
    crash_point: str | None = None,
    unsubscribe_url: str | None = None,
    now: datetime | None = None,
) -> DeliveryReport:
    """Seed the day's delivery rows (readers subscribed by the end of `day`) and deliver every due
    one under claims. Returns this run's counts, the day's totals, and `retryable`: deliveries a
    later run still has to do (the caller fails the run when it is not 0). `unsubscribe_url`:
    config.unsubscribe_url() (None: mailto: links). `crash_point` is the test-only crash hook
    (default: config.delivery_crash_point()). `now`: the clock readers' delivery times are read
    against (default: the database server's)."""
    report = DeliveryReport(mode=smtp.describe())
    if not smtp.configured and not smtp.outbox_only:
        active = conn.execute(db.load_sql("digest_active_recipients")).fetchone()[0]
        conn.commit()
        if active:
            raise OutboxRefused(
                f"no SMTP server configured (NEWSDEDUP_SMTP_HOST) but {active} active subscribers: refusing to "
                "deliver their digests to outbox files only; set NEWSDEDUP_SMTP_HOST, or NEWSDEDUP_OUTBOX_ONLY=true "
                "if outbox files are the intended delivery")
    seed_deliveries(conn, day, fallback_lang)
    # A test-only switch (a process-control hook like crashpoints.py), so read here, not passed in.
    crash = _CrashHook(crash_point if crash_point is not None else deployment.delivery_crash_point())
    run = _Run(conn, day, digests, smtp, outbox_dir, report, crash, unsubscribe_url, now)
    run.run(sleep)
    report.failed = sum(1 for status in run.outcome.values() if status.startswith("failed"))
    report.permanent_failures = sum(1 for status in run.outcome.values() if status == "failed_permanent")
    now = run.clock()
    # A concurrent run's claim in flight would read as pending here: wait for it to commit first.
    conn.execute(db.load_sql("digest_claim_gate_wait"), {"lock_space": LOCK_SPACE})
    pending, failed, abandoned, scheduled = conn.execute(db.load_sql("digest_deliveries_outstanding"), {
        "day": day, "day_end": day_end(day), "digest_ids": list(digests), "max_attempts": smtp.max_attempts,
        "lock_space": LOCK_SPACE, "now": now}).fetchone()
    conn.commit()
    report.retryable = int(pending) + int(failed) + int(abandoned)
    report.scheduled = int(scheduled)
    report.totals = day_totals(conn, day)
    return report


def seed_deliveries(conn: psycopg.Connection, day: date, fallback_lang: str) -> int:
    """Create the day's delivery rows not yet there: per reader subscribed by the day's end, their
    edition's digest (else their language's plain one, else `fallback_lang`'s) and when it is due.
    Concurrent runs insert the same rows; the first wins. Returns the rows created."""
    rendered = {(lang, edition): digest_id for lang, edition, digest_id in
                conn.execute(db.load_sql("digest_day_editions"), {"day": day})}
    columns: dict[str, list] = {k: [] for k in ("subscriber_ids", "digest_ids", "emails", "langs", "due_at",
                                                 "local_days")}
    for sub_id, address, lang, also_reads, categories, countries, at, zone in conn.execute(
            db.load_sql("digest_subscribers_of_day"), {"day_end": day_end(day)}):
        edition = Edition(lang, tuple(also_reads), tuple(categories), tuple(countries))
        chosen = next(((lg, key) for lg, key in ((lang, edition.key), (lang, ""), (fallback_lang, ""))
                       if (lg, key) in rendered), None)
        if chosen is None:
            continue
        try:
            due = delivery_moment(day, at, zone)
        except (ZoneInfoNotFoundError, ValueError):   # a zone the system no longer knows: as UTC
            zone, due = "UTC", delivery_moment(day, at, "UTC")
        for key, value in (("subscriber_ids", sub_id), ("digest_ids", rendered[chosen]), ("emails", address),
                           ("langs", chosen[0]), ("due_at", due), ("local_days", local_day(due, zone))):
            columns[key].append(value)
    created = conn.execute(db.load_sql("digest_deliveries_seed"), {"day": day, **columns}).rowcount
    conn.commit()
    return created


def days_due(conn: psycopg.Connection, now: datetime | None = None) -> list[tuple[date, datetime]]:
    """(day, latest due time) of the days with deliveries whose local delivery time has come and
    that no run has sent yet (default `now`: the database server's clock)."""
    if now is None:
        now = conn.execute(db.load_sql("server_clock")).fetchone()[0]
    rows = [(day, latest) for day, latest in conn.execute(db.load_sql("digest_days_due"), {"now": now})]
    conn.commit()
    return rows


def day_end(day: date) -> datetime:
    """The end of the UTC day: a reader subscribed before it receives that day's digest."""
    return datetime.combine(day, day_time(0), tzinfo=UTC) + timedelta(days=1)


def day_totals(conn: psycopg.Connection, day: date) -> dict[str, int]:
    totals: dict[str, int] = {}
    for status, permanent, count in conn.execute(db.load_sql("digest_delivery_counts"), {"day": day}):
        key = f"{status}_permanent" if (status == "failed" and permanent) else status
        totals[key] = totals.get(key, 0) + int(count)
    conn.commit()
    return totals
