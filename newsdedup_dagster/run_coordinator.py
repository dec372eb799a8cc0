"""The run coordinator newsdedup's instance file names: Dagster's queued run coordinator, which
first checks a submitted run's op config against the bounds its assets declare.

Dagster's config types refuse what they can (enums, `{"env": NAME}`, unknown keys) before a run
exists, but carry no bounds: a number out of range or a language the run's `llm` resource does
not publish would otherwise be refused only when the step starts. Every run launched from the UI
(GraphQL `launchRun`, `launchPartitionBackfill`), by a schedule, a sensor, a backfill or a
re-execution is submitted through the instance's coordinator, so one that fails the check is
marked failed here, with a message naming each field and what it accepts (never the value), and
is never queued: no run worker starts. In-process runs (`dagster asset materialize`,
`execute_in_process`) use no coordinator; their steps apply the same check
(`RunOptions.from_op_config`).
"""

from __future__ import annotations

from dagster import DagsterRun, QueuedRunCoordinator, SubmitRunContext

COORDINATOR_CLASS = "ValidatingRunCoordinator"


class ValidatingRunCoordinator(QueuedRunCoordinator):
    """`QueuedRunCoordinator` (same settings, same queue) that refuses out-of-bounds run config."""

    def submit_run(self, context: SubmitRunContext) -> DagsterRun:
        run = context.dagster_run
        refusal = run_refusal(run.run_config)
        if refusal is None:
            return super().submit_run(context)
        self._instance.report_run_failed(run, message=f"{refusal}; the run was not started")
        return self._instance.get_run_by_id(run.run_id) or run


def run_refusal(run_config) -> str | None:
    """Why the run config is refused, or None, against the code location's own run options and
    the llm settings its `llm` resource would give the run (this process has the deployment's
    environment, as the run worker it would launch does)."""
    # Imported on first use: every Dagster process builds the instance, few submit runs.
    from newsdedup_dagster.assets.run_options import run_config_refusal  # deferred on purpose: the code location
    from newsdedup_dagster.definitions import RUN_OPTIONS  # loads only in the process that submits runs,
    from newsdedup_dagster.resources import LLMResource  # not in every process that builds the instance

    return run_config_refusal(run_config, RUN_OPTIONS, lambda: LLMResource().settings())
