"""Pass 1 searches only the stories that can still take an item (migration 035).

Stories whose latest item is older than the searchable boundary (H's pass-2 window minus the recent
margin) leave the centroid index; an item published before boundary + max_gap (a late entry, a
rerun of an old hour) is matched by an exact scan instead. Checked against a clustering that scans
every story exactly (search=exact): the same memberships hour by hour, with a late item that can
only join a story behind the boundary, and an out-of-order rerun of an old hour.

Real parts: the session's embedded PostgreSQL with pgvector (HNSW partial index, real statements).
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from clustering_fixtures import H0, snapshot

from newsdedup_dagster.shared.db.vectors import ModelInfo
from newsdedup_dagster.stages.clustering import store
from newsdedup_dagster.stages.clustering.passes import cluster_partition
from newsdedup_dagster.stages.clustering.settings import settings_for
from newsdedup_dagster.stages.embeddings.store import ensure_indexes, vector_literal

pytestmark = pytest.mark.timeout(300)
MODEL = "fake:searchable"
DIMS = 16
INFO = ModelInfo(MODEL, "fake", DIMS, "vector", False)
HOURS = [H0 - timedelta(hours=n) for n in range(10, -1, -1)]   # eleven hours, oldest first
# ef_search above the number of vectors: HNSW then finds what an exact scan finds, so the
# comparison below is about which stories are searched, not about approximate search.
GATES = {"max_gap_hours": "2", "recent_margin_hours": "1", "story_max_age_hours": "48",
         "item_threshold": "0.7", "story_threshold": "0.7", "ef_search": "400"}


def add_item(conn, item_id: str, vector: np.ndarray, partition, published) -> None:
    conn.execute("INSERT INTO sources (id, name, feed_url, language) VALUES ('src', 'src', 'http://src.example/feed', 'und')"
                 " ON CONFLICT DO NOTHING")
    conn.execute("INSERT INTO items (id, canonical_url, url, title, lang, published_at, partition_hour, source_id)"
                 " VALUES (%s, %s, %s, %s, 'en', %s, %s, 'src')",
                 (item_id, f"http://x/{item_id}", f"http://x/{item_id}", item_id, published, partition))
    literal = vector_literal((vector / np.linalg.norm(vector)).astype(np.float32))
    conn.execute("INSERT INTO item_embeddings (item_id, model, text_hash, embedding, raw_embedding, partition_hour,"
                 " published_at) VALUES (%s, %s, %s, %s::vector, %s::vector, %s, %s)",
                 (item_id, MODEL, item_id, literal, literal, partition, published))


def build(conn) -> str:
    """Each hour: 4 items of each of 3 topics of its own and 2 items of a topic running through
    every hour. The last hour also holds a late entry published 8 hours earlier, near the topic of
    that hour (whose story has long left the index). Returns the late item's id."""
    rng = np.random.default_rng(11)
    centres = rng.standard_normal((3 * len(HOURS) + 1, DIMS))
    conn.execute("INSERT INTO embedding_models (model, provider, dims, index_type, centring)"
                 " VALUES (%s, 'fake', %s, 'vector', false)", (MODEL, DIMS))
    for n, hour in enumerate(HOURS):
        for t in range(3):
            for k in range(4):
                add_item(conn, f"h{n:02d}-t{t}-{k}", centres[3 * n + t] + 0.25 * rng.standard_normal(DIMS),
                         hour, hour + timedelta(minutes=5 * k))
        for k in range(2):
            add_item(conn, f"h{n:02d}-run-{k}", centres[-1] + 0.25 * rng.standard_normal(DIMS),
                     hour, hour + timedelta(minutes=20 + k))
    late = "late-entry"
    add_item(conn, late, centres[3 * 2] + 0.1 * rng.standard_normal(DIMS), HOURS[-1], HOURS[2] + timedelta(minutes=30))
    conn.commit()
    ensure_indexes(conn, INFO)
    return late


def run(conn, settings) -> list:
    states = []
    for hour in HOURS:
        cluster_partition(conn, INFO, hour, settings)
        states.append(snapshot(conn)[1])
    cluster_partition(conn, INFO, HOURS[3], settings)  # an out-of-order rerun of an old hour
    states.append(snapshot(conn)[1])
    return states


def test_searchable_stories_give_the_memberships_of_an_exact_scan(conn):
    late = build(conn)
    exact = run(conn, settings_for(MODEL, {**GATES, "search": "exact"}))
    conn.execute("TRUNCATE story_decisions, story_items, stories CASCADE")
    conn.execute("DELETE FROM cluster_recent_state WHERE model = %s", (MODEL,))
    conn.commit()
    indexed = run(conn, settings_for(MODEL, GATES))
    assert indexed == exact
    joined = conn.execute("SELECT s.searchable, si.pass FROM story_items si JOIN stories s ON s.id = si.story_id"
                          " WHERE si.item_id = %s", (late,)).fetchone()
    cleared, boundary = conn.execute(
        "SELECT count(*) FILTER (WHERE NOT searchable), (SELECT stories_from FROM cluster_recent_state WHERE model = %s)"
        " FROM stories WHERE model = %s", (MODEL, MODEL)).fetchone()
    conn.commit()
    # the late entry joined its story by pass 1 although that story had left the index ...
    assert joined is not None and joined[1] == 1
    # ... which now holds only the recent stories: the boundary moved and old stories were cleared
    assert boundary == store.recent_bounds(HOURS[-1], store.Search.of(settings_for(MODEL, GATES)))[1]
    assert cleared > 10
    # the flag follows from each story's latest item and the boundary, whatever order hours ran in
    wrong = conn.execute("SELECT count(*) FROM stories WHERE model = %s AND searchable <> (latest_published_at >= %s)",
                         (MODEL, boundary)).fetchone()[0]
    conn.commit()
    assert wrong == 0


def test_an_index_built_before_the_flag_is_rebuilt_with_it(conn):
    from psycopg import sql as pgsql

    from newsdedup_dagster.shared import db
    from newsdedup_dagster.shared.db.vectors import hnsw_index_name

    name = hnsw_index_name("stories", MODEL)
    conn.execute(pgsql.SQL(db.load_sql("embed_create_index")).format(
        index=pgsql.Identifier(name), table=pgsql.Identifier("stories"),
        expr=pgsql.SQL("(centroid::vector(16))"), opclass=pgsql.SQL("vector_cosine_ops"),
        model=pgsql.Literal(MODEL), m=pgsql.Literal(8), ef_construction=pgsql.Literal(64), predicate=pgsql.SQL("")))
    conn.commit()
    ensure_indexes(conn, INFO)
    indexdef = conn.execute("SELECT pg_get_indexdef(%s::regclass)", (name,)).fetchone()[0]
    conn.commit()
    assert "searchable" in indexdef.split(" WHERE ", 1)[1]
