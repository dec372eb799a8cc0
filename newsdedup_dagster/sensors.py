"""Sensors: tell the operator when a run fails (mail through the mailer resource, or the outbox)."""

from __future__ import annotations

from collections import Counter

from dagster import DagsterEventType, DefaultSensorStatus, RunFailureSensorContext, run_failure_sensor

from newsdedup_dagster import alerts, config as app_config
from newsdedup_dagster.resources import MailerResource

# What Dagster raises around the asset's own error: "Error occurred while executing op" (Dagster*)
# and, when a retry policy (or RetryRequested) gave up, "Exceeded max_retries of N"
# (dagster/_core/execution/plan/execute_plan.py); each keeps the original as its cause.
WRAPPERS = ("Dagster", "RetryRequested")


def _user_error(error):
    """The error the asset raised, not Dagster's wrappers around it."""
    while error is not None and error.cause is not None and (error.cls_name or "").startswith(WRAPPERS):
        error = error.cause
    return error


def failed_run(context: RunFailureSensorContext) -> alerts.FailedRun:
    run = context.dagster_run
    # Every retry Dagster made is a STEP_UP_FOR_RETRY event in the run's log.
    retries = Counter(entry.step_key for entry in context.instance.all_logs(
        run.run_id, of_type=DagsterEventType.STEP_UP_FOR_RETRY))
    steps = []
    for event in context.get_step_failure_events():
        error = _user_error(event.event_specific_data.error if event.event_specific_data else None)
        line = alerts.first_line(error.message if error else event.message)
        step = event.step_key or "?"
        steps.append((step, line + alerts.retried(retries.get(step, 0))))
    ui = app_config.dagster_ui_url()
    job = run.job_name
    if job.startswith("__") and run.asset_selection:   # backfills and UI launches run the implicit asset job
        job = "assets " + ",".join(sorted(key.to_user_string() for key in run.asset_selection))
    return alerts.FailedRun(
        run_id=run.run_id, job_name=job, partition=run.tags.get("dagster/partition"),
        backfill_id=run.tags.get("dagster/backfill"), failed_steps=steps,
        run_error=alerts.first_line(context.failure_event.message if context.failure_event else ""),
        run_url=f"{ui.rstrip('/')}/runs/{run.run_id}" if ui else None,
    )


@run_failure_sensor(
    name="alert_on_run_failure",
    default_status=DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
    description="Mails NEWSDEDUP_ALERT_TO (or writes <outbox>/alerts/*.eml) for every failed run: "
                "run, partition, failing step and the first line of its error.",
)
def alert_on_run_failure(context: RunFailureSensorContext, mailer: MailerResource) -> None:
    where = alerts.deliver(failed_run(context), mailer.smtp_settings(), app_config.alert_recipients(), mailer.outbox(),
                           secrets=app_config.configured_secrets())
    context.log.info("run %s failed: alert %s", context.dagster_run.run_id, where)


SENSORS = [alert_on_run_failure]
