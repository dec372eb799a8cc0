"""Model registry, HNSW indexes, cache and the per-partition embedding step (SQL side).

Vectors are stored in untyped `vector` columns (up to 16,000 dims); the per-model HNSW index
casts them: `vector(N)` up to 2,000 dims, `halfvec(N)` up to 4,000 (pgvector's index limits).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import psycopg
from psycopg import sql as pgsql

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.crashpoints import crash_point
from newsdedup_dagster.shared.db.vectors import (
    ModelInfo,
    create_index,
    hnsw_index_name,
    index_build_memory,
    index_type_for,
)
from newsdedup_dagster.shared.text.centring_prior import PRIOR_LANG, PRIOR_TEXTS, PRIOR_WEIGHT
from newsdedup_dagster.shared.text.item_text import (
    PART_SEPARATOR,
    e5_token_counter,
    embedding_key,
    embedding_parts,
    text_hash,
)
from newsdedup_dagster.stages.embeddings.providers import (
    CENTRE_MIN_LANG_ITEMS,
    Embedder,
    EmbeddingSettings,
    centring_enabled,
)

log = logging.getLogger(__name__)

# Advisory-lock key serialising model registration / index creation across processes.
MODEL_LOCK_KEY = 727_030
REEMBED_COMMAND = "newsdedup reembed"


class EmbeddingModelMismatch(RuntimeError):
    """The database was embedded with another model than the one configured."""


class EmbeddingCentringMismatch(EmbeddingModelMismatch):
    """The database's vectors were stored centred (or raw) and the configuration says otherwise.

    A subclass of EmbeddingModelMismatch: callers that report a model mismatch report this too."""












def ensure_indexes(conn: psycopg.Connection, info: ModelInfo, m: int = 16, ef_construction: int = 64,
                   centroid_m: int = 8, centroid_ef_construction: int = 64, build_memory_mb: int = 256) -> None:
    """HNSW (cosine) on item_embeddings.embedding and on the searchable stories' centroids
    (migration 035) for this model. The item index is never rebuilt here (millions of rows:
    REINDEX by hand); the centroid index is (ensure_centroid_index)."""
    with conn.transaction():
        index_build_memory(conn, build_memory_mb)
        create_index(conn, info, hnsw_index_name("item_embeddings", info.model), "item_embeddings", "embedding",
                     m, ef_construction)
        ensure_centroid_index(conn, info, centroid_m, centroid_ef_construction)




# Pass 1 searches only the stories that can still take an item (migration 035).
CENTROID_INDEX_FLAG = "searchable"


def ensure_centroid_index(conn: psycopg.Connection, info: ModelInfo, m: int, ef_construction: int) -> None:
    """The searchable stories' centroid index, rebuilt when it differs from the one asked for (build
    parameters, or built before stories had the flag): stories are few next to items."""
    name = hnsw_index_name("stories", info.model)
    row = conn.execute(db.load_sql("embed_index_definition"), (name,)).fetchone()
    if row is not None:
        options = dict(option.split("=", 1) for option in (row[0] or []))
        # pgvector's defaults where the reloptions omit them
        built = (int(options.get("m", 16)), int(options.get("ef_construction", 64)))
        flagged = CENTROID_INDEX_FLAG in row[1].split(" WHERE ", 1)[-1]
        if built != (int(m), int(ef_construction)) or not flagged:
            log.warning("rebuilding %s with m=%d, ef_construction=%d", name, m, ef_construction)
            conn.execute(pgsql.SQL(db.load_sql("embed_index_drop")).format(pgsql.Identifier(name)))
    create_index(conn, info, name, "stories", "centroid", m, ef_construction, f" AND {CENTROID_INDEX_FLAG}")


def active_model(conn: psycopg.Connection) -> ModelInfo | None:
    row = conn.execute(db.load_sql("embed_model_active")).fetchone()
    return ModelInfo(*row) if row else None


def _centre_word(centred: bool) -> str:
    return "centred per language" if centred else "raw (not centred)"


def ensure_model(
    conn: psycopg.Connection, embedder: Embedder, settings: EmbeddingSettings | None = None
) -> ModelInfo:
    """Register the configured model and centring choice (first run) or check they match the recorded ones."""
    settings = settings or EmbeddingSettings()
    dims = int(embedder.dims)
    centring = centring_enabled(embedder.model_id, settings.centre)
    wanted = ModelInfo(embedder.model_id, embedder.provider, dims, index_type_for(dims), centring)
    with conn.transaction():
        conn.execute(db.load_sql("advisory_xact_lock"), (MODEL_LOCK_KEY,))
        current = active_model(conn)
        if current is None:
            recorded = conn.execute(
                db.load_sql("embed_model_activate"),
                (wanted.model, wanted.provider, wanted.dims, wanted.index_type, wanted.centring),
            ).fetchone()[0]
            current = ModelInfo(wanted.model, wanted.provider, wanted.dims, wanted.index_type, recorded)
        elif current.model == wanted.model and current.centring is None:
            # Recorded before migration 032 with no vectors yet: the first run's choice is the record.
            conn.execute(db.load_sql("embed_model_centring_set"), (centring, current.model))
            current = ModelInfo(current.model, current.provider, current.dims, current.index_type, centring)
    if current.model != wanted.model or current.dims != wanted.dims:
        raise EmbeddingModelMismatch(
            f"the database holds embeddings of {current.model} ({current.dims} dims) but the configured model is "
            f"{wanted.model} ({wanted.dims} dims); vectors of two models cannot be compared. Either configure "
            f"{current.provider} again (NEWSDEDUP_EMBEDDING_PROVIDER/NEWSDEDUP_EMBEDDING_MODEL) or switch with "
            f"`{REEMBED_COMMAND}` and then backfill item_embeddings and stories"
        )
    if current.centring != wanted.centring:
        raise EmbeddingCentringMismatch(
            f"the database holds {current.model} vectors stored {_centre_word(bool(current.centring))} but the "
            f"configuration (embeddings.centre={settings.centre}) asks for "
            f"{_centre_word(wanted.centring)}; centred and raw vectors cannot be compared. Either set "
            f"embeddings.centre={'on' if current.centring else 'off'} again (calibration file) or switch with "
            f"`{REEMBED_COMMAND}` (rewrites the stored vectors in place) and then backfill stories"
        )
    ensure_indexes(conn, current, settings.hnsw_m, settings.hnsw_ef_construction,
                   settings.centroid_hnsw_m, settings.centroid_hnsw_ef_construction, settings.index_build_memory_mb)
    return current


def switch_model(conn: psycopg.Connection, embedder: Embedder, settings: EmbeddingSettings | None = None) -> ModelInfo:
    """Make the configured model (and centring choice) the active one.

    Another model: the old model's rows stay, inactive (backfill item_embeddings and stories next).
    Same model, other centring choice: switch_centring rewrites its stored vectors in place."""
    settings = settings or EmbeddingSettings()
    with conn.transaction():
        conn.execute(db.load_sql("advisory_xact_lock"), (MODEL_LOCK_KEY,))
        conn.execute(db.load_sql("embed_models_deactivate_others"), (embedder.model_id,))
    row = conn.execute(db.load_sql("embed_model_get"),
                       (embedder.model_id,)).fetchone()
    conn.commit()
    recorded = ModelInfo(*row) if row else None
    wanted = centring_enabled(embedder.model_id, settings.centre)
    if recorded is not None and recorded.centring is not None and recorded.centring != wanted:
        switch_centring(conn, recorded, wanted, embedder, settings.batch_size)
    return ensure_model(conn, embedder, settings)


def switch_centring(conn: psycopg.Connection, info: ModelInfo, centring: bool,
                    embedder: Embedder | None = None, batch_size: int = 128) -> int:
    """Rewrite every stored vector of the model to `centring` and record it, in one transaction (so
    no query ever sees centred and raw vectors together). No embedding calls: raw_embedding holds
    the model's own vectors. Returns the rows rewritten. Story centroids were computed from the old
    vectors: backfill stories afterwards.

    On: per partition in time order, the same sums and means as the hourly runs (embed_centre_*;
    they write each row centred at once, upsert_centred), so the result equals a fresh backfill with
    centring on. Off: embedding = raw_embedding.
    The embedder (optional) embeds the centring prior's texts if the cache lacks them.
    """
    if centring and embedder is not None:
        fill_cache(conn, embedder, info, {text_hash(t): t for t in PRIOR_TEXTS}, batch_size)
    with conn.transaction():
        conn.execute(db.load_sql("advisory_xact_lock"), (MODEL_LOCK_KEY,))
        # Rows written before migration 031 hold the raw vector only in `embedding`.
        conn.execute(db.load_sql("embed_raw_keep"),
                     (info.model,))
        conn.execute(db.load_sql("embed_language_means_delete"), (info.model,))
        if centring:
            hours = [h for (h,) in conn.execute(
                db.load_sql("embed_partitions"), (info.model,))]
            rewritten = 0
            if hours:
                _require_prior_cached(conn, info)
            for hour in hours:
                rewritten += centre_partition(conn, info, hour, hour + timedelta(hours=1))
        else:
            rewritten = conn.execute(
                db.load_sql("embed_raw_restore"), (info.model,)).rowcount
        conn.execute(db.load_sql("embed_model_centring_set"), (centring, info.model))
    return rewritten


def _require_prior_cached(conn: psycopg.Connection, info: ModelInfo) -> None:
    """The centring prior needs its texts' raw vectors in the cache (fill_cache puts them there)."""
    hashes = [text_hash(t) for t in PRIOR_TEXTS]
    found = conn.execute(db.load_sql("embed_cache_count_texts"),
                         (info.model, hashes)).fetchone()[0]
    if found == 0:
        raise RuntimeError(
            f"the centring prior's texts are not in embedding_cache for {info.model}; "
            "pass the embedder (newsdedup reembed does) so they are embedded first")


def vector_literal(vector: np.ndarray) -> str:
    # repr of float32 -> shortest round-trip text, so the stored value is exactly the computed one.
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


@dataclass
class EmbedStats:
    model: str
    items: int = 0
    cache_hits: int = 0
    computed: int = 0
    written: int = 0
    removed: int = 0
    centred: bool = False
    seconds: float = 0.0
    page_leads: int = 0   # items whose lead is their page's first paragraph (the feed gave none)


def embed_partition(
    conn: psycopg.Connection,
    embedder: Embedder,
    start: datetime,
    end: datetime,
    settings: EmbeddingSettings | None = None,
) -> EmbedStats:
    """Embed the canonical items ingested in [start, end): cache first, then the embedder.

    Idempotent: reruns rewrite the same rows (and cost no embedding calls: the cache holds them).
    """
    settings = settings or EmbeddingSettings()
    t0 = time.perf_counter()
    info = ensure_model(conn, embedder, settings)
    centred = bool(info.centring)  # ensure_model checked it matches the configuration
    stats = EmbedStats(model=info.model, centred=centred)
    rows = conn.execute(db.load_sql("embed_partition_items"), {"start": start, "end": end}).fetchall()
    conn.commit()
    ids = [r[0] for r in rows]
    keys = []
    for r in rows:
        parts = item_parts(r[1], r[2], settings, r[5])
        if r[5] and len(parts) == 2 and len(item_parts(r[1], r[2], settings)) == 1:
            stats.page_leads += 1
        keys.append(embedding_key(parts))
    hashes = [text_hash(k) for k in keys]
    stats.items = len(ids)
    unique: dict[str, str] = dict(zip(hashes, keys))
    if centred:  # the cold-start prior's texts go through the same cache (embedded once per model)
        unique.update({text_hash(t): t for t in PRIOR_TEXTS})
    hits, stats.computed = fill_cache(conn, embedder, info, unique, settings.batch_size)
    stats.cache_hits = hits
    with conn.transaction():
        stats.removed = conn.execute(
            db.load_sql("embed_delete_stale"), {"model": info.model, "start": start, "end": end, "ids": ids}
        ).rowcount
        if centred:
            stats.written = upsert_centred(conn, info, start, end, ids, hashes)
        else:
            stats.written = conn.execute(
                db.load_sql("embed_upsert"), {"model": info.model, "ids": ids, "hashes": hashes, "centred": False}
            ).rowcount
    stats.seconds = time.perf_counter() - t0
    return stats


def item_parts(title: str | None, summary: str | None, settings: EmbeddingSettings,
               page_lead: str | None = None) -> tuple[str, ...]:
    """What is embedded for one item under these settings (shared/text/item_text.py embedding_parts, with
    the token budgets counted by e5's tokenizer). `page_lead`: the first paragraph of the item's page,
    the lead when the feed's summary gives none (settings.page_lead)."""
    budgets = settings.lead_tokens > 0 or settings.head_tokens > 0
    counter = e5_token_counter() if budgets else None
    parts = embedding_parts(title, summary, settings.text_mode, settings.lead_chars, settings.lead_tokens,
                            settings.head_tokens, counter)
    if len(parts) == 1 and page_lead and settings.page_lead:
        parts = embedding_parts(title, page_lead, settings.text_mode, settings.lead_chars, settings.lead_tokens,
                                settings.head_tokens, counter)
    return parts


@dataclass
class StaleTexts:
    """Stored vectors whose text differs from what the settings embed now (a lead length, a token
    budget or the page lead changed): re-materialising item_embeddings over those hours re-embeds them."""

    items: int = 0                      # items with a vector of the model
    stale: int = 0                      # of which embedded from another text
    first_hour: datetime | None = None
    last_hour: datetime | None = None


def stale_texts(conn: psycopg.Connection, model: str, settings: EmbeddingSettings) -> StaleTexts:
    """Compare each stored vector's text hash with the hash of the text the settings give now."""
    out = StaleTexts()
    with conn.transaction(), conn.cursor(name="reembed_embedded_texts") as cur:
        cur.itersize = 5000
        cur.execute(db.load_sql("reembed_embedded_texts"), {"model": model})
        for _id, title, summary, page_lead, stored, hour in cur:
            out.items += 1
            if text_hash(embedding_key(item_parts(title, summary, settings, page_lead))) == stored:
                continue
            out.stale += 1
            out.first_hour = hour if out.first_hour is None else min(out.first_hour, hour)
            out.last_hour = hour if out.last_hour is None else max(out.last_hour, hour)
    return out


def _embed_keys(embedder: Embedder, keys: list[str], done: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """One vector per cache key: a one-part key is embedded as is; a two-part key (headline, headline +
    lead; shared/text/item_text.py embedding_parts) gets the normalised sum of its parts' vectors.
    `done` ({text: raw vector}) holds the parts earlier batches embedded: a headline shared by items in
    two batches is embedded once."""
    done = {} if done is None else done
    parts = [key.split(PART_SEPARATOR) for key in keys]
    texts = [t for t in dict.fromkeys(t for p in parts for t in p) if t not in done]
    vectors = embedder.embed(texts)
    if vectors.shape[0] != len(texts):
        return vectors  # the caller reports the shape error
    done.update(zip(texts, vectors))
    out = np.stack([np.sum([done[t] for t in p], axis=0, dtype=np.float64) for p in parts]) if parts else vectors[:0]
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (out / norms).astype(np.float32)


def fill_cache(conn: psycopg.Connection, embedder: Embedder, info: ModelInfo, unique: dict[str, str],
               batch_size: int) -> tuple[int, int]:
    """Embed the texts ({hash: text}) the cache lacks, in committed batches. Returns (hits, computed)."""
    cached = {
        h for (h,) in conn.execute(db.load_sql("embed_cache_lookup"), {"model": info.model, "hashes": list(unique)})
    }
    conn.commit()  # end the read's implicit transaction so the writes below are real transactions
    missing = [h for h in unique if h not in cached]
    computed = 0
    batch = max(1, batch_size)
    done: dict[str, np.ndarray] = {}
    for i in range(0, len(missing), batch):
        chunk = missing[i : i + batch]
        vectors = _embed_keys(embedder, [unique[h] for h in chunk], done)
        if vectors.shape != (len(chunk), info.dims):
            raise ValueError(f"{info.model} returned shape {vectors.shape}, expected ({len(chunk)}, {info.dims})")
        with conn.transaction():  # each batch commits: an interrupted run keeps what it paid for
            conn.execute(
                db.load_sql("embed_cache_insert"),
                {"model": info.model, "hashes": chunk, "vectors": [vector_literal(v) for v in vectors]},
            )
        computed += len(chunk)
        crash_point("item_embeddings.after_cache_batch")
    return len(unique) - len(missing), computed


def _centre_params(info: ModelInfo, start: datetime, end: datetime) -> dict:
    return {"model": info.model, "start": start, "end": end, "dims": int(info.dims),
            "lang_prior": CENTRE_MIN_LANG_ITEMS, "prior_lang": PRIOR_LANG, "prior_weight": PRIOR_WEIGHT,
            "prior_hashes": [text_hash(t) for t in PRIOR_TEXTS]}


def upsert_centred(conn: psycopg.Connection, info: ModelInfo, start: datetime, end: datetime,
                   ids: list[str], hashes: list[str]) -> int:
    """The hourly write with centring on (inside the caller's transaction, after embed_delete_stale):
    the partition's sums from the vectors about to be stored, then each row written once, centred.
    Stores bit for bit what the raw upsert (embed_upsert) followed by centre_partition stores,
    without writing every row twice (each write of `embedding` is an insert into two HNSW indexes).
    Returns the rows inserted or changed."""
    params = {**_centre_params(info, start, end), "ids": ids, "hashes": hashes}
    conn.execute(db.load_sql("embed_centre_prior"), params)
    conn.execute(db.load_sql("embed_centre_delete"), params)
    conn.execute(db.load_sql("embed_centre_sums_incoming"), params)
    return conn.execute(db.load_sql("embed_upsert_centred"), params).rowcount


def centre_partition(conn: psycopg.Connection, info: ModelInfo, start: datetime, end: datetime) -> int:
    """Per-language centring of the partition's stored vectors, in SQL (inside the caller's
    transaction, after all of the partition's items are embedded):

      embedding = l2_normalize(raw - mean_lang)
      mean_all  = (sum of raw vectors of the canonical items of every partition up to and including
                   this one + PRIOR_WEIGHT x mean of the prior texts) / (count + PRIOR_WEIGHT)
      mean_lang = (sum over the item's language + CENTRE_MIN_LANG_ITEMS x mean_all)
                  / (count of the language + CENTRE_MIN_LANG_ITEMS)

    i.e. the language's running mean shrunk towards the running mean of all items, which itself
    starts from a prior (shared/text/centring_prior.py) so a fresh database's first small hour is not
    centred on itself. The means come from per-partition sums (embedding_language_means), so a rerun
    rewrites only this partition's sums and a backfill in time order reproduces the hourly runs.
    """
    params = _centre_params(info, start, end)
    conn.execute(db.load_sql("embed_centre_prior"), params)
    conn.execute(db.load_sql("embed_centre_delete"), params)
    conn.execute(db.load_sql("embed_centre_sums"), params)
    return conn.execute(db.load_sql("embed_centre_apply"), params).rowcount
