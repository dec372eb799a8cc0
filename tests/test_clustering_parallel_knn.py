"""Pass 2's KNN split over two connections finds exactly the edges of one statement.

The second connection reads the snapshot the clustering transaction exported before its first
change and is told what that transaction changed since (memberships its undo removed, items its
pass 1 attached). Checked by clustering the same hours both ways, first runs, a rerun of an hour
(its undo frees items) and a rebuild from an earlier hour with later_partitions=reset: every story,
membership and decision row must be identical.

Real parts: the session's embedded PostgreSQL with pgvector; the second connection is a real one.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from clustering_fixtures import H0, insert_items, snapshot

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.db.vectors import ModelInfo
from newsdedup_dagster.stages.clustering import store
from newsdedup_dagster.stages.clustering.passes import cluster_partition
from newsdedup_dagster.stages.clustering.settings import settings_for
from newsdedup_dagster.stages.embeddings.store import vector_literal

pytestmark = pytest.mark.timeout(300)
MODEL = "fake:parallel-knn"
DIMS = 16
INFO = ModelInfo(MODEL, "fake", DIMS, "vector", False)
HOURS = [H0 - timedelta(hours=2), H0 - timedelta(hours=1), H0]
PER_HOUR = 90


def add_hours(conn) -> None:
    """Each hour holds 3 items of each of 30 topics (a topic's items are near its centre); each
    hour a third of the topics are new, so later hours attach to earlier stories (pass 1) and
    found new ones (pass 2)."""
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((30 + 10 * len(HOURS), DIMS))
    conn.execute("INSERT INTO embedding_models (model, provider, dims, index_type, centring)"
                 " VALUES (%s, 'fake', %s, 'vector', false)", (MODEL, DIMS))
    for n, hour in enumerate(HOURS):
        ids = [f"p{n}-{k:03d}" for k in range(PER_HOUR)]
        insert_items(conn, [(i, f"title {i}", "en", "src") for i in ids], hour, minute_step=0)
        for k, item in enumerate(ids):
            v = centres[k % 30 + 10 * n] + 0.45 * rng.standard_normal(DIMS)
            literal = vector_literal((v / np.linalg.norm(v)).astype(np.float32))
            conn.execute(
                "INSERT INTO item_embeddings (item_id, model, text_hash, embedding, raw_embedding, partition_hour,"
                " published_at) SELECT id, %s, id, %s::vector, %s::vector, partition_hour, published_at"
                " FROM items WHERE id = %s", (MODEL, literal, literal, item))
    conn.commit()


def decisions(conn) -> list[tuple]:
    rows = conn.execute("SELECT story_id, partition_hour, edges::text, cut_groups::text FROM story_decisions"
                        " ORDER BY story_id").fetchall()
    conn.commit()
    return rows


def run_all(conn, connect, settings) -> list:
    """First runs of every hour, a rerun of the middle hour, a rebuild from the first: the state after each."""
    states = []
    for hour in HOURS:
        result = cluster_partition(conn, INFO, hour, settings, connect=connect)
        states.append((result.attached, len(result.new_stories), snapshot(conn), decisions(conn)))
    cluster_partition(conn, INFO, HOURS[1], settings, connect=connect)
    states.append(("rerun", snapshot(conn), decisions(conn)))
    reset = settings.with_overrides({"later_partitions": "reset"})
    for hour in HOURS:
        cluster_partition(conn, INFO, hour, reset, connect=connect)
    states.append(("reset", snapshot(conn), decisions(conn)))
    return states


def clear_stories(conn) -> None:
    conn.execute("TRUNCATE story_decisions, story_items, stories CASCADE")
    conn.commit()


@pytest.mark.parametrize("connections", [2, 3])
def test_split_knn_builds_exactly_the_stories_of_one_statement(clean_db, conn, monkeypatch, connections):
    add_hours(conn)
    # ef_search above the number of vectors: the story-centroid graph is rebuilt between the two
    # variants (pgvector draws node levels at random), and HNSW then searches it exhaustively
    settings = settings_for(MODEL, {"item_threshold": "0.6", "story_threshold": "0.6", "knn_k": "5",
                                    "knn_connections": str(connections), "ef_search": "400"})
    one = run_all(conn, None, settings)
    # the data exercises both passes: later hours attach to stories and found new ones
    assert sum(state[0] for state in one[:3]) > 0 and all(state[1] > 0 for state in one[:3])

    clear_stories(conn)
    opened = []

    def connect():
        opened.append(1)
        return db.connect(clean_db)

    monkeypatch.setattr(store, "KNN_SPLIT_MIN_ITEMS", 8)  # the hours here are small: split them anyway
    two = run_all(conn, connect, settings)
    # every run after the mirror's first load searched on `connections` connections
    assert len(opened) >= 5 * (connections - 1)
    assert two == one


def test_one_connection_when_the_setting_says_so(clean_db, conn, monkeypatch):
    add_hours(conn)
    opened = []

    def connect():
        opened.append(1)
        return db.connect(clean_db)

    monkeypatch.setattr(store, "KNN_SPLIT_MIN_ITEMS", 8)
    settings = settings_for(MODEL, {"item_threshold": "0.6", "story_threshold": "0.6", "knn_connections": "1"})
    for hour in HOURS:
        cluster_partition(conn, INFO, hour, settings, connect=connect)
    assert opened == []


def test_a_second_connection_that_cannot_open_leaves_one_statement(clean_db, conn, monkeypatch, caplog):
    add_hours(conn)
    monkeypatch.setattr(store, "KNN_SPLIT_MIN_ITEMS", 8)
    settings = settings_for(MODEL, {"item_threshold": "0.6", "story_threshold": "0.6", "ef_search": "400"})
    for hour in HOURS:
        cluster_partition(conn, INFO, hour, settings)
    want = snapshot(conn)
    clear_stories(conn)

    def refused():  # a real connection attempt to a port nothing listens on
        return db.connect("postgresql://nobody@127.0.0.1:1/none")

    for hour in HOURS:
        cluster_partition(conn, INFO, hour, settings, connect=refused)
    assert snapshot(conn) == want
    assert "no extra KNN connection" in caplog.text
