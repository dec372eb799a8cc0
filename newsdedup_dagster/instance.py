"""Dagster's own instance storage (runs, events, schedules) on PostgreSQL through dagster-postgres.

`$DAGSTER_HOME/dagster.yaml` belongs to the operator: newsdedup writes one only when none
exists (or when asked to, `--write-instance`) and never changes it otherwise. The file it writes
names `NewsdedupPostgresStorage` (below), which finds Dagster's database from the same settings
as every newsdedup process (`NEWSDEDUP_DAGSTER_DATABASE_URL`, `NEWSDEDUP_DATABASE_URL`, or the
embedded server under `NEWSDEDUP_HOME`): `dagster-webserver`, `dagster-daemon run`,
`dagster asset materialize` and `dg` need only `DAGSTER_HOME` and the deployment's own settings."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from urllib.parse import quote, urlencode

import yaml
from dagster import DagsterInstance
from dagster_postgres import DagsterPostgresStorage

from newsdedup_dagster import config
from newsdedup_dagster.shared import db

STORAGE_CLASS = "NewsdedupPostgresStorage"
# SHA-256 of the files earlier versions wrote. The first two (max_concurrent_runs 4 and 1) had their
# storage URL in a variable only newsdedup's own processes set, so Dagster's own commands failed on
# them; the third named Dagster's default run coordinator, which queues a run whatever its numbers.
# Such a file, unchanged, is replaced by the current one.
EARLIER_INSTANCE_FILES = frozenset({
    "af4f2cf8a8abe51301521632a1eea57b3660cd9ce6f7bfc13f1beecfa9788771",
    "9811cffd8454f3dd67f08f7ed2afe76d1c75a96e2b50bb9fb549f4f8853ecde1",
    "26dffd76209a7efd3f54fd33874e92fdd7a97e0131e867a23dc7480d44b969c7",
})
# Dagster's queued run coordinator that refuses out-of-bounds run config before queuing a run.
RUN_COORDINATOR = {"module": "newsdedup_dagster.run_coordinator", "class": "ValidatingRunCoordinator", "config": {}}


class NewsdedupPostgresStorage(DagsterPostgresStorage):
    """dagster-postgres storage on the database newsdedup's settings name (`db.dagster_database_url`,
    starting the embedded server when no URL is set), checked with one connection first (and
    created when the role may): Dagster's own processes need no variable of their own, and
    the file holds no password."""

    @classmethod
    def config_type(cls):
        return {}

    @classmethod
    def from_config_value(cls, inst_data, config_value):  # noqa: ARG003 (nothing to configure)
        url = check_instance_storage(url=db.dagster_database_url())
        return cls(postgres_url=db.sqlalchemy_psycopg2_url(url), inst_data=inst_data)


def instance_file(dagster_home: Path | None = None) -> Path:
    return (dagster_home or config.dagster_home()) / "dagster.yaml"


def default_instance_document() -> dict:
    return {
        "storage": {"custom": {"module": __name__, "class": STORAGE_CLASS, "config": {}}},
        # Time order is in the asset graph (previous-hour dependencies), so several runs may go
        # at once; pools (e.g. "newsdedup_hourly") still never run two steps at once.
        # The queue is Dagster's; run config is checked against its bounds before a run is queued.
        "run_coordinator": RUN_COORDINATOR,
        "concurrency": {"runs": {"max_concurrent_runs": 4}, "pools": {"default_limit": 1}},
        "telemetry": {"enabled": False},
    }


def write_dagster_yaml(dagster_home: Path | None = None, *, overwrite: bool = False) -> Path | None:
    """Write $DAGSTER_HOME/dagster.yaml when it does not exist, when it is one an earlier version
    wrote and nobody changed, or when asked (`overwrite`). Returns the path written, or None when
    an existing file was left alone."""
    path = instance_file(dagster_home)
    if path.exists() and not overwrite and not written_by_earlier_version(path):
        return None
    private_dagster_home(path.parent)
    path.write_text(yaml.safe_dump(default_instance_document(), sort_keys=False))
    return path


def private_dagster_home(folder: Path) -> None:
    """Dagster's home holds run logs, compute logs and the instance file: 0700, like newsdedup's
    home. When it is an ancestor of newsdedup's home (and so of the embedded server's data
    directory), the traversal bits a root-started server's user needs stay (see db.py)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = folder.stat().st_mode & 0o7777
    keep = mode & 0o011 if config.home_dir().resolve().is_relative_to(folder.resolve()) else 0
    if mode & 0o077 != keep:
        folder.chmod((mode & ~0o077) | keep)


def read_document(path: Path) -> dict | None:
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    return document if isinstance(document, dict) else None


def written_by_earlier_version(path: Path) -> bool:
    """The file is one an earlier version wrote, unchanged since."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() in EARLIER_INSTANCE_FILES
    except OSError:
        return False


def uses_newsdedup_storage(document: dict) -> bool:
    custom = (document.get("storage") or {}).get("custom") or {}
    return custom.get("module") == __name__ and custom.get("class") == STORAGE_CLASS


def unset_variables(path: Path) -> list[str]:
    """The `{env: NAME}` references in an instance file whose variable is unset or empty here:
    Dagster's processes started in this environment fail on them (DagsterInvalidConfigError)."""
    document = read_document(path)
    missing: list[str] = []

    def walk(value) -> None:
        if isinstance(value, dict):
            if set(value) == {"env"} and isinstance(value["env"], str):
                if not os.environ.get(value["env"]) and value["env"] not in missing:
                    missing.append(value["env"])
                return
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(document)
    return missing


def _resolve(value) -> str | None:
    """A dagster.yaml scalar: a literal or {env: NAME} (Dagster's own indirection, resolved as Dagster does)."""
    if isinstance(value, dict) and "env" in value:
        return os.environ.get(value["env"])
    return None if value is None else str(value)


def storage_url(path: Path) -> str | None:
    """The PostgreSQL URL an instance file stores runs in, as dagster-postgres will use it, or None
    when it does not use dagster-postgres (or cannot be read: Dagster then reports it itself)."""
    document = read_document(path)
    if document is None:
        return None
    if uses_newsdedup_storage(document):
        return db.sqlalchemy_psycopg2_url(db.dagster_database_url())
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
    """Everything a newsdedup process does before Dagster opens the instance: DAGSTER_HOME set
    (as Dagster's own commands need it), the instance file written when absent, and the storage
    database checked with one quick connection (dagster-postgres would retry, then fail with a
    traceback). Nothing else is put into the environment, so a newsdedup process sees the
    instance as `dagster-webserver` and `dagster-daemon` do. Returns the instance file's path
    and its storage URL (None: not PostgreSQL)."""
    path = instance_file()
    os.environ["DAGSTER_HOME"] = str(path.parent)
    private_dagster_home(path.parent)
    if overwrite or not path.exists() or written_by_earlier_version(path):
        # The storage the new file will name is checked before the file is written.
        storage = check_instance_storage(path, url=db.dagster_database_url())
        if write:
            write_dagster_yaml(overwrite=True)
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
    prepare_instance()
    return DagsterInstance.get()


# Console logs of in-process runs at WARNING: the CLI prints its own summary; the full
# event log is in the instance storage (and the UI).
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
