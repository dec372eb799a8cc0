-- name: db_create_database
-- A database, its name composed with psycopg.sql.
CREATE DATABASE {}

-- name: db_current_role
-- The role this connection logged in as.
SELECT current_user

-- name: db_database_exists
-- Whether a database of this name exists on the server.
SELECT 1 FROM pg_database WHERE datname = %s

-- name: db_migration_checksum_update
-- Re-record a migration's checksum in the current form (an earlier version hashed the raw file).
UPDATE schema_migrations SET checksum = %s WHERE version = %s

-- name: db_migration_lock
-- Session lock: one process migrates at a time.
SELECT pg_advisory_lock(%s)

-- name: db_migration_record
-- A migration just applied.
INSERT INTO schema_migrations (version, name, checksum) VALUES (%s, %s, %s)

-- name: db_migration_unlock
-- Releases db_migration_lock.
SELECT pg_advisory_unlock(%s)

-- name: db_migrations_applied
-- Applied migrations and their checksums (a changed file is refused).
SELECT version, checksum FROM schema_migrations

-- name: db_migrations_owner
-- Who owns schema_migrations (a migration refused for privileges names that role).
SELECT tableowner FROM pg_tables
WHERE schemaname = current_schema() AND tablename = 'schema_migrations'

-- name: db_migrations_table_create
-- The migrations' own record, created before the first migration.
CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)

-- name: db_migrations_table_exists
-- Whether any migration was ever applied here.
SELECT to_regclass('schema_migrations') IS NOT NULL

-- name: db_pgvector_available
-- The pgvector version the server could install (no row: the server has no pgvector).
SELECT default_version FROM pg_available_extensions WHERE name = 'vector'

-- name: db_pgvector_create
-- Install pgvector in this database.
CREATE EXTENSION IF NOT EXISTS vector

-- name: db_pgvector_installed
-- The pgvector version installed in this database (no row: none).
SELECT extversion FROM pg_extension WHERE extname = 'vector'

-- name: db_schema_create_privilege
-- The current schema and whether this role may create tables in it (migrations need to).
SELECT current_schema(), has_schema_privilege(current_schema(), 'CREATE')

-- name: db_session_identity
-- Who and where this connection is, for messages.
SELECT current_user, current_database()

-- name: set_local
-- Transaction-local settings (db.set_local): set_config(name, value, true) is SET LOCAL with the
-- name and value bound.
SELECT set_config(s.name, s.value, true) FROM unnest(%(names)s::text[], %(values)s::text[]) AS s(name, value)

-- name: snapshot_export
-- This transaction's snapshot, for other sessions to read the same state through (SET TRANSACTION
-- SNAPSHOT): parallel KNN workers, the background publisher. Valid while the transaction stays open.
SELECT pg_export_snapshot()

-- name: snapshot_reader_set
-- Read the state of the exported snapshot (its id composed with psycopg.sql).
SET TRANSACTION SNAPSHOT {}
