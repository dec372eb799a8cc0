"""Platform commands: demo, dev, migrate, db."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import time
from collections import Counter
from datetime import date
from pathlib import Path

from psycopg import sql as pgsql

from newsdedup_dagster.commands.signals import StopSignalWatch, run_process_group
from newsdedup_dagster.shared import db, deployment

SAMPLE_DAY = "2026-11-02"


def register(subparsers) -> None:
    demo = subparsers.add_parser("demo", help="run the sample day (24 hourly partitions) through Dagster, offline")
    demo.add_argument("--day", default=SAMPLE_DAY, help="UTC day of the sample feeds (default %(default)s)")
    demo.add_argument("--hours", type=int, default=24, help="how many hours of the day to run (default 24)")
    demo.add_argument("--json", action="store_true", help="print a JSON summary at the end")
    demo.add_argument("--verbose", action="store_true",
                      help="show Dagster's own log (INFO) on the terminal; it is always kept in each run's event log")
    demo.set_defaults(func=cmd_demo)

    dev = subparsers.add_parser("dev", help="start the embedded server and `dagster dev` (UI + daemon)")
    dev.add_argument("--host", default="127.0.0.1")
    dev.add_argument("--port", type=int, default=3000)
    dev.add_argument("--write-instance", action="store_true",
                     help="replace an existing $DAGSTER_HOME/dagster.yaml with newsdedup's (default: write it only when absent)")
    dev.set_defaults(func=cmd_dev)

    migrate = subparsers.add_parser(
        "migrate", help="apply pending SQL migrations and check Dagster's storage database")
    migrate.add_argument("--write-instance", action="store_true",
                         help="also write $DAGSTER_HOME/dagster.yaml, replacing an existing one")
    migrate.set_defaults(func=cmd_migrate)

    dbp = subparsers.add_parser("db", help="database: status | url | stop")
    dbp.add_argument("action", choices=["status", "url", "stop"])
    dbp.set_defaults(func=cmd_db)


# ------------------------------------------------------------------ migrate / db
def cmd_migrate(args) -> int:
    from newsdedup_dagster.instance import prepare_instance  # deferred on purpose: fast --help

    applied = db.migrate()
    print(f"applied migrations: {applied}" if applied else "schema up to date")
    # Dagster's storage is checked here too, so an operator learns what is missing before
    # starting dagster-webserver / dagster-daemon (which would retry, then fail with a traceback).
    path, storage = prepare_instance(write=args.write_instance, overwrite=args.write_instance)
    state = "written" if args.write_instance else "present" if path.exists() else "absent"
    where = db.describe_url(storage) if storage else "not PostgreSQL, not checked"
    print(f"dagster storage: {where} ({path}: {state})")
    return 0


def cmd_db(args) -> int:
    if args.action == "url":
        print(db.redact_url(db.app_database_url()))
        return 0
    if args.action == "stop":
        if deployment.database_url():
            print("NEWSDEDUP_DATABASE_URL is set: nothing embedded to stop")
            return 0
        db.embedded_server()
        db.stop_embedded_server()
        print("released the embedded server (it stops when no other newsdedup process holds it)")
        return 0
    url = db.ensure_ready()
    with db.connect(url) as conn:
        version = conn.execute(db.load_sql("server_version_string")).fetchone()[0].split(",")[0]
        vector = db.check_pgvector(conn)
        migrations = [r[0] for r in conn.execute(db.load_sql("db_migration_versions"))]
        counts = {
            t: conn.execute(pgsql.SQL(db.load_sql("platform_table_rows")).format(pgsql.Identifier(t))).fetchone()[0]
            for t in ("sources", "items", "item_duplicates", "item_embeddings", "stories", "events", "digests")
        }
        hours = conn.execute(db.load_sql("platform_hours")).fetchall()
    print(f"database: {db.redact_url(url)}\nserver:   {version}\npgvector: {vector}\nmigrations: {migrations}")
    for table, count in counts.items():
        print(f"  {table:<16} {count}")
    for stage, count, first, last in hours:
        span = f" ({first} .. {last} UTC)" if count else ""
        print(f"hours {stage}: {count}{span}")
    return 0


# ------------------------------------------------------------------------ dev
# The folder holding the newsdedup_dagster package (a checkout, or site-packages).
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def dagster_dev_command(host: str, port: int, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """`dagster dev` on the code location, and its environment, isolated from the working directory."""
    dagster = shutil.which("dagster") or str(Path(sys.executable).with_name("dagster"))
    # -d: Dagster imports the code location with this folder first on the path (by default the working
    # directory, whose stray modules would then shadow the dependencies).
    cmd = [dagster, "dev", "-m", "newsdedup_dagster.definitions", "-d", str(PACKAGE_ROOT), "-h", host, "-p", str(port)]
    # Its webserver, daemon, code server and run workers start as `python -m ...`, which puts the working
    # directory first on their path; the variable (Python >= 3.11) reaches all of them, -P only this one.
    return cmd, {**env, "PYTHONSAFEPATH": "1"}


def cmd_dev(args) -> int:
    from newsdedup_dagster.instance import prepare_instance  # deferred on purpose: fast --help

    url = db.ensure_ready()
    dagster_yaml, _ = prepare_instance(overwrite=args.write_instance)
    env = dict(os.environ)
    # Children (webserver, daemon, code server, run workers) attach to the server this process holds.
    env.setdefault("NEWSDEDUP_DATABASE_URL", url)
    env["DAGSTER_HOME"] = str(dagster_yaml.parent)
    cmd, env = dagster_dev_command(args.host, args.port, env)
    print(f"DAGSTER_HOME={dagster_yaml.parent}\nUI: http://{args.host}:{args.port}\n$ {' '.join(cmd)}", flush=True)
    # `dagster dev` and everything it starts form one process group, signalled and waited for as a whole.
    try:
        return run_process_group(cmd, env=env)
    finally:
        db.stop_embedded_server()  # only now: the group's processes were the server's users


# ----------------------------------------------------------------------- demo
def _hour_counts(conn, start, end) -> dict:
    row = conn.execute(
        db.load_sql("demo_hour_counts"),
        {"h": start},
    ).fetchone()
    keys = ("items", "duplicates", "embedded", "attached", "new_stories", "fetch_errors")
    return dict(zip(keys, row))


def _gold_evaluation(conn, gold_path: Path) -> dict | None:
    """Score the sample day's stories against the bundled gold labels (B-cubed, NMI, ARI), and its
    events (under "events") against the gold events: an item's event, else its story."""
    if not gold_path.exists():
        return None
    from newsdedup_dagster.evaluation.metrics import summary  # deferred on purpose: fast --help
    from newsdedup_dagster.shared.http.canonical_url import canonical_url, item_id  # deferred on purpose: fast --help

    gold, gold_events = {}, {}
    for line in gold_path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            key = item_id(canonical_url(row["url"]))
            gold[key] = row["story"]
            gold_events[key] = row.get("event") or row["story"]
    story_of = dict(
        conn.execute(
            db.load_sql("demo_story_of_items"), (list(gold),)
        ).fetchall()
    )
    event_of = dict(conn.execute(db.load_sql("demo_event_of_items"), (list(gold),)).fetchall())
    pred = {iid: story_of.get(iid, f"single:{iid}") for iid in gold}
    result = summary(pred, gold)
    result["stories"] = len({story_of[iid] for iid in gold if iid in story_of})
    result["events"] = summary({iid: event_of.get(iid, f"single:{iid}") for iid in gold}, gold_events)
    return result


def _run_demo_hours(hourly, instance, url, args, run_config_base, stop):
    """Materialise the demo day's hours in order; one printed line per hour."""
    from newsdedup_dagster.assets.hourly import hourly_run_config  # deferred on purpose: fast --help
    from newsdedup_dagster.partitions import hour_window  # deferred on purpose: fast --help

    check_totals: Counter = Counter()
    failed_checks: list[str] = []
    failures = 0
    for hour in range(args.hours):
        key = f"{args.day}-{hour:02d}:00"
        result = hourly.execute_in_process(
            partition_key=key, instance=instance, raise_on_error=False,
            # The demo replays the day in time order: a second demo rebuilds the same stories.
            run_config={**run_config_base, **hourly_run_config(raw_items={"fetch_mode": "replay"},
                                                                      stories={"later_partitions": "reset"})},
        )
        evaluations = result.get_asset_check_evaluations()
        passed = sum(1 for e in evaluations if e.passed)
        check_totals["passed"] += passed
        check_totals["failed"] += len(evaluations) - passed
        failed_checks += [f"{key} {e.asset_key.to_user_string()}:{e.check_name}" for e in evaluations if not e.passed]
        if not result.success:
            failures += 1
        start, end = hour_window(key)
        with db.connection(url) as conn:
            c = _hour_counts(conn, start, end)
        print(
            f"{key:<17} {c['items']:>5} {c['duplicates']:>5} {c['embedded']:>5} {c['attached']:>6} "
            f"{c['new_stories']:>6} {c['fetch_errors']:>6}  {passed:>2}/{len(evaluations):<3} "
            f"{'ok' if result.success else 'FAILED'}",
            flush=True,
        )
        stop.raise_if_signalled()  # after the hour's line: a stop lands between hours

    return check_totals, failed_checks, failures


def cmd_demo(args) -> int:
    from newsdedup_dagster import config  # deferred on purpose: fast --help

    started = time.monotonic()
    # The sources are the deployment's (by default the bundled sample day's); the demo replays
    # their archived feeds whatever NEWSDEDUP_FETCH_MODE says, through its runs' config.

    from newsdedup_dagster.instance import get_instance  # deferred on purpose: fast --help

    # Dagster's console log at the level asked for; the run's event log (the UI) keeps everything.
    run_config_base = {"loggers": {"console": {"config": {"log_level": "INFO" if args.verbose else "ERROR"}}}}

    url = db.ensure_ready()
    print(f"database: {db.redact_url(url)} (embedded)" if not config.database_url() else f"database: {db.redact_url(url)}")
    instance = get_instance()
    print(f"dagster instance: {os.environ['DAGSTER_HOME']}/dagster.yaml (runs stored in PostgreSQL)")
    llm = config.llm_settings()
    if llm.offline:
        print("LLM stages: offline fallback, set NEWSDEDUP_LLM_BASE_URL to use a model")
    from newsdedup_dagster.definitions import DAILY_JOB_NAME, HOURLY_JOB_NAME, defs  # deferred on purpose: fast --help

    hourly = defs.resolve_job_def(HOURLY_JOB_NAME)
    print(f"\nMaterialising {args.hours} hourly partitions of {args.day} through Dagster job '{HOURLY_JOB_NAME}'")
    print(f"{'hour':<17} {'items':>5} {'dups':>5} {'embed':>5} {'attach':>6} {'new st':>6} {'errors':>6}  checks  run")
    with StopSignalWatch() as stop:
        check_totals, failed_checks, failures = _run_demo_hours(hourly, instance, url, args, run_config_base, stop)
        sample_readers = not config.database_url()   # a configured database holds real readers
        if sample_readers:
            from newsdedup_dagster.commands.demo_readers import add_sample_readers  # deferred on purpose: fast --help

            with db.connection(url) as conn:
                add_sample_readers(conn, date.fromisoformat(args.day))
        daily = defs.resolve_job_def(DAILY_JOB_NAME)
        digest_result = daily.execute_in_process(
            partition_key=args.day, instance=instance, raise_on_error=False,
            # The demo renders the digest to the outbox and never mails anyone.
            run_config={**run_config_base, "ops": {"digest": {"config": {"send": False}}}},
        )
        stop.raise_if_signalled()
    if not digest_result.success:
        failures += 1

    with db.connection(url) as conn:
        _print_stories(conn)
        read, extracted, failed, words = conn.execute(db.load_sql("demo_article_counts")).fetchone()
        print(f"\nArticle pages (recorded, offline): {read} read, {extracted} extracted ({words:,} words), "
              f"{failed} without text")
        stories, with_points, with_quotes, points, quotes, dropped, with_players, players = conn.execute(
            db.load_sql("demo_briefing_counts")).fetchone()
        print(f"Briefings (extractive, offline): {stories} stories, {with_points} with key points ({points} points, "
              f"each cited), {with_quotes} with quotes ({quotes}, each found in its article with its speaker), "
              f"{with_players} with key players ({players}, each named in two articles or more), "
              f"{dropped} lines dropped by the checks")
        from newsdedup_dagster.stages.llm.report import print_top_stories  # deferred on purpose: fast --help

        print_top_stories(conn, limit=10)
        evaluation = _gold_evaluation(conn, config.SAMPLE_DATA_DIR / "gold.jsonl")

    from newsdedup_dagster.stages.digest.build import digest_html_path  # deferred on purpose: fast --help

    day = date.fromisoformat(args.day)
    paths = [p for p in [digest_html_path(day, llm.pivot_lang, config.outbox_dir())] if p.exists()]

    print(f"\nAsset checks: {check_totals['passed']} passed, {check_totals['failed']} failed")
    for line in failed_checks[:20]:
        print(f"  FAILED {line}")
    if evaluation:
        print(
            "\nAgainst the sample day's gold stories (bundled gold.jsonl): "
            f"B-cubed P {evaluation['bcubed_precision']:.3f} R {evaluation['bcubed_recall']:.3f} "
            f"F1 {evaluation['bcubed_f1']:.3f}, NMI {evaluation['nmi']:.3f}, ARI {evaluation['ari']:.3f}, "
            f"{evaluation['clusters']} clusters, largest {evaluation['largest']}"
        )
        # "Stories: 30" above and "83 clusters" here count different things: say how.
        print(f"  (clusters: the {evaluation['stories']} stories, each two or more articles about one event, plus "
              f"{evaluation['clusters'] - evaluation['stories']} articles no story took, a cluster of one each)")
        events = evaluation["events"]
        print(
            "Against its gold events (an item's event, else its story): "
            f"B-cubed P {events['bcubed_precision']:.3f} R {events['bcubed_recall']:.3f} "
            f"F1 {events['bcubed_f1']:.3f}, NMI {events['nmi']:.3f}, {events['clusters']} events, "
            f"largest {events['largest']}"
        )
    for path in paths:
        print(f"digest: {path}")
    if sample_readers and digest_result.success:
        from newsdedup_dagster.commands.demo_readers import deliver_to_sample_readers  # deferred: fast --help

        with db.connection(url) as conn:
            lines = deliver_to_sample_readers(conn, day, config.outbox_dir())
        print("sample readers' editions (outbox files: the demo mails nobody):")
        print("\n".join(lines))
    publish = config.publish_settings()  # story_feeds ran with every hour of the hourly job
    if (publish.output_dir / "index.html").exists():
        print(f"feeds and site: {publish.output_dir} (index.html; <lang>/atom.xml, <lang>/feed.json)\n"
              f"  view: {cli_command('serve')}, then open {publish.base_url}")
    elapsed = time.monotonic() - started
    print(f"\ndemo finished in {elapsed:.1f} s ({failures} failed runs)")
    if args.json:
        print(json.dumps({"seconds": round(elapsed, 1), "failed_runs": failures, "checks": dict(check_totals),
                          "evaluation": evaluation, "digests": [str(p) for p in paths]}))
    return 1 if failures else 0


def _print_stories(conn, limit: int = 25) -> None:
    rows = conn.execute(db.load_sql("demo_stories")).fetchall()
    print(f"\nStories: {len(rows)} (showing {min(limit, len(rows))}, most languages first)")
    print(f"{'articles':>8} {'sources':>7}  {'languages':<22} headline")
    from newsdedup_dagster.stages.llm.report import displayed_headlines  # deferred on purpose: fast --help

    shown = displayed_headlines(conn, {sid: headline for sid, *_, headline in rows[:limit]})
    for sid, articles, sources, langs, _headline in rows[:limit]:
        print(f"{articles:>8} {sources:>7}  {','.join(lang or '?' for lang in langs):<22} {shown[sid][:90]}")


def cli_command(*args: str) -> str:
    """The `newsdedup` command line that works as typed in this shell: `newsdedup ...` when that name
    on PATH is this installation, else this installation's script by its path (relative to the
    working directory under it: `.venv/bin/newsdedup`, where `make` puts it), else the module run
    by this interpreter."""
    script = Path(sys.executable).with_name("newsdedup")
    on_path = shutil.which("newsdedup")
    if on_path and script.exists() and Path(on_path).resolve() == script.resolve():
        program = ["newsdedup"]
    elif script.exists():
        try:
            relative = script.absolute().relative_to(Path.cwd())
            # A name without a slash would be looked up on PATH: "./newsdedup" in its own folder.
            program = [str(relative) if len(relative.parts) > 1 else f"./{relative}"]
        except ValueError:
            program = [str(script.absolute())]
    else:
        program = [sys.executable, "-m", "newsdedup_dagster.cli"]
    return shlex.join([*program, *args])
