"""The code location as Dagster sees it: time order declared in the graph, stage groups, kinds,
owners, freshness, the digest's automation condition, and run config that must be rejected."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import dagster
import pytest
from dagster import (
    AssetKey,
    Backoff,
    DagsterEventType,
    DagsterInvalidConfigError,
    DagsterRunStatus,
    RetryPolicy,
    asset,
    materialize,
    validate_run_config,
)
from helpers import calibrate

from newsdedup_dagster.definitions import DAILY_JOB_NAME, HOURLY_JOB_NAME, defs
from newsdedup_dagster.resources import LLMResource
from newsdedup_dagster.shared import db

STAGE_GROUPS = {
    "raw_items": "ingest", "item_duplicates": "dedup", "item_embeddings": "clustering", "stories": "clustering",
    "story_scores": "llm", "story_translations": "llm", "events": "events", "story_feeds": "publish",
    "digest": "digest", "prune": "retention", "article_texts": "articles",
}
SELF_DEPENDENT = ("item_duplicates", "article_texts", "item_embeddings", "stories", "events")


@pytest.fixture(scope="module")
def graph():
    return defs.resolve_asset_graph()


def test_every_asset_has_its_stage_group_kinds_and_owners(graph):
    nodes = {key.to_user_string(): graph.get(key) for key in graph.get_all_asset_keys()}
    assert {name: node.group_name for name, node in nodes.items()} == STAGE_GROUPS
    for name, node in nodes.items():
        assert node.kinds, f"{name} has no kinds"
        assert node.owners, f"{name} has no owners"
    assert "openai" in nodes["story_scores"].kinds and "email" in nodes["digest"].kinds


@pytest.mark.parametrize("name", SELF_DEPENDENT)
def test_cross_hour_assets_say_they_read_their_previous_hour(graph, name):
    # Shown on the asset's page (tags) and in its description; not a self-dependency, which
    # Dagster's backfill daemon would run apart from the other assets (assets/hourly.py).
    node = graph.get(AssetKey(name))
    assert node.tags.get("newsdedup/reads_previous_hour") == "true"
    assert AssetKey(name) not in node.parent_keys


def test_no_hourly_asset_declares_a_self_dependency(graph):
    for key in graph.get_all_asset_keys():
        assert key not in graph.get(key).parent_keys, key
    for name in ("raw_items", "story_scores", "story_translations"):
        assert "newsdedup/reads_previous_hour" not in graph.get(AssetKey(name)).tags


def _upstream(mapping, key, child_partitions, parent_partitions) -> list[str]:
    subset = child_partitions.subset_with_partition_keys([key])
    result = mapping.get_upstream_mapped_partitions_result_for_partitions(subset, child_partitions, parent_partitions)
    return result.partitions_subset.get_partition_keys()


def test_digest_day_depends_on_all_24_hours_of_its_day(graph):
    digest = AssetKey("digest")
    assert graph.get(digest).parent_keys == {AssetKey("events"), AssetKey("story_translations")}
    events = AssetKey("events")
    keys = _upstream(graph.get_partition_mapping(digest, events), "2026-11-02", graph.get(digest).partitions_def,
                     graph.get(events).partitions_def)
    assert len(keys) == 24 and keys[0] == "2026-11-02-00:00" and keys[-1] == "2026-11-02-23:00"
    condition = repr(graph.get(digest).automation_condition)
    for part in ("any_deps_missing", "all_deps_blocking_checks_passed", "InLatestTimeWindow"):
        assert part in condition, part


def test_freshness_policies_on_stories_and_digest(graph):
    from dagster import FreshnessPolicy

    for name in ("stories", "digest"):
        assert isinstance(graph.get(AssetKey(name)).freshness_policy, FreshnessPolicy), name
    assert graph.get(AssetKey("stories")).freshness_policy.fail_window.to_timedelta().total_seconds() == 7200


def test_sensors_and_schedules_run_from_the_start():
    from dagster import DefaultSensorStatus

    repo = defs.get_repository_def()
    sensors = {s.name: s for s in repo.sensor_defs}
    assert {"digest_automation", "alert_on_run_failure"} <= set(sensors)
    assert all(sensors[n].default_status == DefaultSensorStatus.RUNNING for n in ("digest_automation", "alert_on_run_failure"))
    schedules = {s.name: s for s in repo.schedule_defs}
    assert set(schedules) == {"hourly_pipeline_schedule", "retention_schedule"}
    from dagster import DefaultScheduleStatus

    assert schedules["retention_schedule"].default_status == DefaultScheduleStatus.RUNNING


# --------------------------------------------------------------- run config nobody can turn
HOSTILE_RESOURCE_CONFIG = [
    ("llm", {"base_url": "http://attacker.invalid/v1"}),
    ("llm", {"api_key_env": "AWS_SECRET_ACCESS_KEY"}),
    ("llm", {"api_key": {"env": "AWS_SECRET_ACCESS_KEY"}}),
    ("mailer", {"host": "attacker.invalid"}),
    ("mailer", {"password_env": "AWS_SECRET_ACCESS_KEY"}),
    ("mailer", {"outbox_dir": "/etc"}),
    ("embedder", {"base_url": "http://attacker.invalid/v1"}),
    ("postgres", {"database_url": "postgresql://attacker.invalid/db"}),
]


@pytest.mark.parametrize("resource, config", HOSTILE_RESOURCE_CONFIG)
def test_run_config_cannot_set_resource_endpoints_secrets_or_directories(resource, config):
    for job_name in (HOURLY_JOB_NAME, DAILY_JOB_NAME):
        job = defs.resolve_job_def(job_name)
        if resource not in job.resource_defs:
            continue
        with pytest.raises(DagsterInvalidConfigError, match="unexpected config entr"):
            validate_run_config(job, {"resources": {resource: {"config": config}}})


@pytest.mark.parametrize("asset_name, config, message", [
    ("raw_items", {"sources_file": "/etc/passwd"}, "unexpected config entry"),
    ("raw_items", {"fetch_mode": "../../x"}, "fetch_mode"),
    ("digest", {"langs": ["en", "../../../tmp/x"]}, "langs"),
    ("story_feeds", {"output_dir": "/tmp/x"}, "unexpected config entry"),
    ("story_feeds", {"force": {"env": "HOME"}}, "force"),
])
def test_run_config_cannot_choose_paths(asset_name, config, message):
    from newsdedup_dagster.assets.hourly import hourly_run_config

    if asset_name == "digest":
        job, run_config = defs.resolve_job_def(DAILY_JOB_NAME), {"ops": {"digest": {"config": config}}}
    else:
        # An hourly asset's options are its section of the hourly op's config.
        job, run_config = defs.resolve_job_def(HOURLY_JOB_NAME), hourly_run_config(**{asset_name: config})
    with pytest.raises(DagsterInvalidConfigError, match=message):
        validate_run_config(job, run_config)


def test_harmless_run_config_still_accepted():
    from newsdedup_dagster.assets.hourly import hourly_run_config

    job = defs.resolve_job_def(HOURLY_JOB_NAME)
    validate_run_config(job, hourly_run_config(raw_items={"fetch_mode": "replay"}, stories={"later_partitions": "reset"}))
    validate_run_config(defs.resolve_job_def(DAILY_JOB_NAME),
                        {"ops": {"digest": {"config": {"send": False, "langs": ["en", "fr"]}}}})


def test_secret_is_bound_by_name_and_resolved_only_in_the_run(monkeypatch):
    """The deployment binds no secret: nothing in the code location's snapshot holds the
    value, and the run worker reads it when the resource is initialised."""
    from dagster import Definitions
    from dagster._core.remote_representation.external_data import RepositorySnap

    from newsdedup_dagster.resources import deployment_resources

    monkeypatch.setenv("NEWSDEDUP_LLM_API_KEY", "sk-test-value-that-must-not-leak")
    resources = deployment_resources()
    local = Definitions(assets=[key_length], resources={"llm": resources["llm"]})
    snap = RepositorySnap.from_def(local.get_repository_def())
    from dagster._serdes import serialize_value

    assert "sk-test-value-that-must-not-leak" not in serialize_value(snap)
    result = materialize([key_length], resources={"llm": resources["llm"]})
    assert result.output_for_node("key_length") == len("sk-test-value-that-must-not-leak")


@asset
def key_length(llm: LLMResource) -> int:
    return len(llm.settings().api_key or "")


# ------------------------------------------------------------------ ClusteringBusy -> retry
@pytest.mark.slow
def test_clustering_busy_requests_a_retry_instead_of_failing(clean_db, monkeypatch, tmp_path):
    from clustering_fixtures import H0, QUAKE_DAY1, insert_items, key

    from newsdedup_dagster.assets.hourly import HOURLY_OP, hourly_chain
    from newsdedup_dagster.instance import QUIET_RUN_CONFIG
    from newsdedup_dagster.resources import EmbedderResource, PostgresResource
    from newsdedup_dagster.stages.clustering.store import CLUSTER_LOCK_KEY

    monkeypatch.setenv("NEWSDEDUP_FETCH_MODE", "replay")
    resources = {"postgres": PostgresResource(database_url=clean_db), "embedder": EmbedderResource(),
                 "llm": LLMResource()}
    with db.connection(clean_db) as conn:
        insert_items(conn, QUAKE_DAY1, H0)
        conn.commit()
    calibrate(monkeypatch, tmp_path, clustering={"lock_timeout_s": 0.3}, deployment={"clustering_busy_wait": 1})
    holder = db.connect(clean_db, autocommit=True)
    holder.execute("SELECT pg_advisory_lock(%s)", (CLUSTER_LOCK_KEY,))
    def release_after_a_refused_attempt():
        # Wait until the run is queued on the lock, let its lock_timeout expire, then let go.
        with db.connect(clean_db, autocommit=True) as watcher:
            deadline = time.time() + 120
            while time.time() < deadline and not watcher.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").fetchone()[0]:
                time.sleep(0.05)
        time.sleep(0.8)
        holder.execute("SELECT pg_advisory_unlock(%s)", (CLUSTER_LOCK_KEY,))

    release = threading.Thread(target=release_after_a_refused_attempt)
    release.start()
    try:
        # The hour's chain: raw_items, item_duplicates and item_embeddings, then stories waits on the lock.
        result = materialize([hourly_chain], partition_key=key(H0), resources=resources, raise_on_error=False,
                             run_config=QUIET_RUN_CONFIG)
    finally:
        release.join()
        holder.close()
    types = [e.event_type for e in result.all_events if e.step_key == HOURLY_OP]
    assert DagsterEventType.STEP_UP_FOR_RETRY in types and DagsterEventType.STEP_FAILURE not in types
    assert result.success and result.dagster_run.status == DagsterRunStatus.SUCCESS
    # The retry continued with stories: each asset of the hour materialised once.
    materialized = [m.asset_key.to_user_string() for m in result.asset_materializations_for_node(HOURLY_OP)]
    assert sorted(materialized) == sorted(STAGE_GROUPS.keys() - {"digest", "prune"})


def test_step_retry_delay_is_the_deployments_setting():
    """The retry delays are fixed when the definitions load, from NEWSDEDUP_STEP_RETRY_DELAY: the
    hourly op's one policy and the digest's."""
    script = ("from newsdedup_dagster.definitions import defs; "
              "hourly = defs.resolve_job_def('hourly_pipeline').get_node_named('hourly_chain').definition; "
              "digest = defs.resolve_job_def('daily_digest').get_node_named('digest').definition; "
              "print(hourly.retry_policy.max_retries, hourly.retry_policy.delay, digest.retry_policy.delay)")
    for base in (7.0, 30.0):
        env = {**os.environ, "NEWSDEDUP_STEP_RETRY_DELAY": f"{base:g}"}
        if base == 30.0:
            env.pop("NEWSDEDUP_STEP_RETRY_DELAY")   # the default
        shown = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        assert shown.stdout.split() == ["2", f"{base}", f"{2 * base}"], shown.stderr[-2000:]


# ------------------------------------------------------------------ the op's one retry policy
# The definitions' policy waits NEWSDEDUP_STEP_RETRY_DELAY (30 s); these runs use the same policy
# with a wait short enough for a test.
SHORT_RETRY = RetryPolicy(max_retries=2, delay=0.05, backoff=Backoff.EXPONENTIAL)


def _flaky(stage, failures: int):
    """`stage` whose hour raises ConnectionError `failures` times, then computes as usual."""
    import dataclasses
    calls = []

    def materialize_hour(run, hour):
        calls.append(hour)
        if len(calls) <= failures:
            raise ConnectionError("server closed the connection unexpectedly")
        return stage.materialize_hour(run, hour)

    return dataclasses.replace(stage, materialize_hour=materialize_hour), calls


def _run_hour_with(monkeypatch, clean_db, swap: dict):
    from clustering_fixtures import H0, QUAKE_DAY1, insert_items, key

    from newsdedup_dagster.assets import hourly
    from newsdedup_dagster.instance import QUIET_RUN_CONFIG
    from newsdedup_dagster.resources import EmbedderResource, PostgresResource

    monkeypatch.setenv("NEWSDEDUP_FETCH_MODE", "replay")
    with db.connection(clean_db) as conn:
        insert_items(conn, QUAKE_DAY1, H0)
        conn.commit()
    monkeypatch.setattr(hourly, "STAGES", [swap.get(s.key.to_user_string(), s) for s in hourly.STAGES])
    resources = {"postgres": PostgresResource(database_url=clean_db), "embedder": EmbedderResource(),
                 "llm": LLMResource()}
    result = materialize([hourly.build_hourly_chain(SHORT_RETRY)], partition_key=key(H0), resources=resources,
                         raise_on_error=False, run_config=QUIET_RUN_CONFIG)
    retries = [e.event_specific_data for e in result.all_events if e.event_type == DagsterEventType.STEP_UP_FOR_RETRY]
    materialized = sorted(m.asset_key.to_user_string() for m in result.asset_materializations_for_node(hourly.HOURLY_OP))
    return result, retries, materialized, key(H0)


@pytest.mark.slow
@pytest.mark.parametrize("failures", [1, 3])
def test_a_failed_stage_fails_the_step_and_the_ops_policy_retries_it(clean_db, monkeypatch, failures):
    """story_scores' hour raises: the step fails with an error naming the asset and hour, Dagster's
    RetryPolicy retries it, the retry computes the hour again and lands every asset once; past the
    policy's max_retries the run fails with that error."""
    from newsdedup_dagster.assets import hourly

    flaky, calls = _flaky(hourly.stage_named("story_scores"), failures)
    result, retries, materialized, hour = _run_hour_with(monkeypatch, clean_db, {"story_scores": flaky})
    assert len(retries) == min(failures, SHORT_RETRY.max_retries)
    assert all(f"StageFailed: story_scores[{hour}]: ConnectionError" in r.error.to_string() for r in retries)
    if failures <= SHORT_RETRY.max_retries:
        assert result.success and len(calls) == failures + 1
        assert materialized == sorted(STAGE_GROUPS.keys() - {"digest", "prune"})
    else:
        assert not result.success and len(calls) == SHORT_RETRY.max_retries + 1
        failure = next(e for e in result.all_events if e.event_type == DagsterEventType.STEP_FAILURE)
        assert f"StageFailed: story_scores[{hour}]: ConnectionError" in failure.event_specific_data.error.to_string()
        assert materialized == []   # the hour's stages are reported together, or not at all


@pytest.mark.slow
def test_the_step_has_one_retry_budget_whichever_stage_failed(clean_db, monkeypatch):
    """story_scores fails once, then events once: the step's two retries are spent and the run
    succeeds; a third failure of any stage would fail it (one policy, not one budget per stage)."""
    from newsdedup_dagster.assets import hourly

    flaky_scores, score_calls = _flaky(hourly.stage_named("story_scores"), 1)
    flaky_events, event_calls = _flaky(hourly.stage_named("events"), 1)
    result, retries, materialized, _ = _run_hour_with(
        monkeypatch, clean_db, {"story_scores": flaky_scores, "events": flaky_events})
    failed = ["story_scores" if "StageFailed: story_scores[" in r.error.to_string() else "events" for r in retries]
    assert failed == ["story_scores", "events"] and result.success
    assert len(score_calls) == 3 and len(event_calls) == 2   # the hour starts again after each retry
    assert materialized == sorted(STAGE_GROUPS.keys() - {"digest", "prune"})


def test_dagster_oss_event_storage_does_not_keep_asset_failure_events(clean_db):
    """Why a failed hourly stage is named in the step's error and the alert (`stories[<hour>]: ...`)
    and not marked on its own asset: Dagster 1.13.27 has an event for an asset that failed to
    materialise (ASSET_FAILED_TO_MATERIALIZE, `AssetMaterializationFailure`), but its open-source
    event storages refuse to store it (`can_store_asset_failure_events` is False, and
    `DagsterInstance.should_store_event` drops it), and nothing in its execution emits it. Should an
    upgrade store them, this test fails: then the op can report the failed stage's hour itself."""
    from dagster import AssetKey, DagsterInstance
    from dagster._core.definitions.events import (
        AssetMaterializationFailure,
        AssetMaterializationFailureReason,
        AssetMaterializationFailureType,
    )
    from dagster._core.events import DagsterEvent
    from dagster._core.events.log import EventLogEntry
    from dagster_postgres import PostgresEventLogStorage

    assert dagster.__version__ == "1.13.27", "the behaviour below was seen on 1.13.27: check it again"
    storage = PostgresEventLogStorage(db.sqlalchemy_psycopg2_url(clean_db), should_autocreate_tables=False)
    assert storage.can_store_asset_failure_events is False
    failure = AssetMaterializationFailure(
        asset_key=AssetKey("stories"), partition="2026-11-02-05:00",
        failure_type=AssetMaterializationFailureType.FAILED, reason=AssetMaterializationFailureReason.FAILED_TO_MATERIALIZE)
    event = DagsterEvent.build_asset_failed_to_materialize_event("hourly_pipeline", "hourly_chain", failure)
    entry = EventLogEntry(error_info=None, level="ERROR", user_message="", run_id="r", timestamp=0.0,
                          dagster_event=event)
    with DagsterInstance.ephemeral() as instance:
        assert instance.should_store_event(entry) is False
