"""Exported snapshots: the clustering transaction's view of the database, read by pass 2's extra
KNN connections."""

from __future__ import annotations

import re

import psycopg
from psycopg import sql

from newsdedup_dagster.shared.db.sql_files import load_sql

# What pg_export_snapshot() returns ("00000003-0000001B-1"): checked before it is spelt into SQL.
_SNAPSHOT_ID = re.compile(r"[0-9A-F]{1,16}-[0-9A-F]{1,16}-[0-9]{1,10}")


def export_snapshot(conn: psycopg.Connection) -> str:
    """The snapshot of `conn`'s transaction, valid while that transaction stays open."""
    return conn.execute(load_sql("snapshot_export")).fetchone()[0]


def set_transaction_snapshot(conn: psycopg.Connection, snapshot: str) -> None:
    """Make `conn`'s current transaction (REPEATABLE READ, nothing read yet) read through the
    exported `snapshot`: it sees the database as the exporting transaction did."""
    if not _SNAPSHOT_ID.fullmatch(snapshot):
        raise ValueError(f"not a snapshot id: {snapshot[:40]!r}")
    conn.execute(sql.SQL(load_sql("snapshot_reader_set")).format(sql.Literal(snapshot)))
