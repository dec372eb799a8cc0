"""The digest waits until its day is complete, on a real deployment (`dagster-daemon run` at
Dagster's default intervals): with 23 of its 24 hours landed the automation sensor requests no
digest; once the last hour lands it requests one run, and only one."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from dagster import AssetCheckEvaluation, AssetKey, AssetMaterialization, RunsFilter
from dagster_deployment import DagsterDeployment

from newsdedup_dagster.assets.hourly import materialization_target

pytestmark = [pytest.mark.slow, pytest.mark.daemon, pytest.mark.timeout(3600)]


@pytest.fixture(scope="module")
def deployment(tmp_path_factory, database_url):
    with DagsterDeployment(tmp_path_factory.mktemp("deployment"), database_url) as dep:
        yield dep


def _report_hour(instance, hour: str) -> None:
    """An hour of events and story_translations landed with its blocking checks passed (reported to
    the instance as a run would; the daemon's automation sensor cannot tell the difference)."""
    for asset in ("events", "story_translations"):
        instance.report_runless_asset_event(AssetMaterialization(asset_key=asset, partition=hour))
    # Each result names the hour's materialisation it checked, as the hourly op's results do.
    target = materialization_target(instance, AssetKey("events"), hour)
    for check in ("story_in_at_most_one_event", "timeline_in_time_order", "no_gap_longer_than_quiet_period"):
        instance.report_runless_asset_event(
            AssetCheckEvaluation(asset_key=AssetKey("events"), check_name=check, passed=True, partition=hour,
                                 target_materialization_data=target))


def _digest_runs(instance, day: str):
    return [r for r in instance.get_runs(filters=RunsFilter(tags={"dagster/partition": day}))
            if AssetKey("digest") in (r.asset_selection or set())]


def test_digest_waits_for_every_hour_of_its_day(deployment):
    now = datetime.now(UTC)
    if now.hour == 23 and now.minute > 50:
        pytest.skip("too close to midnight UTC: the latest complete day would change during the test")
    day = (now - timedelta(days=1)).strftime("%Y-%m-%d")
    instance = deployment.instance()
    for hour in range(23):
        _report_hour(instance, f"{day}-{hour:02d}:00")
    # Two evaluations of the automation sensor (every 30 s) with hour 23 missing: no digest.
    time.sleep(75)
    assert _digest_runs(instance, day) == []

    _report_hour(instance, f"{day}-23:00")
    deadline = time.time() + 150
    while time.time() < deadline and not _digest_runs(instance, day):
        time.sleep(3)
    runs = _digest_runs(instance, day)
    assert len(runs) == 1, f"expected one digest run for {day}, got {len(runs)}:\n{deployment.log_tail()}"
    # It runs once: later evaluations do not request it again.
    time.sleep(70)
    assert len(_digest_runs(instance, day)) == 1
