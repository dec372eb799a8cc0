"""Transaction-local settings: `db.set_local(conn, enable_sort="off")` instead of a SET LOCAL
statement per setting."""

from __future__ import annotations

import psycopg

from newsdedup_dagster.shared.db.sql_files import load_sql

# The settings callers may change, keyword -> setting name (a dotted name is spelt with `_`). Only
# these: the name is a bound value, but a caller's typo or an arbitrary setting is refused here.
SETTINGS = {
    "enable_seqscan": "enable_seqscan",
    "enable_sort": "enable_sort",
    "hnsw_ef_search": "hnsw.ef_search",
    "hnsw_iterative_scan": "hnsw.iterative_scan",
    "lock_timeout": "lock_timeout",
    "maintenance_work_mem": "maintenance_work_mem",
}


def set_local(conn: psycopg.Connection, **settings: str | int) -> None:
    """Each setting for the rest of the current transaction, as SET LOCAL does (it dies with the
    transaction, so a pooled connection never carries it over), in one round trip."""
    unknown = sorted(set(settings) - SETTINGS.keys())
    if unknown:
        raise ValueError(f"not a setting set_local may change: {', '.join(unknown)} (allowed: {', '.join(SETTINGS)})")
    conn.execute(load_sql("set_local"), {"names": [SETTINGS[key] for key in settings],
                                         "values": [str(value) for value in settings.values()]})
