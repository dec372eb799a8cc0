"""One hour of one hourly asset, for the tests of a single stage.

The hourly assets are one subsettable op (`hourly_chain`, assets/hourly.py); a
test of one stage computes that stage's hour with `hourly.run_stage`, as the op does, and reads the
result here the way Dagster records it: metadata normalised to `MetadataValue`s, the check results
with the asset's key, and `success` False when a blocking check failed (the op then fails).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dagster import AssetCheckResult, AssetMaterialization

from newsdedup_dagster.assets.hourly import run_stage, stage_named
from newsdedup_dagster.resources import EmbedderResource, LLMResource, PostgresResource


@dataclass
class StageResult:
    name: str
    partition_key: str
    materialization: AssetMaterialization | None
    check_results: list[AssetCheckResult] = field(default_factory=list)
    blocking_failed: list[str] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return self.materialization is not None and not self.blocking_failed

    @property
    def metadata(self) -> dict[str, Any]:
        assert self.materialization is not None
        return self.materialization.metadata

    def checks(self) -> dict[str, bool]:
        return {c.check_name: c.passed for c in self.check_results}


def stage_hour(name: str, partition_key: str, database_url: str, *, embedder: EmbedderResource | None = None,
               llm: LLMResource | None = None, options: dict | None = None, in_backfill: bool = False,
               postgres: PostgresResource | None = None) -> StageResult:
    """One hour of the hourly asset `name` on `database_url`; `options` is the op config section by
    asset (`{"stories": {"later_partitions": "reset"}}`). Errors propagate as the op's would."""
    result = run_stage(name, partition_key, postgres=postgres or PostgresResource(database_url=database_url),
                       embedder=embedder, llm=llm, options=options, in_backfill=in_backfill)
    stage = stage_named(name)
    checks = list(result.check_results or [])
    failed = stage.blocking_failures(checks)
    materialization = AssetMaterialization(asset_key=stage.key, partition=partition_key,
                                           metadata=dict(result.metadata or {}))
    return StageResult(name, partition_key, materialization, checks, failed)
