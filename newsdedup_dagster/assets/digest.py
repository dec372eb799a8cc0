"""`digest` (daily): select the day's top stories, render HTML + text per language, store them in
`digests` and under the outbox directory, and deliver to subscribers (SMTP, or outbox files).

Backfills render but never send, unless the run config sets `allow_backfill_send: true` (or
NEWSDEDUP_DIGEST_ALLOW_BACKFILL_SEND=1): a backfill run carries the `dagster/backfill` tag. Any run
of a day older than deployment.digest_send_max_age_days (UTC, default 2: a single-partition run of a
past day from the UI or by hand) renders only, unless the deployment sets
NEWSDEDUP_DIGEST_ALLOW_OLD_SEND (run config cannot); a day is mailed only to readers subscribed by
its end.

Delivery outcome -> run outcome: deliveries left to do (server unreachable, 4xx with attempts
left) are recorded first, then the step asks for a retry (`RetryRequested`, outage_retries times
with a doubling delay: a mail outage outlasts the generic retry policy's minutes) and finally
fails the run, so a retry or any later run of the day delivers them; a configuration error (bad login, no SMTP host while
subscribers exist) fails without retries. Permanent refusals (5xx) are recorded, not retried,
and do not fail the run.
"""

from datetime import UTC, date, datetime, timedelta

from dagster import (
    AssetExecutionContext,
    AssetSelection,
    AutomationCondition,
    Backoff,
    DefaultSensorStatus,
    Failure,
    FreshnessPolicy,
    MaterializeResult,
    MetadataValue,
    RetryPolicy,
    RetryRequested,
    RunRequest,
    SensorEvaluationContext,
    asset,
    sensor,
)
from pydantic import Field

from newsdedup_dagster import config as app_config
from newsdedup_dagster.assets.common import OWNERS, ROW_COUNT
from newsdedup_dagster.assets.run_options import RunOptions, language_type
from newsdedup_dagster.partitions import DAILY_PARTITIONS
from newsdedup_dagster.resources import LLMResource, MailerResource, PostgresResource
from newsdedup_dagster.stages.digest.build import digest_langs, render_day
from newsdedup_dagster.stages.digest.send import DeliveryReport, MailerConfigError, days_due, deliver_day

__all__ = ["MailerResource", "digest", "digest_deliveries_due", "send_decision"]  # MailerResource lives in resources.py

BACKFILL_TAG = "dagster/backfill"


# Day D's digest is requested once, as soon as D is over (its daily partition exists) AND every hour of
# D of events and story_translations is materialised with its blocking checks passed: a late or
# failed hour delays the digest instead of leaving its stories out. `missing` makes it once per day;
# a failed digest waits for an operator (the run-failure sensor tells them) instead of looping.
DIGEST_AUTOMATION = (
    AutomationCondition.in_latest_time_window()
    & AutomationCondition.missing()
    & ~AutomationCondition.in_progress()
    & ~AutomationCondition.execution_failed()
    & ~AutomationCondition.any_deps_missing()
    & ~AutomationCondition.any_deps_in_progress()
    & AutomationCondition.all_deps_blocking_checks_passed()
).with_label("day complete, blocking checks passed, not yet built")
# Expected between 00:00 and 03:00 UTC every day.
DIGEST_FRESHNESS = FreshnessPolicy.cron(deadline_cron="0 3 * * *", lower_bound_delta=timedelta(hours=3))


class DigestConfig(RunOptions):
    send: bool = Field(True, description="true or false")
    # Backfills never mail readers about old days unless this is set for the run.
    allow_backfill_send: bool = Field(False, description="true or false")
    # Overrides the rendered languages (langs name files under the outbox: codes only).
    langs: list[language_type()] | None = Field(  # type: ignore[valid-type]
        None, description="languages this deployment publishes; unset: configured and subscribed languages")

    @classmethod
    def run_languages(cls, llm_settings) -> tuple[str, ...]:
        # The pivot and translation languages come from the llm resource, as for story_scores.
        return tuple(dict.fromkeys([*app_config.published_languages(), llm_settings.pivot_lang,
                                    *llm_settings.translation_langs, *app_config.digest_settings().langs]))


def send_decision(send: bool, is_backfill: bool, allow_backfill_send: bool, age_days: int = 0,
                  max_age_days: int = 2, allow_old_send: bool = False) -> tuple[bool, str | None]:
    """(send?, reason when not) — pure, for the asset and its tests. `age_days`: today (UTC) minus
    the digest's day; `max_age_days`, `allow_old_send`: config.digest_send_age()."""
    if not send:
        return False, "sending disabled in run config (send: false)"
    if is_backfill and not allow_backfill_send:
        return False, "backfill run: rendered only (set allow_backfill_send: true to send)"
    if age_days > max_age_days and not allow_old_send:
        return False, (f"the day is {age_days} days old, more than deployment.digest_send_max_age_days={max_age_days}: "
                       "rendered only (a deployment that means to mail it sets NEWSDEDUP_DIGEST_ALLOW_OLD_SEND=true)")
    return True, None


def _counts_table(report: DeliveryReport | None) -> dict:
    totals = report.totals if report else {}
    return {
        "sent": MetadataValue.int(totals.get("sent", 0)),
        "failed": MetadataValue.int(totals.get("failed", 0) + totals.get("failed_permanent", 0)),
        "outbox": MetadataValue.int(totals.get("outbox", 0)),
        "pending": MetadataValue.int(totals.get("pending", 0) + totals.get("sending", 0)),
        # of those, waiting for their readers' local delivery time (digest_deliveries_due sends them)
        "scheduled": MetadataValue.int(report.scheduled if report else 0),
    }


@asset(
    name="digest",
    partitions_def=DAILY_PARTITIONS,
    # Daily -> hourly: day D depends on the 24 hours of D of both assets.
    deps=["events", "story_translations"],
    group_name="digest",
    owners=OWNERS,
    kinds={"postgres", "email"},
    automation_condition=DIGEST_AUTOMATION,
    freshness_policy=DIGEST_FRESHNESS,
    pool="newsdedup_digest",
    config_schema=DigestConfig.config_schema(),
    # Twice the hourly step's delay: a failed send is most often the SMTP server, slower to come back.
    retry_policy=RetryPolicy(max_retries=2, delay=2 * app_config.step_retry_delay(), backoff=Backoff.EXPONENTIAL),
    description="The day's top stories (significance, event and region diversity) rendered per language "
                "as HTML + text, stored in `digests` and the outbox, and delivered to subscribers.",
)
def digest(context: AssetExecutionContext, postgres: PostgresResource, mailer: MailerResource,
           llm: LLMResource) -> MaterializeResult:
    llm_settings = llm.settings()
    config = DigestConfig.from_op_config(context.op_config, DigestConfig.run_languages(llm_settings))
    day = date.fromisoformat(context.partition_key)
    is_backfill = context.run.tags.get(BACKFILL_TAG) is not None
    base = app_config.digest_settings()
    run_langs = list(dict.fromkeys(config.langs)) if config.langs else None
    settings = app_config.merged(base, allow_backfill_send=config.allow_backfill_send or None,
                                 langs=tuple(run_langs) if run_langs else None)
    max_age_days, allow_old_send = app_config.digest_send_age()
    age_days = (datetime.now(UTC).date() - day).days
    do_send, skip_reason = send_decision(config.send, is_backfill, settings.allow_backfill_send, age_days,
                                         max_age_days, allow_old_send)
    outbox = mailer.outbox()
    report: DeliveryReport | None = None
    with postgres.connection() as conn:
        # Run config's langs replace the configured and subscribed languages; else both are rendered.
        langs = list(settings.langs) if config.langs else digest_langs(conn, settings, llm_settings)
        result = render_day(conn, day, langs, settings, outbox_dir=outbox)
        if do_send:
            try:   # a configuration error is not retried: it would fail again the same way
                smtp = mailer.smtp_settings()
                unsubscribe_url = app_config.unsubscribe_url()
            except ValueError as exc:
                raise Failure(description=f"digest {day}: {exc}", allow_retries=False) from None
            try:
                report = deliver_day(conn, day, result.by_digest_id(), smtp, outbox, fallback_lang=llm_settings.pivot_lang,
                                     unsubscribe_url=unsubscribe_url)
            except MailerConfigError as exc:
                raise Failure(description=f"digest {day}: {exc}", allow_retries=False) from None
            if report.failed:
                context.log.warning("digest %s: %d deliveries failed: %s", day, report.failed, report.errors[:5])
            if report.scheduled:
                context.log.info("digest %s: %d editions wait for their readers' local delivery time "
                                 "(the digest_deliveries_due sensor runs the day again then)", day, report.scheduled)
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
            # A run told not to send says so; a day held back for its age is a warning.
            chosen = not config.send or (is_backfill and not settings.allow_backfill_send)
            (context.log.info if chosen else context.log.warning)("digest %s: not sending (%s)", day, skip_reason)

    preview_lang = llm_settings.pivot_lang if llm_settings.pivot_lang in result.files else next(iter(result.files), None)
    preview = result.files[preview_lang].rendered.markdown if preview_lang else "_nothing rendered_"
    delivery_mode = (report.mode if report else f"not sent: {skip_reason}")
    metadata = {
        ROW_COUNT: len(result.files),
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


@sensor(
    name="digest_deliveries_due",
    asset_selection=AssetSelection.assets("digest"),
    minimum_interval_seconds=300,
    default_status=DefaultSensorStatus.RUNNING,
    description="Runs digest[D] again when readers' editions of D fall due at their local delivery time.",
)
def digest_deliveries_due(context: SensorEvaluationContext, postgres: PostgresResource):
    with postgres.connection() as conn:
        due = days_due(conn)
    for day, latest in due:
        # One run per day and batch of due times: a failed run is not launched again in a loop
        # (the failure alert tells the operator); readers falling due later make a new key.
        yield RunRequest(run_key=f"digest-{day.isoformat()}-{latest:%Y%m%dT%H%M}", partition_key=day.isoformat())


ASSETS = [digest]
SENSORS = [digest_deliveries_due]
