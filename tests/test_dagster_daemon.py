"""The deployment's behaviour that only the daemon shows, at Dagster's default intervals: asset
backfills launched the way the UI launches them (GraphQL `launchPartitionBackfill`) are one run over
the range, which lands the hours in time order; a failed hour stops the hours after it and leaves
the hours before it materialised; re-executing from the failure finishes the range with the same
stories; a failed run is reported to the operator; run config aimed at the deployment is rejected.
The digest's wait for its whole day is in tests/test_dagster_daemon_digest.py (a deployment of
its own, so that under pytest-xdist it runs beside the backfills).

The failure is injected in the test's database only (a trigger refusing story memberships of one
hour); production code has no failure switch.
"""

from __future__ import annotations

import email
import email.policy
import time
from datetime import UTC, datetime

import pytest
from dagster import AssetKey, DagsterEventType, RunsFilter
from dagster_deployment import DagsterDeployment

from newsdedup_dagster.shared import db

pytestmark = [pytest.mark.slow, pytest.mark.daemon, pytest.mark.timeout(3600)]

HOURLY_ASSETS = ["raw_items", "item_duplicates", "article_texts", "item_embeddings", "stories", "story_scores",
                 "story_translations", "events", "story_feeds"]
HOURS = [f"2026-11-02-{h:02d}:00" for h in range(5, 11)]          # six hours of the sample day
FAILING_HOUR = HOURS[2]                                            # the third
SECRET = "sk-daemon-test-secret-value"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory, database_url):
    root = tmp_path_factory.mktemp("deployment")
    with DagsterDeployment(root, database_url, extra_env={"NEWSDEDUP_LLM_API_KEY": SECRET}) as dep:
        yield dep


def _truncate(url: str) -> None:
    from conftest import APP_TABLES

    with db.connection(url) as conn:
        conn.execute(f"TRUNCATE {APP_TABLES} RESTART IDENTITY CASCADE")
        conn.commit()


def _stories(url: str) -> set[frozenset[str]]:
    """The stories as sets of article ids (ids of stories are not compared, their contents are)."""
    with db.connection(url) as conn:
        rows = conn.execute("SELECT story_id, array_agg(item_id ORDER BY item_id) FROM story_articles GROUP BY 1").fetchall()
    return {frozenset(items) for _sid, items in rows}


def _materialized(instance, asset: str) -> dict[str, float]:
    """partition -> timestamp of its latest materialisation."""
    from dagster import AssetRecordsFilter

    out: dict[str, float] = {}
    records = instance.fetch_materializations(AssetRecordsFilter(asset_key=AssetKey(asset)), limit=1000).records
    for record in records:
        partition = record.partition_key
        out[partition] = max(out.get(partition, 0.0), record.timestamp)
    return out


# What the asset's partitions bar in the UI shows.
PARTITION_STATUS = """{ assetNodeOrError(assetKey: {path: ["stories"]}) { ... on AssetNode {
    assetPartitionStatuses { ... on TimePartitionStatuses { ranges { status startKey endKey } } } } } }"""


def _landing_order(instance, asset: str) -> list[str]:
    """The asset's partitions in the order their materialisations were written."""
    from dagster import AssetRecordsFilter

    records = instance.fetch_materializations(AssetRecordsFilter(asset_key=AssetKey(asset)), limit=1000).records
    return [r.partition_key for r in sorted(records, key=lambda r: r.storage_id)]


def _backfill_runs(instance, backfill_id: str):
    return instance.get_runs(filters=RunsFilter(tags={"dagster/backfill": backfill_id}))


def test_backfill_runs_hours_in_order_and_stops_at_a_failed_hour(deployment, database_url):
    instance = deployment.instance()
    _truncate(database_url)

    # 1. Uninterrupted: 6 hours of every hourly asset, one run, each asset's hours in time order,
    #    hour H of every asset before hour H+1 of any.
    backfill = deployment.launch_backfill(HOURLY_ASSETS, HOURS)
    assert deployment.wait_for_backfill(backfill) in ("COMPLETED", "COMPLETED_SUCCESS"), deployment.log_tail()
    runs = _backfill_runs(instance, backfill)
    assert len(runs) == 1, f"expected one ranged run, got {len(runs)}"
    assert runs[0].tags.get("dagster/asset_partition_range_start") == HOURS[0]
    assert runs[0].tags.get("dagster/asset_partition_range_end") == HOURS[-1]
    for asset in HOURLY_ASSETS:
        assert _landing_order(instance, asset) == HOURS, asset
    landed = {a: _materialized(instance, a) for a in ("story_feeds", "raw_items")}
    for earlier, later in zip(HOURS, HOURS[1:]):
        assert landed["story_feeds"][earlier] <= landed["raw_items"][later], \
            f"raw_items[{later}] landed before story_feeds[{earlier}]"
    reference = _stories(database_url)
    assert reference

    # 2. The same range again from scratch, with hour 3's clustering refused by the database.
    _truncate(database_url)
    instance.wipe_assets([AssetKey(a) for a in HOURLY_ASSETS])
    with db.connection(database_url) as conn:
        conn.execute(f"""
            CREATE OR REPLACE FUNCTION test_refuse_hour() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF NEW.partition_hour = '{FAILING_HOUR[:10]} {FAILING_HOUR[11:]}+00' THEN
                RAISE EXCEPTION 'injected failure for this hour';
              END IF;
              RETURN NEW;
            END $$;
            DROP TRIGGER IF EXISTS test_refuse_hour ON story_items;
            CREATE TRIGGER test_refuse_hour BEFORE INSERT ON story_items
              FOR EACH ROW EXECUTE FUNCTION test_refuse_hour();""")
        conn.commit()
    try:
        failing = deployment.launch_backfill(HOURLY_ASSETS, HOURS)
        status = deployment.wait_for_backfill(failing)
    finally:
        with db.connection(database_url) as conn:
            conn.execute("DROP TRIGGER IF EXISTS test_refuse_hour ON story_items; DROP FUNCTION IF EXISTS test_refuse_hour()")
            conn.commit()
    assert status in ("COMPLETED_FAILED", "FAILED"), status
    landed = _materialized(instance, "stories")
    assert set(landed) == set(HOURS[:2]), f"stories materialised for {sorted(landed)}"
    for asset in ("story_scores", "events"):
        assert not set(_materialized(instance, asset)) & set(HOURS[2:]), asset
    with db.connection(database_url) as conn:
        later = conn.execute("SELECT count(*) FROM story_items WHERE partition_hour >= %s",
                             (datetime.strptime(FAILING_HOUR, "%Y-%m-%d-%H:%M").replace(tzinfo=UTC),)).fetchone()[0]
    assert later == 0, "hours after the failed one were clustered without it"

    # The operator hears about it: run, partition, failing step, first line of the error.
    alert = _wait_for_alert(deployment, FAILING_HOUR)
    assert "step:      hourly_chain" in alert and f"stories[{FAILING_HOUR}]" in alert
    assert "injected failure for this hour" in alert
    # The step was retried (Dagster's retry policy) and each retry continued where the last attempt
    # stopped: no (asset, hour) before the failure was computed twice in the run, and the failed
    # hour is reported for no asset (an hour lands whole).
    (failed_run,) = _backfill_runs(instance, failing)
    retries = instance.all_logs(failed_run.run_id, of_type=DagsterEventType.STEP_UP_FOR_RETRY)
    assert len(retries) == 2, len(retries)
    landed_in_run = [(r.asset_materialization.asset_key.to_user_string(), r.asset_materialization.partition)
                     for r in instance.all_logs(failed_run.run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION)]
    assert len(landed_in_run) == len(set(landed_in_run)), "an (asset, hour) was materialised twice in one run"
    assert set(landed_in_run) == {(asset, hour) for asset in HOURLY_ASSETS for hour in HOURS[:2]}
    # The hours before the failure stay materialised; the UI shows the failed hour and those after it
    # as failed, not as never requested.
    assert set(_materialized(instance, "story_feeds")) == set(HOURS[:2])
    ranges = deployment.graphql(PARTITION_STATUS)["assetNodeOrError"]["assetPartitionStatuses"]["ranges"]
    shown = {(r["status"], r["startKey"], r["endKey"]) for r in ranges}
    assert ("MATERIALIZED", HOURS[0], HOURS[1]) in shown and ("FAILED", HOURS[2], HOURS[-1]) in shown, shown

    # 3. Re-execute from the failure: the range finishes, with the stories of the uninterrupted run.
    again = deployment.reexecute_backfill_from_failure(failing)
    assert deployment.wait_for_backfill(again) in ("COMPLETED", "COMPLETED_SUCCESS"), deployment.log_tail()
    assert set(HOURS) <= set(_materialized(instance, "stories"))
    assert _stories(database_url) == reference


def _wait_for_alert(deployment, partition: str, timeout: float = 150) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline:
        for path in sorted((deployment.outbox / "alerts").glob("*.eml")):
            text = email.message_from_bytes(path.read_bytes(), policy=email.policy.default).get_content()
            if partition in text:
                return text
        time.sleep(3)
    raise AssertionError(f"no alert for {partition} in {deployment.outbox / 'alerts'}:\n{deployment.log_tail()}")


# ------------------------------------------------------------- run config against the deployment
LAUNCH_RUN = """
mutation Launch($executionParams: ExecutionParams!) {
  launchRun(executionParams: $executionParams) {
    __typename
    ... on RunConfigValidationInvalid { errors { message } }
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
  }
}"""


@pytest.mark.parametrize("run_config", [
    {"resources": {"llm": {"config": {"base_url": "http://attacker.invalid/v1", "api_key_env": "HOME"}}}},
    {"resources": {"mailer": {"config": {"host": "attacker.invalid", "password_env": "HOME"}}}},
    {"resources": {"mailer": {"config": {"outbox_dir": "/tmp"}}}},
    {"ops": {"raw_items": {"config": {"sources_file": "/etc/passwd"}}}},
])
def test_launching_with_hostile_run_config_is_rejected(deployment, run_config):
    params = {"selector": {"repositoryLocationName": "newsdedup_dagster.definitions",
                           "repositoryName": "__repository__", "jobName": "hourly_pipeline"},
              "runConfigData": run_config, "executionMetadata": {"tags": [{"key": "dagster/partition",
                                                                          "value": HOURS[0]}]}}
    result = deployment.graphql(LAUNCH_RUN, {"executionParams": params})["launchRun"]
    assert result["__typename"] == "RunConfigValidationInvalid", result
    assert any("unexpected config entr" in e["message"] for e in result["errors"]), result["errors"]


def test_the_ui_shows_secret_names_never_values(deployment):
    query = """{ repositoriesOrError { ... on RepositoryConnection { nodes { name location { name }
                 allTopLevelResourceDetails { name description configFields { name } configuredValues { key value } } } } } }"""
    data = deployment.graphql(query)
    text = str(data)
    assert SECRET not in text
    resources = {r["name"]: r for repo in data["repositoriesOrError"]["nodes"] for r in repo["allTopLevelResourceDetails"]}
    assert {"llm", "mailer", "postgres", "embedder"} <= set(resources)
    assert resources["llm"]["configFields"] == []
