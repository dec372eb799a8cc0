"""One hour of one hourly asset, for the tests of a single stage, materialised by Dagster.

The hourly assets are one subsettable op (`hourly_chain`, assets/hourly.py). A test of one stage
asks Dagster for exactly that asset's hour (`materialize(..., selection=[asset])`, the op's own
subsetting, on an ephemeral instance) and reads back what Dagster recorded: the materialisation's
metadata, the hour's check evaluations, and whether the run succeeded (a failed blocking check
fails the op, so the run).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dagster import AssetCheckEvaluation, AssetMaterialization, DagsterInstance, materialize

from newsdedup_dagster.assets.hourly import HOURLY_OP, hourly_chain, hourly_run_config, stage_named
from newsdedup_dagster.resources import EmbedderResource, LLMResource, PostgresResource


@dataclass
class StageResult:
    name: str
    partition_key: str
    materialization: AssetMaterialization | None
    check_results: list[AssetCheckEvaluation] = field(default_factory=list)
    run_succeeded: bool = True

    @property
    def success(self) -> bool:
        return self.run_succeeded and self.materialization is not None

    @property
    def blocking_failed(self) -> list[str]:
        return [c.check_name for c in self.check_results
                if c.check_name in stage_named(self.name).blocking_checks and not c.passed]

    @property
    def metadata(self) -> dict[str, Any]:
        assert self.materialization is not None
        return self.materialization.metadata

    def checks(self) -> dict[str, bool]:
        return {c.check_name: c.passed for c in self.check_results}


def stage_hour(name: str, partition_key: str, database_url: str, *, embedder: EmbedderResource | None = None,
               llm: LLMResource | None = None, options: dict | None = None, in_backfill: bool = False,
               postgres: PostgresResource | None = None) -> StageResult:
    """One hour of the hourly asset `name` on `database_url`, materialised alone by Dagster; `options`
    is the op config section by asset (`{"stories": {"later_partitions": "reset"}}`); `in_backfill`
    tags the run as a backfill's. An error in the stage propagates (`raise_on_error`), a failed
    blocking check gives `success` False."""
    stage = stage_named(name)
    resources = {"postgres": postgres or PostgresResource(database_url=database_url),
                 "embedder": embedder or EmbedderResource(), "llm": llm or LLMResource()}
    tags = {"dagster/backfill": "stage-test"} if in_backfill else None
    with DagsterInstance.ephemeral() as instance:
        result = materialize([hourly_chain], selection=[stage.key], partition_key=partition_key, resources=resources,
                             run_config=hourly_run_config(**(options or {})), tags=tags, instance=instance,
                             raise_on_error=False)
        failure = next((e for e in result.all_events if e.is_step_failure), None)
        if failure is not None and not _is_blocking_check_failure(failure):
            raise AssertionError(f"{name} {partition_key}: {failure.step_failure_data.error.to_string()}")
        materializations = [m for m in result.asset_materializations_for_node(HOURLY_OP)
                            if m.asset_key == stage.key and m.partition == partition_key]
        checks = [e for e in result.get_asset_check_evaluations() if e.asset_key == stage.key]
    return StageResult(name, partition_key, materializations[-1] if materializations else None, checks,
                       result.success)


def _is_blocking_check_failure(event) -> bool:
    """The op fails on purpose when a blocking check failed; that is a result, not an error."""
    return "blocking check" in (event.step_failure_data.error.message or "").lower()
