"""Story clustering, pure parts: UnionFind and the chain guard (no DB access)."""

from .guard import (
    CALIBRATION,
    GuardConfig,
    NearestCentroidFn,
    attach_leftovers,
    guarded_components,
    louvain_communities,
    undirected_edges,
)
from .unionfind import UnionFind

__all__ = [
    "CALIBRATION",
    "GuardConfig",
    "NearestCentroidFn",
    "UnionFind",
    "attach_leftovers",
    "guarded_components",
    "louvain_communities",
    "undirected_edges",
]
