"""Schema migrations: sql/migrations/NNN_name.sql applied once each, in order, under an advisory
lock; applied files are checked by a checksum that ignores comments and layout."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
from pathlib import Path

import psycopg

from newsdedup_dagster.shared.db.connections import connect, session_identity
from newsdedup_dagster.shared.db.errors import DatabaseError, first_line
from newsdedup_dagster.shared.db.extension import check_pgvector, ensure_pgvector
from newsdedup_dagster.shared.db.sql_files import SQL_DIR, load_sql
from newsdedup_dagster.shared.db.urls import sql_identifier

log = logging.getLogger(__name__)

# Arbitrary constant: the advisory-lock key that serialises migrations across processes.
MIGRATION_LOCK_KEY = 727_001


def _require_create_privilege(conn: psycopg.Connection) -> None:
    """Migrations create tables in the role's current schema: say so before the first one fails."""
    schema, allowed = conn.execute(
        load_sql("db_schema_create_privilege")
    ).fetchone()
    role, dbname = session_identity(conn)
    if schema is None:
        raise DatabaseError(
            f"role \"{role}\" has no schema to create tables in (search_path finds none) in database "
            f"\"{dbname}\": an administrator runs CREATE SCHEMA newsdedup AUTHORIZATION "
            f"{sql_identifier(role)}; and ALTER ROLE {sql_identifier(role)} "
            "SET search_path = newsdedup;"
        )
    if not allowed:
        raise DatabaseError(
            f"role \"{role}\" may not create tables in schema \"{schema}\" of database \"{dbname}\", which "
            f"the migrations need: an administrator runs, connected to database \"{dbname}\": "
            f"GRANT CREATE ON SCHEMA {sql_identifier(schema)} TO "
            f"{sql_identifier(role)}; (or makes that role the database's owner)"
        )


def _privilege_error(conn: psycopg.Connection, what: str, exc: psycopg.Error) -> DatabaseError:
    """A one-line explanation for a migration step the role is not allowed to do."""
    with contextlib.suppress(psycopg.Error):
        conn.rollback()
    role, dbname = session_identity(conn)
    owner = conn.execute(
        load_sql("db_migrations_owner")
    ).fetchone()
    owned = (
        f"; newsdedup's tables belong to role \"{owner[0]}\": run `newsdedup migrate` as that role, "
        f"or have an administrator give them to \"{role}\" (ALTER TABLE … OWNER TO "
        f"{sql_identifier(role)})"
        if owner and owner[0] != role else ""
    )
    return DatabaseError(
        f"role \"{role}\" lacks a privilege {what} needs in database \"{dbname}\": {first_line(exc)}{owned}"
    )


_DOLLAR_QUOTE = re.compile(r"\$(?:[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_\x80-\U0010ffff]*)?\$")
CHECKSUM_PREFIX = "sql-v2:"


def normalise_sql(text: str) -> str:
    """SQL without its comments and with whitespace runs collapsed to one space, outside string
    literals, quoted identifiers and dollar-quoted bodies (kept byte for byte). Two files with
    the same normal form send the server the same statements."""
    out: list[str] = []
    gap = False  # whitespace or a comment seen since the last token character

    def emit(chunk: str) -> None:
        nonlocal gap
        if gap and out:
            out.append(" ")
        gap = False
        out.append(chunk)

    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char.isspace():
            gap, i = True, i + 1
        elif text.startswith("--", i):
            newline = text.find("\n", i)
            gap, i = True, (n if newline < 0 else newline)
        elif text.startswith("/*", i):  # block comments nest in PostgreSQL
            depth, j = 0, i
            while j < n:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                    if depth == 0:
                        break
                else:
                    j += 1
            gap, i = True, j
        elif char in "'\"":
            backslashes = char == "'" and i > 0 and text[i - 1] in "eE" and (
                i < 2 or not (text[i - 2].isalnum() or text[i - 2] in "_$"))
            j = i + 1
            while j < n:
                if backslashes and text[j] == "\\":
                    j += 2
                elif text[j] == char:
                    if text.startswith(char * 2, j):
                        j += 2
                    else:
                        break
                else:
                    j += 1
            emit(text[i:j + 1])
            i = j + 1
        elif char == "$" and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")) \
                and (tag := _DOLLAR_QUOTE.match(text, i)):
            close = text.find(tag.group(0), tag.end())
            j = n if close < 0 else close + len(tag.group(0))
            emit(text[i:j])
            i = j
        else:
            emit(char)
            i += 1
    return "".join(out)


def migration_checksum(body: str) -> str:
    """Checksum of what a migration does, blind to its comments and layout: editing an applied
    migration's comments must not make existing databases complain."""
    return CHECKSUM_PREFIX + hashlib.sha256(normalise_sql(body).encode()).hexdigest()


def migration_files(directory: Path | None = None) -> list[tuple[int, str, Path]]:
    files = []
    for path in sorted((directory or SQL_DIR / "migrations").glob("*.sql")):
        match = re.match(r"(\d+)_(.+)\.sql$", path.name)
        if match:
            files.append((int(match.group(1)), match.group(2), path))
    return sorted(files)


def _verify_applied(conn: psycopg.Connection, version: int, path: Path, body: str, recorded: str) -> None:
    """Applied migrations are never re-run, so a changed statement in an applied file is a bug
    (schema changes go in a new file): warn. Comment and whitespace edits are not changes."""
    current = migration_checksum(body)
    if recorded == current:
        return
    if not recorded.startswith(CHECKSUM_PREFIX):
        # Recorded by an earlier version as the hash of the raw file, which cannot tell a comment
        # edit from a change: re-record it once in the current form (trusting the file, as the
        # migration is not re-run either way) and say so when the raw file differs.
        if recorded != hashlib.sha256(body.encode()).hexdigest():
            log.info("migration %s (%s): re-recording a checksum of the earlier form; the file was "
                     "edited since it was applied here", version, path.name)
        with contextlib.suppress(psycopg.errors.InsufficientPrivilege):  # a read-only role keeps the old form
            conn.execute(load_sql("db_migration_checksum_update"), (current, version))
        return
    log.warning("migration %s (%s) changed after it was applied here; "
                "put schema changes in a new migration file", version, path.name)


def migrate(url: str | None = None, migrations_dir: Path | None = None) -> list[int]:
    """Apply pending migrations in order, once, under an advisory lock. Returns versions applied.

    Everything the role cannot do is a one-line DatabaseError with the administrator's SQL."""
    applied_now: list[int] = []
    with connect(url, autocommit=True) as conn:
        check_pgvector(conn)
        conn.execute(load_sql("db_migration_lock"), (MIGRATION_LOCK_KEY,))
        try:
            ensure_pgvector(conn)
            files = migration_files(migrations_dir)
            has_table = conn.execute(load_sql("db_migrations_table_exists")).fetchone()[0]
            try:
                done = (dict(conn.execute(load_sql("db_migrations_applied")).fetchall())
                        if has_table else {})
            except psycopg.errors.InsufficientPrivilege as exc:
                raise _privilege_error(conn, "reading schema_migrations", exc) from None
            if not has_table or any(version not in done for version, _, _ in files):
                _require_create_privilege(conn)
            if not has_table:  # (IF NOT EXISTS alone would still need CREATE on the schema)
                conn.execute(
                    load_sql("db_migrations_table_create")
                )
            for version, name, path in files:
                body = path.read_text(encoding="utf-8")
                if version in done:
                    _verify_applied(conn, version, path, body, done[version])
                    continue
                try:
                    with conn.transaction():
                        conn.execute(body)
                        conn.execute(
                            load_sql("db_migration_record"),
                            (version, name, migration_checksum(body)),
                        )
                except psycopg.errors.InsufficientPrivilege as exc:
                    raise _privilege_error(conn, f"migration {path.name}", exc) from None
                applied_now.append(version)
            check_pgvector(conn)
        finally:
            with contextlib.suppress(psycopg.Error):
                conn.execute(load_sql("db_migration_unlock"), (MIGRATION_LOCK_KEY,))
    return applied_now
