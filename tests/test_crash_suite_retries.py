"""A kill at any step loses nothing (tests/test_crash_suite.py), when Dagster's retry policy retries
the step in the same run: the database stops under a step, the step is retried once it is back,
and a rerun of the hour then leaves every table as an uninterrupted run does. The same fixtures
as the crash suite (a dedicated embedded PostgreSQL, the base state as a template database)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from test_crash_suite import (  # noqa: F401  (crash_server and suite are fixtures)
    HOUR,
    REPO,
    RETRY_POINTS,
    RUN_TIMEOUT_S,
    RUNNER,
    crash_server,
    create_database,
    differences,
    fingerprint,
    hour_env,
    paid_twice,
    run_ok,
    stop_database_at,
    suite,
)

from newsdedup_dagster.assets.hourly import HOURLY_OP


@pytest.mark.slow
@pytest.mark.parametrize("asset", list(RETRY_POINTS))
def test_step_retried_in_the_same_run_then_rerun_matches(suite, asset, tmp_path):  # noqa: F811  (the fixture)
    """The database stops under a step; Dagster's retry policy retries the step in the same run
    once it is back, and the run completes (every later step, the feeds included, runs on the
    retried step's output). A rerun of the hour then must change nothing an uninterrupted run
    would not have: before the page-hash fix, every publish_entries page hash of the hour differed."""
    server = suite["server"]
    url = create_database(server, f"crash_retry_{asset}", template="crash_base")
    point = RETRY_POINTS[asset]
    proc = subprocess.Popen([sys.executable, str(RUNNER), HOUR], cwd=REPO, text=True,
                            env=hour_env(url, suite["llm"], suite["home"], crash=f"{point}:pause",
                                         pause_dir=tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        stop_database_at(server, proc, point, tmp_path)
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and f"up for retry: {HOURLY_OP}: {asset}\n" in out, (out, err[-3000:])
    run_ok(hour_env(url, suite["llm"], suite["home"]))
    assert fingerprint(url) == suite["want"], differences(url, suite["reference"])
    assert paid_twice(url) == []
