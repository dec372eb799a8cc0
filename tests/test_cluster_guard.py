import itertools
import random
import string

import pytest

from newsdedup_dagster.clustering.guard import (
    CALIBRATION,
    GuardConfig,
    attach_leftovers,
    guarded_components,
    louvain_communities,
    undirected_edges,
)
from newsdedup_dagster.clustering.unionfind import UnionFind

CFG = GuardConfig(story_threshold=0.7, item_threshold=0.7, knn_k=10, resolution=1.0)


def clique(ids, sim):
    return [(a, b, sim) for a, b in itertools.combinations(ids, 2)]


def test_chain_of_bridges_is_split_but_clique_stays():
    chain = list(string.ascii_uppercase)  # A-B-C-...-Z, each link a lone bridge
    chain_edges = [(a, b, 0.8) for a, b in zip(chain, chain[1:])]
    dense = [f"q{i}" for i in range(8)]
    edges = chain_edges + clique(dense, 0.9)

    # The seed (UnionFind alone) puts A and Z in one 26-item story.
    uf = UnionFind()
    for a, b, _ in edges:
        uf.union(a, b)
    assert chain in uf.components()

    stories = guarded_components(edges, CFG)
    assert dense in stories  # the clique is untouched
    chain_parts = [s for s in stories if s[0] in chain]
    assert len(chain_parts) >= 3
    assert max(len(s) for s in chain_parts) <= 10
    assert not any("A" in s and "Z" in s for s in stories)


def test_two_stories_joined_by_one_bridge_come_apart():
    left = [f"l{i}" for i in range(6)]
    right = [f"r{i}" for i in range(6)]
    edges = clique(left, 0.9) + clique(right, 0.85) + [("l0", "r0", 0.75)]
    assert guarded_components(edges, CFG) == [left, right]


def test_threshold_direction_duplicates_and_self_edges():
    edges = [("a", "b", 0.71), ("b", "a", 0.72), ("a", "a", 1.0), ("b", "c", 0.69)]
    assert undirected_edges(edges, 0.7) == {("a", "b"): pytest.approx(0.71 + 0.72)}
    assert undirected_edges([("a", "b", 0.8), ("a", "b", 0.9)], 0.7) == {("a", "b"): 0.9}
    assert guarded_components(edges, CFG) == [["a", "b"]]


def test_small_components_and_min_story_size():
    edges = [("x", "y", 0.9), ("p", "q", 0.8), ("q", "r", 0.8)]
    assert guarded_components(edges, CFG) == [["p", "q", "r"], ["x", "y"]]
    cfg3 = GuardConfig(story_threshold=0.7, item_threshold=0.7, min_story_size=3)
    assert guarded_components(edges, cfg3) == [["p", "q", "r"]]


def test_output_is_independent_of_edge_order():
    rng = random.Random(3)
    ids = [f"n{i:02d}" for i in range(40)]
    edges = [(a, b, round(rng.uniform(0.6, 1.0), 3)) for a in ids for b in rng.sample(ids, 5) if a != b]
    first = guarded_components(edges, CFG)
    for _ in range(5):
        rng.shuffle(edges)
        assert guarded_components(edges, CFG) == first
    # Reversing every edge keeps which pairs are mutual, so the same stories.
    assert guarded_components([(b, a, s) for a, b, s in edges], CFG) == first


def test_louvain_isolated_nodes_are_singletons_and_clique_is_one():
    pairs = undirected_edges(clique(["a", "b", "c", "d"], 1.0), 0.5)
    assert louvain_communities(["z", "a"], pairs) == [["a", "b", "c", "d"], ["z"]]


def test_attach_leftovers_uses_callback_and_threshold():
    stories = [["a", "b"], ["c", "d"]]
    calls = []

    def nearest(items, groups):
        calls.append((list(items), [list(g) for g in groups]))
        return {"x": (1, 0.75), "y": (0, 0.69)}  # "w" has no vector

    got = attach_leftovers(["y", "x", "w"], stories, nearest, story_threshold=0.7)
    assert got == {"x": 1}
    assert calls == [(["w", "x", "y"], stories)]  # sorted, one batch
    assert attach_leftovers([], stories, nearest, 0.7) == {}


def test_calibration_has_both_offline_models():
    assert {"e5-centred", "e5", "use", "use-centred"} <= set(CALIBRATION)
    for cfg in CALIBRATION.values():
        assert 0 < cfg.item_threshold < 1 and 0 < cfg.story_threshold < 1 and cfg.knn_k >= 1
