"""What held each pass-2 story together and what the chaining guard cut away (pure, no DB).

Pass 2 turns KNN edges into UnionFind components and the guard splits each component into
modularity communities; the stories are the communities with an item of the hour. For every such
story this records, from the same edges the guard saw:
  kept edges   both ends in the story: the edges that held it together
  cut edges    one end in the story, the other in another community of its component
  cut groups   those other communities (singletons included), and the story each one founded
so `newsdedup explain` can show an operator which edge joined what, and what was cut off.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from newsdedup_dagster.stages.clustering.unionfind import UnionFind

Edge = tuple[str, str, float]


@dataclass(frozen=True)
class EdgeRecord:
    story_id: str
    item_a: str          # a member of the story
    item_b: str          # a member (kept) or the far end of a cut edge
    similarity: float
    directions: int      # 2 = each end among the other's k nearest neighbours
    kept: bool
    cut_group: int | None


@dataclass(frozen=True)
class CutGroup:
    story_id: str
    cut_group: int
    item_ids: tuple[str, ...]
    became_story_id: str | None


def edge_directions(raw_edges: Iterable[Edge]) -> dict[tuple[str, str], tuple[float, int]]:
    """{(a, b) with a < b: (best cosine, number of directions it was found in)}."""
    seen: dict[tuple[str, str], float] = {}
    for a, b, sim in raw_edges:
        if a != b and float(sim) > seen.get((a, b), -2.0):
            seen[(a, b)] = float(sim)
    out: dict[tuple[str, str], tuple[float, int]] = {}
    for (a, b), sim in seen.items():
        key = (a, b) if a < b else (b, a)
        best, count = out.get(key, (-2.0, 0))
        out[key] = (max(best, sim), count + 1)
    return out


def component_records(
    stories: Sequence[tuple[str, Sequence[str]]],
    groups: Sequence[Sequence[str]],
    raw_edges: Iterable[Edge],
) -> tuple[list[EdgeRecord], list[CutGroup]]:
    """stories: (story_id, members) founded this hour; groups: every community of >= 2 the guard
    returned (stories among them); raw_edges: the directed KNN triples pass 2 used.
    Deterministic: rows sorted, cut groups numbered by their smallest item id."""
    pairs = edge_directions(raw_edges)
    uf: UnionFind[str] = UnionFind()
    touching: dict[str, list[tuple[str, str]]] = {}
    for a, b in sorted(pairs):
        uf.union(a, b)
        touching.setdefault(a, []).append((a, b))
        touching.setdefault(b, []).append((a, b))
    community: dict[str, tuple[str, ...]] = {}
    for group in groups:
        members = tuple(sorted(group))
        for m in members:
            community[m] = members
    by_component: dict[str, list[str]] = {}
    for node in sorted(touching):
        by_component.setdefault(uf.find(node), []).append(node)
    founded = {tuple(sorted(members)): sid for sid, members in stories}

    edge_rows: list[EdgeRecord] = []
    cut_rows: list[CutGroup] = []
    for story_id, members in sorted(stories):
        inside = set(members)
        nodes = by_component.get(uf.find(min(inside)), [])
        others = sorted({community.get(n, (n,)) for n in nodes if n not in inside})
        number = {}
        for no, other in enumerate(others, start=1):
            cut_rows.append(CutGroup(story_id, no, other, founded.get(other)))
            for n in other:
                number[n] = no
        around = sorted({pair for m in inside for pair in touching.get(m, ())})
        for a, b in around:
            sim, directions = pairs[(a, b)]
            if a in inside and b in inside:
                edge_rows.append(EdgeRecord(story_id, a, b, sim, directions, True, None))
            else:
                member, far = (a, b) if a in inside else (b, a)
                edge_rows.append(EdgeRecord(story_id, member, far, sim, directions, False, number.get(far)))
    return edge_rows, cut_rows


def weakest_link(members: Sequence[str], kept: Iterable[tuple[str, str, float]]) -> tuple[str, str, float] | None:
    """The bottleneck of the story's maximum spanning tree over its kept edges: the lowest-cosine
    edge the story cannot lose without falling apart, i.e. the first place it would split if the
    threshold rose. A wrong merge of two stories through one bridge shows up here as the bridge.
    None when the members are not connected by the edges (or there is one member)."""
    uf: UnionFind[str] = UnionFind(members)
    weakest = None
    joined = 0
    # strongest first; ties by ids so the answer is stable
    for a, b, sim in sorted(kept, key=lambda e: (-e[2], e[0], e[1])):
        if a in uf and b in uf and uf.find(a) != uf.find(b):
            uf.union(a, b)
            joined += 1
            weakest = (a, b, sim)
    return weakest if joined == len(set(members)) - 1 and joined > 0 else None
