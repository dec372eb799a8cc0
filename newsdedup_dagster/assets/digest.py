"""`digest` (daily): select the day's top stories, render HTML + text per language, store them in
`digests` and under the outbox directory, and deliver to subscribers (SMTP, or outbox files).

Backfills render but never send, unless the run config sets `allow_backfill_send: true` (or
NEWSDEDUP_DIGEST_ALLOW_BACKFILL_SEND=1): a backfill run carries the `dagster/backfill` tag.

Delivery outcome -> run outcome: deliveries left to do (server unreachable, 4xx with attempts
left) are recorded first, then the step asks for a retry (`RetryRequested`, outage_retries times
with a doubling delay: a mail outage outlasts the generic retry policy's minutes) and finally
fails the run, so a retry or any later run of the day delivers them; a configuration error (bad login, no SMTP host while
subscribers exist) fails without retries. Permanent refusals (5xx) are recorded, not retried,
and do not fail the run.
"""

import os
from datetime import date
from pathlib import Path
from typing import Optional

from dagster import (
    AssetExecutionContext,
    Backoff,
    Config,
    ConfigurableResource,
    Failure,
    RetryRequested,
    MaterializeResult,
    MetadataValue,
    RetryPolicy,
    asset,
)

from .. import config as app_config
from ..config import LLMSettings
from ..digest.build import render_day
from ..digest.select import SelectionSettings
from ..digest.send import DeliveryReport, MailerConfigError, SmtpSettings, deliver_day
from ..partitions import DAILY_PARTITIONS
from ..resources import PostgresResource

BACKFILL_TAG = "dagster/backfill"


class MailerResource(ConfigurableResource):
    """SMTP settings (resource key "mailer"). Fields left None come from NEWSDEDUP_SMTP_*; the
    password is never a config field (Dagster shows config in the UI): it is read at use from
    the environment variable named by `password_env`. No host = the outbox files are the
    delivery."""

    host: Optional[str] = None
    port: Optional[int] = None
    security: Optional[str] = None          # starttls | ssl | none
    user: Optional[str] = None
    password_env: str = "NEWSDEDUP_SMTP_PASSWORD"
    from_addr: Optional[str] = None
    batch_size: Optional[int] = None
    timeout_s: Optional[float] = None
    max_attempts: Optional[int] = None
    retry_delay_s: Optional[float] = None
    lease_s: Optional[float] = None
    outage_retries: Optional[int] = None
    outage_delay_s: Optional[float] = None
    outbox_dir: Optional[str] = None
    # No SMTP host on purpose: subscribers' digests are written as .eml files (else refused).
    outbox_only: Optional[bool] = None

    def smtp_settings(self) -> SmtpSettings:
        return SmtpSettings.from_env(
            host=self.host, port=self.port, security=self.security.lower() if self.security else None,
            user=self.user, password=os.environ.get(self.password_env) or None, from_addr=self.from_addr,
            batch_size=self.batch_size, timeout_s=self.timeout_s, max_attempts=self.max_attempts,
            retry_delay_s=self.retry_delay_s, lease_s=self.lease_s, outbox_only=self.outbox_only,
            outage_retries=self.outage_retries, outage_delay_s=self.outage_delay_s)

    def outbox(self) -> Path:
        return Path(self.outbox_dir).expanduser().resolve() if self.outbox_dir else app_config.outbox_dir()


class DigestConfig(Config):
    send: bool = True
    # Backfills never mail readers about old days unless this is set for the run.
    allow_backfill_send: bool = False
    langs: Optional[str] = None             # comma-separated override of the rendered languages


def _env_flag(name: str) -> bool:
    return (os.environ.get(name) or "").strip().lower() in ("1", "true", "yes", "on")


def send_decision(send: bool, is_backfill: bool, allow_backfill_send: bool) -> tuple[bool, Optional[str]]:
    """(send?, reason when not) — pure, for the asset and its tests."""
    if not send:
        return False, "sending disabled in run config (send: false)"
    if is_backfill and not allow_backfill_send:
        return False, "backfill run: rendered only (set allow_backfill_send: true to send)"
    return True, None


def _counts_table(report: Optional[DeliveryReport]) -> dict:
    totals = report.totals if report else {}
    return {
        "sent": MetadataValue.int(totals.get("sent", 0)),
        "failed": MetadataValue.int(totals.get("failed", 0) + totals.get("failed_permanent", 0)),
        "outbox": MetadataValue.int(totals.get("outbox", 0)),
        "pending": MetadataValue.int(totals.get("pending", 0) + totals.get("sending", 0)),
    }


@asset(
    name="digest",
    partitions_def=DAILY_PARTITIONS,
    deps=["events", "story_translations"],
    group_name="digest",
    kinds={"postgres", "email"},
    pool="newsdedup_digest",
    retry_policy=RetryPolicy(max_retries=2, delay=60, backoff=Backoff.EXPONENTIAL),
    description="The day's top stories (significance, event and region diversity) rendered per language "
                "as HTML + text, stored in `digests` and the outbox, and delivered to subscribers.",
)
def digest(context: AssetExecutionContext, config: DigestConfig, postgres: PostgresResource,
           mailer: MailerResource) -> MaterializeResult:
    day = date.fromisoformat(context.partition_key)
    is_backfill = context.run.tags.get(BACKFILL_TAG) is not None
    allow = config.allow_backfill_send or _env_flag("NEWSDEDUP_DIGEST_ALLOW_BACKFILL_SEND")
    do_send, skip_reason = send_decision(config.send, is_backfill, allow)
    smtp = mailer.smtp_settings()
    outbox = mailer.outbox()
    llm_settings = LLMSettings()
    langs = [x.strip() for x in config.langs.split(",") if x.strip()] if config.langs else None
    report: Optional[DeliveryReport] = None
    with postgres.connection() as conn:
        result = render_day(conn, day, langs, SelectionSettings(), outbox)
        if do_send:
            try:
                report = deliver_day(conn, day, result.by_digest_id(), smtp, outbox, fallback_lang=llm_settings.pivot_lang)
            except MailerConfigError as exc:
                raise Failure(description=f"digest {day}: {exc}", allow_retries=False) from None
            if report.failed:
                context.log.warning("digest %s: %d deliveries failed: %s", day, report.failed, report.errors[:5])
            if report.uncertain_resends:
                context.log.warning("digest %s: %d deliveries resent after a crash between acceptance and recording "
                                    "(those readers may have the digest twice)", day, report.uncertain_resends)
            if report.retryable:
                problem = (f"digest {day}: {report.retryable} deliveries still to do (recorded; a retry or the next "
                           f"run of this day sends them): {'; '.join(report.errors[:3])}")
                if context.retry_number < smtp.outage_retries:
                    wait = smtp.outage_delay_s * 2 ** context.retry_number
                    context.log.warning("%s; retrying in %g s", problem, wait)
                    raise RetryRequested(max_retries=smtp.outage_retries, seconds_to_wait=wait)
                raise Failure(description=problem, allow_retries=False,
                              metadata={"this_run": MetadataValue.json(report.as_metadata()), **_counts_table(report)})
        else:
            context.log.info("digest %s: not sending (%s)", day, skip_reason)

    preview_lang = llm_settings.pivot_lang if llm_settings.pivot_lang in result.files else next(iter(result.files), None)
    preview = result.files[preview_lang].rendered.markdown if preview_lang else "_nothing rendered_"
    delivery_mode = (report.mode if report else f"not sent: {skip_reason}")
    metadata = {
        "preview": MetadataValue.md(preview),
        "stories": MetadataValue.int(len(result.selected)),
        "candidate_stories": MetadataValue.int(result.candidates),
        "events": MetadataValue.int(len({s.event_id for s in result.selected if s.event_id})),
        "languages": MetadataValue.text(", ".join(result.files)),
        "html_path": MetadataValue.path(str(result.files[preview_lang].html_path)) if preview_lang else MetadataValue.text("-"),
        "outbox_dir": MetadataValue.path(str(outbox)),
        "delivery": MetadataValue.text(delivery_mode),
        "backfill": MetadataValue.bool(is_backfill),
        **_counts_table(report),
        "this_run": MetadataValue.json(report.as_metadata() if report else {"skipped_reason": skip_reason}),
    }
    return MaterializeResult(metadata=metadata)


ASSETS = [digest]
RESOURCES = {"mailer": MailerResource()}
