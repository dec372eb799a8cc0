"""Story clustering, pure parts: UnionFind and the chain guard (no DB access)."""

from newsdedup_dagster.stages.clustering.guard import (
    DEFAULTS,
    GuardConfig,
    NearestCentroidFn,
    attach_leftovers,
    guarded_components,
    louvain_communities,
    split_chains,
    undirected_edges,
)
from newsdedup_dagster.stages.clustering.unionfind import UnionFind

__all__ = [
    "DEFAULTS",
    "GuardConfig",
    "NearestCentroidFn",
    "UnionFind",
    "attach_leftovers",
    "guarded_components",
    "louvain_communities",
    "split_chains",
    "undirected_edges",
]
