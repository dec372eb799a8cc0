"""The pgvector extension: present, recent enough (>= 0.8), created when the role may."""

from __future__ import annotations

import re

import psycopg

from newsdedup_dagster.shared.db.connections import session_identity
from newsdedup_dagster.shared.db.errors import DatabaseError
from newsdedup_dagster.shared.db.sql_files import load_sql

MIN_PGVECTOR = (0, 8, 0)


def check_pgvector(conn: psycopg.Connection) -> str:
    """Installed pgvector version, or DatabaseError if missing or older than 0.8."""
    row = conn.execute(load_sql("db_pgvector_installed")).fetchone()
    if row is None:
        available = conn.execute(
            load_sql("db_pgvector_available")
        ).fetchone()
        if available is None:
            raise DatabaseError(
                "the pgvector extension is not available on this PostgreSQL server; "
                "install pgvector >= 0.8 (https://github.com/pgvector/pgvector#installation)"
            )
        return ""  # available, not yet created: migrate() creates it
    require_pgvector_version(row[0])
    return row[0]


def require_pgvector_version(version: str) -> None:
    """DatabaseError unless `version` (e.g. '0.8.5') is >= 0.8: iterative HNSW scans, which the
    time-filtered KNN needs, arrived in 0.8."""
    numbers = tuple(int(x) for x in re.findall(r"\d+", version)[:3])
    if numbers < MIN_PGVECTOR:
        raise DatabaseError(
            f"pgvector {version} is too old; newsdedup needs >= 0.8 (iterative HNSW scans): "
            "upgrade the pgvector package, then run ALTER EXTENSION vector UPDATE"
        )


def ensure_pgvector(conn: psycopg.Connection) -> str:
    """Create the `vector` extension when it is missing and the role may (superuser, or a trusted
    extension on managed services); otherwise a one-line DatabaseError naming the SQL an
    administrator runs and where. Returns the installed version."""
    installed = check_pgvector(conn)
    if installed:
        return installed
    available = conn.execute(
        load_sql("db_pgvector_available")
    ).fetchone()[0]
    require_pgvector_version(available)
    role, dbname = session_identity(conn)
    try:
        conn.execute(load_sql("db_pgvector_create"))
    except psycopg.errors.InsufficientPrivilege:
        conn.rollback()
        raise DatabaseError(
            f"the pgvector extension is not installed in database \"{dbname}\" and role \"{role}\" "
            f"may not create it: an administrator runs, connected to database \"{dbname}\": "
            "CREATE EXTENSION vector;"
        ) from None
    return check_pgvector(conn)
