"""Which databases the application and Dagster use: $NEWSDEDUP_DATABASE_URL (and
$NEWSDEDUP_DAGSTER_DATABASE_URL), or two databases on the embedded server, created on first use."""

from __future__ import annotations

import contextlib
import functools

import psycopg
from psycopg import sql as pgsql

from newsdedup_dagster.shared import (
    deployment as config,  # deployment values only: config imports the stages, which import db
)
from newsdedup_dagster.shared.db.embedded import embedded_server, private_home
from newsdedup_dagster.shared.db.sql_files import load_sql
from newsdedup_dagster.shared.db.urls import with_database

APP_DATABASE = "newsdedup"
DAGSTER_DATABASE = "dagster"


def ensure_database(admin_url: str, dbname: str) -> None:
    with psycopg.connect(admin_url, autocommit=True, connect_timeout=10) as conn:
        exists = conn.execute(load_sql("db_database_exists"), (dbname,)).fetchone()
        if not exists:
            try:
                conn.execute(pgsql.SQL(load_sql("db_create_database")).format(pgsql.Identifier(dbname)))
            except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                pass  # another process created it first


@functools.cache
def _resolved_urls() -> tuple[str, str]:
    url = config.database_url()
    if url:
        # No embedded server, but the home still holds the outbox and Dagster's storage: private.
        with contextlib.suppress(OSError):
            private_home(config.home_dir())
        # The Dagster database is checked (and created when the role may) by
        # ensure_dagster_database(), before dagster-postgres sees the URL.
        dagster_url = config.dagster_database_url() or with_database(url, DAGSTER_DATABASE)
        return url, dagster_url
    server = embedded_server()
    admin = server.get_uri()
    for db in (APP_DATABASE, DAGSTER_DATABASE):
        ensure_database(admin, db)
    return server.get_uri(APP_DATABASE), server.get_uri(DAGSTER_DATABASE)


def app_database_url() -> str:
    """The application database: $NEWSDEDUP_DATABASE_URL, or the embedded server's `newsdedup` db."""
    return _resolved_urls()[0]


def dagster_database_url() -> str:
    """Where Dagster's own instance storage lives (the `dagster` db on the same server)."""
    return _resolved_urls()[1]


def database_exists(conn: psycopg.Connection, dbname: str) -> bool:
    return conn.execute(load_sql("db_database_exists"), (dbname,)).fetchone() is not None
