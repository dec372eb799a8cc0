"""One connection to the application database (or another URL), with a clean error."""

from __future__ import annotations

import psycopg

from newsdedup_dagster.shared.db.errors import DatabaseError
from newsdedup_dagster.shared.db.locations import app_database_url
from newsdedup_dagster.shared.db.sql_files import load_sql
from newsdedup_dagster.shared.db.urls import describe_url


def connect(url: str | None = None, **kwargs) -> psycopg.Connection:
    """One connection with a one-line, password-free error when the server is unreachable."""
    url = url or app_database_url()
    try:
        conn = psycopg.connect(url, connect_timeout=10, prepare_threshold=None, **kwargs)
    except psycopg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseError(
            f"cannot connect to PostgreSQL at {describe_url(url)}: {first}. "
            "Check NEWSDEDUP_DATABASE_URL (or unset it to use the embedded server)"
        ) from None
    return conn


def session_identity(conn: psycopg.Connection) -> tuple[str, str]:
    """(role, database) of the connection, for messages."""
    return conn.execute(load_sql("db_session_identity")).fetchone()
