"""Run one hourly partition of the pipeline in this process (the crash suite's subprocess).

    python tests/crash_runner.py 2026-11-02-01:00 [--events]

Everything comes from the environment the suite sets (NEWSDEDUP_DATABASE_URL, the LLM endpoint,
and the test-only NEWSDEDUP_TEST_CRASH_AT read by newsdedup_dagster/shared/crashpoints.py). Exit code 0
when every step succeeded, 1 otherwise; a crash point ends the process with SIGKILL. Prints one
line per step failure Dagster retried (`up for retry: <step>: <asset>`, the hourly asset whose hour
failed, as the step's error names it), so a test can tell a run that succeeded on its retry from
one that never failed.
"""

from __future__ import annotations

import re
import sys

from dagster import DagsterInstance

from newsdedup_dagster.definitions import HOURLY_JOB_NAME, defs
from newsdedup_dagster.instance import QUIET_RUN_CONFIG


def main(partition_key: str, events: bool = False) -> int:
    job = defs.resolve_job_def(HOURLY_JOB_NAME)
    # --events: every Dagster event on stderr as it happens (a test watches for a step's failure)
    run_config = {"loggers": {"console": {"config": {"log_level": "DEBUG"}}}} if events else QUIET_RUN_CONFIG
    result = job.execute_in_process(partition_key=partition_key, instance=DagsterInstance.ephemeral(),
                                    raise_on_error=False, run_config=run_config)
    for event in result.all_events:
        if event.event_type_value == "STEP_UP_FOR_RETRY":
            error = getattr(event.event_specific_data, "error", None)
            failed = re.search(r"StageFailed: (\w+)\[", error.to_string()) if error else None
            print(f"up for retry: {event.step_key}: {failed.group(1) if failed else '?'}", flush=True)
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], events="--events" in sys.argv[2:]))
