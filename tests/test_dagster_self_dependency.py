"""Why the hourly assets say "reads its previous hour" with a tag, not a self-dependency: the Dagster
version this project pins (1.13.27) splits a backfill of a subsettable multi-asset whose assets
include a self-dependent one into several runs ("Self-dependant assets cannot be materialized in the
same run as other assets", dagster/_core/execution/asset_backfill.py,
`_get_cant_run_because_of_parent_reason`), so the upstream asset would be computed over the whole
range before the downstream one started, not hour by hour. The same backfill with the dependency
said by a tag is one run. Shown with the real daemon and webserver at Dagster's default intervals
on a two-asset code location (tests/data/self_dependency/definitions.py). Should a Dagster upgrade
stop splitting, this test fails: then the hourly assets can declare their self-dependencies."""

from __future__ import annotations

from pathlib import Path

import dagster
import pytest
from dagster_deployment import DagsterDeployment

pytestmark = [pytest.mark.slow, pytest.mark.daemon]

CODE = Path(__file__).parent / "data" / "self_dependency" / "definitions.py"
HOURS = [f"2026-11-02-{hour:02d}:00" for hour in range(3)]


def _runs_of(dep: DagsterDeployment, backfill_id: str) -> list[set[str]]:
    from dagster import RunsFilter

    instance = dep.instance()
    runs = instance.get_runs(filters=RunsFilter(tags={"dagster/backfill": backfill_id}))
    return [{key.to_user_string() for key in run.asset_selection or ()} for run in runs]


def test_a_self_dependency_splits_the_backfill_of_a_subsettable_multi_asset(tmp_path, database_url):
    assert dagster.__version__ == "1.13.27", "the behaviour below was seen on 1.13.27: check it again"
    with DagsterDeployment(tmp_path, database_url, code=["-f", str(CODE)]) as dep:
        tagged = dep.launch_backfill(["tagged_upstream", "tagged_downstream"], HOURS)
        assert dep.wait_for_backfill(tagged, timeout=600) == "COMPLETED_SUCCESS", dep.log_tail()
        declared = dep.launch_backfill(["declared_upstream", "declared_downstream"], HOURS)
        assert dep.wait_for_backfill(declared, timeout=600) == "COMPLETED_SUCCESS", dep.log_tail()
        tagged_runs, declared_runs = _runs_of(dep, tagged), _runs_of(dep, declared)
    # The tag: one run computes both assets over the three hours.
    assert tagged_runs == [{"tagged_upstream", "tagged_downstream"}]
    # The self-dependency: more than one run, none holding both assets.
    assert len(declared_runs) > 1, declared_runs
    assert all(run != {"declared_upstream", "declared_downstream"} for run in declared_runs), declared_runs
