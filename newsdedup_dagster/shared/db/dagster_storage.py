"""Dagster's storage database: reachable (or created) before dagster-postgres sees its URL."""

from __future__ import annotations

from urllib.parse import urlsplit

import psycopg
from psycopg import sql as pgsql

from newsdedup_dagster.shared.db.connections import connect
from newsdedup_dagster.shared.db.errors import DatabaseError, first_line
from newsdedup_dagster.shared.db.locations import database_exists
from newsdedup_dagster.shared.db.sql_files import load_sql
from newsdedup_dagster.shared.db.urls import describe_url, server_and_role, sql_identifier


def ensure_dagster_database(dagster_url: str, app_url: str | None = None, *,
                            alternative: str = "set NEWSDEDUP_DAGSTER_DATABASE_URL to an existing database") -> None:
    """Dagster's storage database must be reachable before dagster-postgres gets its URL, as
    dagster-postgres retries a failing connection and then ends in a traceback. One quick
    connection here; a missing database on the application's server is
    created when the role may, otherwise a one-line DatabaseError names the SQL to run
    (or `alternative`)."""
    try:
        with psycopg.connect(dagster_url, connect_timeout=10, autocommit=True):
            return
    except psycopg.OperationalError as exc:
        failure = exc
    dbname = urlsplit(dagster_url).path.lstrip("/") or "(default db)"
    if app_url is None or server_and_role(app_url) != server_and_role(dagster_url):
        raise DatabaseError(
            f"cannot connect to Dagster's storage at {describe_url(dagster_url)}: {first_line(failure)}; "
            f"create that database or {alternative}"
        )
    # Same server and role as the application: ask there whether the database exists.
    with connect(app_url, autocommit=True) as conn:
        role = conn.execute(load_sql("db_current_role")).fetchone()[0]
        database = sql_identifier(dbname)
        grantee = sql_identifier(role)
        if database_exists(conn, dbname):
            raise DatabaseError(
                f"cannot connect to Dagster's storage database \"{dbname}\" at {describe_url(dagster_url)} "
                f"as role \"{role}\": {first_line(failure)}; an administrator runs "
                f"GRANT CONNECT, CREATE ON DATABASE {database} TO {grantee}; or {alternative}"
            )
        try:
            conn.execute(pgsql.SQL(load_sql("db_create_database")).format(pgsql.Identifier(dbname)))
        except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
            pass  # another process created it first
        except psycopg.errors.InsufficientPrivilege:
            raise DatabaseError(
                f"Dagster's storage database \"{dbname}\" does not exist at {describe_url(dagster_url)} "
                f"and role \"{role}\" may not create it: an administrator runs "
                f"CREATE DATABASE {database} OWNER {grantee}; or {alternative}"
            ) from None
