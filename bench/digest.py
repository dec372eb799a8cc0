#!/usr/bin/env python3
"""Readers' editions at production volume: the `digest` asset's run for one day, delivering to
10,000 subscribers with mixed choices through a real SMTP server on 127.0.0.1.

    python bench/digest.py                          # 48,000 items of the day, 10,000 readers
    python bench/digest.py --subscribers 2000       # fewer readers
    python bench/digest.py --quick                  # a smoke test: 1,200 items, 60 readers

Built first (not timed), in a fresh home with its own embedded PostgreSQL: a day of --items items
(default 48,000: bench/hour.py's 2,000 new items an hour for 24 hours) in stories of one to four
articles in the eight languages of the sample day, from outlets of eight countries, each story
scored (significance), briefed (one of the briefing categories) and translated into the eight
languages, as the hourly chain leaves them. Readers are added through `newsdedup subscribers add`'s
own parser, address and choice validation and query (one connection for all of them), spread over
six IANA time zones (Auckland to Los Angeles) with local delivery times from 06:00 to 09:00 and
mixed choices: a reader's languages in order of preference (one to three of them), categories
(all, or one to three), countries (all, or one or two). They subscribed before the day; the day is
two days ago (UTC), so every reader's local delivery time has passed and every one is due.

Timed: the `digest` asset materialised in process for that day (dagster.materialize, as its run
does: render the day per language and every edition readers chose, seed the delivery ledger,
deliver) against an SMTP server in a child process that counts messages per recipient. Printed:
editions rendered and the rendering time per edition, messages sent and the delivery time per
message, the run's wall time, this process's peak RSS, and the check that every due reader got
exactly one message (duplicates and missing readers, exit 1 unless both are 0). The reference,
measured first in the same run on the same day: --reference readers (default a tenth) with the
same mix of choices; the ratio of each figure to it is printed.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from common import peak_rss_mb

LANGS = ("de", "en", "es", "fr", "ja", "ko", "ru", "zh")
COUNTRY = {"de": "DE", "en": "GB", "es": "ES", "fr": "FR", "ja": "JP", "ko": "KR", "ru": "RU", "zh": "CN"}
ZONES = ("Pacific/Auckland", "Asia/Tokyo", "Asia/Kolkata", "Europe/Paris", "America/Sao_Paulo",
         "America/Los_Angeles")
AT = ("06:00", "06:30", "07:00", "07:30", "08:00", "09:00")
# Languages in order of preference: the reader's own first, then what else they read.
LANG_ORDERS = ("en", "fr", "de", "ja", "es", "zh", "ko", "ru", "en,fr", "fr,en", "de,en", "ja,en", "es,en",
               "zh,en", "ko,ja", "ru,de", "en,es,fr", "ja,zh,en")

# The SMTP server, run as a child process (`--smtp-counter PORT`) so that receiving does not share
# the digest run's interpreter: it prints "ready", counts each accepted message's recipients, and
# on a line on its stdin prints the counts as JSON and exits.
SMTP_COUNTER = """
import collections, json, sys
from aiosmtpd.controller import Controller

counts = collections.Counter()

class Handler:
    async def handle_DATA(self, server, session, envelope):
        for rcpt in envelope.rcpt_tos:
            counts[rcpt] += 1
        return "250 Message accepted for delivery"

controller = Controller(Handler(), hostname="127.0.0.1", port=int(sys.argv[1]), ready_timeout=30)
controller.start()
print("ready", flush=True)
sys.stdin.readline()
controller.stop()
print(json.dumps(counts), flush=True)
"""


class CountingSmtp:
    def __init__(self, port: int):
        self.port = port
        self.proc = subprocess.Popen([sys.executable, "-c", SMTP_COUNTER, str(port)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the SMTP server did not start")

    def counts(self) -> collections.Counter:
        out, _ = self.proc.communicate("stop\n", timeout=120)
        return collections.Counter(json.loads(out.strip().splitlines()[-1]))


# ------------------------------------------------------------------ the day
def seed_day(conn, day: date, n_items: int, seed: int = 7) -> int:
    """n_items items of `day` in stories (1-4 articles in different languages), each scored, briefed
    and translated; returns the number of stories."""
    from newsdedup_dagster.shared.presentation.taxonomy import CATEGORIES

    rng = random.Random(seed)
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    model, dims = "e5:bench", 384
    centroid = "[" + ",".join(f"{rng.gauss(0, 1):.4f}" for _ in range(dims)) + "]"
    conn.execute("INSERT INTO embedding_models (model, provider, dims, index_type) VALUES (%s, 'e5', %s, 'vector')"
                 " ON CONFLICT DO NOTHING", (model, dims))
    for lang in LANGS:
        for k in range(4):
            conn.execute("INSERT INTO sources (id, name, feed_url, language, country) VALUES (%s, %s, %s, %s, %s)",
                         (f"src-{lang}-{k}", f"Outlet {lang.upper()} {k}", f"https://{lang}{k}.example/feed", lang,
                          COUNTRY[lang]))
    items, stories, links, scores, briefs, translations = [], [], [], [], [], []
    n, story = 0, 0
    while n < n_items:
        sid = f"story-{story:06d}"
        size = min(rng.choice((1, 1, 2, 2, 3, 4)), n_items - n)
        langs = rng.sample(LANGS, size)
        first = start + timedelta(seconds=rng.randrange(86_000))
        part = first.replace(minute=0, second=0, microsecond=0)
        ids = []
        for lang in langs:
            iid = f"it-{n:06d}"
            url = f"https://{lang}{n % 4}.example/news/{n}"
            items.append((iid, url, url, f"{lang} headline {n} of {sid}", f"The lead of item {n}.", lang, first, part,
                          f"src-{lang}-{n % 4}"))
            links.append((iid, sid, part))
            ids.append(iid)
            n += 1
        stories.append((sid, model, part, part, first, first, centroid, len(ids), ids[0]))
        scores.append((sid, round(rng.uniform(1, 10), 2), f"Headline of {sid}", f"Summary of {sid}.", langs[0], len(ids)))
        briefs.append((sid, rng.choice(CATEGORIES), json.dumps({"points": [f"What happened in {sid}."]}), part))
        translations += [(sid, lang, f"[{lang}] Headline of {sid}", f"[{lang}] Summary of {sid}.") for lang in LANGS]
        story += 1
    with conn.cursor() as cur:
        for sql, rows in (
            ("INSERT INTO items (id, canonical_url, url, title, summary, lang, published_at, partition_hour, source_id)"
             " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", items),
            ("INSERT INTO stories (id, model, created_partition, updated_partition, first_published_at,"
             " latest_published_at, centroid, item_count, representative_item_id)"
             " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", stories),
            ("INSERT INTO story_items (item_id, story_id, pass, similarity, partition_hour) VALUES (%s, %s, 1, 0.9, %s)",
             links),
            ("INSERT INTO story_scores (story_id, significance, headline, summary, pivot_lang, model, offline, item_count)"
             " VALUES (%s, %s, %s, %s, %s, 'offline-heuristic', true, %s)", scores),
            ("INSERT INTO story_briefings (story_id, material, lang, method, category, briefing, partition_hour)"
             " VALUES (%s, 'm', 'en', 'extractive', %s, %s, %s)", briefs),
            ("INSERT INTO story_translations (story_id, lang, headline, summary, status, model)"
             " VALUES (%s, %s, %s, %s, 0, 'bench')", translations),
        ):
            cur.executemany(sql, rows)
    conn.commit()
    return story


# ------------------------------------------------------------------ the readers
def reader_options(i: int, rng: random.Random) -> list[str]:
    """`newsdedup subscribers add` arguments of reader i: mixed languages, categories, countries, zones."""
    from newsdedup_dagster.shared.presentation.taxonomy import CATEGORIES

    options = ["--langs", rng.choice(LANG_ORDERS), "--time-zone", ZONES[i % len(ZONES)], "--at", rng.choice(AT)]
    if rng.random() < 0.4:
        options += ["--categories", ",".join(rng.sample(CATEGORIES, rng.randint(1, 3)))]
    if rng.random() < 0.25:
        options += ["--countries", ",".join(rng.sample(sorted(COUNTRY.values()), rng.randint(1, 2)))]
    return options


def add_readers(conn, n: int, prefix: str, subscribed_at: datetime, seed: int = 3) -> list[str]:
    """n readers added as `newsdedup subscribers add EMAIL ...` adds one (its parser, its address
    and choice validation, its query) on one connection; then dated before the day."""
    from newsdedup_dagster import config
    from newsdedup_dagster.commands import subscribers
    from newsdedup_dagster.shared import db
    from newsdedup_dagster.stages.digest.send import valid_email

    parser = argparse.ArgumentParser(prog="newsdedup")
    subscribers.register(parser.add_subparsers(dest="command"))
    pivot = config.llm_settings().pivot_lang
    query = db.load_sql("digest_subscriber_add")
    rng = random.Random(seed)
    emails = []
    for i in range(n):
        args = parser.parse_args(["subscribers", "add", f"{prefix}{i:05d}@Example.COM", *reader_options(i, rng)])
        email = subscribers.normalise_email(args.email)
        if not valid_email(email):
            raise ValueError(email)
        values = subscribers._choice_values(args, pivot)
        conn.execute(query, {"email": email, **values})
        emails.append(email)
    conn.execute("UPDATE subscribers SET subscribed_at = %s", (subscribed_at,))
    conn.commit()
    return emails


# ------------------------------------------------------------------ the run
def run_digest(url: str, day: date, port: int, outbox: Path) -> dict:
    """The digest asset for `day`, timed, with its rendering and delivery timed apart."""
    from helpers import materialize_digest

    import newsdedup_dagster.assets.digest as asset_module
    from newsdedup_dagster.instance import QUIET_RUN_CONFIG
    from newsdedup_dagster.resources import MailerResource

    phases: dict[str, float] = {}

    def timed(name, fn):
        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                phases[name] = phases.get(name, 0.0) + time.perf_counter() - t
        return wrapper

    render_day, deliver_day = asset_module.render_day, asset_module.deliver_day
    asset_module.render_day, asset_module.deliver_day = timed("render", render_day), timed("deliver", deliver_day)
    try:
        started = time.perf_counter()
        result = materialize_digest(url, MailerResource(host="127.0.0.1"), day.isoformat(), raise_on_error=False,
                                    run_config=QUIET_RUN_CONFIG)
        wall = time.perf_counter() - started
    finally:
        asset_module.render_day, asset_module.deliver_day = render_day, deliver_day
    if not result.success:
        raise RuntimeError("the digest run failed")
    return {"wall": wall, **phases}


def measure(url: str, day: date, readers: int, prefix: str, outbox: Path, port: int) -> dict:
    from newsdedup_dagster.shared import db

    with db.connection(url) as conn:
        conn.execute("TRUNCATE subscribers, deliveries, digests RESTART IDENTITY CASCADE")
        conn.commit()
        t = time.perf_counter()
        emails = add_readers(conn, readers, prefix, datetime(day.year, day.month, day.day, tzinfo=UTC) - timedelta(days=1))
        added_s = time.perf_counter() - t
    os.environ["NEWSDEDUP_SMTP_PORT"] = str(port)
    server = CountingSmtp(port)
    try:
        times = run_digest(url, day, port, outbox)
    finally:
        counts = server.counts()
    with db.connection(url) as conn:
        editions, plain = conn.execute(
            "SELECT count(*) FILTER (WHERE edition <> ''), count(*) FILTER (WHERE edition = '') FROM digests"
            " WHERE digest_date = %s", (day,)).fetchone()
        statuses = dict(conn.execute("SELECT status, count(*) FROM deliveries WHERE digest_date = %s GROUP BY status",
                                     (day,)).fetchall())
        conn.commit()
    due = set(emails)
    return {"readers": readers, "added_s": added_s, "editions": editions, "plain": plain, "statuses": statuses,
            "messages": sum(counts.values()), "duplicates": sum(c - 1 for c in counts.values() if c > 1),
            "missing": len(due - set(counts)), "strangers": len(set(counts) - due), "rss_mb": peak_rss_mb(), **times}


def report(name: str, m: dict, ref: dict | None) -> None:
    rendered = m["editions"] + m["plain"]
    per_edition = m["render"] / max(rendered, 1)
    per_message = m["deliver"] / max(m["messages"], 1)

    def ratio(key: str, value: float) -> str:
        return f"  ({value / ref[key]:.2f}x the reference)" if ref and ref.get(key) else ""

    print(f"\n{name}: {m['readers']:,} readers (added in {m['added_s']:.1f} s through `subscribers add`)")
    print(f"  editions rendered   {m['editions']:,} chosen + {m['plain']} plain per language = {rendered:,}"
          f"{ratio('rendered', rendered)}")
    print(f"  rendering           {m['render']:.1f} s, {per_edition * 1000:.1f} ms per edition"
          f"{ratio('per_edition', per_edition)}")
    print(f"  delivery            {m['deliver']:.1f} s for {m['messages']:,} messages, {per_message * 1000:.2f} ms per "
          f"message{ratio('per_message', per_message)}")
    print(f"  digest run          {m['wall']:.1f} s wall{ratio('wall', m['wall'])}")
    print(f"  peak RSS            {m['rss_mb']:.0f} MB (this process so far)")
    print(f"  exactly once        {m['messages']:,} messages to {m['readers']:,} due readers: {m['duplicates']} "
          f"duplicates, {m['missing']} missing, {m['strangers']} to others; ledger {m['statuses']}")
    m.update(rendered=rendered, per_edition=per_edition, per_message=per_message)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subscribers", type=int, default=10_000)
    parser.add_argument("--reference", type=int, default=None, help="readers of the reference (default: a tenth)")
    parser.add_argument("--items", type=int, default=48_000, help="items of the day (default: 24 hours of bench/hour.py)")
    parser.add_argument("--quick", action="store_true", help="a smoke test: 1,200 items, 60 readers, 12 in the reference")
    parser.add_argument("--keep", type=Path, default=None, help="work directory to keep (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.quick:
        args.subscribers, args.items = min(args.subscribers, 60), min(args.items, 1200)
    reference = args.reference or max(1, args.subscribers // 10)

    work = args.keep or Path(tempfile.mkdtemp(prefix="newsdedup-digest-"))
    work.mkdir(parents=True, exist_ok=True)
    outbox = work / "outbox"
    os.environ.update({
        "NEWSDEDUP_HOME": str(work / "home"), "DAGSTER_HOME": str(work / "home" / "dagster"),
        "NEWSDEDUP_OUTBOX": str(outbox), "NEWSDEDUP_SMTP_SECURITY": "none",
    })
    os.environ.pop("NEWSDEDUP_CALIBRATION_FILE", None)
    from helpers import calibration_environment

    os.environ.update(calibration_environment(work, smtp={"retry_delay_s": 0}))
    for name in ("NEWSDEDUP_DATABASE_URL", "NEWSDEDUP_LLM_BASE_URL", "NEWSDEDUP_SMTP_HOST", "NEWSDEDUP_SMTP_USER",
                 "NEWSDEDUP_SMTP_PASSWORD", "NEWSDEDUP_UNSUBSCRIBE_URL", "NEWSDEDUP_DIGEST_LANGS"):
        os.environ.pop(name, None)
    from helpers import free_port

    from newsdedup_dagster.shared import db

    day = datetime.now(UTC).date() - timedelta(days=2)
    url = db.ensure_ready()
    status = 1
    try:
        with db.connection(url) as conn:
            t = time.perf_counter()
            stories = seed_day(conn, day, args.items)
        print(f"the day {day}: {args.items:,} items in {stories:,} stories, scored, briefed and translated into "
              f"{len(LANGS)} languages (built in {time.perf_counter() - t:.0f} s); readers over {len(ZONES)} zones "
              f"({', '.join(ZONES)}), all due; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
              flush=True)
        ref = measure(url, day, reference, "ref", outbox, free_port())
        report("reference", ref, None)
        main_run = measure(url, day, args.subscribers, "reader", outbox, free_port())
        report("measured", main_run, ref)
        print(f"\nload average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        ok = all(m["duplicates"] == 0 and m["missing"] == 0 and m["strangers"] == 0 for m in (ref, main_run))
        print("every due reader got exactly one message" if ok else "FAILED: not exactly one message per due reader")
        status = 0 if ok else 1
    finally:
        db.stop_embedded_server()
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
