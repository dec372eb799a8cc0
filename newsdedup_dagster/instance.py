"""Dagster's own instance storage (runs, events, schedules) on the same PostgreSQL server,
in the `dagster` database, through dagster-postgres."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from . import config, db


def write_dagster_yaml(dagster_home: Path | None = None) -> Path:
    """Write $DAGSTER_HOME/dagster.yaml pointing storage at the `dagster` database.

    With $NEWSDEDUP_DATABASE_URL set, the URL is referenced through the environment
    (NEWSDEDUP_DAGSTER_PG_URL) so no password is written to disk."""
    home = dagster_home or config.dagster_home()
    home.mkdir(parents=True, exist_ok=True)
    pg_url = db.sqlalchemy_psycopg2_url(db.dagster_database_url())
    if config.database_url():
        os.environ["NEWSDEDUP_DAGSTER_PG_URL"] = pg_url
        url_value: object = {"env": "NEWSDEDUP_DAGSTER_PG_URL"}
    else:
        url_value = pg_url  # embedded: unix socket, trust auth, no secret
    document = {
        "storage": {"postgres": {"postgres_url": url_value}},
        # Stories depend on earlier hours: one run at a time keeps backfills in time order,
        # and pools (e.g. "clustering") never run two steps at once.
        "concurrency": {"runs": {"max_concurrent_runs": 1}, "pools": {"default_limit": 1}},
        "telemetry": {"enabled": False},
    }
    path = home / "dagster.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    os.environ["DAGSTER_HOME"] = str(home)
    return path


def get_instance():
    """A DagsterInstance backed by Postgres (writes dagster.yaml first)."""
    from dagster import DagsterInstance

    write_dagster_yaml()
    return DagsterInstance.get()


# Console logs of in-process runs at WARNING: the CLI prints its own summary; the full
# event log is in the instance storage (and the UI).
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
