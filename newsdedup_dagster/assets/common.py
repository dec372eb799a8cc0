"""What every asset module shares: owners, the one way a table is shown in asset metadata, and the
shape of an hourly stage (assets/hourly.py runs them)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetKey,
    AssetSpec,
    MaterializeResult,
    MetadataValue,
    PreviewWarning,
    TableColumn,
    TableRecord,
    TableSchema,
)

from newsdedup_dagster.partitions import HOURLY_PARTITIONS
from newsdedup_dagster.resources import EmbedderResource, LLMResource, PostgresResource
from newsdedup_dagster.stages.publish.files import SiteFiles

# Who is paged for the pipeline's assets (Dagster shows owners on every asset page).
OWNERS = ["team:newsdedup"]

ROW_COUNT = "dagster/row_count"

_TYPES = {bool: "bool", int: "int", float: "float"}


def table(rows: Iterable[Mapping[str, object]], columns: Sequence[str], limit: int = 50) -> MetadataValue:
    """A `MetadataValue.table` of the first `limit` rows (the UI renders it as a sortable table).
    A column's type comes from its first non-empty value; text is cut at 200 characters."""
    rows = list(rows)[:limit]

    def column_type(name: str) -> str:
        value = next((r.get(name) for r in rows if r.get(name) is not None), None)
        return _TYPES.get(type(value), "string")

    schema = TableSchema(columns=[TableColumn(name, column_type(name)) for name in columns])

    def cell(name: str, value: object):
        if value is None:
            return "" if schema_types[name] == "string" else None
        if schema_types[name] == "string":
            return str(value)[:200]
        return value

    schema_types = {c.name: c.type for c in schema.columns}
    records = [TableRecord({name: cell(name, row.get(name)) for name in columns}) for row in rows]
    return MetadataValue.table(records=records, schema=schema)


def hourly_check(name: str, asset: str, *, blocking: bool = False, description: str | None = None) -> AssetCheckSpec:
    """A check of an hourly asset, partitioned like it: each result is recorded for the hour it checked.
    Partitioned checks are a preview feature of Dagster 1.13, chosen knowingly (its warning is silenced
    here, where the choice is made, not for anything else)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PreviewWarning)
        return AssetCheckSpec(name, asset=asset, blocking=blocking, description=description,
                              partitions_def=HOURLY_PARTITIONS)


@dataclass(frozen=True)
class HourRun:
    """What a stage's hour needs from the run: its logger, the resources, the run's options,
    whether the run belongs to a backfill, the run's hours and the publish directory's files the
    run holds between its hours (stages/publish/files.py)."""

    log: Any
    postgres: PostgresResource
    embedder: EmbedderResource
    llm: LLMResource
    options: Any
    in_backfill: bool = False
    hours: Sequence[str] = ()
    site_files: SiteFiles = field(default_factory=SiteFiles)


@dataclass(frozen=True)
class HourlyStage:
    """One hourly asset: its spec, its checks and the function that computes one hour of it."""

    spec: AssetSpec
    check_specs: Sequence[AssetCheckSpec]
    materialize_hour: Callable[[HourRun, str], MaterializeResult]

    @property
    def key(self) -> AssetKey:
        return self.spec.key

    @property
    def blocking_checks(self) -> frozenset[str]:
        return frozenset(spec.name for spec in self.check_specs if spec.blocking)

    def blocking_failures(self, results: Sequence[AssetCheckResult]) -> list[str]:
        """The blocking checks among `results` that failed with ERROR severity: the op then fails."""
        return [r.check_name for r in results
                if r.check_name in self.blocking_checks and not r.passed and r.severity == AssetCheckSeverity.ERROR]


