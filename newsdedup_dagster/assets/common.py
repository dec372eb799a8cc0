"""What every asset module shares: owners, and the one way a table is shown in asset metadata."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from dagster import MetadataValue, TableColumn, TableRecord, TableSchema

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
