#!/usr/bin/env python3
"""Bytes per day of news, before and after `newsdedup prune`, on the bundled sample day replayed
for a week through the real hourly pipeline (offline: embedded PostgreSQL, e5, heuristic scores).

    python bench/retention.py [--days 7] [--keep DIR]

1. Before day n, rewrites the replay feeds to show copy n of the sample day: every date shifted
   by n days and every link/GUID made unique (so each copy is new news, not the same article
   seen again), with each item's recorded page (sample_data/pages) under its new link, so the
   article stage reads and keeps a page per item every day. Titles repeat day after day, so the near-duplicate lookback is set to
   1 h here (default 36 h), else each day's copies would collapse into the previous day's.
2. Materialises every hour of the N days with the hourly job (as `newsdedup demo` does, in a
   fresh database under a temporary NEWSDEDUP_HOME), then each day's digest (rendered, not sent).
3. VACUUM FULL, then prints each table's size (heap + TOAST + indexes) per day of news;
   prunes as of a moment when every day is past every retention age (the cost of a day of news
   kept long term), VACUUM FULL, and prints the sizes again with the ratio.
"""

from __future__ import annotations

import argparse
import email.utils
import html
import os
import re
import shutil
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "newsdedup_dagster" / "sample_data"
SAMPLE_DAY = date(2026, 11, 2)

_ITEM = re.compile(r"<(item|entry)\b[^>]*>.*?</\1>", re.S)
_RFC822 = re.compile(r"[A-Z][a-z]{2}, \d{1,2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}(?::\d{2})? (?:[+-]\d{4}|GMT|UT|UTC|Z)")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})")
_URL_HOST = re.compile(r"(https?://[^/\s\"'<>]+)")
_GUID = re.compile(r"(<(guid|id)\b[^>]*>)([^<]*)(</\2>)")
_LINK = re.compile(r"https?://[^\s\"'<>]+")


def _shift_item(block: str, n: int) -> str:
    if n == 0:
        return block

    def rfc(m):
        moment = email.utils.parsedate_to_datetime(m.group(0)) + timedelta(days=n)
        return email.utils.format_datetime(moment.astimezone(UTC), usegmt=True)

    def iso(m):
        moment = datetime.fromisoformat(m.group(0).replace("Z", "+00:00")) + timedelta(days=n)
        return moment.isoformat().replace("+00:00", "Z")

    block = _RFC822.sub(rfc, block)
    block = _ISO.sub(iso, block)
    block = _GUID.sub(lambda m: f"{m.group(1)}{m.group(3)}-replay{n}{m.group(4)}", block)
    return _URL_HOST.sub(lambda m: f"{m.group(1)}/replay{n}", block)


def _copy_pages(block: str, n: int, pages: Path) -> None:
    """The recorded page of each link in an item, filed under the link copy n of the day carries."""
    from newsdedup_dagster.stages.articles.store import replay_page_name

    for link in {html.unescape(m.group(0)) for m in _LINK.finditer(block)}:
        page = SAMPLE / "pages" / replay_page_name(link)
        if page.is_file():
            shutil.copyfile(page, pages / replay_page_name(_shift_item(link, n) if n else link))


def write_day(out: Path, n: int) -> Path:
    """Sources file + feeds showing copy n of the sample day (rewritten in place before each day,
    so every archived fetch holds one day's feed, as a live feed would), and their pages."""
    feeds = out / "feeds"
    feeds.mkdir(parents=True, exist_ok=True)
    pages = out / "pages"
    pages.mkdir(parents=True, exist_ok=True)
    sources = yaml.safe_load((SAMPLE / "sources.yaml").read_text(encoding="utf-8"))
    for source in sources["sources"]:
        # latin-1 maps bytes 1:1: feeds in any encoding (EUC-KR, Shift_JIS, ...) pass through unchanged
        body = (SAMPLE / source["replay_file"]).read_bytes().decode("latin-1")
        items = list(_ITEM.finditer(body))
        for m in items:
            _copy_pages(m.group(0), n, pages)
        head, tail = body[:items[0].start()], body[items[-1].end():]
        path = feeds / Path(source["replay_file"]).name
        path.write_bytes((head + "\n".join(_shift_item(m.group(0), n) for m in items) + tail).encode("latin-1"))
        source["replay_file"] = str(path)
    sources_file = out / "sources.yaml"
    sources_file.write_text(yaml.safe_dump(sources, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return sources_file


def _sizes(url: str) -> dict[str, tuple[int, int]]:
    from newsdedup_dagster.shared import db
    from newsdedup_dagster.stages.retention.prune import table_sizes

    with db.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM FULL ANALYZE")
    with db.connection(url) as conn:
        return table_sizes(conn)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--keep", type=Path, default=None, help="work directory to keep (default: a temporary one)")
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="newsdedup-retention-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.update({
        "NEWSDEDUP_HOME": str(work / "home"), "DAGSTER_HOME": str(work / "home" / "dagster"),
        "NEWSDEDUP_SOURCES": str(write_day(work / "week", 0)), "NEWSDEDUP_FETCH_MODE": "replay",
        "NEWSDEDUP_ARTICLES_REPLAY_DIR": str(work / "week" / "pages"),
        "NEWSDEDUP_PARTITIONS_START": f"{SAMPLE_DAY:%Y-%m-%d}-00:00",
    })
    for name in ("NEWSDEDUP_DATABASE_URL", "NEWSDEDUP_LLM_BASE_URL", "NEWSDEDUP_SMTP_HOST", "NEWSDEDUP_CALIBRATION_FILE"):
        os.environ.pop(name, None)
    calibration = work / "calibration.toml"
    calibration.write_text("[neardup]\nlookback_hours = 1\n", encoding="utf-8")
    os.environ["NEWSDEDUP_CALIBRATION_FILE"] = str(calibration)

    from newsdedup_dagster.assets.hourly import hourly_run_config
    from newsdedup_dagster.definitions import DAILY_JOB_NAME, HOURLY_JOB_NAME, defs
    from newsdedup_dagster.instance import QUIET_RUN_CONFIG, get_instance
    from newsdedup_dagster.shared import db
    from newsdedup_dagster.stages.retention.prune import prune
    from newsdedup_dagster.stages.retention.settings import RetentionSettings

    url = db.ensure_ready()
    instance = get_instance()
    hourly, daily = defs.resolve_job_def(HOURLY_JOB_NAME), defs.resolve_job_def(DAILY_JOB_NAME)
    started = time.monotonic()
    failed = 0
    for n in range(args.days):
        day = SAMPLE_DAY + timedelta(days=n)
        write_day(work / "week", n)
        for hour in range(24):
            result = hourly.execute_in_process(
                partition_key=f"{day:%Y-%m-%d}-{hour:02d}:00", instance=instance, raise_on_error=False,
                run_config={**QUIET_RUN_CONFIG, **hourly_run_config(stories={"later_partitions": "keep"})})
            failed += not result.success
        result = daily.execute_in_process(partition_key=f"{day:%Y-%m-%d}", instance=instance, raise_on_error=False,
                                          run_config={**QUIET_RUN_CONFIG, "ops": {"digest": {"config": {"send": False}}}})
        failed += not result.success
        with db.connection(url) as conn:
            items, vectors, pages = conn.execute(
                "SELECT (SELECT count(*) FROM items), (SELECT count(*) FROM item_embeddings),"
                " (SELECT count(*) FROM article_texts WHERE status = 'ok')").fetchone()
        print(f"day {day}: {items} items, {vectors} item vectors, {pages} article texts so far "
              f"({time.monotonic() - started:.0f} s, "
              f"{failed} failed runs)", flush=True)

    before = _sizes(url)
    settings = RetentionSettings()
    horizon = max(settings.feed_body_days, settings.llm_call_days, settings.vector_days, settings.cache_days) + 1
    as_of = datetime.combine(SAMPLE_DAY + timedelta(days=args.days + horizon), datetime.min.time(), UTC)
    with db.connection(url) as conn:
        report = prune(conn, settings, now=as_of)
    after = _sizes(url)

    print(f"\nBytes per day of news: the sample day replayed for {args.days} days ({before['items'][1]} items), "
          f"offline; pruned as of {as_of:%Y-%m-%d} (every day past every retention age: "
          f"feed bodies {settings.feed_body_days} d, llm_calls {settings.llm_call_days} d, "
          f"vectors {settings.vector_days} d, cache {settings.cache_days} d)")
    print(f"{'table':<28} {'before KB/day':>14} {'after KB/day':>13} {'after/before':>13}")
    rows = sorted(before, key=lambda t: -before[t][0])
    for table in rows:
        b, a = before[table][0] / args.days / 1024, after.get(table, (0, 0))[0] / args.days / 1024
        if b >= 1:
            print(f"{table:<28} {b:>14.1f} {a:>13.1f} {a / b if b else 0:>13.2f}")
    total_b = sum(v[0] for v in before.values()) / args.days / 1024
    total_a = sum(v[0] for v in after.values()) / args.days / 1024
    print(f"{'total':<28} {total_b:>14.1f} {total_a:>13.1f} {total_a / total_b:>13.2f}")
    print("removed: " + ", ".join(f"{s.name} {s.rows} rows" for s in report.steps))
    print(f"{failed} failed runs; {time.monotonic() - started:.0f} s")
    db.stop_embedded_server()
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
