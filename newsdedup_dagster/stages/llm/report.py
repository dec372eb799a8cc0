"""Top stories with their scores, for asset metadata and the demo (no Dagster imports).

    from newsdedup_dagster.stages.llm.report import print_top_stories
    with db.connection() as conn:
        print_top_stories(conn, limit=10)            # all partitions
        print_top_stories(conn, limit=10, hour=h)    # stories changed or scored in partition h
"""

from __future__ import annotations

import sys
from datetime import datetime
from typing import TextIO

import psycopg

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.redaction import redact
from newsdedup_dagster.shared.text.headline import strip_named_outlet
from newsdedup_dagster.shared.text.markdown import escape_markdown, markdown_cell
from newsdedup_dagster.stages.llm.scoring import DIMENSIONS

DIM_ABBREV = {"scale": "sca", "impact": "imp", "novelty": "nov", "breadth": "bre", "credibility": "cre", "urgency": "urg"}
# What the short column names stand for, under the table and the terminal's list.
SCORE_LEGEND = ("sig: significance, 0-10 (the dimensions weighed together); " + ", ".join(
    f"{abbrev}: {name}" for name, abbrev in DIM_ABBREV.items()) + " (each 0-10, – when not rated)")
LEGEND = f"{SCORE_LEGEND}; src: outlets; lang: languages"


def displayed_headlines(conn: psycopg.Connection, headlines: dict[str, str]) -> dict[str, str]:
    """Story id -> its headline as shown: without a trailing " - Outlet" that names one of the story's
    outlets (an offline headline is an article's title, as its feed wrote it)."""
    outlets: dict[str, set[str]] = {}
    if headlines:
        for sid, name, _url, _lang, _total, _syndicator, outlet, _feed in conn.execute(
                db.load_sql("digest_story_sources"), {"story_ids": list(headlines)}):
            outlets.setdefault(sid, set()).update(x for x in (name, outlet) if x)
    return {sid: strip_named_outlet(headline or "", outlets.get(sid, ())) for sid, headline in headlines.items()}


def top_stories(conn: psycopg.Connection, limit: int = 10, hour: datetime | None = None) -> list[dict]:
    cur = conn.execute(db.load_sql("llm_top_stories"), {"hour": hour, "limit": limit})
    names = [c.name for c in cur.description]
    rows = [dict(zip(names, row)) for row in cur.fetchall()]
    shown = displayed_headlines(conn, {r["story_id"]: r["headline"] for r in rows})
    return [{**r, "headline": shown[r["story_id"]]} for r in rows]


def _num(value) -> str:
    return "–" if value is None else f"{float(value):.1f}"


def _line(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def top_stories_markdown(rows: list[dict]) -> str:
    """A markdown table; says plainly which rows come from the offline fallback."""
    if not rows:
        return "_no scored stories in this partition_"
    columns = ["#", "sig", *(DIM_ABBREV[d] for d in DIMENSIONS), "headline", "languages", "sources", "scored by"]
    # One delimiter cell per header cell: GitHub's tables (the UI's Markdown) refuse any other count.
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for i, r in enumerate(rows, 1):
        dims = " | ".join(_num(r[d]) for d in DIMENSIONS)
        by = "offline fallback (heuristic)" if r["offline"] else r["model"]
        langs = ", ".join(r.get("languages") or []) or "–"
        # Headlines are feed or model text: escaped, so they cannot become links or images in the UI.
        lines.append(f"| {i} | {_num(r['significance'])} | {dims} | {markdown_cell(r['headline'])} | "
                     f"{markdown_cell(langs)} | {r.get('source_count', 0)} | {markdown_cell(by)} |")
    lines += ["", SCORE_LEGEND]
    if any(r["offline"] for r in rows):
        lines.append("")
        lines.append("Offline fallback: significance is a heuristic from sources, languages, articles and arrival "
                     "speed; headline and summary are the representative article's own (not rewritten, not translated).")
    return "\n".join(lines)


def errors_markdown(errors: list[str], secrets: tuple[str, ...] = ()) -> str:
    """A stage's errors as a Markdown list: they quote providers and models (a validator names the
    value it refused), so each is escaped like any feed or model text. Redacted first: escaping
    changes a key's characters, and a redaction of the escaped text would no longer find it."""
    return "\n".join(f"- {escape_markdown(redact(error, secrets))}" for error in errors)


def format_top_stories(rows: list[dict]) -> str:
    """Plain text for the terminal."""
    if not rows:
        return "Top stories: none scored yet."
    offline = any(r["offline"] for r in rows)
    out = ["Top stories" + (" (OFFLINE FALLBACK: heuristic significance, original headlines)" if offline else "") + ":",
           f"  ({LEGEND})",
           f"  {'sig':>4}  " + " ".join(f"{DIM_ABBREV[d]:>3}" for d in DIMENSIONS) + "  src lang  headline"]
    for r in rows:
        dims = " ".join(f"{_num(r[d]):>3}" for d in DIMENSIONS)
        langs = ",".join(r.get("languages") or [])
        out.append(f"  {_num(r['significance']):>4}  {dims}  {r.get('source_count', 0):>3} {langs:<5} {_line(r['headline'], 80)}")
    return "\n".join(out)


def print_top_stories(conn: psycopg.Connection, limit: int = 10, hour: datetime | None = None,
                      file: TextIO | None = None) -> list[dict]:
    rows = top_stories(conn, limit=limit, hour=hour)
    print("\n" + format_top_stories(rows), file=file or sys.stdout)
    return rows
