"""`newsdedup doctor`: check every part a deployment needs and say how to fix what is wrong.

Each line is OK / WARN / FAIL with what was found and, when not OK, the fix. The exit code is 1
when anything FAILs. Nothing is sent anywhere: the LLM endpoint is only listed (one 1-token call
with --live), SMTP only connects and authenticates. Every finding passes through the one redaction
(redaction.py): an endpoint that quotes the key it was sent, or a URL's password, never reaches
the screen.
"""

from __future__ import annotations

import json
import shutil
import smtplib
import ssl
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from newsdedup_dagster.shared import db, deployment
from newsdedup_dagster.shared.db.urls import url_passwords
from newsdedup_dagster.shared.redaction import redact

OK, WARN, FAIL = "OK", "WARN", "FAIL"
# Free disk under NEWSDEDUP_HOME: below these the archive and the database soon stop writing.
DISK_WARN_BYTES = 5 * 1024**3
DISK_FAIL_BYTES = 500 * 1024**2
# A daemon heartbeat older than this means no daemon is running (it beats every ~30 s).
DAEMON_HEARTBEAT_MAX_AGE_S = 120
# The oldest patch release of each supported Python with the known fixes in the standard library
# parts that read untrusted input here: `email` (digest and alert mail), `urllib.parse` (feed and
# article links), `html.parser` (feed markup). Each is the 2026-03-03 security release (3.13: its
# February release) that fixed CVE-2026-1299 and CVE-2025-11468 (email header injection), following
# the html.parser fixes of CVE-2025-6069 and the urllib.parse ones of CVE-2024-11168 / CVE-2023-24329;
# docs/DEPLOYING.md#python-patch-level lists them.
PYTHON_MIN_PATCH = {(3, 11): 15, (3, 12): 13, (3, 13): 12}


@dataclass
class Finding:
    status: str
    check: str
    detail: str
    fix: str = ""


def register(subparsers) -> None:
    parser = subparsers.add_parser("doctor", help="check Python, the database, Dagster, sources, models, SMTP and disk")
    parser.add_argument("--live", action="store_true", help="also make one 1-token call to each LLM model")
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.set_defaults(func=cmd_doctor)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


# ------------------------------------------------------------------ checks
def check_database() -> list[Finding]:
    try:
        url = db.app_database_url()
        with db.connect(url, autocommit=True) as conn:
            version = conn.execute(db.load_sql("server_version_number")).fetchone()[0]
            found = [Finding(OK, "database", f"{db.redact_url(url)}: PostgreSQL {version}")]
            try:
                vector = db.check_pgvector(conn)
            except db.DatabaseError as exc:
                return found + [Finding(FAIL, "pgvector", str(exc), "install or upgrade pgvector (>= 0.8)")]
            if not vector:
                found.append(Finding(WARN, "pgvector", "available but not created in this database",
                                     "run `newsdedup migrate` (or CREATE EXTENSION vector as an administrator)"))
            else:
                found.append(Finding(OK, "pgvector", f"version {vector}"))
            has_table = conn.execute(db.load_sql("db_migrations_table_exists")).fetchone()[0]
            applied = {r[0] for r in conn.execute(db.load_sql("db_migration_versions"))} if has_table else set()
    except Exception as exc:  # one line whatever the driver raised
        return [Finding(FAIL, "database", _first_line(exc),
                        "check NEWSDEDUP_DATABASE_URL (unset = embedded server under NEWSDEDUP_HOME)")]
    pending = [f"{v:03d}" for v, _name, _path in db.migration_files() if v not in applied]
    if pending:
        found.append(Finding(FAIL, "migrations", f"{len(pending)} pending: {', '.join(pending)}",
                             "run `newsdedup migrate`"))
    else:
        found.append(Finding(OK, "migrations", f"{len(applied)} applied, none pending"))
    return found


def check_dagster() -> list[Finding]:
    """The instance as Dagster's own processes (`dagster-webserver`, `dagster-daemon run`,
    `dagster asset materialize`, `dg`) started in this environment load it: from $DAGSTER_HOME,
    with nothing added to the environment (doctor, unlike the running commands, sets nothing)."""
    from newsdedup_dagster.instance import (  # deferred on purpose: fast --help
        RUN_COORDINATOR,
        read_document,
        unset_variables,
        uses_newsdedup_storage,
        written_by_earlier_version,
    )
    from newsdedup_dagster.run_coordinator import ValidatingRunCoordinator  # deferred on purpose: fast --help

    home = deployment.dagster_home()
    yaml_path = home / "dagster.yaml"
    found: list[Finding] = []
    if deployment.dagster_home_variable() is None:
        found.append(Finding(WARN, "dagster home", f"DAGSTER_HOME is unset: newsdedup's commands use {home}, "
                                                   "Dagster's own commands refuse to start without it",
                             f"export DAGSTER_HOME={home} where dagster-webserver and dagster-daemon run"))
    if not yaml_path.exists():
        return found + [Finding(WARN, "dagster instance", f"no {yaml_path}",
                                "run `newsdedup migrate --write-instance` (or `newsdedup dev`) to write one")]
    earlier = written_by_earlier_version(yaml_path)
    if earlier and not uses_newsdedup_storage(read_document(yaml_path) or {}):
        return found + [Finding(FAIL, "dagster instance", f"{yaml_path}: written by an earlier newsdedup, its "
                                                          "storage URL is in a variable Dagster's commands never get",
                                "run `newsdedup migrate --write-instance` (newsdedup's current file needs no variable)")]
    missing = unset_variables(yaml_path)
    if missing:
        return found + [Finding(FAIL, "dagster instance", f"{yaml_path} reads {', '.join(missing)}, unset in this "
                                                          "environment: Dagster's processes fail to load it",
                                "set them where dagster-webserver and dagster-daemon run")]
    try:
        from dagster import DagsterInstance  # deferred on purpose: fast --help

        instance = DagsterInstance.from_config(str(home))
        runs = instance.get_runs_count()
        found.append(Finding(OK, "dagster instance", f"{yaml_path}: storage reachable, {runs} runs"))
        beats = instance.get_daemon_heartbeats()
        coordinator = instance.run_coordinator
    except Exception as exc:
        return found + [Finding(FAIL, "dagster instance", f"{yaml_path}: {_first_line(exc)}",
                                "check the storage section of dagster.yaml (and NEWSDEDUP_DAGSTER_DATABASE_URL)")]
    if not isinstance(coordinator, ValidatingRunCoordinator):
        found.append(Finding(
            WARN, "dagster run coordinator",
            f"{yaml_path} names {type(coordinator).__name__}: a run with a number out of its bounds or a language "
            "the deployment does not publish is queued and refused only when its step starts",
            "run `newsdedup migrate --write-instance`" if earlier else
            f"add `run_coordinator: {{module: {RUN_COORDINATOR['module']}, class: {RUN_COORDINATOR['class']}}}` "
            f"to {yaml_path} (its queue settings stay under `concurrency`)"))
    else:
        found.append(Finding(OK, "dagster run coordinator", "run config is checked against its bounds before a run "
                                                            "is queued"))
    now = time.time()
    fresh = sorted(name for name, beat in beats.items() if now - beat.timestamp <= DAEMON_HEARTBEAT_MAX_AGE_S)
    if fresh:
        found.append(Finding(OK, "dagster daemon", f"heartbeat from {', '.join(fresh)}"))
    else:
        found.append(Finding(WARN, "dagster daemon", "no recent heartbeat: schedules, sensors and backfills wait",
                             "run `dagster-daemon run -m newsdedup_dagster.definitions` with this DAGSTER_HOME"))
    return found


def check_sources() -> list[Finding]:
    from newsdedup_dagster import config  # deferred on purpose: fast --help
    from newsdedup_dagster.shared.sources import SourcesConfigError, load_sources  # deferred with config: fast --help

    path = deployment.sources_file()
    try:
        sources = load_sources(path)
    except SourcesConfigError as exc:  # its problems name file, line and entry; the first one is shown
        more = f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""
        return [Finding(FAIL, "sources", f"{exc.problems[0]}{more}", "fix the file (format: see its header)")]
    except Exception as exc:
        return [Finding(FAIL, "sources", f"{path}: {_first_line(exc)}", "fix the file (format: see its header)")]
    enabled = [s for s in sources if s.enabled]
    langs = sorted({s.language for s in enabled})
    if not enabled:
        return [Finding(FAIL, "sources", f"{path}: no enabled source", "enable at least one source")]
    found = [Finding(OK, "sources", f"{path}: {len(enabled)} enabled of {len(sources)}, "
                                    f"{len(langs)} languages ({', '.join(langs)})")]
    # A private network is the statement of one source (allow_private: true) and of the deployment
    # (NEWSDEDUP_FETCH_ALLOW_PRIVATE, the networks such sources reach): both are shown.
    intranet = [s.id for s in enabled if s.allow_private]
    networks = ", ".join(config.ingest_settings().allow_private)
    if intranet and networks:
        found.append(Finding(OK, "private networks", f"{', '.join(intranet)} may reach {networks}; every other "
                                                     "source reaches public addresses only"))
    elif intranet:
        found.append(Finding(WARN, "private networks", f"{', '.join(intranet)} say allow_private: true but "
                                                       "NEWSDEDUP_FETCH_ALLOW_PRIVATE is empty: public addresses only",
                             "name their networks in NEWSDEDUP_FETCH_ALLOW_PRIVATE"))
    elif networks:
        found.append(Finding(WARN, "private networks", f"NEWSDEDUP_FETCH_ALLOW_PRIVATE={networks} but no enabled "
                                                       "source says allow_private: true: no source reaches them",
                             "add allow_private: true to the intranet feed's entry in the sources file"))
    return found


def check_llm(live: bool) -> list[Finding]:
    from newsdedup_dagster import config  # deferred on purpose: fast --help

    settings = config.llm_settings()
    if settings.offline:
        return [Finding(WARN, "llm", "no endpoint: scores, headlines and translations use the offline fallback",
                        "set NEWSDEDUP_LLM_BASE_URL and NEWSDEDUP_LLM_API_KEY")]
    from openai import OpenAI  # deferred on purpose: fast --help

    client = OpenAI(base_url=settings.base_url, api_key=settings.api_key or "unset",
                    timeout=min(settings.timeout_s, 15.0), max_retries=0)
    try:
        listed = {m.id for m in client.models.list()}
    except Exception as exc:
        return [Finding(FAIL, "llm", f"{settings.base_url}: {_first_line(exc)}",
                        "check NEWSDEDUP_LLM_BASE_URL / NEWSDEDUP_LLM_API_KEY")]
    found = [Finding(OK, "llm", f"{settings.base_url}: reachable, {len(listed)} models listed")]
    for task, model in (("scoring", settings.scoring_model), ("translation", settings.translation_model),
                        ("narrative", settings.narrative_model)):
        if listed and model not in listed:
            found.append(Finding(WARN, f"llm {task} model", f"{model!r} is not in the endpoint's model list",
                                 f"set NEWSDEDUP_{task.upper()}_MODEL to a listed model"))
            continue
        if live:
            try:
                client.chat.completions.create(model=model, max_tokens=1,
                                               messages=[{"role": "user", "content": "Reply with OK."}])
            except Exception as exc:
                found.append(Finding(FAIL, f"llm {task} model", f"{model}: {_first_line(exc)}",
                                     f"check NEWSDEDUP_{task.upper()}_MODEL and the key's access"))
                continue
        found.append(Finding(OK, f"llm {task} model", f"{model}" + (" answered a 1-token call" if live else " listed")))
    return found


def check_embeddings() -> list[Finding]:
    from newsdedup_dagster import config  # deferred on purpose: fast --help
    from newsdedup_dagster.stages.embeddings.providers import make_embedder  # deferred on purpose: fast --help

    try:
        settings = config.embedding_settings()
        embedder = make_embedder(settings)
        vectors = embedder.embed(["newsdedup doctor"])
    except Exception as exc:
        return [Finding(FAIL, "embeddings", _first_line(exc), "check the NEWSDEDUP_EMBEDDING_* settings")]
    dims = int(vectors.shape[1])
    found = [Finding(OK, "embeddings", f"{embedder.model_id}: loads, {dims} dimensions")]
    try:
        from newsdedup_dagster.stages.embeddings.store import active_model  # deferred on purpose: fast --help

        with db.connect(db.app_database_url()) as conn:
            active = active_model(conn)
    except Exception:
        return found  # the database finding already says what is wrong
    if active is None:
        found.append(Finding(OK, "embedding model", "none recorded yet (the first hour records this one)"))
    elif active.model != embedder.model_id or active.dims != dims:
        found.append(Finding(FAIL, "embedding model",
                             f"database vectors are {active.model} ({active.dims}-d), configured {embedder.model_id} "
                             f"({dims}-d)", "run `newsdedup reembed` or restore the previous model settings"))
    else:
        found.append(Finding(OK, "embedding model", f"matches the database's active model ({active.dims}-d)"))
    return found


def check_smtp() -> list[Finding]:
    from newsdedup_dagster import config  # deferred on purpose: fast --help

    try:
        smtp = config.mail_settings()
    except Exception as exc:
        return [Finding(FAIL, "smtp", _first_line(exc), "fix the NEWSDEDUP_SMTP_* settings")]
    if not smtp.configured:
        return [Finding(WARN, "smtp", "no NEWSDEDUP_SMTP_HOST: digests go to the outbox only",
                        "set NEWSDEDUP_SMTP_HOST (and _PORT, _SECURITY, _USER, _PASSWORD, _FROM) to mail them")]
    where = smtp.describe()
    try:
        if smtp.security == "ssl":
            client = smtplib.SMTP_SSL(smtp.host, smtp.effective_port, timeout=min(smtp.timeout_s, 15.0),
                                      context=ssl.create_default_context())
        else:
            client = smtplib.SMTP(smtp.host, smtp.effective_port, timeout=min(smtp.timeout_s, 15.0))
        try:
            client.ehlo()
            if smtp.security == "starttls":
                client.starttls(context=ssl.create_default_context())
                client.ehlo()
            if smtp.user:
                client.login(smtp.user, smtp.password or "")
        finally:
            try:
                client.quit()
            except (smtplib.SMTPException, OSError):
                client.close()
    except smtplib.SMTPAuthenticationError:
        return [Finding(FAIL, "smtp", f"{where}: authentication refused",
                        "check NEWSDEDUP_SMTP_USER / NEWSDEDUP_SMTP_PASSWORD")]
    except (smtplib.SMTPException, OSError) as exc:
        return [Finding(FAIL, "smtp", f"{where}: {_first_line(exc)}",
                        "check NEWSDEDUP_SMTP_HOST / _PORT / _SECURITY and that the server is reachable")]
    return [Finding(OK, "smtp", f"{where}: connected" + (" and authenticated" if smtp.user else ""))]


def check_disk() -> list[Finding]:
    home = deployment.home_dir()
    probe = home if home.exists() else next((p for p in home.parents if p.exists()), Path("/"))
    free = shutil.disk_usage(probe).free
    detail = f"{free / 1024**3:.1f} GiB free under {probe}"
    if free < DISK_FAIL_BYTES:
        return [Finding(FAIL, "disk", detail, "free space or move NEWSDEDUP_HOME; `newsdedup prune` thins old data")]
    if free < DISK_WARN_BYTES:
        return [Finding(WARN, "disk", detail, "`newsdedup prune` thins old data")]
    return [Finding(OK, "disk", detail)]


def check_python(version: tuple[int, int, int] | None = None) -> list[Finding]:
    major, minor, micro = version or sys.version_info[:3]
    found = f"Python {major}.{minor}.{micro}"
    minimum = PYTHON_MIN_PATCH.get((major, minor))
    if minimum is not None and micro < minimum:
        return [Finding(WARN, "python", f"{found}: older than {major}.{minor}.{minimum}, which has the security fixes "
                                        "to email, urllib.parse and html.parser this project relies on",
                        f"upgrade to Python {major}.{minor}.{minimum} or later (docs/DEPLOYING.md#python-patch-level)")]
    return [Finding(OK, "python", found)]


def configured_secrets() -> tuple[str, ...]:
    """Every key and password the environment configures, the databases' included: no finding shows one."""
    from newsdedup_dagster import config  # deferred on purpose: fast --help

    found = list(config.configured_secrets())
    for url in (deployment.database_url(), deployment.dagster_database_url()):
        found.extend(url_passwords(url))
    return tuple(found)


def run_checks(live: bool = False) -> list[Finding]:
    checks: list[Callable[[], list[Finding]]] = [
        check_python, check_database, check_dagster, check_sources, lambda: check_llm(live), check_embeddings,
        check_smtp, check_disk,
    ]
    findings: list[Finding] = []
    for check in checks:
        try:
            findings.extend(check())
        except Exception as exc:  # a broken check is a finding, never a traceback
            findings.append(Finding(FAIL, getattr(check, "__name__", "check"), _first_line(exc)))
    # One redaction for everything printed: an endpoint that quotes the key it was sent, a URL's
    # userinfo or password parameter.
    secrets = configured_secrets()
    return [Finding(f.status, f.check, redact(f.detail, secrets), redact(f.fix, secrets)) for f in findings]


def cmd_doctor(args) -> int:
    findings = run_checks(live=args.live)
    if args.json:
        print(json.dumps([asdict(f) for f in findings], indent=2))
    else:
        width = max(len(f.check) for f in findings)
        for f in findings:
            print(f"{f.status:<4}  {f.check:<{width}}  {f.detail}")
            if f.fix and f.status != OK:
                print(f"      {'':<{width}}  fix: {f.fix}")
        counts = {s: sum(1 for f in findings if f.status == s) for s in (OK, WARN, FAIL)}
        print(f"\n{counts[OK]} ok, {counts[WARN]} warnings, {counts[FAIL]} failures", file=sys.stderr)
    return 1 if any(f.status == FAIL for f in findings) else 0
