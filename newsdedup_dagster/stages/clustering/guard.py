"""Chain guard for pass 2 (item -> item KNN + UnionFind), and pass 3.

Why: UnionFind over a threshold graph is single linkage: one bridge edge
between two stories merges them. On gnews_titles.jsonl the 3mins.news method's
pass 2 grew a 1,187-item component (B-cubed F1 0.62); with the guard, e5
centred, F1 0.860 (calibrated on this file). Evidence and the alternatives
that lost: docs/calibration/clustering.md#chain-guard.

What the guard does (pure Python on the edge list the DB returned):

1. keep KNN edges with cosine >= item_threshold; one weight per pair =
   cosine summed over the directions it was found in (mutual neighbours
   count twice, see ``undirected_edges``);
2. UnionFind -> connected components (the 3mins.news method's pass 2, unchanged);
3. split every component into modularity communities (Louvain, Blondel et
   al. 2008) computed on the same edges, with global modularity over the
   window's edge list. A bridge carries one or two edges between two dense
   groups: cutting it raises modularity, so chains split; a dense clique has
   no split that raises modularity, so it stays whole. Communities never
   cross components, so this only ever *splits* UnionFind's output.
   Deterministic: nodes visited in sorted-id order, ties go to the smallest
   community index, no random seed.
4. communities of >= 2 items (still connected by kept edges) become stories.

Pass 3 (``attach_leftovers``): items still alone after pass 2 attach to
the best *new* story of the same partition when the cosine to that story's
centroid is >= story_threshold, the same rule as pass 1. The centroid is
needed from the DB, through a callback (see ``NearestCentroidFn``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from newsdedup_dagster.stages.clustering.unionfind import UnionFind

__all__ = [
    "DEFAULTS",
    "split_chains",
    "GuardConfig",
    "NearestCentroidFn",
    "undirected_edges",
    "louvain_communities",
    "guarded_components",
    "attach_leftovers",
    "split_by_anchors",
    "join_across_languages",
]

T = TypeVar("T", bound=Hashable)
Edge = tuple[T, T, float]


@dataclass(frozen=True)
class GuardConfig:
    """One clustering configuration (cosine similarities), as the research
    prototype (bench/clustering_research.py) takes it.

    The pipeline's ClusterSettings carries the thresholds and knn_k;
    ``resolution`` maps to the guard key ``guard_resolution``.

    story_threshold: pass 1 / pass 3, item -> story centroid cosine.
    item_threshold: pass 2, item -> item KNN edge cosine.
    knn_k: neighbours per item requested from the DB in pass 2 (and the
        number of story centroids to consider in pass 1).
    resolution: Louvain modularity resolution; > 1 gives smaller stories.
    """

    story_threshold: float
    item_threshold: float
    knn_k: int = 10
    resolution: float = 1.0


def _key(item) -> tuple[str, object]:
    return (type(item).__name__, item)


def undirected_edges(edges: Iterable[Edge], threshold: float = float("-inf"), *,
                     combine: str = "sum") -> dict[tuple[T, T], float]:
    """One weight per unordered pair from directed KNN edges >= threshold.

    combine "sum" (the guard's weights): the cosine summed over the directions in which the pair
    was found: a mutual nearest-neighbour pair (b among a's k nearest AND a
    among b's) weighs twice as much as a one-way one. That is
    mutual kNN as a soft signal: it lets Louvain cut one-way "hub" edges
    first (gnews e5 centred F1 0.862 vs 0.842 with max-of-directions,
    calibrated on that file; docs/calibration/clustering.md#chain-guard).
    combine "max": the pair's best cosine (its similarity, as pass 2's explanations and
    in-story neighbours read it).
    Exact duplicates of one direction count once (max cosine); self-edges are dropped.
    """
    if combine not in ("sum", "max"):
        raise ValueError(f"combine {combine!r}: expected 'sum' or 'max'")
    directed: dict[tuple[T, T], float] = {}
    for a, b, sim in edges:
        if a == b or sim < threshold:
            continue
        if sim > directed.get((a, b), float("-inf")):
            directed[(a, b)] = float(sim)
    out: dict[tuple[T, T], float] = {}
    for (a, b), sim in directed.items():
        pair = (a, b) if _key(a) <= _key(b) else (b, a)
        if combine == "sum":
            out[pair] = out.get(pair, 0.0) + sim
        elif sim > out.get(pair, float("-inf")):
            out[pair] = sim
    return out


def louvain_communities(
    nodes: Iterable[T],
    weighted_pairs: Mapping[tuple[T, T], float],
    resolution: float = 1.0,
    total_weight: float | None = None,
) -> list[list[T]]:
    """Deterministic Louvain modularity communities of an undirected graph.

    ``weighted_pairs`` maps unordered pairs to positive weights. Returns
    lists of node ids (isolated nodes as singletons), each sorted by id,
    ordered by their smallest id. Quality matches networkx's
    ``louvain_communities`` on the gnews KNN graph (F1 0.866 both).

    ``total_weight``: the sum of edge weights of the graph the modularity
    null model refers to (default: this graph's). Passing the whole
    window's weight while giving one connected component makes the result
    identical to running on the whole window and keeping that component.
    """
    order = sorted(set(nodes) | {x for pair in weighted_pairs for x in pair}, key=_key)
    index = {x: i for i, x in enumerate(order)}
    graph: list[dict[int, float]] = [dict() for _ in order]
    for (a, b), w in weighted_pairs.items():
        ia, ib = index[a], index[b]
        graph[ia][ib] = graph[ia].get(ib, 0.0) + w
        graph[ib][ia] = graph[ib].get(ia, 0.0) + w
    members: list[list[T]] = [[x] for x in order]
    self_weight = [0.0] * len(order)

    while True:
        n = len(graph)
        degree = [sum(graph[i].values()) + 2 * self_weight[i] for i in range(n)]
        two_m = 2 * total_weight if total_weight is not None else sum(degree)
        if two_m == 0:
            break
        community = list(range(n))
        total = degree[:]
        moved = False
        improved = True
        while improved:  # local moving phase
            improved = False
            for i in range(n):
                current = community[i]
                links: dict[int, float] = defaultdict(float)
                for j, w in graph[i].items():
                    links[community[j]] += w
                total[current] -= degree[i]
                # Modularity gain of putting i into community c (up to a
                # constant factor): w(i, c) - resolution * k_i * tot_c / 2m.
                best = current
                best_gain = links.get(current, 0.0) - resolution * total[current] * degree[i] / two_m
                for c in sorted(links):
                    gain = links[c] - resolution * total[c] * degree[i] / two_m
                    if gain > best_gain + 1e-12:
                        best, best_gain = c, gain
                total[best] += degree[i]
                if best != current:
                    community[i] = best
                    improved = moved = True
        if not moved:
            break
        # Aggregation phase: each community becomes one node.
        new_index = {c: t for t, c in enumerate(sorted(set(community)))}
        next_graph: list[dict[int, float]] = [defaultdict(float) for _ in new_index]
        next_self = [0.0] * len(new_index)
        next_members: list[list[T]] = [[] for _ in new_index]
        for i in range(n):
            ci = new_index[community[i]]
            next_members[ci].extend(members[i])
            next_self[ci] += self_weight[i]
            for j, w in graph[i].items():
                cj = new_index[community[j]]
                if cj == ci:
                    next_self[ci] += w / 2  # each internal edge is seen from both ends
                else:
                    next_graph[ci][cj] += w
        graph = [dict(g) for g in next_graph]
        self_weight, members = next_self, next_members

    out = [sorted(m, key=_key) for m in members]
    out.sort(key=lambda m: _key(m[0]))
    return out


# Guard keys for ClusterSettings.guard (settings.py reads DEFAULTS; every key
# is also NEWSDEDUP_<KEY> and `eval --set key=value`).
#   guard: "louvain" (the modularity split below) or "none" (the 3mins.news method's UnionFind).
#   guard_resolution: Louvain resolution, 1.0 (gnews F1 0.860 vs 0.862 at 2.0, ITN 0.721 vs 0.695,
#   calibrated on these files; docs/calibration/clustering.md#research-prototype).
DEFAULTS: dict[str, object] = {"guard": "louvain", "guard_resolution": 1.0}


def guarded_components(
    nodes: Iterable[T],
    edges: Mapping[tuple[T, T], float] | Iterable[Edge],
    params: Mapping[str, object] | None = None,
) -> list[list[T]]:
    """Pass 2: stories from item -> item KNN edges, chains split.

    The callback contract of ``passes.pass2_groups``:
    nodes: the item ids (ids without edges can only be singletons).
    edges: either {(a, b): cosine} (one entry per unordered pair, as
        ``undirected_edges(..., combine="max")`` builds it) or the raw directed KNN triples
        (a, b, cosine) - the triples are better: a pair found from both ends
        (mutual neighbours) then weighs double (gnews e5 centred F1 0.862 vs
        0.842 with the dict). Edges are expected to be >= item_threshold
        already (the KNN query filters).
    params: the guard keys (DEFAULTS), e.g. ClusterSettings.guard.
    Returns the groups of >= 2 ids, each sorted, ordered by first id; each is
    connected by the given edges. Same input -> same output, whatever the
    edge order.
    """
    p = {**DEFAULTS, **(params or {})}
    if isinstance(edges, Mapping):
        pairs = {((a, b) if _key(a) <= _key(b) else (b, a)): float(w) for (a, b), w in edges.items() if a != b}
    else:
        pairs = undirected_edges(edges)
    if p["guard"] == "none":
        uf: UnionFind[T] = UnionFind(nodes)
        for a, b in pairs:
            uf.union(a, b)
        return uf.components(min_size=2)
    if p["guard"] != "louvain":
        raise ValueError(f"unknown guard {p['guard']!r}: expected 'louvain' or 'none'")
    return split_chains(pairs, float(p["guard_resolution"]), nodes)


def split_chains(
    pairs: Mapping[tuple[T, T], float], resolution: float = 1.0, nodes: Iterable[T] = ()
) -> list[list[T]]:
    """UnionFind components of ``pairs``, each split into modularity communities.

    Returns the groups of >= 2 members (sorted, ordered by first member).
    """
    uf: UnionFind[T] = UnionFind(nodes)
    for a, b in pairs:
        uf.union(a, b)
    component_pairs: dict[T, dict[tuple[T, T], float]] = defaultdict(dict)
    for (a, b), w in pairs.items():
        component_pairs[uf.find(a)][(a, b)] = w
    # Global modularity: the null model uses the whole window's edge weight,
    # so a small, tight component is not split just because it is judged
    # alone (judged alone, every non-clique has a positive-modularity split).
    # Same result as one Louvain over the window; per component it is
    # cheaper and shows the guard only ever splits UnionFind's components.
    window_weight = sum(pairs.values())
    stories: list[list[T]] = []
    for component in uf.components(min_size=2):
        if len(component) <= 2:
            stories.append(component)  # a pair has no split that keeps a story
            continue
        own = component_pairs[uf.find(component[0])]
        for part in louvain_communities(component, own, resolution, window_weight):
            # Louvain can (rarely) leave a community internally disconnected;
            # stories must be connected by kept edges (the asset check), so
            # take the connected pieces again - UnionFind on the part's edges.
            stories.extend(_connected_pieces(part, own))
    stories.sort(key=lambda m: _key(m[0]))
    return stories


def _connected_pieces(part: list[T], pairs: Mapping[tuple[T, T], float]) -> list[list[T]]:
    if len(part) < 2:
        return []
    inside = set(part)
    uf: UnionFind[T] = UnionFind(part)
    for a, b in pairs:
        if a in inside and b in inside:
            uf.union(a, b)
    return uf.components(min_size=2)


# Callback the DB layer implements for pass 3:
#   nearest_centroid_fn(item_ids, groups) -> {item_id: (group_index, cosine)}
# For each item id, the index (into ``groups``) of the group whose centroid
# has the highest cosine with the item's vector, and that cosine. A group's
# centroid is avg(embedding) over ALL its member ids (not the last 3: the new
# stories have no history yet, and the full mean is the better estimate;
# cosine is scale-invariant so avg() needs no normalising). Ties: lowest
# group index. Items may be omitted if they have no vector. In SQL: unnest
# (group_index, member_id) -> avg(embedding) GROUP BY group_index into a CTE,
# then for each item a LATERAL ... ORDER BY embedding <=> centroid,
# group_index LIMIT 1 (groups are few per partition: a sequential scan).
NearestCentroidFn = Callable[[Sequence[T], Sequence[Sequence[T]]], Mapping[T, tuple[int, float]]]


def attach_leftovers(
    leftovers: Sequence[T],
    stories: Sequence[Sequence[T]],
    nearest_centroid_fn: NearestCentroidFn,
    story_threshold: float,
) -> dict[T, int]:
    """Pass 3: attach items left alone by pass 2 to this partition's new stories.

    Returns {item_id: story_index} for items whose best centroid cosine is
    >= story_threshold. Centroids are computed once, before any attachment
    (a batch, like pass 1), so the result does not depend on item order.
    """
    if not leftovers or not stories:
        return {}
    ordered = sorted(leftovers, key=_key)
    best = nearest_centroid_fn(ordered, stories)
    return {
        item: best[item][0]
        for item in ordered
        if item in best and best[item][1] >= story_threshold
    }


# Anchor split (shared/text/anchors.py gives the name cosine). Louvain over the whole window cannot
# see two look-alike events inside one community: against the window's total weight, the few
# edges between two groups of 10-20 items are above what modularity would cut (the resolution
# limit, Fortunato & Barthélemy 2007). So a community of at least ANCHOR_SPLIT_MIN_SIZE items is
# split again on its own edges, each weighted by how much the two items' names agree, at a low
# resolution (few parts); the split is kept only when the names agree clearly more inside the
# parts than across them. Where names cannot be compared (no names, other languages) nothing is
# split. ECB+ dev: docs/calibration/clustering.md#anchor-check.
ANCHOR_SPLIT_MIN_SIZE = 6
# an edge between items whose names do not agree at all keeps this share of its weight (0.1-0.3
# give the same ECB+ F1 within 0.002; calibrated on that file)
ANCHOR_NAME_FLOOR = 0.3

NameCosineFn = Callable[[T, T], "float | None"]


@dataclass(frozen=True)
class AnchorSplit:
    """One community the anchor split cut: its parts and the mean name cosine inside / across."""
    parts: list[list]
    within: float
    across: float


def split_by_anchors(
    groups: Sequence[Sequence[T]],
    pairs: Mapping[tuple[T, T], float],
    name_cosine: NameCosineFn,
    resolution: float,
    margin: float,
) -> tuple[list[list[T]], list[AnchorSplit]]:
    """The guard's groups with those whose names say "two events" split (see above).
    pairs: {(a, b): weight} as undirected_edges builds them. Returns (groups of >= 2, each
    connected by its edges, ordered by first member; the splits made)."""
    out: list[list[T]] = []
    splits: list[AnchorSplit] = []
    for group in groups:
        members = sorted(group, key=_key)
        if len(members) < ANCHOR_SPLIT_MIN_SIZE:
            out.append(members)
            continue
        inside = set(members)
        own: dict[tuple[T, T], float] = {}
        for (a, b), w in pairs.items():
            if a in inside and b in inside:
                agree = name_cosine(a, b)
                own[(a, b)] = w if agree is None else w * (ANCHOR_NAME_FLOOR + agree) / (ANCHOR_NAME_FLOOR + 1)
        parts = louvain_communities(members, own, resolution)
        if len(parts) < 2:
            out.append(members)
            continue
        where = {m: i for i, part in enumerate(parts) for m in part}
        sums = {True: [0.0, 0], False: [0.0, 0]}
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                agree = name_cosine(a, b)
                if agree is not None:
                    cell = sums[where[a] == where[b]]
                    cell[0] += agree
                    cell[1] += 1
        if not sums[True][1] or not sums[False][1]:
            out.append(members)
            continue
        within, across = sums[True][0] / sums[True][1], sums[False][0] / sums[False][1]
        if within - across < margin:
            out.append(members)
            continue
        pieces = [piece for part in parts for piece in _connected_pieces(part, own)]
        splits.append(AnchorSplit(pieces, within, across))
        out.extend(pieces)
    out.sort(key=lambda m: _key(m[0]))
    return out, splits


# Joins across languages (shared/text/anchors.py joins_across_languages). One event told in two
# languages can form two dense groups, one per set of languages, joined by a few cross-language
# edges at cosines near or below the item threshold: the guard cuts such a bridge as it cuts a
# chain. Where an edge's two ends agree on a specific anchor (the same earthquake magnitude) and
# the two groups share no language and their anchors conflict on nothing, the groups are one
# story. Sample day's Iwate quake (ja/zh | en/ko); docs/calibration/clustering.md#cross-language-agreement.
GroupsCompatibleFn = Callable[[Sequence[T], Sequence[T]], bool]


def join_across_languages(
    groups: Sequence[Sequence[T]],
    pairs: Mapping[tuple[T, T], float],
    agree: Callable[[T, T], bool],
    languages: Callable[[T], str],
    compatible: GroupsCompatibleFn,
) -> tuple[list[list[T]], list[tuple[T, T, float]]]:
    """The guard's groups with those joined by an agreeing edge merged (see above). pairs: {(a, b):
    weight}; agree(a, b): the two items' anchors agree and do not conflict (the caller knows they
    are in different languages); languages(item): its language ("" unknown: never joined);
    compatible(members_a, members_b): the two groups' anchors conflict on nothing. An item in no
    group is a group of its own. Edges are tried strongest first (ties by ids), so the result does
    not depend on the input order. Returns (groups of >= 2 ordered by first member, the edges that
    joined two groups)."""
    members: dict[int, list[T]] = {}
    where: dict[T, int] = {}
    for i, group in enumerate(groups):
        members[i] = sorted(group, key=_key)
        for m in group:
            where[m] = i
    langs = {i: {languages(m) for m in ms} for i, ms in members.items()}
    joined: list[tuple[T, T, float]] = []
    for (a, b), w in sorted(pairs.items(), key=lambda kv: (-kv[1], _key(kv[0][0]), _key(kv[0][1]))):
        for node in (a, b):
            if node not in where:
                where[node] = len(members)
                members[where[node]] = [node]
                langs[where[node]] = {languages(node)}
        i, j = where[a], where[b]
        if i == j or "" in langs[i] or "" in langs[j] or langs[i] & langs[j]:
            continue
        if not agree(a, b) or not compatible(members[i], members[j]):
            continue
        keep, gone = min(i, j), max(i, j)
        members[keep] = sorted(members[keep] + members.pop(gone), key=_key)
        langs[keep] |= langs.pop(gone)
        for m in members[keep]:
            where[m] = keep
        joined.append((a, b, w))
    out = [ms for ms in members.values() if len(ms) >= 2]
    out.sort(key=lambda m: _key(m[0]))
    return out, joined
