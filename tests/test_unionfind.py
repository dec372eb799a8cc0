import random

from newsdedup_dagster.stages.clustering.unionfind import UnionFind


def test_union_find_and_components():
    uf = UnionFind(["a", "b", "c", "d", "e"])
    assert uf.union("b", "a") is True
    assert uf.union("a", "b") is False  # already joined
    uf.union("d", "e")
    assert uf.connected("a", "b")
    assert not uf.connected("a", "d")
    assert uf.size("a") == 2
    assert uf.components() == [["a", "b"], ["c"], ["d", "e"]]
    assert uf.components(min_size=2) == [["a", "b"], ["d", "e"]]


def test_find_adds_unknown_items_as_singletons():
    uf = UnionFind()
    assert uf.find("x") == "x"
    assert "x" in uf and len(uf) == 1


def test_union_by_rank_keeps_trees_shallow():
    uf = UnionFind(range(8))
    for a, b in [(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (4, 6), (0, 4)]:
        uf.union(a, b)
    # Balanced merges of equal ranks: 8 items, rank of the root is log2(8).
    root = uf.find(7)
    assert uf._rank[root] == 3
    assert uf.size(3) == 8


def test_long_chain_needs_no_recursion_and_compresses_paths():
    n = 50_000
    uf = UnionFind(range(n))
    for i in range(n - 1):
        uf.union(i + 1, i)
    root = uf.find(n - 1)
    assert all(uf.find(i) == root for i in range(0, n, 997))
    assert uf.size(0) == n


def test_components_do_not_depend_on_edge_order():
    edges = [("s3", "s1"), ("s2", "s1"), ("t9", "t8"), ("u1", "s3"), ("v", "w")]
    expected = None
    rng = random.Random(7)
    for _ in range(20):
        shuffled = edges[:]
        rng.shuffle(shuffled)
        uf = UnionFind()
        for a, b in shuffled:
            uf.union(a, b)
        comps = uf.components()
        expected = expected or comps
        assert comps == expected
    assert expected == [["s1", "s2", "s3", "u1"], ["t8", "t9"], ["v", "w"]]
