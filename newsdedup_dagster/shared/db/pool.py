"""Process-wide connection pools (pgvector registered on each connection), opened once the
database is migrated; and the release of this process's handles."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from newsdedup_dagster.shared.db.embedded import release_embedded_server
from newsdedup_dagster.shared.db.errors import DatabaseError
from newsdedup_dagster.shared.db.locations import app_database_url
from newsdedup_dagster.shared.db.migrations import migrate
from newsdedup_dagster.shared.db.urls import describe_url


def _register_vector(conn: psycopg.Connection) -> None:
    register_vector(conn)
    conn.commit()  # leave the pooled connection idle, not in a transaction


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
    for pool in list(_pools.values()):
        with contextlib.suppress(Exception):
            pool.close()
    _pools.clear()
    release_embedded_server()
