"""Database access: embedded server or $NEWSDEDUP_DATABASE_URL, migrations, named SQL, pools.

Pure plumbing, no Dagster imports. Vectors stay in PostgreSQL: callers pass ids. One module per
responsibility; callers use the names re-exported here (`db.connection()`, `db.load_sql(name)`):

- errors: DatabaseError          - urls: URLs and identifiers for messages
- sql_files: named SQL            - embedded: the embedded PostgreSQL server
- locations: which databases      - connections: one connection
- dagster_storage: Dagster's db   - extension: pgvector
- migrations: schema migrations   - pool: process-wide pools, ensure_ready
- snapshots: exported snapshots    - session_settings: set_local
"""

from __future__ import annotations

from newsdedup_dagster.shared.db.connections import connect, session_identity
from newsdedup_dagster.shared.db.dagster_storage import ensure_dagster_database
from newsdedup_dagster.shared.db.embedded import (
    _fallback_socket_dir,  # noqa: F401  (tests check the socket directory's name)
    embedded_server,
)
from newsdedup_dagster.shared.db.errors import DatabaseError
from newsdedup_dagster.shared.db.extension import (
    MIN_PGVECTOR,
    check_pgvector,
    ensure_pgvector,
    require_pgvector_version,
)
from newsdedup_dagster.shared.db.locations import (
    APP_DATABASE,
    DAGSTER_DATABASE,
    app_database_url,
    dagster_database_url,
    ensure_database,
)
from newsdedup_dagster.shared.db.migrations import (
    CHECKSUM_PREFIX,
    MIGRATION_LOCK_KEY,
    migrate,
    migration_checksum,
    migration_files,
    normalise_sql,
)
from newsdedup_dagster.shared.db.pool import (
    _pools,  # noqa: F401  (tests drop a pool whose database they remove)
    connection,
    ensure_ready,
    get_pool,
    stop_embedded_server,
)
from newsdedup_dagster.shared.db.session_settings import set_local
from newsdedup_dagster.shared.db.snapshots import export_snapshot, set_transaction_snapshot
from newsdedup_dagster.shared.db.sql_files import SQL_DIR, load_sql
from newsdedup_dagster.shared.db.urls import (
    describe_url,
    redact_url,
    sql_identifier,
    sqlalchemy_psycopg2_url,
    with_database,
)

# The name tests and benchmarks use for creating a database on the embedded server.
_ensure_database = ensure_database

__all__ = [
    "APP_DATABASE", "CHECKSUM_PREFIX", "DAGSTER_DATABASE", "MIGRATION_LOCK_KEY", "MIN_PGVECTOR", "SQL_DIR",
    "DatabaseError", "app_database_url", "check_pgvector", "connect", "connection", "dagster_database_url",
    "describe_url", "embedded_server", "ensure_dagster_database", "ensure_database", "ensure_pgvector",
    "ensure_ready", "export_snapshot", "get_pool", "load_sql", "migrate", "migration_checksum", "migration_files", "normalise_sql",
    "redact_url", "require_pgvector_version", "session_identity", "set_local", "set_transaction_snapshot", "sql_identifier",
    "sqlalchemy_psycopg2_url", "stop_embedded_server", "with_database",
]
