"""cluster_recent_items (migration 033): the bounded copy of recent vectors pass 2 searches.

Invariant: for each model with a boundary, the mirror holds exactly the item_embeddings rows with
partition_hour >= recent_from. Checked on a database migrated with rows already in it, then through
inserts, updates, deletes, a clustering run, an out-of-order rerun of an old hour and pruning.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

import numpy as np
import pytest
from clustering_fixtures import H0, insert_items

from newsdedup_dagster.evaluation.clustering import temporary_database
from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.db.vectors import ModelInfo
from newsdedup_dagster.stages.clustering import store
from newsdedup_dagster.stages.clustering.passes import cluster_partition
from newsdedup_dagster.stages.clustering.settings import settings_for
from newsdedup_dagster.stages.embeddings.store import vector_literal

pytestmark = pytest.mark.timeout(240)
MODEL = "fake:recent"
DIMS = 8
INFO = ModelInfo(MODEL, "fake", DIMS, "vector", False)


def vec(seed: int) -> str:
    v = np.random.default_rng(seed).standard_normal(DIMS).astype(np.float32)
    return vector_literal(v / np.linalg.norm(v))


def add_hour(conn, hour, n: int = 3, prefix: str = "") -> list[str]:
    """n items in `hour` with embeddings (each a random direction: no stories form)."""
    ids = [f"{prefix}{hour:%m%d%H}-{k}" for k in range(n)]
    insert_items(conn, [(i, f"title {i}", "en", "src") for i in ids], hour)
    for i in ids:
        seed = int(hashlib.sha1(i.encode()).hexdigest()[:8], 16)
        conn.execute(
            "INSERT INTO item_embeddings (item_id, model, text_hash, embedding, raw_embedding, partition_hour, published_at)"
            " SELECT id, %s, id, %s::vector, %s::vector, partition_hour, published_at FROM items WHERE id = %s",
            (MODEL, vec(seed), vec(seed), i))
    conn.commit()
    return ids


def mirror_matches_source(conn) -> tuple[set, set]:
    """(rows the mirror should hold, rows it holds), compared on every column."""
    want = set(conn.execute(
        "SELECT e.item_id, e.embedding::text, e.partition_hour, e.published_at FROM item_embeddings e"
        " JOIN cluster_recent_state r ON r.model = e.model AND e.partition_hour >= r.recent_from").fetchall())
    have = set(conn.execute(
        "SELECT item_id, embedding::text, partition_hour, published_at FROM cluster_recent_items").fetchall())
    conn.commit()
    return want, have


def boundary(conn):
    row = conn.execute("SELECT recent_from FROM cluster_recent_state WHERE model = %s", (MODEL,)).fetchone()
    conn.commit()
    return row[0] if row else None


def test_migration_moves_a_database_with_rows_and_the_mirror_follows_every_write():
    with temporary_database() as url, db.connect(url) as conn:
        # Undo what temporary_database applied from 033 on, as if the database predates it.
        with conn.transaction():
            conn.execute("DROP TRIGGER cluster_recent_mirror ON item_embeddings")
            conn.execute("DROP TABLE cluster_recent_items, cluster_recent_state, story_decisions")
            conn.execute("ALTER TABLE story_items DROP COLUMN via_item_id, DROP COLUMN threshold")
            conn.execute("DELETE FROM schema_migrations WHERE version >= 33")
            conn.execute("INSERT INTO embedding_models (model, provider, dims, index_type, centring)"
                         " VALUES (%s, 'fake', %s, 'vector', false)", (MODEL, DIMS))
        hours = [H0 - timedelta(hours=h) for h in (100, 80, 70, 50, 10, 0)]
        for hour in hours:
            add_hour(conn, hour)
        applied = db.migrate(url)
        assert 33 in applied and 34 in applied
        # the last three days of the newest hour are mirrored, nothing older
        assert boundary(conn) == H0 - timedelta(hours=72)
        want, have = mirror_matches_source(conn)
        assert have == want and len(have) == 3 * 4

        # every later write is mirrored by the trigger: insert, update in place, move out, delete
        add_hour(conn, H0 + timedelta(hours=1))
        conn.execute("UPDATE item_embeddings SET embedding = %s::vector WHERE item_id = %s", (vec(1), f"{H0:%m%d%H}-0"))
        moved = f"{H0 - timedelta(hours=10):%m%d%H}-1"
        conn.execute("UPDATE item_embeddings SET partition_hour = partition_hour - interval '200 hours' WHERE item_id = %s",
                     (moved,))
        conn.execute("DELETE FROM items WHERE id = %s", (f"{H0:%m%d%H}-2",))
        conn.commit()
        want, have = mirror_matches_source(conn)
        assert have == want and moved not in {r[0] for r in have}

        # pass 2's window reaches before the boundary (an out-of-order rerun): older hours are loaded
        settings = settings_for(MODEL, {"max_gap_hours": "18", "recent_margin_hours": "24"})
        old_hour = H0 - timedelta(hours=80)
        with conn.transaction():
            loaded = store.sync_recent(conn, INFO, old_hour, store.Search.of(settings))
        assert loaded["loaded"] == 3 and boundary(conn) == old_hour - timedelta(hours=18)
        assert mirror_matches_source(conn)[0] == mirror_matches_source(conn)[1]
        # the newest hour again: pruned back to its window minus the margin, nothing reloaded
        with conn.transaction():
            pruned = store.sync_recent(conn, INFO, H0, store.Search.of(settings))
        assert pruned["loaded"] == 0 and pruned["pruned"] == 9  # hours -80, -70, -50
        assert boundary(conn) == H0 - timedelta(hours=18 + 24)
        want, have = mirror_matches_source(conn)
        assert have == want and {r[2] for r in have} >= {H0 - timedelta(hours=10), H0}
        # the mirror's HNSW index exists and pass 2 is answered from it
        assert conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s",
                            (store.recent_index_name(MODEL),)).fetchone()
        conn.commit()


def test_clustering_through_the_mirror_matches_the_source_rows(conn):
    """A database created at the current schema: the first run loads its window, results as before."""
    hours = [H0 - timedelta(hours=2), H0 - timedelta(hours=1), H0]
    conn.execute("INSERT INTO embedding_models (model, provider, dims, index_type, centring)"
                 " VALUES (%s, 'fake', %s, 'vector', false)", (MODEL, DIMS))
    conn.commit()
    for hour in hours:
        add_hour(conn, hour, prefix="c")
    assert boundary(conn) is None  # nothing mirrored before the first clustering run
    settings = settings_for(MODEL, {})
    for hour in hours:
        result = cluster_partition(conn, INFO, hour, settings)
        assert result.new_items == 3
    assert boundary(conn) == store.window_start(hours[0], store.Search.of(settings))
    want, have = mirror_matches_source(conn)
    assert have == want and len(have) == 9
