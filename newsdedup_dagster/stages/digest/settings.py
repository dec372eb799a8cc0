"""The digest stage's settings: what a digest selects and renders (built by
config.digest_settings()) and how it is mailed (built by config.mail_settings())."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import ClassVar

from newsdedup_dagster.shared.settings import check_language_codes, plain_number, setting

SECURITY_MODES = ("starttls", "ssl", "none")
DEFAULT_PORTS = {"starttls": 587, "ssl": 465, "none": 25}


@dataclass(frozen=True)
class DigestSettings:
    """The digest stage's settings (config.digest_settings()): the selection rules of
    stages/digest/select.py, the languages rendered and whether backfills may send."""

    CALIBRATION: ClassVar[str] = "digest"  # its section in the calibration file

    # 10 stories: a digest a reader finishes in a few minutes.
    max_stories: int = setting(10, env="NEWSDEDUP_DIGEST_MAX_STORIES", doc="stories in a digest")
    max_per_event: int = setting(1, calibrated=True, was="NEWSDEDUP_DIGEST_MAX_PER_EVENT", doc="stories of one event in a digest")
    # 3 of 10 from one country keeps a national news burst from filling the digest; 0 = off.
    max_per_region: int = setting(3, calibrated=True, was="NEWSDEDUP_DIGEST_MAX_PER_REGION",
                                  doc="stories of one country in a digest; 0 = no limit")
    min_significance: float = setting(0.0, calibrated=True, was="NEWSDEDUP_DIGEST_MIN_SIGNIFICANCE",
                                      doc="stories below this significance are left out")
    # Languages rendered besides every language an active subscriber asked for; empty = the pivot
    # language and the story translation languages (stages/digest/build.py: digest_langs).
    langs: tuple[str, ...] = setting((), env="NEWSDEDUP_DIGEST_LANGS",
                                     shown="pivot + translation + subscribers' languages",
                                     doc="rendered languages, comma-separated")
    # Backfill runs render only, unless this (or the run's allow_backfill_send) is set.
    allow_backfill_send: bool = setting(False, env="NEWSDEDUP_DIGEST_ALLOW_BACKFILL_SEND",
                                        doc="backfills render but never send unless set")

    def __post_init__(self) -> None:
        if self.max_stories < 1 or self.max_per_event < 1 or self.max_per_region < 0:
            raise ValueError("digest selection: max_stories and max_per_event must be >= 1, max_per_region >= 0")
        check_language_codes("NEWSDEDUP_DIGEST_LANGS", self.langs)    # each names an outbox file


@dataclass(frozen=True)
class SmtpSettings:
    CALIBRATION: ClassVar[str] = "smtp"  # its section in the calibration file

    host: str | None = setting(None, env="NEWSDEDUP_SMTP_HOST", shown="unset = outbox only", doc="SMTP server")
    port: int | None = setting(None, env="NEWSDEDUP_SMTP_PORT", zero_is_default=True,
                               shown="by security: 587, 465, 25", doc="SMTP port")
    security: str = setting("starttls", env="NEWSDEDUP_SMTP_SECURITY", choices=SECURITY_MODES,
                            doc="`starttls`, `ssl` or `none`")
    user: str | None = setting(None, env="NEWSDEDUP_SMTP_USER", doc="SMTP login")
    password: str | None = setting(None, env="NEWSDEDUP_SMTP_PASSWORD", secret=True, doc="its password")
    from_addr: str = setting("newsdedup <digest@localhost>", env="NEWSDEDUP_SMTP_FROM", doc="sender address")
    # Providers cap messages per session.
    batch_size: int = setting(50, calibrated=True, was="NEWSDEDUP_SMTP_BATCH_SIZE", zero_is_default=True,
                              doc="recipients per SMTP connection (and per claim)")
    timeout_s: float = setting(30.0, calibrated=True, was="NEWSDEDUP_SMTP_TIMEOUT", zero_is_default=True,
                               doc="seconds per SMTP command")
    # Per recipient, across runs (an unreachable server uses none).
    max_attempts: int = setting(3, calibrated=True, was="NEWSDEDUP_SMTP_MAX_ATTEMPTS", zero_is_default=True,
                                doc="tries per recipient (an unreachable server uses none)")
    retry_delay_s: float = setting(2.0, calibrated=True, was="NEWSDEDUP_SMTP_RETRY_DELAY", bounds=(0.0, 3600.0),
                                   doc="seconds before a run's second pass over the recipients its first pass "
                                       "could not reach (after reconnecting)")
    # A claim lapses after this long without progress (its run is alive but stuck); renewed at
    # every hand-over. Well above one SMTP transaction (a few timeouts), so no live claim lapses.
    lease_s: float = setting(600.0, calibrated=True, was="NEWSDEDUP_SMTP_LEASE", zero_is_default=True,
                             doc="a delivery claim lapses after this long without progress, seconds (claims of "
                                 "a crashed run are taken over at once)")
    outbox_only: bool = setting(False, env="NEWSDEDUP_OUTBOX_ONLY",
                                doc="no SMTP host on purpose: subscribers' digests become `.eml` files (without "
                                    "it, that is refused while active subscribers exist)")
    # Deliveries left to do after a run (server down, 4xx): the step is retried this many times,
    # waiting outage_delay_s, then twice that, ... (5 + 10 + 20 min rides out a half-hour outage).
    outage_retries: int = setting(3, calibrated=True, was="NEWSDEDUP_SMTP_OUTAGE_RETRIES",
                                  doc="deliveries left to do (server down, 4xx): the step is retried this often")
    outage_delay_s: float = setting(300.0, calibrated=True, was="NEWSDEDUP_SMTP_OUTAGE_DELAY", zero_is_default=True,
                                    doc="first wait before such a retry, seconds, doubling")

    def __post_init__(self) -> None:
        if self.security not in SECURITY_MODES:
            raise ValueError(f"NEWSDEDUP_SMTP_SECURITY={self.security!r}: expected one of {', '.join(SECURITY_MODES)}")
        if self.batch_size < 1 or self.max_attempts < 1:
            raise ValueError("smtp.batch_size and smtp.max_attempts must be >= 1")
        if self.outage_retries < 0 or self.outage_delay_s < 0:
            raise ValueError("smtp.outage_retries and smtp.outage_delay_s must be >= 0")
        if self.security == "none" and (self.user or self.password) and self.host and not is_loopback_host(self.host):
            raise ValueError(
                f"NEWSDEDUP_SMTP_SECURITY=none with NEWSDEDUP_SMTP_USER/NEWSDEDUP_SMTP_PASSWORD would send the login "
                f"in clear to {self.host}: set NEWSDEDUP_SMTP_SECURITY=starttls or ssl (plain SMTP with a login is "
                "accepted only to a loopback host: localhost, 127.0.0.0/8, ::1)")
        if self.lease_s < 3 * self.timeout_s:
            raise ValueError(f"smtp.lease_s={plain_number(self.lease_s)} s must be at least 3 x "
                             f"smtp.timeout_s ({plain_number(self.timeout_s)} s): a live claim must not "
                             "lapse during one transaction")

    @property
    def configured(self) -> bool:
        return bool(self.host)

    @property
    def effective_port(self) -> int:
        return self.port or DEFAULT_PORTS[self.security]

    def describe(self) -> str:
        """For metadata and logs: never the password."""
        if not self.configured:
            return "outbox files (no NEWSDEDUP_SMTP_HOST configured" + (", NEWSDEDUP_OUTBOX_ONLY set)" if self.outbox_only else ")")
        user = f"{self.user}@" if self.user else ""
        return f"smtp://{user}{self.host}:{self.effective_port} ({self.security})"


def is_loopback_host(host: str) -> bool:
    """`localhost` or a loopback address literal. No other name counts and none is resolved: a
    name's address can change after the check (`localhost` comes from the hosts file; names under
    `.localhost` may be sent to DNS by the resolver)."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
