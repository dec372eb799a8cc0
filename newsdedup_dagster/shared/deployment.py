"""The deployment's own settings: directories, databases, the sources file, the fetch mode, who
hears about failures. Declared once (`DeploymentSettings`), read one at a time by the functions
below (each call reads the environment of the process that asks, so a command that sets a
variable for its Dagster runs is seen at once).

This module imports no stage: db.py and every stage that needs a directory or a URL import it,
and config.py re-exports its functions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit

from newsdedup_dagster.shared.settings import invalid, load_setting, setting

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the newsdedup_dagster package (this file is in shared/)
SAMPLE_DATA_DIR = PACKAGE_DIR / "sample_data"
STARTER_SOURCES = PACKAGE_DIR / "sources" / "starter_sources.yaml"
FETCH_MODES = ("live", "replay", "auto")

# The embedded server's buffer cache. PostgreSQL's 128 MB default holds less than the recent window's
# HNSW graph and vectors (100k items: ~0.4 GB), so every pass-2 search re-read pages from the OS
# cache: bench/clustering.py, pass-2 KNN of one hour 0.73 s at 128 MB, 0.47 s at 1 GB (synthetic
# vectors); docs/calibration/pipeline.md#embedded-server-memory
EMBEDDED_SHARED_BUFFERS_MAX_MB = 1024
EMBEDDED_SHARED_BUFFERS_MIN_MB = 128


@dataclass(frozen=True)
class DeploymentSettings:
    """Where the deployment keeps its data and whom it tells: environment variables, and a few
    engineering constants in the calibration file's [deployment] (run config can set none of them)."""

    CALIBRATION: ClassVar[str] = "deployment"  # its section in the calibration file

    database_url: str | None = setting(None, env="NEWSDEDUP_DATABASE_URL", shown="unset = embedded server",
                                       doc="PostgreSQL (pgvector >= 0.8) for the application")
    home: Path = setting(Path(".newsdedup"), env="NEWSDEDUP_HOME", shown="`./.newsdedup`",
                         doc="embedded server (`pg/`), Dagster home, outbox; private (`0700`)")
    embedded_shared_buffers: str = setting(
        "auto", calibrated=True, was="NEWSDEDUP_EMBEDDED_SHARED_BUFFERS", shown="`auto` (a quarter of memory, 128 MB to 1 GB)",
        doc="the embedded server's `shared_buffers` (`512MB`, `2GB`); read when it starts")
    # The one file of the constants chosen on data (docs/CALIBRATION.md#the-calibration-file); the
    # settings module reads it by this name, as it must before any other setting is known.
    calibration_file: Path | None = setting(None, env="NEWSDEDUP_CALIBRATION_FILE",
                                            shown="unset = the declared calibration",
                                            doc="TOML file of calibrated constants that replace their defaults "
                                                "(`[clustering]` `story_threshold = 0.5`; keys in docs/CALIBRATION.md)")
    dagster_database_url: str | None = setting(None, env="NEWSDEDUP_DAGSTER_DATABASE_URL",
                                               shown="`dagster` db on the same server",
                                               doc="Dagster's instance storage")
    dagster_home: Path | None = setting(None, env="DAGSTER_HOME", shown="`$NEWSDEDUP_HOME/dagster`",
                                        doc="where `dagster.yaml` is read (written only when absent); Dagster's own "
                                            "commands refuse to start without it")
    partitions_start: str = setting("2026-11-01-00:00", env="NEWSDEDUP_PARTITIONS_START",
                                    doc="first hourly partition (YYYY-MM-DD-HH:MM), fixed when the definitions load")
    sql_dir: Path | None = setting(None, calibrated=True, was="NEWSDEDUP_SQL_DIR",
                                   shown="the package's `sql/` (a checkout: the repository's `sql/`)",
                                   doc="migrations and named queries")
    sources: Path = setting(SAMPLE_DATA_DIR / "sources.yaml", env="NEWSDEDUP_SOURCES",
                            shown="bundled `sample_data/sources.yaml`",
                            doc="sources file (format at the top of `sources/starter_sources.yaml`)")
    fetch_mode: str = setting("auto", env="NEWSDEDUP_FETCH_MODE", choices=FETCH_MODES,
                              doc="`live` (fetch; past hours re-parse their archive), `replay` (the sources' "
                                  "`replay_file`s), `auto` (replay when every source has one)")
    eval_data_dir: Path = setting(Path("data"), env="NEWSDEDUP_EVAL_DATA_DIR", shown="`./data`",
                                  doc="where the evaluation commands find a labelled file given by bare name "
                                      "(docs/EVALUATION.md); `--data-dir` overrides")
    outbox: Path | None = setting(None, env="NEWSDEDUP_OUTBOX", shown="`$NEWSDEDUP_HOME/outbox`",
                                  doc="rendered digests (and the delivery when no SMTP is set)")
    alert_to: tuple[str, ...] = setting((), env="NEWSDEDUP_ALERT_TO", shown="unset = `<outbox>/alerts/*.eml`",
                                        doc="comma-separated addresses mailed (through the SMTP settings) when a "
                                            "run fails")
    dagster_ui_url: str | None = setting(None, env="NEWSDEDUP_DAGSTER_UI_URL",
                                         doc="public URL of the Dagster UI, for the run link in alerts")
    # Named in the User-Agent of every page the article stage fetches, so a site knows whom to ask.
    contact_url: str = setting("https://github.com/newsdedup/newsdedup", env="NEWSDEDUP_CONTACT_URL",
                               doc="URL (or `mailto:`) in the User-Agent of article page fetches: "
                                   "`newsdedup/<version> (+<this>)`")
    # The deployment's unsubscribe endpoint (docs/OPERATING.md#unsubscribe). RFC 8058's one-click
    # unsubscribe needs an https URI; unset, the link is a mailto: to the sender address.
    unsubscribe_url: str | None = setting(None, env="NEWSDEDUP_UNSUBSCRIBE_URL",
                                          shown="unset = `mailto:` the sender (`NEWSDEDUP_SMTP_FROM`)",
                                          doc="https URL of the unsubscribe endpoint; each digest links to it "
                                              "with `?token=` the reader's token (List-Unsubscribe, one-click "
                                              "POST)")
    # A digest is mailed the day after its day (two days leave room for a late day or a retry); a
    # run of an older day, from the UI or by hand, renders it and mails nobody unless allowed.
    digest_send_max_age_days: int = setting(2, calibrated=True, was="NEWSDEDUP_DIGEST_SEND_MAX_AGE_DAYS", bounds=(1, 3650),
                                            doc="a day's digest older than this many days (UTC) is rendered "
                                                "but not mailed, unless `NEWSDEDUP_DIGEST_ALLOW_OLD_SEND`")
    digest_allow_old_send: bool = setting(False, env="NEWSDEDUP_DIGEST_ALLOW_OLD_SEND",
                                          doc="mail digests of days older than `deployment.digest_send_max_age_days` "
                                              "(to the readers subscribed by the end of that day)")
    clustering_busy_retries: int = setting(5, calibrated=True, was="NEWSDEDUP_CLUSTERING_BUSY_RETRIES",
                                           doc="`stories` retries (not fails) this many times when another "
                                               "clustering run holds the lock past `clustering.lock_timeout_s`")
    clustering_busy_wait: float = setting(60.0, calibrated=True, was="NEWSDEDUP_CLUSTERING_BUSY_WAIT",
                                          doc="seconds between those retries")
    step_retry_delay: float = setting(30.0, env="NEWSDEDUP_STEP_RETRY_DELAY", bounds=(0.0, 3600.0),
                                      doc="seconds before Dagster retries a failed hourly step (twice, the "
                                          "delay doubling): `raw_items` waits a third of it, `story_scores`, "
                                          "`story_translations` and `events` (model calls) twice it; the digest "
                                          "waits twice as long. Fixed at definitions load")
    # Test-only: `POINT[:N]` makes the delivery process kill itself the N-th time it reaches POINT
    # (handed_over | accepted), to prove what a crash there costs. Never set in production.
    test_delivery_crash: str | None = setting(None, env="NEWSDEDUP_TEST_DELIVERY_CRASH",
                                              doc="test only: crash the delivery at a point (stages/digest/send.py)")


def _get(name: str):
    return load_setting(DeploymentSettings, name)


def home_dir() -> Path:
    """$NEWSDEDUP_HOME, default `.newsdedup/` in the working directory."""
    return Path(_get("home")).expanduser().resolve()


def database_url() -> str | None:
    """$NEWSDEDUP_DATABASE_URL or None (= embedded server)."""
    return _get("database_url")


def embedded_shared_buffers() -> str:
    """deployment.embedded_shared_buffers of the calibration file (`512MB`, `2GB`, ...) or `auto`: a quarter of the
    machine's memory, between 128 MB and 1 GB. Only the embedded server reads it."""
    raw = _get("embedded_shared_buffers")
    if raw.lower() == "auto":
        try:
            total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
        except (ValueError, OSError):
            total_mb = 4 * EMBEDDED_SHARED_BUFFERS_MIN_MB
        quarter = total_mb // 4
        return f"{max(EMBEDDED_SHARED_BUFFERS_MIN_MB, min(EMBEDDED_SHARED_BUFFERS_MAX_MB, quarter))}MB"
    number, unit = raw[:-2], raw[-2:].upper()
    if not number.isdigit() or unit not in ("MB", "GB") or int(number) == 0:
        raise invalid("deployment.embedded_shared_buffers", raw, "`auto` or a size such as 512MB or 2GB")
    return f"{int(number)}{unit}"


def dagster_database_url() -> str | None:
    """$NEWSDEDUP_DAGSTER_DATABASE_URL or None (= database `dagster` beside the application's)."""
    return _get("dagster_database_url")


def sql_dir() -> Path:
    """Named SQL and migrations: deployment.sql_dir of the calibration file, else the package's own `sql/` (a wheel ships
    the repository's top-level `sql/` inside the package, see setup.py), else the checkout's."""
    override = _get("sql_dir")
    if override:
        return override
    installed = PACKAGE_DIR / "sql"
    return installed if installed.is_dir() else PACKAGE_DIR.parent / "sql"


def dagster_home() -> Path:
    return dagster_home_variable() or home_dir() / "dagster"


def dagster_home_variable() -> Path | None:
    """$DAGSTER_HOME as Dagster's own commands see it: they refuse to start without it (newsdedup's
    commands fall back to `dagster_home()`'s default and set it for their Dagster runs)."""
    return _get("dagster_home")


def partitions_start() -> str:
    """First hourly partition (format YYYY-MM-DD-HH:MM). Fixed at definitions load."""
    return _get("partitions_start")


def outbox_dir() -> Path:
    return _get("outbox") or home_dir() / "outbox"


def alert_recipients() -> tuple[str, ...]:
    """Who hears about failed runs (comma-separated addresses); none = alert files in the outbox."""
    return _get("alert_to")


def dagster_ui_url() -> str | None:
    """Public URL of the Dagster UI, for links in alerts (e.g. https://dagster.example.org)."""
    return _get("dagster_ui_url")


def contact_url() -> str:
    """$NEWSDEDUP_CONTACT_URL: whom a site can ask about the article fetches (one printable token)."""
    raw = _get("contact_url").strip()
    if not raw or any(c.isspace() or not c.isprintable() or c in "()<>\"" for c in raw):
        raise ValueError("NEWSDEDUP_CONTACT_URL: expected a URL or mailto: address without spaces, brackets or quotes")
    return raw


def unsubscribe_url() -> str | None:
    """$NEWSDEDUP_UNSUBSCRIBE_URL: an absolute https URL without a fragment or credentials (it goes
    into mail headers and links), or None (the links are mailto: the sender)."""
    raw = _get("unsubscribe_url")
    if raw is None:
        return None
    try:
        parts = urlsplit(raw)
        usable = parts.scheme == "https" and bool(parts.hostname) and parts.port != 0
    except ValueError:   # a port that is not a number, a broken IPv6 literal
        usable = False
    if (not usable or parts.fragment or "@" in parts.netloc
            or any(c.isspace() or not c.isprintable() or c in '<>",\\' for c in raw)):
        # The value is not repeated: it might carry credentials.
        raise ValueError("NEWSDEDUP_UNSUBSCRIBE_URL: expected an https URL (RFC 8058 one-click unsubscribe needs "
                         "https) without a fragment, credentials, spaces, quotes, commas or angle brackets")
    return raw


def digest_send_age() -> tuple[int, bool]:
    """(days a digest may be old and still be mailed, whether older days may be mailed anyway)."""
    return _get("digest_send_max_age_days"), _get("digest_allow_old_send")


def delivery_crash_point() -> str | None:
    """Test-only: `POINT[:N]` makes the delivery process kill itself the N-th time it reaches
    POINT (handed_over | accepted), to prove what a crash there costs. Never set in production."""
    return _get("test_delivery_crash")


def sources_file() -> Path:
    return Path(_get("sources")).expanduser().resolve()


def eval_data_dir() -> Path:
    """$NEWSDEDUP_EVAL_DATA_DIR, default `data/` in the working directory."""
    return Path(_get("eval_data_dir")).expanduser()


def fetch_mode() -> str:
    """live | replay | auto (auto: replay when the sources file names replay files, else live)."""
    return _get("fetch_mode")


def step_retry_delay() -> float:
    """Seconds before the first retry of a failed hourly step. Fixed at definitions load."""
    return _get("step_retry_delay")


def clustering_busy_retry() -> tuple[int, float]:
    """(retries, seconds between them) when another clustering run holds the lock past its timeout."""
    return _get("clustering_busy_retries"), _get("clustering_busy_wait")
