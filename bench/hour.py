#!/usr/bin/env python3
"""One hour at production volume, end to end through Dagster.

    python bench/hour.py                                   # 243 sources, 2,000 new items, 60,000 in the window
    python bench/hour.py --sources 50 --items 400 --window 10000     # quick

Built first (not timed): a fresh database on the embedded server holding the 36 hours before the
current UTC hour H as production leaves them: --window items (default 60,000) with their vectors
(structured 384-d vectors shaped like centred e5, bench/clustering.py's generator), already in
stories (one per topic), the recent-vector mirror and the HNSW indexes in place. Then --sources
feeds (default 243) served by a real HTTP server on 127.0.0.1, holding --items new items of H
between them (headline and a lead of 30-50 words, words drawn from the bundled sample day's
headlines and summaries in its eight languages; 15% are wire copies of another outlet's item, as
syndication makes them).

Timed: the hourly job for H in a fresh process, as the schedule launches it (`execute_in_process`,
the code location's default in-process executor), offline defaults (e5, the offline LLM
fallback), live fetching. Printed: wall time per stage (fetch and parse from raw_items' own
metadata, every other stage the wall time its materialisation records), Dagster's own overhead (process start and
imports, run start, the time between steps: event writes, resource setup), the event count,
the run process's CPU seconds against wall x cores, and the peak RSS (largest of the run
process and its embedding workers). Target: the hour in <= 60 s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from xml.sax.saxutils import escape

import yaml
from common import REPO

STAGES = [("fetch", None), ("parse", None), ("near-dup", "item_duplicates"), ("embed", "item_embeddings"),
          ("cluster", "stories"), ("score", "story_scores"), ("translate", "story_translations"),
          ("events", "events"), ("publish", "story_feeds")]

COUNTRY = {"de": "DE", "en": "GB", "es": "ES", "fr": "FR", "ja": "JP", "ko": "KR", "ru": "RU", "zh": "CN"}

RUNNER = """
import json, sys, time
started = time.time()
from newsdedup_dagster.definitions import HOURLY_JOB_NAME, defs
from newsdedup_dagster.instance import QUIET_RUN_CONFIG, get_instance
instance = get_instance()
imported = time.time()
result = defs.resolve_job_def(HOURLY_JOB_NAME).execute_in_process(
    partition_key=sys.argv[1], instance=instance, run_config=QUIET_RUN_CONFIG, raise_on_error=False)
print(json.dumps({"started": started, "imported": imported, "finished": time.time(),
                  "run_id": result.run_id, "success": result.success}))
"""


# ------------------------------------------------------------------ the feeds
def word_pools() -> dict[str, tuple[list[str], list[str]]]:
    """language -> (headline words, lead words) of the bundled sample day."""
    doc = yaml.safe_load((REPO / "newsdedup_dagster" / "sample_data" / "articles.yaml").read_text(encoding="utf-8"))
    lang_of = {s["id"]: s["language"] for s in doc["sources"]}
    pools: dict[str, tuple[list[str], list[str]]] = {}
    for story in doc["stories"]:
        for item in story["items"]:
            titles, leads = pools.setdefault(lang_of[item["src"]], ([], []))
            titles += item["title"].split()
            leads += (item.get("summary") or item["title"]).split()
    return pools


def feeds(n_sources: int, n_items: int, hour: datetime, now: datetime, seed: int = 11) -> dict[str, tuple[str, bytes]]:
    """source id -> (language, RSS body) with n_items items of `hour` between them."""
    rng = random.Random(seed)
    pools = word_pools()
    langs = sorted(pools)
    span = max(60, int((min(now, hour + timedelta(hours=1)) - hour).total_seconds()) - 30)
    per_source: dict[int, list[str]] = {s: [] for s in range(n_sources)}
    made: list[tuple[str, str, str]] = []    # (lang, title, lead) of originals, for copies
    for n in range(n_items):
        source = n % n_sources
        lang = langs[source % len(langs)]
        titles, leads = pools[lang]
        same_lang = [m for m in made if m[0] == lang]
        if same_lang and rng.random() < 0.15:
            _lang, title, lead = rng.choice(same_lang)                       # a wire copy
        else:
            title = " ".join(rng.choice(titles) for _ in range(rng.randint(7, 13)))
            lead = " ".join(rng.choice(leads) for _ in range(rng.randint(30, 50)))
            made.append((lang, title, lead))
        published = hour + timedelta(seconds=rng.randrange(span))
        link = f"https://outlet{source}.example.com/news/{n}"
        per_source[source].append(
            f"<item><title>{escape(title)}</title><link>{link}</link><guid>{link}</guid>"
            f"<pubDate>{format_datetime(published, usegmt=True)}</pubDate>"
            f"<description>{escape(lead)}</description></item>")
    out = {}
    for source, items in per_source.items():
        lang = langs[source % len(langs)]
        body = (f'<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel><title>Outlet {source}</title>'
                f"<link>https://outlet{source}.example.com/</link><language>{lang}</language>{''.join(items)}"
                "</channel></rss>\n")
        out[f"outlet-{source:03d}"] = (lang, body.encode("utf-8"))
    return out


# ------------------------------------------------------------------ the window
def build_window(url: str, n: int, hours: int, hour: datetime) -> dict:
    """n items over the `hours` before `hour`, with vectors, in stories, mirrored and indexed."""
    import numpy as np
    from clustering import BENCH_SQL, DIMS, MODEL, Generator, SyntheticEmbedder, copy_rows
    from pgvector.psycopg import register_vector

    from newsdedup_dagster import db
    from newsdedup_dagster.clustering import store
    from newsdedup_dagster.clustering.settings import settings_for
    from newsdedup_dagster.embeddings.providers import EmbeddingSettings
    from newsdedup_dagster.embeddings.store import ensure_model

    started = time.perf_counter()
    with db.connect(url) as conn:
        register_vector(conn)
        conn.commit()
        with conn.transaction():
            conn.execute("INSERT INTO sources (id, name, feed_url, language) VALUES ('b', 'b', 'bench://b', 'en')")
            conn.execute("INSERT INTO embedding_models (model, provider, dims, index_type, centring)"
                         " VALUES (%s, 'e5', %s, 'vector', true)", (MODEL, DIMS))
        gen = Generator(n)
        for start in range(0, n, 5000):
            part = range(start, min(n, start + 5000))
            vectors, topics = gen.items(len(part))
            rows = []
            for k, t in zip(part, topics):
                slot = hour - timedelta(hours=1 + (k % hours))
                rows.append((f"i{k:07d}", f"item {k} topic {t}", slot + timedelta(seconds=(k * 37) % 3600), slot))
            copy_rows(conn, rows, vectors, gen.raw(vectors))
        with conn.transaction():
            conn.execute(BENCH_SQL["stories_for_topics"], {"prefix": "bw_", "pattern": "i%", "model": MODEL,
                                                           "half": False})
        conn.execute("ANALYZE")
        conn.commit()
        info = ensure_model(conn, SyntheticEmbedder(), EmbeddingSettings(centre="on"))
        conn.commit()
        settings = settings_for(info.model, {})
        with conn.transaction():
            store.begin_clustering(conn, settings.ef_search, 600)
            store.sync_recent(conn, info, hour - timedelta(hours=1), settings)
        counts = conn.execute("SELECT (SELECT count(*) FROM items), (SELECT count(*) FROM stories),"
                              " (SELECT count(*) FROM story_items)").fetchone()
        conn.commit()
    del np
    return {"seconds": round(time.perf_counter() - started, 1), "items": counts[0], "stories": counts[1],
            "memberships": counts[2]}


# ------------------------------------------------------------------ the run
class CpuSampler:
    """(time, CPU seconds of a process and its descendants) every `interval` s, in a thread: the
    CPU a step used is the difference across its start and end (a descendant's last part since
    the previous sample is missed when it exits: e5's workers live as long as the run)."""

    def __init__(self, pid: int, interval: float = 0.25):
        import threading

        self.pid, self.interval = pid, interval
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psutil

        try:
            root = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            return
        seen: dict[int, float] = {}
        while not self._stop.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.NoSuchProcess:
                break
            for proc in procs:
                try:
                    times = proc.cpu_times()
                    seen[proc.pid] = times.user + times.system
                except psutil.NoSuchProcess:
                    pass
            self.samples.append((time.time(), sum(seen.values())))
            self._stop.wait(self.interval)

    def start(self) -> CpuSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def between(self, start: float, end: float) -> float:
        def at(moment: float) -> float:
            before = [cpu for t, cpu in self.samples if t <= moment]
            return before[-1] if before else 0.0
        return at(end) - at(start)


def step_times(instance, run_id: str) -> tuple[dict[str, float], dict, float, float, int]:
    """(asset -> seconds, asset -> (start, end), run start, run end, events written) from the run's
    event log: each hourly asset's time is the `stage_seconds` its materialisation carries (the
    hourly assets share one step)."""
    from dagster import DagsterEventType

    steps, spans = {}, {}
    run_start = run_end = None
    records = instance.all_logs(run_id)
    for record in records:
        event = record.dagster_event
        if event is None:
            continue
        if event.event_type == DagsterEventType.RUN_START:
            run_start = record.timestamp
        elif event.event_type in (DagsterEventType.RUN_SUCCESS, DagsterEventType.RUN_FAILURE):
            run_end = record.timestamp
        elif event.event_type == DagsterEventType.ASSET_MATERIALIZATION:
            materialization = event.event_specific_data.materialization
            seconds = materialization.metadata.get("stage_seconds")
            if seconds is not None:
                name = materialization.asset_key.to_user_string()
                steps[name] = float(seconds.value)
                spans[name] = (record.timestamp - float(seconds.value), record.timestamp)
        elif event.event_type == DagsterEventType.STEP_FAILURE:
            error = event.step_failure_data.error
            print(f"step {record.step_key} failed: {error.message.strip() if error else '?'}"
                  f"{(' / ' + error.cause.message.strip()) if error and error.cause else ''}")
    return steps, spans, run_start, run_end, len(records)


def raw_items_metadata(instance, run_id: str) -> dict:
    from dagster import AssetKey, AssetRecordsFilter

    for record in instance.fetch_materializations(AssetRecordsFilter(asset_key=AssetKey("raw_items")), limit=10).records:
        if record.run_id == run_id:
            return {k: v.value for k, v in record.asset_materialization.metadata.items()}
    return {}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=int, default=243)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--window", type=int, default=60_000)
    parser.add_argument("--window-hours", type=int, default=36)
    parser.add_argument("--keep", type=Path, default=None, help="work directory to keep (default: a temporary one)")
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="newsdedup-hour-"))
    work.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    hour = now.replace(minute=0, second=0, microsecond=0)
    key = hour.strftime("%Y-%m-%d-%H:%M")
    os.environ.update({
        "NEWSDEDUP_HOME": str(work / "home"), "DAGSTER_HOME": str(work / "home" / "dagster"),
        "NEWSDEDUP_FETCH_MODE": "live", "NEWSDEDUP_FETCH_ALLOW_PRIVATE": "127.0.0.0/8",
        "NEWSDEDUP_PARTITIONS_START": (hour - timedelta(days=3)).strftime("%Y-%m-%d-%H:%M"),
        "NEWSDEDUP_PUBLISH_DIR": str(work / "site"),
    })
    for name in ("NEWSDEDUP_DATABASE_URL", "NEWSDEDUP_LLM_BASE_URL", "NEWSDEDUP_SMTP_HOST",
                 "NEWSDEDUP_DAGSTER_DATABASE_URL", "NEWSDEDUP_EMBEDDING_PROVIDER"):
        os.environ.pop(name, None)

    from feedserver import FeedServer

    from newsdedup_dagster import db

    admin = db.ensure_ready()
    db._ensure_database(admin, "bench_hour")
    url = db.with_database(admin, "bench_hour")
    with db.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public; CREATE EXTENSION IF NOT EXISTS vector")
    db.migrate(url)
    os.environ["NEWSDEDUP_DATABASE_URL"] = url
    window = build_window(url, args.window, args.window_hours, hour)
    print(f"window: {window['items']} items in {window['stories']} stories over {args.window_hours} h "
          f"(built in {window['seconds']} s)", flush=True)

    bodies = feeds(args.sources, args.items, hour, now)
    with FeedServer() as server:
        sources = []
        for source_id, (lang, body) in bodies.items():
            server.add(f"/{source_id}.xml", body=body, headers={"Content-Type": "application/rss+xml"})
            sources.append({"id": source_id, "name": source_id, "feed_url": server.url(f"/{source_id}.xml"),
                            "language": lang, "country": COUNTRY[lang]})
        sources_file = work / "sources.yaml"
        sources_file.write_text(yaml.safe_dump({"sources": sources}, allow_unicode=True), encoding="utf-8")
        os.environ["NEWSDEDUP_SOURCES"] = str(sources_file)

        from newsdedup_dagster.instance import get_instance

        instance = get_instance()   # writes the instance file the run process opens
        spawned = time.time()
        proc = subprocess.Popen([sys.executable, "-c", RUNNER, key], cwd=REPO, env=dict(os.environ),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        sampler = CpuSampler(proc.pid).start()
        _pid, _status, usage = os.wait4(proc.pid, 0)
        sampler.stop()
        wall = time.time() - spawned
        out, err = proc.stdout.read(), proc.stderr.read()
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if not lines:
        sys.exit(f"the run process failed:\n{err[-3000:]}")
    run = json.loads(lines[-1])
    steps, spans, run_start, run_end, events = step_times(instance, run["run_id"])
    meta = raw_items_metadata(instance, run["run_id"])
    with db.connection(url) as conn:
        new_items, embedded, stories = conn.execute(
            "SELECT (SELECT count(*) FROM items WHERE partition_hour = %(h)s),"
            "       (SELECT count(*) FROM item_embeddings WHERE partition_hour = %(h)s),"
            "       (SELECT count(*) FROM stories WHERE updated_partition = %(h)s)", {"h": hour}).fetchone()

    fetch_s, parse_s = float(meta.get("fetch_seconds", 0.0)), float(meta.get("parse_seconds", 0.0))
    shares = {"fetch": fetch_s, "parse": parse_s}
    for name, step in STAGES[2:]:
        shares[name] = steps.get(step, 0.0)
    stage_total = sum(steps.values())
    raw_rest = steps.get("raw_items", 0.0) - fetch_s - parse_s
    process_start = run["imported"] - spawned
    between = (run_end - run_start) - stage_total if run_start and run_end else 0.0
    cpu = usage.ru_utime + usage.ru_stime
    cores = os.cpu_count() or 1
    print(f"\nhour {key}: {meta.get('sources', '?')} sources ({meta.get('sources_failed', '?')} failed), "
          f"{new_items} new items, {embedded} embedded, {stories} stories touched; run "
          f"{'succeeded' if run['success'] else 'FAILED'}")
    print(f"{'stage':<28} {'seconds':>8} {'share':>6}")
    for name, seconds in shares.items():
        print(f"{name:<28} {seconds:>8.2f} {seconds / wall:>6.1%}")
    print(f"{'raw_items other (storage)':<28} {raw_rest:>8.2f} {raw_rest / wall:>6.1%}")
    print(f"{'dagster: process start':<28} {process_start:>8.2f} {process_start / wall:>6.1%}   "
          "(interpreter, imports, code location, instance)")
    print(f"{'dagster: run and steps':<28} {between:>8.2f} {between / wall:>6.1%}   "
          f"(run start/end, between stages: {events} events written, resources)")
    print(f"{'total (process wall)':<28} {wall:>8.2f}   target <= 60 s")
    embed_s = steps.get("item_embeddings", 0.0)
    if embed_s:
        embed_cpu = sampler.between(*spans["item_embeddings"])
        print(f"embedding: {embedded / embed_s:.1f} items/s in the step; {embed_cpu:.1f} CPU s in it = "
              f"{embed_cpu / (embed_s * cores):.0%} of {cores} cores (the rest went to other processes: "
              f"load average {os.getloadavg()[1]:.1f} over 5 min)")
    print(f"CPU: {cpu:.1f} s user+sys in the run process and its workers = {cpu / (wall * cores):.0%} of "
          f"{cores} cores over the wall time; load average at the end {os.getloadavg()[0]:.1f}")
    print(f"peak RSS: {usage.ru_maxrss / 1024:.0f} MB (largest of the run process and its workers)")
    db.stop_embedded_server()
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if run["success"] else 1


if __name__ == "__main__":
    sys.exit(main())
