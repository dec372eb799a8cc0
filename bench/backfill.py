#!/usr/bin/env python3
"""A UI backfill of the sample day against `newsdedup demo` on the same day, in one run.

    python bench/backfill.py              # 24 hours, then 7 days (168 hours)
    python bench/backfill.py --days 1     # 24 hours only

Reference: `newsdedup demo` (24 hourly runs in one process, then the digest), timed from its start
to its exit, in a home of its own.

Measured: `newsdedup dev` (the embedded server, then `dagster dev`: webserver and daemon at
Dagster's default intervals, with the instance file newsdedup writes) in another fresh home; once
the UI answers, the backfill of every hourly asset over the day's 24 hours, launched with the
GraphQL mutation the UI's Materialize dialog sends (`launchPartitionBackfill`), timed from the
mutation to the backfill's completion. Then both databases are compared table by table (every
table the hourly assets write, rows without serial ids and write times) and each asset's
partitions are checked to have landed in time order.

7 days: the sample day rendered seven times (days 2026-11-02 .. 08, the same articles, their URLs
made distinct per day) into one replay file per source, and a backfill of the 168 hours, against
the demo's time for one day.

Prints both times and the ratios, and story_feeds' seconds (from its materialisations' metadata) in
the hours that wrote the publish directory and in those that held their files for them; exits 1
when the databases differ or an asset's hours landed out of order.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, TESTS
from dagster_deployment import BACKFILL_DONE, DagsterDeployment, free_port

BIN = Path(sys.executable).parent
DAY = "2026-11-02"
HOURLY_ASSETS = ["raw_items", "item_duplicates", "article_texts", "item_embeddings", "stories", "story_scores",
                 "story_translations", "events", "story_feeds"]
# Written by the digest (the demo runs it, the hourly backfill does not) or by the run's
# bookkeeping, not by the hourly assets.
NOT_HOURLY = ("digest", "deliver", "subscri", "alert", "llm_calls", "schema_migrations", "retention")

# Each table's row count and a hash of its rows (tests/fingerprints.py), in the home's own process:
# db.ensure_ready() there starts that home's embedded server. Write times and the publish directory
# (each home has its own) are left out.
FINGERPRINT = r"""
import hashlib, json
from fingerprints import WRITE_TIME_COLUMNS, table_rows
from newsdedup_dagster.shared import db
rows = table_rows(db.ensure_ready(), WRITE_TIME_COLUMNS | {"written_at", "output_dir"})
print(json.dumps({t: [len(r), hashlib.sha256("\n".join(r).encode()).hexdigest()[:16]] for t, r in rows.items()}))
"""


# Dagster 1.13.27's backfill daemon loop (dagster/_daemon/controller.py DEFAULT_DAEMON_INTERVAL_SECONDS,
# not configurable).
DAEMON_TICK_S = 30

# The first run's events that mark where the time after a backfill's launch goes.
TIMELINE = ("PIPELINE_ENQUEUED", "PIPELINE_DEQUEUED", "PIPELINE_STARTING", "PIPELINE_START", "STEP_START",
            "ASSET_MATERIALIZATION", "STEP_SUCCESS", "PIPELINE_SUCCESS")


def base_env(home: Path, sources: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEWSDEDUP_", "DAGSTER_"))}
    env.update({"NEWSDEDUP_HOME": str(home), "NEWSDEDUP_SOURCES": str(sources), "NEWSDEDUP_FETCH_MODE": "replay"})
    return env


def fingerprint(env: dict[str, str]) -> dict[str, list]:
    env = {**env, "PYTHONPATH": os.pathsep.join([str(REPO), str(TESTS)])}
    out = subprocess.run([sys.executable, "-c", FINGERPRINT], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_demo(root: Path, sources: Path) -> tuple[float, dict]:
    env = base_env(root / "demo", sources)
    started = time.monotonic()
    subprocess.run([str(BIN / "newsdedup"), "demo"], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started, fingerprint(env)


class Dev(DagsterDeployment):
    """`newsdedup dev` in a home of its own: its own embedded server and the instance file newsdedup
    writes there (not the test deployment's dagster.yaml and storage database), driven by the
    deployment's GraphQL calls (the UI's)."""

    def __init__(self, home: Path, sources: Path):  # the attributes DagsterDeployment's methods use
        home.mkdir(parents=True, exist_ok=True)
        self.newsdedup_dev = True
        self.root = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = base_env(home, sources)
        self.procs: list[subprocess.Popen] = []
        self.logs: list[Path] = []

    def backfill(self, partitions: list[str], timeout: float = 7200) -> tuple[float, str]:
        """(seconds from the launch to the backfill's end, its status)."""
        started = time.monotonic()
        self.launched_at = time.time()
        backfill_id = self.launch_backfill(HOURLY_ASSETS, partitions)
        while time.monotonic() - started < timeout:
            status = self.backfill_status(backfill_id)
            if status in BACKFILL_DONE:
                return time.monotonic() - started, status
            time.sleep(1)
        raise TimeoutError(f"backfill {backfill_id} not done after {timeout} s")

    def time_order(self, partitions: list[str]) -> list[str]:
        """Assets whose partitions did not land in time order (by materialisation storage id)."""
        code = (
            "import json, sys\nfrom dagster import AssetKey, AssetRecordsFilter, DagsterInstance\n"
            f"TIMELINE = {TIMELINE!r}\n"
            "instance = DagsterInstance.get()\nout = {}\n"
            "for name in sys.argv[1:]:\n"
            "    records = instance.fetch_materializations(AssetRecordsFilter(asset_key=AssetKey(name)), limit=10000).records\n"
            "    out[name] = [r.partition_key for r in sorted(records, key=lambda r: r.storage_id)]\n"
            "    if name == 'story_feeds':\n"
            "        md = [r.asset_materialization.metadata for r in records]\n"
            "        out['_publish'] = [[m['stage_seconds'].value,\n"
            "                            getattr(m.get('written_by'), 'value', r.partition_key) == r.partition_key]\n"
            "                           for m, r in zip(md, records)]\n"
            "runs = instance.get_run_records()\n"
            "out['_runs'] = [[r.start_time, r.end_time] for r in runs if r.start_time and r.end_time]\n"
            "marks = {}\n"
            "for r in runs:\n"
            "    marks.setdefault('run created', r.create_timestamp.timestamp())\n"
            "    for e in instance.all_logs(r.dagster_run.run_id):\n"
            "        if e.dagster_event and e.dagster_event.event_type_value in TIMELINE:\n"
            "            marks.setdefault(e.dagster_event.event_type_value, e.timestamp)\n"
            "out['_marks'] = marks\n"
            "print(json.dumps(out))\n")
        env = {**self.env, "DAGSTER_HOME": str(Path(self.env["NEWSDEDUP_HOME"]) / "dagster")}
        out = subprocess.run([sys.executable, "-c", code, *HOURLY_ASSETS], env=env, capture_output=True, text=True,
                             check=True)
        landed = json.loads(out.stdout.strip().splitlines()[-1])
        runs = landed.pop("_runs")
        publish = landed.pop("_publish", [])
        written = [seconds for seconds, writes in publish if writes]
        held = [seconds for seconds, writes in publish if not writes]
        # Publishing's share: the hours that wrote the directory against those whose files they held.
        self.publish_split = (len(written), sum(written), len(held), sum(held))
        # Where the time between the launch and the run's start goes (the first run's events).
        self.timeline = sorted((t - self.launched_at, name) for name, t in landed.pop("_marks").items())
        self.run_seconds = sum(end - start for start, end in runs)
        # The data is complete when the last run ends; the backfill is marked done at the daemon's next tick.
        self.data_seconds = max(end for _, end in runs) - self.launched_at
        return [name for name, keys in landed.items() if keys != sorted(keys) or set(keys) != set(partitions)]

    def runs(self) -> int:
        data = self.graphql("{ runsOrError { ... on Runs { results { runId } } } }")
        return len(data["runsOrError"]["results"])

    def stop(self) -> None:
        """SIGINT, as a terminal's Ctrl-C: `newsdedup dev` then stops dagster dev and releases its
        embedded server (SIGTERM would leave that server running in a home about to be deleted)."""
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGINT)
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)


def hours_of(first_day: str, days: int) -> list[str]:
    start = dt.datetime.fromisoformat(first_day)
    return [(start + dt.timedelta(hours=h)).strftime("%Y-%m-%d-%H:%M") for h in range(24 * days)]


def render_days(out: Path, days: int) -> Path:
    """The sample day's articles on `days` consecutive days, one replay file per source."""
    import make_sample_feeds as sample

    doc = sample.load_articles()
    first = dt.date.fromisoformat(str(doc["day"]))
    items = []
    for d in range(days):
        day_doc = copy.deepcopy(doc)
        day_doc["day"] = (first + dt.timedelta(days=d)).isoformat()
        for story in day_doc["stories"]:
            story["story"] = f"{story['story']}-day{d}" if d else story["story"]
        items += sample.build_items(day_doc)
    sources = {s["id"]: s for s in doc["sources"]}
    for it in items:
        it["lang"] = sources[it["source"]]["language"]
    (out / "feeds").mkdir(parents=True, exist_ok=True)
    for sid, src in sources.items():
        (out / "feeds" / f"{sid}.xml").write_bytes(sample.render_feed(src, [it for it in items if it["source"] == sid]))
    (out / "sources.yaml").write_bytes(sample.render_sources_yaml(doc))
    return out / "sources.yaml"


def backfill_once(root: Path, name: str, sources: Path, partitions: list[str]
                  ) -> tuple[float, str, int, list[str], dict, float, float]:
    """(seconds, status, runs, assets out of order, the tables' fingerprint, the seconds with the
    wait for the daemon's first tick at its mean: a launch at any moment, the run's own seconds)."""
    with contextlib.ExitStack() as stack:
        dev = Dev(root / name, sources)
        stack.callback(dev.stop)  # also when the UI never comes up
        stack.enter_context(dev)  # starts `newsdedup dev`, waits for the UI and the daemon
        seconds, status = dev.backfill(partitions)
        disorder = dev.time_order(partitions)
        print(f"  (the run(s) themselves: {dev.run_seconds:.1f} s from start to end; every hour materialised "
              f"{dev.data_seconds:.1f} s after the launch; the rest is the daemon's ticks, the queue and the run "
              "worker's start)")
        n_written, s_written, n_held, s_held = dev.publish_split
        print(f"  story_feeds: {n_written} hours wrote the directory in {s_written:.1f} s, {n_held} recorded their "
              f"rows and held their files in {s_held:.1f} s")
        print("  timeline after the launch: " + ", ".join(f"{name} {t:.1f} s" for t, name in dev.timeline)
              + f", backfill marked done {seconds:.1f} s")
        # Dagster's backfill daemon loops every DAEMON_TICK_S: the run is created at its first tick after
        # the launch, and the backfill marked done at its first tick after the run (a wait the run's
        # length sets, modulo the tick). This benchmark launches just after `dagster dev` started (the
        # daemon's first tick), so its first wait is near the longest; an operator launches at any
        # moment, half a tick before the next on average.
        created = {name: t for t, name in dev.timeline}.get("run created", 0.0)
        print(f"  waiting for the daemon's ticks: {created:.1f} s for the run, {seconds - dev.data_seconds:.1f} s "
              f"for the end (a tick every {DAEMON_TICK_S} s)")
        return (seconds, status, dev.runs(), disorder, fingerprint(dev.env), seconds - created + DAEMON_TICK_S / 2,
                dev.run_seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--days", type=int, default=7, help="also backfill this many days (default 7; 1: the day only)")
    parser.add_argument("--keep", action="store_true", help="keep the homes (printed) for inspection")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="newsdedup-backfill-"))
    sample_sources = REPO / "newsdedup_dagster" / "sample_data" / "sources.yaml"
    failed = False
    try:
        print(f"cores: {os.cpu_count()}, load average at start: {os.getloadavg()[0]:.2f}", flush=True)
        demo_s, demo_print = run_demo(root, sample_sources)
        print(f"newsdedup demo, 24 hours + digest: {demo_s:7.1f} s", flush=True)

        day = hours_of(DAY, 1)
        seconds, status, runs, disorder, got, typical, run_s = backfill_once(root, "backfill-day", sample_sources, day)
        print(f"UI backfill, 24 hours x {len(HOURLY_ASSETS)} assets: {seconds:7.1f} s  ({status}, {runs} run(s))  "
              f"ratio {seconds / demo_s:.2f}x (target <= 1.5x, daemon ticks included); launched half a tick before "
              f"the daemon's next {typical:.1f} s = {typical / demo_s:.2f}x; the run itself {run_s:.1f} s = "
              f"{run_s / demo_s:.2f}x (target <= 1x)", flush=True)
        hourly_tables = sorted(t for t in demo_print if not t.startswith(NOT_HOURLY) and not any(x in t for x in NOT_HOURLY))
        differ = [t for t in hourly_tables if got.get(t) != demo_print[t]]
        print(f"  tables compared with the demo: {len(hourly_tables)}, differing: {differ or 'none'}")
        print(f"  assets whose hours landed out of order or incomplete: {disorder or 'none'}")
        failed |= bool(differ or disorder) or status not in ("COMPLETED", "COMPLETED_SUCCESS")

        if args.days > 1:
            sources = render_days(root / "days", args.days)
            hours = hours_of(DAY, args.days)
            seconds, status, runs, disorder, _, typical, run_s = backfill_once(root, "backfill-days", sources, hours)
            print(f"UI backfill, {len(hours)} hours x {len(HOURLY_ASSETS)} assets: {seconds:7.1f} s  ({status}, "
                  f"{runs} run(s))  ratio to one demo day {seconds / demo_s:.2f}x (target <= 4x); launched half a "
                  f"tick before the daemon's next {typical / demo_s:.2f}x; the run itself {run_s:.1f} s", flush=True)
            print(f"  assets whose hours landed out of order or incomplete: {disorder or 'none'}")
            failed |= bool(disorder) or status not in ("COMPLETED", "COMPLETED_SUCCESS")
        print(f"load average at end: {os.getloadavg()[0]:.2f}")
    finally:
        if args.keep:
            print(f"homes kept under {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
