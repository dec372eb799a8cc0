"""Named SQL: every statement is a file in sql/queries/, loaded by name."""

from __future__ import annotations

import functools

from newsdedup_dagster.shared import (
    deployment as config,  # deployment values only: config imports the stages, which import db
)

SQL_DIR = config.sql_dir()


@functools.cache
def load_sql(name: str) -> str:
    """Named SQL from sql/queries/<name>.sql."""
    path = SQL_DIR / "queries" / f"{name}.sql"
    if not path.exists():
        raise FileNotFoundError(f"SQL file not found: {path}")
    return path.read_text(encoding="utf-8")
