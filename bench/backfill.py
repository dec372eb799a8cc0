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

Prints both times and the ratios; exits 1 when the databases differ or an asset's hours landed out
of order.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

BIN = Path(sys.executable).parent
DAY = "2026-11-02"
HOURLY_ASSETS = ["raw_items", "item_duplicates", "item_embeddings", "stories", "story_scores",
                 "story_translations", "events", "story_feeds"]
# Written by the digest (the demo runs it, the hourly backfill does not) or by the run's
# bookkeeping, not by the hourly assets.
NOT_HOURLY = ("digest", "deliver", "subscri", "alert", "llm_calls", "schema_migrations", "retention")

LAUNCH_BACKFILL = """
mutation LaunchPartitionBackfill($backfillParams: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $backfillParams) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message }
  }
}"""
BACKFILL_STATUS = """
query BackfillStatus($backfillId: String!) {
  partitionBackfillOrError(backfillId: $backfillId) {
    ... on PartitionBackfill { status numPartitions }
    ... on PythonError { message }
  }
}"""
READY = "{ instance { daemonHealth { allDaemonStatuses { daemonType healthy required } } } assetNodes { id } }"
DONE = {"COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED"}

FINGERPRINT = r"""
import json, sys
from newsdedup_dagster import db
url = db.ensure_ready()
out = {}
with db.connect(url) as conn:
    serial = {(t, c) for t, c in conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = 'public' AND column_default LIKE 'nextval%%'")}
    referring = {(t, c) for t, c, rt, rc in conn.execute(
        "SELECT k.conrelid::regclass::text, a.attname, k.confrelid::regclass::text, ra.attname"
        "  FROM pg_constraint k"
        "  JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]"
        "  JOIN pg_attribute ra ON ra.attrelid = k.confrelid AND ra.attnum = k.confkey[1]"
        " WHERE k.contype = 'f'") if (rt, rc) in serial}
    columns = {}
    for table, column, default, kind in conn.execute(
            "SELECT c.table_name, c.column_name, c.column_default, c.data_type FROM information_schema.columns c"
            "  JOIN information_schema.tables t USING (table_schema, table_name)"
            " WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'"
            " ORDER BY c.table_name, c.ordinal_position"):
        written_at = default is not None and ("now()" in default or "clock_timestamp" in default)
        if (table, column) in serial or (table, column) in referring or written_at:
            continue
        # write times, and the publish directory (each home has its own)
        if column in ("narrative_generated_at", "sent_at", "written_at", "output_dir"):
            continue
        columns.setdefault(table, []).append(column)
    for table, cols in columns.items():
        select = ", ".join(f'"{c}"::text' for c in cols)
        rows = sorted(repr(r) for r in conn.execute(f'SELECT {select} FROM "{table}"'))
        out[table] = [len(rows), __import__("hashlib").sha256("\n".join(rows).encode()).hexdigest()[:16]]
print(json.dumps(out))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_env(home: Path, sources: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEWSDEDUP_", "DAGSTER_"))}
    env.update({"NEWSDEDUP_HOME": str(home), "NEWSDEDUP_SOURCES": str(sources), "NEWSDEDUP_FETCH_MODE": "replay"})
    return env


def fingerprint(env: dict[str, str]) -> dict[str, list]:
    out = subprocess.run([sys.executable, "-c", FINGERPRINT], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_demo(root: Path, sources: Path) -> tuple[float, dict]:
    env = base_env(root / "demo", sources)
    started = time.monotonic()
    subprocess.run([str(BIN / "newsdedup"), "demo"], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started, fingerprint(env)


class Dev:
    """`newsdedup dev` in a home of its own, and the GraphQL calls the UI makes."""

    def __init__(self, home: Path, sources: Path):
        self.env = base_env(home, sources)
        self.port = free_port()
        home.mkdir(parents=True, exist_ok=True)
        self.log = home / "dev.log"
        self.proc = subprocess.Popen([str(BIN / "newsdedup"), "dev", "--port", str(self.port)], env=self.env,
                                     stdout=self.log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)

    def graphql(self, query: str, variables: dict | None = None) -> dict:
        response = httpx.post(f"http://127.0.0.1:{self.port}/graphql", json={"query": query, "variables": variables or {}},
                              timeout=60)
        payload = response.json()
        if payload.get("errors"):
            raise RuntimeError(json.dumps(payload["errors"])[:2000])
        return payload["data"]

    def wait_ready(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("newsdedup dev exited:\n" + self.log.read_text()[-3000:])
            try:
                data = self.graphql(READY)
                statuses = data["instance"]["daemonHealth"]["allDaemonStatuses"]
                if data["assetNodes"] and all(s["healthy"] for s in statuses if s["required"]):
                    return
            except (httpx.HTTPError, ValueError, KeyError, RuntimeError):
                pass
            time.sleep(1)
        raise TimeoutError("the UI did not come up:\n" + self.log.read_text()[-3000:])

    def backfill(self, partitions: list[str], timeout: float = 7200) -> tuple[float, str]:
        params = {"assetSelection": [{"path": [a]} for a in HOURLY_ASSETS], "partitionNames": partitions,
                  "fromFailure": False, "tags": []}
        started = time.monotonic()
        result = self.graphql(LAUNCH_BACKFILL, {"backfillParams": params})["launchPartitionBackfill"]
        if result["__typename"] != "LaunchBackfillSuccess":
            raise RuntimeError(str(result))
        backfill_id = result["backfillId"]
        while time.monotonic() - started < timeout:
            status = self.graphql(BACKFILL_STATUS, {"backfillId": backfill_id})["partitionBackfillOrError"]["status"]
            if status in DONE:
                return time.monotonic() - started, status
            time.sleep(1)
        raise TimeoutError(f"backfill {backfill_id} not done after {timeout} s")

    def time_order(self, partitions: list[str]) -> list[str]:
        """Assets whose partitions did not land in time order (by materialisation storage id)."""
        code = (
            "import json, sys\nfrom dagster import AssetKey, AssetRecordsFilter, DagsterInstance\n"
            "instance = DagsterInstance.get()\nout = {}\n"
            "for name in sys.argv[1:]:\n"
            "    records = instance.fetch_materializations(AssetRecordsFilter(asset_key=AssetKey(name)), limit=10000).records\n"
            "    out[name] = [r.partition_key for r in sorted(records, key=lambda r: r.storage_id)]\n"
            "runs = instance.get_run_records()\n"
            "out['_runs'] = [[r.start_time, r.end_time] for r in runs if r.start_time and r.end_time]\n"
            "print(json.dumps(out))\n")
        env = {**self.env, "DAGSTER_HOME": str(Path(self.env["NEWSDEDUP_HOME"]) / "dagster")}
        out = subprocess.run([sys.executable, "-c", code, *HOURLY_ASSETS], env=env, capture_output=True, text=True,
                             check=True)
        landed = json.loads(out.stdout.strip().splitlines()[-1])
        self.run_seconds = sum(end - start for start, end in landed.pop("_runs"))
        return [name for name, keys in landed.items() if keys != sorted(keys) or set(keys) != set(partitions)]

    def runs(self) -> int:
        data = self.graphql("{ runsOrError { ... on Runs { results { runId } } } }")
        return len(data["runsOrError"]["results"])

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)


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


def backfill_once(root: Path, name: str, sources: Path, partitions: list[str]) -> tuple[float, str, int, list[str], dict]:
    dev = Dev(root / name, sources)
    try:
        dev.wait_ready()
        seconds, status = dev.backfill(partitions)
        disorder = dev.time_order(partitions)
        print(f"  (the run(s) themselves: {dev.run_seconds:.1f} s from start to end; the rest is the daemon's "
              "ticks, the queue and the run worker's start)")
        return seconds, status, dev.runs(), disorder, fingerprint(dev.env)
    finally:
        dev.stop()


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
        seconds, status, runs, disorder, got = backfill_once(root, "backfill-day", sample_sources, day)
        print(f"UI backfill, 24 hours x {len(HOURLY_ASSETS)} assets: {seconds:7.1f} s  ({status}, {runs} run(s))  "
              f"ratio {seconds / demo_s:.2f}x (target <= 2x)", flush=True)
        hourly_tables = sorted(t for t in demo_print if not t.startswith(NOT_HOURLY) and not any(x in t for x in NOT_HOURLY))
        differ = [t for t in hourly_tables if got.get(t) != demo_print[t]]
        print(f"  tables compared with the demo: {len(hourly_tables)}, differing: {differ or 'none'}")
        print(f"  assets whose hours landed out of order or incomplete: {disorder or 'none'}")
        failed |= bool(differ or disorder) or status not in ("COMPLETED", "COMPLETED_SUCCESS")

        if args.days > 1:
            sources = render_days(root / "days", args.days)
            hours = hours_of(DAY, args.days)
            seconds, status, runs, disorder, _ = backfill_once(root, "backfill-days", sources, hours)
            print(f"UI backfill, {len(hours)} hours x {len(HOURLY_ASSETS)} assets: {seconds:7.1f} s  ({status}, "
                  f"{runs} run(s))  ratio to one demo day {seconds / demo_s:.2f}x (target <= 10x)", flush=True)
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
