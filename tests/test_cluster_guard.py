import itertools
import random
import string

import pytest

from newsdedup_dagster.stages.clustering.guard import (
    DEFAULTS,
    attach_leftovers,
    guarded_components,
    louvain_communities,
    undirected_edges,
)
from newsdedup_dagster.stages.clustering.unionfind import UnionFind

P = {"guard": "louvain", "guard_resolution": 1.0}


def clique(ids, sim):
    return [(a, b, sim) for a, b in itertools.combinations(ids, 2)]


def test_chain_of_bridges_is_split_but_clique_stays():
    chain = list(string.ascii_uppercase)  # A-B-C-...-Z, each link a lone bridge
    chain_edges = [(a, b, 0.8) for a, b in zip(chain, chain[1:])]
    dense = [f"q{i}" for i in range(8)]
    edges = chain_edges + clique(dense, 0.9)

    # The 3mins.news method (UnionFind alone) puts A and Z in one 26-item story.
    uf = UnionFind()
    for a, b, _ in edges:
        uf.union(a, b)
    assert chain in uf.components()

    stories = guarded_components([], edges, P)
    assert dense in stories  # the clique is untouched
    chain_parts = [s for s in stories if s[0] in chain]
    assert len(chain_parts) >= 3
    assert max(len(s) for s in chain_parts) <= 10
    assert not any("A" in s and "Z" in s for s in stories)


def test_two_stories_joined_by_one_bridge_come_apart():
    left = [f"l{i}" for i in range(6)]
    right = [f"r{i}" for i in range(6)]
    edges = clique(left, 0.9) + clique(right, 0.85) + [("l0", "r0", 0.75)]
    assert guarded_components([], edges, P) == [left, right]


def test_threshold_direction_duplicates_and_self_edges():
    edges = [("a", "b", 0.71), ("b", "a", 0.72), ("a", "a", 1.0), ("b", "c", 0.69)]
    # mutual pair: both directions summed; one direction seen twice: max
    assert undirected_edges(edges, 0.7) == {("a", "b"): pytest.approx(0.71 + 0.72)}
    assert undirected_edges([("a", "b", 0.8), ("a", "b", 0.9)], 0.7) == {("a", "b"): 0.9}
    assert guarded_components(["a", "b", "c"], [e for e in edges if e[2] >= 0.7], P) == [["a", "b"]]


def test_small_components_and_singletons():
    edges = [("x", "y", 0.9), ("p", "q", 0.8), ("q", "r", 0.8)]
    assert guarded_components(["lonely"], edges, P) == [["p", "q", "r"], ["x", "y"]]


def test_accepts_the_pipelines_pair_dict_and_guard_none():
    left = [f"l{i}" for i in range(6)]
    right = [f"r{i}" for i in range(6)]
    edges = clique(left, 0.9) + clique(right, 0.85) + [("l0", "r0", 0.75)]
    pair_dict = {(a, b) if a < b else (b, a): s for a, b, s in edges}  # as passes.undirected builds it
    nodes = sorted(left + right)
    assert guarded_components(nodes, pair_dict, {"guard_resolution": 1.0}) == [left, right]
    assert guarded_components(nodes, pair_dict, {"guard": "none"}) == [sorted(left + right)]
    with pytest.raises(ValueError):
        guarded_components(nodes, pair_dict, {"guard": "bogus"})


def test_stories_are_connected_by_their_edges():
    rng = random.Random(11)
    ids = [f"n{i:03d}" for i in range(120)]
    edges = [(a, b, round(rng.uniform(0.7, 1.0), 3)) for a in ids for b in rng.sample(ids, 4) if a != b]
    pairs = undirected_edges(edges)
    for story in guarded_components(ids, edges, P):
        uf = UnionFind(story)
        for a, b in pairs:
            if a in uf and b in uf:
                uf.union(a, b)
        assert len(uf.components()) == 1


def test_output_is_independent_of_edge_order():
    rng = random.Random(3)
    ids = [f"n{i:02d}" for i in range(40)]
    edges = [(a, b, round(rng.uniform(0.6, 1.0), 3)) for a in ids for b in rng.sample(ids, 5) if a != b]
    first = guarded_components([], edges, P)
    for _ in range(5):
        rng.shuffle(edges)
        assert guarded_components([], edges, P) == first
    # Reversing every edge keeps which pairs are mutual, so the same stories.
    assert guarded_components([], [(b, a, s) for a, b, s in edges], P) == first


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


def test_defaults_are_the_calibrated_guard():
    assert DEFAULTS == {"guard": "louvain", "guard_resolution": 1.0}
