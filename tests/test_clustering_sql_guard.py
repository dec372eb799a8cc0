"""Pass 2's chaining guard and pass 3 through the real SQL path, on hand-made vectors."""

from __future__ import annotations

import numpy as np
import pytest
from clustering_fixtures import H0, insert_items

from newsdedup_dagster.stages.clustering.passes import check_invariants, cluster_partition
from newsdedup_dagster.stages.clustering.settings import settings_for
from newsdedup_dagster.stages.embeddings.store import ensure_model, vector_literal

pytestmark = pytest.mark.timeout(120)
DIMS = 8


class FixedEmbedder:
    provider, model_id, dims = "fake", "fake:fixed", DIMS

    def embed(self, texts):  # never called: the tests write item_embeddings themselves
        raise AssertionError("not used")


def unit(*xs):
    v = np.zeros(DIMS, dtype=np.float32)
    v[: len(xs)] = xs
    return v / np.linalg.norm(v)


def store(conn, vectors: dict[str, np.ndarray]):
    """Items in partition H0 with these (stored) vectors."""
    insert_items(conn, [(i, f"title {i}", "en", "src") for i in sorted(vectors)], H0)
    info = ensure_model(conn, FixedEmbedder())
    for item_id, v in vectors.items():
        conn.execute(
            "INSERT INTO item_embeddings (item_id, model, text_hash, embedding, raw_embedding, partition_hour, published_at)"
            " SELECT id, %s, id, %s::vector, %s::vector, partition_hour, published_at FROM items WHERE id = %s",
            (info.model, vector_literal(v), vector_literal(v), item_id),
        )
    conn.commit()
    return info


def stories_of(conn) -> list[list[str]]:
    rows = conn.execute("SELECT story_id, item_id FROM story_items ORDER BY item_id").fetchall()
    conn.commit()
    groups: dict[str, list[str]] = {}
    for story, item in rows:
        groups.setdefault(story, []).append(item)
    return sorted(groups.values())


def two_groups_and_a_bridge():
    rng = np.random.default_rng(7)
    vectors = {}
    for name, axis in (("a", 0), ("b", 1)):
        for n in range(5):
            base = np.zeros(DIMS)
            base[axis] = 1.0
            base[2 + n % 6] += 0.15 * rng.random()
            vectors[f"{name}{n}"] = (base / np.linalg.norm(base)).astype(np.float32)
    vectors["x"] = unit(1, 1)  # cosine ~0.7 to both groups: the bridge
    return vectors


def test_guard_splits_a_chain_in_the_sql_path(conn):
    info = store(conn, two_groups_and_a_bridge())
    settings = settings_for(info.model, {"item_threshold": "0.6", "story_threshold": "0.99"})
    assert settings.guard["guard"] == "louvain"
    result = cluster_partition(conn, info, H0, settings)
    groups = stories_of(conn)
    assert len(groups) == 2 and len(result.new_stories) == 2, groups
    a_side = next(g for g in groups if "a0" in g)
    assert {f"a{n}" for n in range(5)} <= set(a_side) and not any(i.startswith("b") for i in a_side)
    inv = check_invariants(conn, info, H0, settings, result)
    assert not inv.disconnected_stories and inv.multi_story_items == 0 and inv.all_considered

    # plain UnionFind (the 3mins.news method) chains both groups through the bridge into one story
    plain = settings_for(info.model, {"item_threshold": "0.6", "story_threshold": "0.99", "guard": "none"})
    cluster_partition(conn, info, H0, plain)
    assert len(stories_of(conn)) == 1


def test_pass3_attaches_a_leftover_to_the_new_story_and_stores_its_similarity(conn):
    # a1-a2 cosine 0.835 (an edge at 0.83); c is below 0.83 to each but 0.857 to their centroid
    info = store(conn, {"a1": unit(1, 0.3), "a2": unit(1, -0.3), "c": unit(1, 0, 0.6), "far": unit(0, 0, 0, 1)})
    settings = settings_for(info.model, {"item_threshold": "0.83", "story_threshold": "0.85"})
    result = cluster_partition(conn, info, H0, settings)
    assert stories_of(conn) == [["a1", "a2", "c"]]
    assert result.attached_pass3 == 1 and result.left_single == 1
    passes, sim = conn.execute("SELECT pass, similarity FROM story_items WHERE item_id = 'c'").fetchone()
    conn.commit()
    assert passes == 3 and sim == pytest.approx(1 / np.sqrt(1.36), abs=1e-4)
    inv = check_invariants(conn, info, H0, settings, result)
    assert inv.pass1_gate_violations == 0 and not inv.disconnected_stories
    assert inv.centroid_max_error < 1e-4
    # rerun: identical; pass 3 off: c stays alone
    cluster_partition(conn, info, H0, settings)
    assert stories_of(conn) == [["a1", "a2", "c"]]
    cluster_partition(conn, info, H0, settings.with_overrides({"pass3": "false"}))
    assert stories_of(conn) == [["a1", "a2"]]


def test_pass3_similarity_below_threshold_is_flagged(conn):
    info = store(conn, {"a1": unit(1, 0.3), "a2": unit(1, -0.3), "c": unit(1, 0, 0.6)})
    settings = settings_for(info.model, {"item_threshold": "0.83", "story_threshold": "0.85"})
    result = cluster_partition(conn, info, H0, settings)
    conn.execute("UPDATE story_items SET similarity = 0.5 WHERE item_id = 'c'")
    conn.commit()
    assert check_invariants(conn, info, H0, settings, result).pass1_gate_violations == 1


def test_the_checks_are_planned_on_statistics_that_include_the_hour(conn):
    # Statistics taken before the clustering transaction committed see none of the hour's
    # memberships; a 20,000-item hour's check planned on them ran for minutes.
    info = store(conn, two_groups_and_a_bridge())
    settings = settings_for(info.model, {"item_threshold": "0.6", "story_threshold": "0.99"})
    result = cluster_partition(conn, info, H0, settings)

    def estimated() -> float:
        return conn.execute("SELECT reltuples FROM pg_class WHERE relname = 'story_items'").fetchone()[0]

    assert estimated() <= 0  # never analysed: the planner knows nothing of the hour
    check_invariants(conn, info, H0, settings, result)
    assert estimated() == conn.execute("SELECT count(*) FROM story_items").fetchone()[0] == 11
    conn.commit()
