"""Small hand-written fixtures for the embedding/clustering tests (no dev data)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

H0 = datetime(2026, 11, 2, 5, tzinfo=UTC)

# The 3mins.news write-up's example (docs/ARCHITECTURE.md#sources): one regulation event in four languages.
EU_AI = [
    ("eu-en", "EU lawmakers approve landmark artificial intelligence act", "en", "bbc"),
    ("eu-ja", "EU、人工知能規制法を承認", "ja", "nhk"),
    ("eu-fr", "L'Union européenne adopte une loi historique sur l'intelligence artificielle", "fr", "lemonde"),
    ("eu-zh", "欧盟批准具有里程碑意义的人工智能法案", "zh", "xinhua"),
]
# Two quakes in one region a day apart: cross-day headline similarity is 0.71-0.85 with USE, so
# only the time gates (max_gap_hours, story_max_age_hours) keep them apart -- which is the point.
QUAKE_DAY1 = [
    ("q1-a", "Magnitude 6.1 earthquake strikes eastern Turkey", "en", "reuters"),
    ("q1-b", "Strong magnitude 6.1 earthquake hits eastern Turkey", "en", "ap"),
    ("q1-c", "Earthquake of magnitude 6.1 shakes eastern Turkey", "en", "bbc"),
]
QUAKE_DAY2 = [
    ("q2-a", "Magnitude 5.4 earthquake strikes eastern Turkey", "en", "reuters"),
    ("q2-b", "Magnitude 5.4 earthquake hits eastern Turkey, no casualties reported", "en", "ap"),
    ("q2-c", "Earthquake of magnitude 5.4 shakes eastern Turkey", "en", "bbc"),
]
UNRELATED = [
    ("u-1", "Local bakery wins national bread competition", "en", "bbc"),
    ("u-2", "Central bank leaves interest rates unchanged", "en", "reuters"),
]


def insert_items(conn, rows, hour: datetime, minute_step: int = 2, sources=None) -> None:
    """rows: (id, title, lang, source); published within the hour, ingested in that partition."""
    sources = sorted({r[3] for r in rows})
    for s in sources:
        conn.execute(
            "INSERT INTO sources (id, name, feed_url, language) VALUES (%s, %s, %s, 'und') ON CONFLICT DO NOTHING",
            (s, s, f"http://{s}.example/feed"),
        )
    for n, (item_id, title, lang, source) in enumerate(rows):
        conn.execute(
            "INSERT INTO items (id, canonical_url, url, title, lang, published_at, partition_hour, source_id)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (item_id, f"http://x/{item_id}", f"http://x/{item_id}", title, lang,
             hour + timedelta(minutes=minute_step * n), hour, source),
        )
    conn.commit()


class WrittenVectors:
    """The embedding model of a test that writes item_embeddings itself (it is never asked to embed)."""

    provider = "fake"

    def __init__(self, model_id: str, dims: int):
        self.model_id, self.dims = model_id, dims

    def embed(self, texts):
        raise AssertionError("not used: the test writes the vectors")


def store_vectors(conn, model_id: str, vectors: dict):
    """Write `vectors` (item id -> unit numpy vector) as the embeddings of those stored items under
    the model `model_id`; returns the model's info."""
    from newsdedup_dagster.stages.embeddings.store import ensure_model, vector_literal

    dims = len(next(iter(vectors.values())))
    info = ensure_model(conn, WrittenVectors(model_id, dims))
    for item_id, v in vectors.items():
        conn.execute(
            "INSERT INTO item_embeddings (item_id, model, text_hash, embedding, raw_embedding, partition_hour, published_at)"
            " SELECT id, %s, id, %s::vector, %s::vector, partition_hour, published_at FROM items WHERE id = %s",
            (info.model, vector_literal(v), vector_literal(v), item_id))
    conn.commit()
    return info


def key(hour: datetime) -> str:
    return hour.strftime("%Y-%m-%d-%H:%M")


def memberships(conn) -> dict[str, str]:
    rows = conn.execute("SELECT item_id, story_id FROM story_items ORDER BY item_id").fetchall()
    conn.commit()
    return dict(rows)


def snapshot(conn) -> tuple:
    """Everything clustering writes, comparable across runs (no timestamps of the run itself)."""
    stories = conn.execute(
        "SELECT id, created_partition, updated_partition, first_published_at, latest_published_at,"
        " centroid::text, item_count, representative_item_id FROM stories ORDER BY id"
    ).fetchall()
    items = conn.execute(
        "SELECT item_id, story_id, pass, round(similarity::numeric, 5), round(gap_hours::numeric, 4),"
        " round(story_age_hours::numeric, 4), partition_hour FROM story_items ORDER BY item_id"
    ).fetchall()
    conn.commit()
    return stories, items
