"""Stage by stage, as an operator does it from the Dagster UI (its GraphQL mutations, the real daemon
at Dagster's default intervals): a backfill of every hourly asset, then of `stories` alone after a
change of the clustering thresholds, then of a subset of three, then "Materialize" on one asset for
one hour. Each computes exactly the selected assets' hours, in one run, and leaves the others alone;
the stories rebuilt alone are those of a fresh run of every asset at the new thresholds.
"""

from __future__ import annotations

import time

import pytest
from dagster import AssetKey, AssetRecordsFilter, DagsterInstance, RunsFilter
from dagster_deployment import LAUNCH_BACKFILL, DagsterDeployment
from test_hourly_chain import _database, _drop

from newsdedup_dagster.assets.hourly import HOURLY_OP, STAGES, hourly_run_config
from newsdedup_dagster.definitions import HOURLY_JOB_NAME, defs
from newsdedup_dagster.instance import QUIET_RUN_CONFIG
from newsdedup_dagster.resources import PostgresResource, deployment_resources
from newsdedup_dagster.shared import db

pytestmark = [pytest.mark.slow, pytest.mark.daemon, pytest.mark.timeout(2400)]

HOURLY_ASSETS = [stage.key.to_user_string() for stage in STAGES]
HOURS = [f"2026-11-02-{h:02d}:00" for h in range(5, 11)]
# Stricter than the e5 defaults (0.40): fewer, smaller stories.
THRESHOLDS = {"item_threshold": 0.5, "story_threshold": 0.5}
SUBSET = ["story_scores", "story_translations", "events"]

LAUNCH_RUN = """
mutation Launch($executionParams: ExecutionParams!) {
  launchRun(executionParams: $executionParams) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}"""


def _backfill(dep, assets: list[str], run_config: dict | None = None) -> str:
    """The Materialize dialog's launch for a partition range of the selected assets."""
    params = {"assetSelection": [{"path": [a]} for a in assets], "partitionNames": HOURS, "fromFailure": False,
              "tags": [], **({"runConfigData": run_config} if run_config else {})}
    result = dep.graphql(LAUNCH_BACKFILL, {"backfillParams": params})["launchPartitionBackfill"]
    assert result["__typename"] == "LaunchBackfillSuccess", result
    status = dep.wait_for_backfill(result["backfillId"], timeout=1200)
    assert status in ("COMPLETED", "COMPLETED_SUCCESS"), f"{assets}: {status}\n{dep.log_tail()}"
    return result["backfillId"]


def _materializations(instance) -> dict[str, list[tuple[str, str]]]:
    """asset -> [(partition, run id)], in the order they were written."""
    out = {}
    for asset in HOURLY_ASSETS:
        records = instance.fetch_materializations(AssetRecordsFilter(asset_key=AssetKey(asset)), limit=1000).records
        out[asset] = [(r.partition_key, r.run_id) for r in sorted(records, key=lambda r: r.storage_id)]
    return out


def _runs_of(instance, backfill_id: str):
    return instance.get_runs(RunsFilter(tags={"dagster/backfill": backfill_id}))


def _new(before: dict, after: dict) -> dict[str, list[tuple[str, str]]]:
    return {asset: after[asset][len(before[asset]):] for asset in HOURLY_ASSETS if after[asset][len(before[asset]):]}


def _stories(url: str) -> set[frozenset[str]]:
    with db.connection(url) as conn:
        rows = conn.execute("SELECT story_id, array_agg(item_id ORDER BY item_id) FROM story_items GROUP BY 1").fetchall()
    return {frozenset(items) for _sid, items in rows}


def _fresh_run_stories(admin_url: str, tmp_path, monkeypatch) -> set[frozenset[str]]:
    """Every hourly asset over HOURS at THRESHOLDS in a new database: one ranged run, as a backfill."""
    name = "stage_by_stage_fresh"
    url = _database(admin_url, name)
    monkeypatch.setenv("NEWSDEDUP_FETCH_MODE", "replay")
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(tmp_path / "fresh-public"))
    tags = {"dagster/asset_partition_range_start": HOURS[0], "dagster/asset_partition_range_end": HOURS[-1],
            "dagster/backfill": "fresh"}
    with DagsterInstance.ephemeral() as instance:
        result = defs.resolve_job_def(HOURLY_JOB_NAME).execute_in_process(
            instance=instance, tags=tags, run_config={**QUIET_RUN_CONFIG, **hourly_run_config(stories=THRESHOLDS)},
            resources={**deployment_resources(), "postgres": PostgresResource(database_url=url)})
        assert result.success
    try:
        return _stories(url)
    finally:
        _drop(admin_url, url, name)


def test_one_asset_a_subset_and_all_of_them_from_the_ui(clean_db, tmp_path, monkeypatch):
    # `newsdedup dev` as an operator starts it: `dagster dev` (webserver and daemon at Dagster's
    # default intervals) with the instance file newsdedup writes.
    with DagsterDeployment(tmp_path / "deployment", clean_db, newsdedup_dev=True,
                           extra_env={"NEWSDEDUP_PUBLISH_DIR": str(tmp_path / "public")}) as dep:
        instance = dep.instance()

        # Every hourly asset, six hours: one run, hour H of each asset before hour H+1 of any.
        everything = _backfill(dep, HOURLY_ASSETS)
        runs = _runs_of(instance, everything)
        assert len(runs) == 1, [r.run_id for r in runs]
        first = _materializations(instance)
        assert {a: sorted(p for p, _r in first[a]) for a in HOURLY_ASSETS} == {a: HOURS for a in HOURLY_ASSETS}
        stories_default = _stories(clean_db)

        # `stories` alone at stricter thresholds (run config of the backfill): one run, six hours of
        # stories in time order, nothing else computed.
        alone = _backfill(dep, ["stories"], {"ops": {HOURLY_OP: {"config": {"stories": THRESHOLDS}}}})
        runs = _runs_of(instance, alone)
        assert len(runs) == 1 and runs[0].asset_selection == {AssetKey("stories")}, runs
        second = _materializations(instance)
        assert _new(first, second) == {"stories": [(h, runs[0].run_id) for h in HOURS]}
        stories_strict = _stories(clean_db)
        assert stories_strict != stories_default

        # Three assets: one run, exactly those three over the six hours, hour by hour.
        subset = _backfill(dep, SUBSET)
        runs = _runs_of(instance, subset)
        assert len(runs) == 1 and runs[0].asset_selection == {AssetKey(a) for a in SUBSET}, runs
        third = _materializations(instance)
        new = _new(second, third)
        assert set(new) == set(SUBSET)
        assert all([p for p, _r in new[a]] == HOURS for a in SUBSET), new

        # "Materialize" on one asset for one hour (the launchpad's mutation): that asset's hour only.
        selector = {"repositoryLocationName": "newsdedup_dagster.definitions", "repositoryName": "__repository__",
                    "jobName": "__ASSET_JOB", "assetSelection": [{"path": ["story_feeds"]}]}
        params = {"selector": selector, "executionMetadata": {"tags": [{"key": "dagster/partition", "value": HOURS[-1]}]}}
        launched = dep.graphql(LAUNCH_RUN, {"executionParams": params})["launchRun"]
        assert launched["__typename"] == "LaunchRunSuccess", launched
        run_id = launched["run"]["runId"]
        run = instance.get_run_by_id(run_id)
        for _ in range(300):
            run = instance.get_run_by_id(run_id)
            if run.is_finished:
                break
            time.sleep(2)
        assert run.is_success, dep.log_tail()
        assert _new(third, _materializations(instance)) == {"story_feeds": [(HOURS[-1], run_id)]}

    # The stories rebuilt alone are those of every asset run fresh at the new thresholds.
    assert stories_strict == _fresh_run_stories(clean_db, tmp_path, monkeypatch)
