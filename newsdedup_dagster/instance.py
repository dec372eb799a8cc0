"""Dagster's own instance storage (runs, events, schedules) on PostgreSQL through dagster-postgres.

`$DAGSTER_HOME/dagster.yaml` belongs to the operator: newsdedup writes one only when none
exists (or when asked to, `--write-instance`) and never changes it otherwise."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote, urlencode

import yaml

from . import config, db

# The instance file newsdedup writes reads its storage URL from this variable, which every
# newsdedup process sets (so the file holds no password and survives a moved server).
PG_URL_VARIABLE = "NEWSDEDUP_DAGSTER_PG_URL"


def instance_file(dagster_home: Path | None = None) -> Path:
    return (dagster_home or config.dagster_home()) / "dagster.yaml"


def default_instance_document() -> dict:
    return {
        "storage": {"postgres": {"postgres_url": {"env": PG_URL_VARIABLE}}},
        # Time order is in the asset graph (previous-hour dependencies), so several runs may go
        # at once; pools (e.g. "clustering") still never run two steps at once.
        "concurrency": {"runs": {"max_concurrent_runs": 4}, "pools": {"default_limit": 1}},
        "telemetry": {"enabled": False},
    }


def write_dagster_yaml(dagster_home: Path | None = None, *, overwrite: bool = False) -> Path | None:
    """Write $DAGSTER_HOME/dagster.yaml when it does not exist (or `overwrite`). Returns the path
    written, or None when an existing file was left alone."""
    path = instance_file(dagster_home)
    if path.exists() and not overwrite:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(default_instance_document(), sort_keys=False))
    return path


def _resolve(value) -> str | None:
    """A dagster.yaml scalar: a literal or {env: NAME} (Dagster's own indirection, resolved as Dagster does)."""
    if isinstance(value, dict) and "env" in value:
        return os.environ.get(value["env"])
    return None if value is None else str(value)


def storage_url(path: Path) -> str | None:
    """The PostgreSQL URL an instance file stores runs in, as dagster-postgres will use it, or None
    when it does not use dagster-postgres (or cannot be read: Dagster then reports it itself)."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return None
    storage = (document.get("storage") or {}).get("postgres")
    if storage is None:
        run_storage = document.get("run_storage") or {}
        if "postgres" not in str(run_storage.get("module", "")):
            return None
        storage = run_storage.get("config") or {}
    if "postgres_url" in storage:
        url = _resolve(storage["postgres_url"])
    elif "postgres_db" in storage:
        fields = {k: _resolve(v) for k, v in (storage["postgres_db"] or {}).items() if k != "params"}
        if not fields.get("hostname") or not fields.get("db_name"):
            return None
        auth = quote(fields.get("username") or "", safe="")
        if fields.get("password"):
            auth += ":" + quote(fields["password"], safe="")
        port = f":{fields['port']}" if fields.get("port") else ""
        scheme = fields.get("scheme") or "postgresql"
        params = storage["postgres_db"].get("params") or {}
        query = "?" + urlencode({k: _resolve(v) for k, v in params.items()}) if params else ""
        url = f"{scheme}://{auth}@{fields['hostname']}{port}/{fields['db_name']}{query}"
    else:
        return None
    return url or None


def _psycopg_url(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return "postgresql://" + rest if scheme.startswith("postgres") else url


def prepare_instance(*, write: bool = True, overwrite: bool = False) -> tuple[Path, str | None]:
    """Everything a newsdedup process does before Dagster opens the instance: DAGSTER_HOME set,
    the instance file written when absent, its URL variable exported, and the storage database
    checked with one quick connection (dagster-postgres would retry, then fail with
    a traceback). Returns the instance file's path and its storage URL (None: not PostgreSQL)."""
    path = instance_file()
    os.environ["DAGSTER_HOME"] = str(path.parent)
    os.environ[PG_URL_VARIABLE] = db.sqlalchemy_psycopg2_url(db.dagster_database_url())
    if overwrite or not path.exists():
        # The storage the new file will name is checked before the file is written.
        storage = db.dagster_database_url()
        check_instance_storage(path, url=storage)
        if write:
            write_dagster_yaml(overwrite=overwrite)
        return path, storage
    return path, check_instance_storage(path)


def check_instance_storage(path: Path | None = None, url: str | None = None) -> str | None:
    """Connect once to the storage database the instance file names (or `url`), creating the
    default `dagster` database when the role may; DatabaseError with the fix otherwise."""
    path = path or instance_file()
    from_file = url is None and path.exists()
    if url is None:
        url = storage_url(path) if from_file else db.dagster_database_url()
    if url is None:
        return None
    if from_file and url.split("://", 1)[0] in ("postgresql", "postgres"):
        # SQLAlchemy 2.1 maps a driverless postgresql:// to psycopg 3, with which dagster-postgres
        # fails on its first statement (`NOTIFY run_events, $1`).
        raise db.DatabaseError(
            f"{path}: a driverless postgresql:// storage URL makes dagster-postgres use psycopg 3, which it "
            "does not support; write postgresql+psycopg2:// (postgres_url) or add "
            "`scheme: postgresql+psycopg2` (postgres_db)"
        )
    url = _psycopg_url(url)
    default = db.dagster_database_url()
    if url == default and not config.dagster_database_url():
        alternative = "set NEWSDEDUP_DAGSTER_DATABASE_URL to a database the role may use"
    elif url == default:
        alternative = "point NEWSDEDUP_DAGSTER_DATABASE_URL at an existing database"
    else:
        alternative = f"change the storage URL in {path}"
    db.ensure_dagster_database(url, db.app_database_url(), alternative=alternative)
    return url


def get_instance():
    """A DagsterInstance backed by Postgres (the instance file is written only when absent)."""
    from dagster import DagsterInstance

    prepare_instance()
    return DagsterInstance.get()


# Console logs of in-process runs at WARNING: the CLI prints its own summary; the full
# event log is in the instance storage (and the UI).
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
