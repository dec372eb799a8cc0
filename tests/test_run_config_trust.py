"""Whoever may launch a run can neither read a secret nor write outside the deployment's directories.

The list of run-config fields is built from the `Definitions` object itself (every job, hence
every asset, and the jobs every schedule and sensor targets), so a field added later is covered.
For every field the test launches, through the UI's GraphQL launch path and Dagster's CLI, (a)
`{"env": "NEWSDEDUP_TEST_CANARY"}` with a canary value in the deployment's environment, (b) a
path-traversal string, (c) an absolute path, (d) an oversized string. Each must be refused before a
run exists; afterwards the canary appears in no Dagster event, in no table of either database (their
pg_dump) and in no file under the home, the Dagster home or the publish directory.

What Dagster's types cannot bound (numbers, languages the run's `llm` resource does not publish) is
checked by one function, for the run coordinator and for the steps: every numeric field has both
bounds, any number is accepted exactly within them (hypothesis), and a refusal is the field and
what it accepts, nothing else. End to end (real webserver and daemon, GraphQL launch), a value
below and above the bounds of every numeric field makes a failed run that never started.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from dagster import DagsterInvalidConfigError, validate_run_config
from dagster._config import ConfigTypeKind
from hypothesis import HealthCheck, given, settings, strategies as st

from newsdedup_dagster.assets.hourly import HOURLY_OP, STAGES, hourly_run_config
from newsdedup_dagster.assets.run_options import deployment_languages
from newsdedup_dagster.definitions import defs
from newsdedup_dagster.shared import db

CANARY_NAME = "NEWSDEDUP_TEST_CANARY"
PLAIN_SCALARS = {"Bool", "Int", "Float"}
# A field whose name says it is one of these is a deployment setting, not a run option.
DEPLOYMENT_WORDS = ("dir", "path", "file", "url", "host", "env", "secret", "password", "key", "token", "user")


def run_config_fields() -> list[tuple[str, tuple[str, ...], object]]:
    """(job, path of keys to the leaf, config type) for every leaf of every job's run config."""
    repo = defs.get_repository_def()
    fields = []

    def walk(job, config_type, path):
        kind = config_type.kind
        if kind in (ConfigTypeKind.STRICT_SHAPE, ConfigTypeKind.PERMISSIVE_SHAPE, ConfigTypeKind.SELECTOR):
            for name, field in config_type.fields.items():
                walk(job, field.config_type, (*path, name))
        elif kind == ConfigTypeKind.NONEABLE:
            walk(job, config_type.inner_type, path)
        elif kind == ConfigTypeKind.ARRAY:
            walk(job, config_type.inner_type, (*path, "[]"))
        else:
            fields.append((job, path, config_type))

    for job in repo.get_all_jobs():
        walk(job.name, job.run_config_schema.config_type, ())
    # In a fixed order: the asset job's ops come in an order that differs between processes, and
    # pytest-xdist needs every worker to collect the same tests.
    return sorted(fields, key=lambda field: (field[0], field[1]))


FIELDS = run_config_fields()


def _nested(path: tuple[str, ...], value):
    """The run config that puts `value` at `path` (a list where the path goes through an array)."""
    for key in reversed(path):
        value = [value] if key == "[]" else {key: value}
    return value


def hostile_values(tmp: Path) -> dict[str, object]:
    return {
        "env": {"env": CANARY_NAME},
        "traversal": f"en,../../../../../..{tmp}/trav-out",
        "absolute": str(tmp / "victim"),
        "oversized": "A" * 200_000,
    }


# The hourly assets are one op: their run options sit under its name whichever of them a launch selects.
HOURLY_ASSETS = tuple(stage.key.to_user_string() for stage in STAGES)


def _assets_of(op: str) -> tuple[str, ...]:
    """The assets a launch of `op` selects (an asset job's selection)."""
    return HOURLY_ASSETS if op == HOURLY_OP else (op,)


def _options_field(op: str, name: str):
    """(run options class, field) of `name` ("knn_k", or "stories.knn_k" in a section of the op)."""
    from newsdedup_dagster.definitions import RUN_OPTIONS

    options = RUN_OPTIONS[op]
    *section, leaf = name.split(".")
    if section:
        options = options.sections()[section[0]]
    return options, leaf


def _accepts(op: str, name: str) -> str:
    options, leaf = _options_field(op, name)
    return options.accepts(leaf)


def _op_config(name: str, value) -> dict:
    """The op config that sets `name` (dotted through a section) to `value`."""
    return _nested(tuple(name.split(".")), value)


def _field_id(field) -> str:
    job, path, _ = field
    return f"{job}:{'.'.join(path)}"


def test_the_definitions_have_run_options_to_check():
    jobs = {job for job, _, _ in FIELDS}
    repo = defs.get_repository_def()
    # Schedules and sensors launch runs of these jobs (the automation sensor: the asset job).
    assert {s.job_name for s in repo.schedule_defs} <= jobs
    paths = {".".join(path) for _, path, _ in FIELDS}
    assert {"ops.hourly_chain.config.story_feeds.langs.[]", "ops.hourly_chain.config.raw_items.fetch_mode",
            "ops.digest.config.langs.[]", "ops.hourly_chain.config.stories.knn_k",
            "loggers.console.config.log_level"} <= paths


@pytest.mark.parametrize("field", FIELDS, ids=_field_id)
def test_every_field_is_an_enum_or_a_plain_number_or_flag(field):
    """No free text, no Source type (StringSource / IntSource / BoolSource read {"env": NAME}),
    no Any: only enums and Dagster's plain Bool, Int and Float."""
    _, path, config_type = field
    if config_type.kind == ConfigTypeKind.ENUM:
        values = set(config_type.config_values)
        assert all(v.replace("-", "").isalnum() for v in values), values
    else:
        assert config_type.kind == ConfigTypeKind.SCALAR and config_type.given_name in PLAIN_SCALARS, \
            f"{'.'.join(path)}: {config_type.kind} {config_type.given_name}"
    leaf = [p for p in path if p != "[]"][-1]
    assert not any(word in leaf.lower() for word in DEPLOYMENT_WORDS), f"{'.'.join(path)} names a deployment setting"


@pytest.mark.parametrize("field", FIELDS, ids=_field_id)
def test_every_hostile_value_is_refused_by_validation(field, tmp_path, monkeypatch):
    canary = f"canary-{uuid.uuid4().hex}"
    monkeypatch.setenv(CANARY_NAME, canary)
    job_name, path, _ = field
    job = defs.resolve_job_def(job_name)
    for what, value in hostile_values(tmp_path).items():
        shapes = [_nested(path, value)]
        if "[]" in path:   # the whole list replaced by the value, too
            shapes.append(_nested(path[:path.index("[]")], value))
        for run_config in shapes:
            with pytest.raises(DagsterInvalidConfigError) as refused:
                validate_run_config(job, run_config)
            assert canary not in str(refused.value), (what, path)


def test_languages_are_the_deployments():
    langs = deployment_languages()
    assert langs and "en" in langs
    for job, path, config_type in FIELDS:
        if path[-2:] == ("langs", "[]"):
            assert set(config_type.config_values) == set(langs), (job, path)


# ------------------------------------------------------------------ the real launch paths
LAUNCH_RUN = """
mutation Launch($executionParams: ExecutionParams!) {
  launchRun(executionParams: $executionParams) {
    __typename
    ... on RunConfigValidationInvalid { errors { message } }
    ... on LaunchRunSuccess { run { runId status } }
    ... on PythonError { message }
  }
}"""

PARTITION = {"hourly_pipeline": "2026-11-02-01:00", "daily_digest": "2026-11-02", "retention": None,
             "__ASSET_JOB": None}


def _dump(url: str) -> bytes:
    """pg_dump of one database (data and schema), with the server's own client."""
    pg_dump = Path(db.embedded_server().bin_path) / "pg_dump"
    return subprocess.run([str(pg_dump), "--no-owner", "--dbname", url], check=True, capture_output=True,
                          timeout=300).stdout


def _files_containing(roots: list[Path], needle: bytes) -> list[str]:
    found = []
    for root in roots:
        for path in [root, *root.rglob("*")] if root.exists() else []:
            if path.is_file() and not path.is_symlink():
                try:
                    if needle in path.read_bytes():
                        found.append(str(path))
                except OSError:
                    pass
            if needle.decode() in path.name:
                found.append(str(path))
    return found


@pytest.mark.slow
@pytest.mark.daemon
def test_launches_leave_no_trace_of_the_canary(clean_db, tmp_path):
    # An emptied application database: the in-bounds launch runs the whole hourly chain, whose
    # embedding step refuses vectors another test left behind.
    from dagster_deployment import DagsterDeployment

    database_url = clean_db

    canary = f"canary-{uuid.uuid4().hex}"
    publish = tmp_path / "public"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").mkdir()
    (outside / "victim" / "index.html").write_text("untouched")
    env = {CANARY_NAME: canary, "NEWSDEDUP_SMTP_PASSWORD": canary, "NEWSDEDUP_LLM_API_KEY": canary,
           "NEWSDEDUP_PUBLISH_DIR": str(publish)}
    with DagsterDeployment(tmp_path, database_url, extra_env=env) as dep:
        # The UI's launch path, for every field and every hostile value.
        for job_name, path, _ in FIELDS:
            tags = [{"key": "dagster/partition", "value": PARTITION[job_name]}] if PARTITION[job_name] else []
            selector = {"repositoryLocationName": "newsdedup_dagster.definitions",
                        "repositoryName": "__repository__", "jobName": job_name}
            if job_name == "__ASSET_JOB":
                op = path[1] if path[0] == "ops" else HOURLY_OP
                selector["assetSelection"] = [{"path": [a]} for a in _assets_of(op)]
                tags = [{"key": "dagster/partition", "value": "2026-11-02" if op == "digest" else "2026-11-02-01:00"}] \
                    if op not in ("prune",) else []
            for what, value in hostile_values(outside).items():
                params = {"selector": selector, "runConfigData": _nested(path, value),
                          "executionMetadata": {"tags": tags}}
                result = dep.graphql(LAUNCH_RUN, {"executionParams": params})["launchRun"]
                assert result["__typename"] == "RunConfigValidationInvalid", (job_name, path, what, result)
                assert canary not in json.dumps(result)

        # Dagster's CLI, as the first reports were made: each refused before a run exists.
        # (story_feeds is one of the hourly assets: the selection is all of them, the hourly op's.)
        cli = [str(Path(sys.executable).with_name("dagster")), "asset", "materialize", "-m",
               "newsdedup_dagster.definitions", "--select", ",".join(HOURLY_ASSETS), "--partition",
               "2026-11-02-01:00", "--config-json"]
        for op_config in ({"output_dir": str(outside / "victim"), "langs": ["en"], "force": True},
                          {"langs": ["en", f"../../../../..{outside}/trav-out"], "force": True},
                          {"langs": {"env": "NEWSDEDUP_SMTP_PASSWORD"}},
                          {"langs": [{"env": CANARY_NAME}]}):
            refused = subprocess.run([*cli, json.dumps(hourly_run_config(story_feeds=op_config))],
                                     env=dep.env, cwd=dep.root, capture_output=True, text=True, timeout=600)
            assert refused.returncode != 0, refused.stdout[-2000:]
            assert "config" in (refused.stdout + refused.stderr).lower()
            assert canary not in refused.stdout + refused.stderr
        refused = subprocess.run(
            [*cli, json.dumps(hourly_run_config(raw_items={"fetch_mode": {"env": "NEWSDEDUP_LLM_API_KEY"}}))],
            env=dep.env, cwd=dep.root, capture_output=True, text=True, timeout=600)
        assert refused.returncode != 0 and canary not in refused.stdout + refused.stderr

        # A harmless launch is accepted and runs with the canary in its environment.
        accepted = subprocess.run([*cli, json.dumps(hourly_run_config(story_feeds={"langs": ["en"]}))],
                                  env=dep.env, cwd=dep.root, capture_output=True, text=True, timeout=900)
        assert accepted.returncode == 0, (accepted.stdout + accepted.stderr)[-3000:]
        assert (publish / "en" / "atom.xml").exists()

        instance = dep.instance()
        runs = instance.get_runs()
        assert len(runs) == 1, [r.run_config for r in runs]   # the refused launches made no run
        events = instance.all_logs(runs[0].run_id)
        assert events and canary not in "".join(str(e) for e in events)
        dagster_url = dep.env["NEWSDEDUP_DAGSTER_DATABASE_URL"]
        instance.dispose()

    assert (outside / "victim" / "index.html").read_text() == "untouched"
    assert not (outside / "trav-out").exists() and sorted(p.name for p in outside.iterdir()) == ["victim"]
    for url in (database_url, dagster_url):
        dump = _dump(url)
        assert len(dump) > 1000 and canary.encode() not in dump, url
    assert _files_containing([tmp_path], canary.encode()) == []


# ------------------------------------------------------------- what Dagster's types cannot bound
@pytest.mark.parametrize("options, field, value", [
    ("StoriesConfig", "knn_k", 987654321),
    ("StoriesConfig", "story_threshold", 7.25),
    ("EventsConfig", "quiet_hours", -31.5),
])
def test_out_of_range_numbers_fail_the_step_without_repeating_the_value(options, field, value):
    from dagster import Failure

    from newsdedup_dagster.assets import events, stories

    model = {"StoriesConfig": stories.StoriesConfig, "EventsConfig": events.EventsConfig}[options]
    with pytest.raises(Failure) as refused:
        model.from_op_config({field: value})
    message = refused.value.description
    assert field in message and str(value) not in message and repr(value) not in message
    assert not refused.value.allow_retries


def test_a_language_the_run_does_not_publish_is_refused_without_repeating_it():
    from dagster import Failure

    from newsdedup_dagster.assets.publish import StoryFeedsConfig

    assert StoryFeedsConfig.from_op_config({"langs": ["fr", "en", "fr"]}, ("en", "fr")).langs == ["fr", "en", "fr"]
    assert StoryFeedsConfig.refused_fields(None, ()) == []
    # An undeclared key is launcher input as well: named as "config", never repeated.
    assert StoryFeedsConfig.refused_fields({"SECRET-LOOKING-KEY": 1}) == [("config", StoryFeedsConfig.accepts("config"))]
    assert StoryFeedsConfig.refused_fields(["en"]) == [("config", StoryFeedsConfig.accepts("config"))]
    with pytest.raises(Failure) as refused:
        StoryFeedsConfig.from_op_config({"langs": ["en", "fr"]}, ("en", "de"))
    # The field and what it accepts, nothing else: never the refused language.
    assert refused.value.description == "run config refused (langs: languages this deployment publishes: en, de)"
    assert not refused.value.allow_retries


# ------------------------------------------------ the check the run coordinator and the steps share
def _bounds(info) -> tuple[tuple[float, bool], tuple[float, bool]]:
    """((lower, inclusive), (upper, inclusive)) of a pydantic field, from its annotated_types metadata."""
    lower = upper = None
    for item in info.metadata:
        for attr, inclusive in (("ge", True), ("gt", False)):
            if getattr(item, attr, None) is not None:
                lower = (getattr(item, attr), inclusive)
        for attr, inclusive in (("le", True), ("lt", False)):
            if getattr(item, attr, None) is not None:
                upper = (getattr(item, attr), inclusive)
    return lower, upper


def numeric_fields() -> list[tuple[str, str, type, tuple, tuple]]:
    """(op, field, int or float, lower, upper) for every Int and Float leaf of every job's run
    config, with the bounds its run options declare; a field in a section of the op's options
    (the hourly op's, one per asset) is named "<section>.<field>"."""
    found = {}
    for _, path, config_type in FIELDS:
        if path[0] == "ops" and getattr(config_type, "given_name", None) in ("Int", "Float"):
            op, name = path[1], ".".join(path[3:])
            options, leaf = _options_field(op, name)
            info = options.model_fields[leaf]
            found[op, name] = (op, name, int if config_type.given_name == "Int" else float, *_bounds(info))
    return sorted(found.values())


NUMERIC = numeric_fields()


def out_of_bounds(kind: type, lower: tuple, upper: tuple) -> tuple:
    """A value just below the lower bound and one just above the upper bound."""
    step = 1 if kind is int else 0.5
    below = lower[0] - step if lower[1] else lower[0]
    above = upper[0] + step if upper[1] else upper[0]
    return kind(below), kind(above)


def test_every_op_with_config_has_run_options_the_coordinator_knows():
    from newsdedup_dagster.definitions import RUN_OPTIONS

    with_config = {}
    in_sections = {}
    for _job, path, _ in FIELDS:
        if path[0] == "ops":
            with_config.setdefault(path[1], set()).add(path[3])
            if path[3] in (RUN_OPTIONS[path[1]].sections() if path[1] in RUN_OPTIONS else {}):
                in_sections.setdefault((path[1], path[3]), set()).add(path[4])
    assert set(with_config) == set(RUN_OPTIONS), "an asset with run config is missing from RUN_OPTIONS"
    for op, names in with_config.items():
        assert names == set(RUN_OPTIONS[op].model_fields), op
    # The hourly op's options: one section per hourly asset that has options, each field known.
    assert set(RUN_OPTIONS[HOURLY_OP].sections()) == {"raw_items", "item_duplicates", "stories", "events", "story_feeds"}
    for (op, section), names in in_sections.items():
        assert names == set(RUN_OPTIONS[op].sections()[section].model_fields), (op, section)


def test_every_number_has_both_bounds():
    assert len(NUMERIC) >= 11, NUMERIC
    for op, name, _, lower, upper in NUMERIC:
        assert lower is not None and upper is not None, f"{op}.{name} is not bounded on both sides"


@pytest.mark.parametrize("numeric", NUMERIC, ids=lambda n: f"{n[0]}.{n[1]}")
def test_the_run_coordinators_check_refuses_each_bound(numeric):
    from newsdedup_dagster.assets.run_options import run_config_refusal
    from newsdedup_dagster.definitions import RUN_OPTIONS

    op, name, kind, lower, upper = numeric
    inside = kind(lower[0] if lower[1] else lower[0] + (1 if kind is int else 0.25))
    assert run_config_refusal({"ops": {op: {"config": _op_config(name, inside)}}}, RUN_OPTIONS, lambda: None) is None
    for value in out_of_bounds(kind, lower, upper):
        refusal = run_config_refusal({"ops": {op: {"config": _op_config(name, value)}}}, RUN_OPTIONS, lambda: None)
        assert refusal == f"run config refused (ops.{op}.config.{name}: {_accepts(op, name)})", refusal


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_number_is_accepted_exactly_within_its_bounds_and_never_repeated(data):
    from newsdedup_dagster.assets.run_options import run_config_refusal
    from newsdedup_dagster.definitions import RUN_OPTIONS

    op, name, kind, lower, upper = data.draw(st.sampled_from(NUMERIC))
    value = data.draw(st.integers(min_value=-10**12, max_value=10**12) if kind is int else
                      st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**6, 10**6).map(float))
    inside = ((value >= lower[0]) if lower[1] else (value > lower[0])) and \
             ((value <= upper[0]) if upper[1] else (value < upper[0]))
    refusal = run_config_refusal({"ops": {op: {"config": _op_config(name, value)}}}, RUN_OPTIONS, lambda: None)
    assert (refusal is None) == inside, (op, name, value, refusal)
    if refusal:
        # The field and what it accepts, nothing else: never the value.
        assert refusal == f"run config refused (ops.{op}.config.{name}: {_accepts(op, name)})", refusal


def test_languages_are_checked_against_the_runs_llm_settings():
    from newsdedup_dagster.assets.run_options import run_config_refusal
    from newsdedup_dagster.config import LLMSettings
    from newsdedup_dagster.definitions import RUN_OPTIONS

    llm = LLMSettings(pivot_lang="en", translation_langs=("fr",))
    calls = []

    def settings():
        calls.append(1)
        return llm

    assert run_config_refusal(hourly_run_config(story_feeds={"langs": ["fr", "en"]}), RUN_OPTIONS, settings) is None
    refusal = run_config_refusal(hourly_run_config(story_feeds={"langs": ["en", "de"], "force": True},
                                                   stories={"knn_k": 0}), RUN_OPTIONS, settings)
    assert "ops.hourly_chain.config.story_feeds.langs: languages this deployment publishes: en, fr" in refusal
    assert "ops.hourly_chain.config.stories.knn_k" in refusal and "de" not in refusal.replace("deployment", "")
    # No languages named: the llm settings are not read (they may hold what the check does not need).
    calls.clear()
    assert run_config_refusal(hourly_run_config(story_feeds={"force": True}), RUN_OPTIONS, settings) is None
    assert calls == []


# ----------------------------------------------- what Dagster's types cannot bound, at launch
NEVER_STARTED = ("RUN_ENQUEUED", "RUN_DEQUEUED", "RUN_STARTING", "RUN_START", "STEP_START")


def _launch_asset(dep, op: str, op_config: dict) -> dict:
    """The UI's launchpad for one op's assets, one hour (or day), as in the test above (the hourly
    op: every hourly asset)."""
    selector = {"repositoryLocationName": "newsdedup_dagster.definitions", "repositoryName": "__repository__",
                "jobName": "__ASSET_JOB", "assetSelection": [{"path": [a]} for a in _assets_of(op)]}
    partition = "2026-11-02" if op == "digest" else "2026-11-02-01:00"
    params = {"selector": selector, "runConfigData": {"ops": {op: {"config": op_config}}},
              "executionMetadata": {"tags": [{"key": "dagster/partition", "value": partition}]}}
    return dep.graphql(LAUNCH_RUN, {"executionParams": params})["launchRun"]


@pytest.mark.slow
@pytest.mark.daemon
def test_out_of_bounds_launches_fail_before_the_run_starts(clean_db, tmp_path):
    """Through the UI's GraphQL launch, with the instance file's validating run coordinator: a number
    below or above its bounds (every numeric field) and a language Dagster's enum accepts but the
    run's `llm` resource does not publish each make a failed run that never started (no queue, no
    run worker, no step), whose message names the field and what it accepts, never the value; so
    does the run a backfill's daemon submits. An in-bounds launch runs."""
    import time

    from dagster import DagsterEventType, DagsterRunStatus, RunsFilter
    from dagster_deployment import LAUNCH_BACKFILL, DagsterDeployment

    from newsdedup_dagster.instance import RUN_COORDINATOR

    # `it` is a narrative language (so in the run-config enum), not a pivot or translation language.
    env = {"NEWSDEDUP_PIVOT_LANG": "en", "NEWSDEDUP_TRANSLATION_LANGS": "fr", "NEWSDEDUP_NARRATIVE_LANGS": "en,it",
           "NEWSDEDUP_PUBLISH_LANGS": "", "NEWSDEDUP_DIGEST_LANGS": "",
           "NEWSDEDUP_PUBLISH_DIR": str(tmp_path / "public"),
           "NEWSDEDUP_EMBEDDING_PROVIDER": "use"}
    cases = [(op, name, value) for op, name, kind, lower, upper in NUMERIC
             for value in out_of_bounds(kind, lower, upper)]
    with DagsterDeployment(tmp_path, clean_db, extra_env=env, run_coordinator=RUN_COORDINATOR) as dep:
        refused = {}
        for op, name, value in cases:
            result = _launch_asset(dep, op, _op_config(name, value))
            assert result["__typename"] == "LaunchRunSuccess", (op, name, value, result)
            assert result["run"]["status"] == "FAILURE", (op, name, value, result)
            refused[result["run"]["runId"]] = (f"ops.{op}.config.{name}", value)
        result = _launch_asset(dep, HOURLY_OP, {"story_feeds": {"langs": ["it"]}})
        assert result["run"]["status"] == "FAILURE", result
        refused[result["run"]["runId"]] = ("ops.hourly_chain.config.story_feeds.langs", "it")
        # A backfill's runs are submitted by the daemon, through the same coordinator.
        backfill = dep.graphql(LAUNCH_BACKFILL, {"backfillParams": {
            "assetSelection": [{"path": [a]} for a in HOURLY_ASSETS], "partitionNames": ["2026-11-02-02:00"],
            "fromFailure": False, "tags": [],
            "runConfigData": hourly_run_config(stories={"knn_k": 0})}})["launchPartitionBackfill"]
        assert backfill["__typename"] == "LaunchBackfillSuccess", backfill

        # In bounds, every numeric field at once (each at its inclusive bound or next to it), in one
        # run of the hour's chain (its stories and events sections).
        inside = {}
        for op, name, kind, lower, _ in NUMERIC:
            assert op == HOURLY_OP, (op, name)
            section, leaf = name.split(".")
            inside.setdefault(section, {})[leaf] = kind(lower[0] if lower[1] else lower[0] + 1)
        assert set(inside) == {"stories", "events"}, inside
        accepted = _launch_asset(dep, HOURLY_OP, inside)
        assert accepted["__typename"] == "LaunchRunSuccess" and accepted["run"]["status"] != "FAILURE", accepted
        feeds = _launch_asset(dep, HOURLY_OP, {"story_feeds": {"langs": ["fr"]}})
        assert feeds["run"]["status"] != "FAILURE", feeds

        instance = dep.instance()
        dep.wait_for_backfill(backfill["backfillId"], timeout=300)
        (backfill_run,) = instance.get_runs(filters=RunsFilter(tags={"dagster/backfill": backfill["backfillId"]}))
        refused[backfill_run.run_id] = ("ops.hourly_chain.config.stories.knn_k", 0)
        deadline = time.time() + 600
        for run_id in (accepted["run"]["runId"], feeds["run"]["runId"]):
            while not instance.get_run_by_id(run_id).is_finished and time.time() < deadline:
                time.sleep(2)
            run = instance.get_run_by_id(run_id)
            failures = [e.dagster_event.event_specific_data for e in instance.all_logs(run_id)
                        if e.dagster_event and e.dagster_event.event_type == DagsterEventType.STEP_FAILURE]
            assert run.status == DagsterRunStatus.SUCCESS, [str(f.error.cause or f.error)[:2000] for f in failures]
        assert (tmp_path / "public" / "fr" / "atom.xml").exists()

        for run_id, (field, value) in refused.items():
            run = instance.get_run_by_id(run_id)
            assert run.status == DagsterRunStatus.FAILURE, (field, value, run.status)
            events = instance.all_logs(run_id)
            kinds = {e.dagster_event.event_type.name for e in events if e.dagster_event}
            assert not kinds & set(NEVER_STARTED), (field, value, kinds)
            (failure,) = [e for e in events if e.dagster_event
                          and e.dagster_event.event_type == DagsterEventType.RUN_FAILURE]
            op, name = field.split(".")[1], ".".join(field.split(".")[3:])
            accepts = ("languages this deployment publishes: en, fr" if field.endswith(".langs")
                       else _accepts(op, name))
            # The field and what it accepts, nothing else: never the value.
            assert failure.dagster_event.message == f"run config refused ({field}: {accepts}); the run was not started"
        instance.dispose()
