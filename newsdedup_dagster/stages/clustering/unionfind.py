"""Disjoint-set forest (UnionFind) over hashable item ids.

The 3mins.news two-pass method's pass 2 (docs/ARCHITECTURE.md#sources) turns KNN edges into
stories with UnionFind; we keep it
and add a guard (see guard.py) that decides *which* edges it may union.

Path compression (iterative path halving, so deep chains cannot hit the
recursion limit) + union by rank: near-constant amortised time per call.
Component listing is deterministic: members sorted by their key, components
sorted by their smallest member, so equal inputs give equal stories no
matter the order edges arrived in (idempotent partitions).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

__all__ = ["UnionFind"]

T = TypeVar("T", bound=Hashable)


def _default_key(item):
    # Ids are str in production; the type name keeps mixed types comparable.
    return (type(item).__name__, item)


class UnionFind(Generic[T]):
    """Disjoint sets with path compression and union by rank."""

    def __init__(self, items: Iterable[T] = (), key: Callable[[T], object] = _default_key):
        self._parent: dict[T, T] = {}
        self._rank: dict[T, int] = {}
        self._size: dict[T, int] = {}
        self._key = key
        for item in items:
            self.add(item)

    def __len__(self) -> int:
        return len(self._parent)

    def __contains__(self, item: object) -> bool:
        return item in self._parent

    def add(self, item: T) -> None:
        """Add ``item`` as its own singleton set (no-op if present)."""
        if item not in self._parent:
            self._parent[item] = item
            self._rank[item] = 0
            self._size[item] = 1

    def find(self, item: T) -> T:
        """Root of ``item``'s set; adds unknown items as singletons."""
        parent = self._parent
        if item not in parent:
            self.add(item)
            return item
        while parent[item] != item:
            parent[item] = parent[parent[item]]  # path halving
            item = parent[item]
        return item

    def union(self, a: T, b: T) -> bool:
        """Merge the sets of ``a`` and ``b``; True if they were separate."""
        root_a, root_b = self.find(a), self.find(b)
        if root_a == root_b:
            return False
        rank = self._rank
        if rank[root_a] < rank[root_b] or (
            # Equal ranks: the root with the smaller key wins, so the forest's
            # shape (and thus any root-based output) never depends on hash order.
            rank[root_a] == rank[root_b] and self._key(root_b) < self._key(root_a)
        ):
            root_a, root_b = root_b, root_a
        self._parent[root_b] = root_a
        self._size[root_a] += self._size[root_b]
        del self._size[root_b]
        if rank[root_a] == rank[root_b]:
            rank[root_a] += 1
        return True

    def connected(self, a: T, b: T) -> bool:
        return self.find(a) == self.find(b)

    def size(self, item: T) -> int:
        """Number of items in ``item``'s set."""
        return self._size[self.find(item)]

    def components(self, min_size: int = 1) -> list[list[T]]:
        """Sets with at least ``min_size`` members.

        Each set is sorted by key; sets are ordered by their first (smallest)
        member, so the listing is stable across runs and edge orders.
        """
        groups: dict[T, list[T]] = {}
        for item in self._parent:
            groups.setdefault(self.find(item), []).append(item)
        out = [sorted(members, key=self._key) for members in groups.values() if len(members) >= min_size]
        out.sort(key=lambda members: self._key(members[0]))
        return out
