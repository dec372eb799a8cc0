"""Signatures of headlines for the banded candidate lookup (pure; stages/neardup/store.py stores
and queries them, migration 121).

An item's bands are bigint hashes of: its exact key (kind 'e'), its loose URL key (kind 'u', no
language: URL variants match across languages), each of its `k` rarest 3-grams by the window's
document frequencies (kind 'g') and, in a language with the lead-token gate on, its lead token
(kind 'l'). Two headlines are candidates when they share the exact key, the URL key, at least
`min_shared_grams(...)` of their rarest grams, or a lead token whose bucket is small enough that
the whole-window engine compares all its pairs (the store checks the size). This is the stored form of the
whole-window engine's blocking (cluster.blocking_pairs: three of the eight rarest grams), looser
so that grams ranked with slightly different frequencies (stored when the item entered the
window, looked up an hour or a day later) still meet: the same pair scoring then decides.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

# Candidates share at least this many rare grams (fewer when a headline has fewer rare grams):
# three of the eight rarest, pair recall 0.995 of the whole-window decisions on 4 h of bench/neardup.py's
# 100k set (four: 0.892), docs/calibration/neardup.md#banded-candidates.
SHARED_RARE_GRAMS = 3
BAND_KINDS = ("e", "u", "g", "l")


def band_hash(kind: str, text: str) -> int:
    """Signed 64-bit hash of (kind, text), stable across processes and machines (blake2b, not
    Python's salted hash): stored rows must meet hashes computed by later runs."""
    if kind not in BAND_KINDS:
        raise ValueError(f"band kind {kind!r}: expected one of {BAND_KINDS}")
    digest = hashlib.blake2b(f"{kind}\x00{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def rarest_terms(terms: Iterable[str], df: Mapping[str, int], k: int) -> list[str]:
    """The k terms with the lowest document frequency (unknown = 0), ties by the term itself, so
    the choice depends on the set and the frequencies only."""
    return sorted(set(terms), key=lambda t: (df.get(t, 0), t))[:k]


def min_shared_grams(n_rare: int) -> int:
    """Rare grams a candidate must share with a headline that has n_rare of them."""
    return max(1, min(SHARED_RARE_GRAMS, n_rare))


def signature(exact_key: str, url_key: str, rare_grams: Iterable[str], lead: str | None = None
              ) -> list[tuple[str, int]]:
    """(kind, hash) of each band of one headline: exact key, URL key, rare grams (empty keys
    give no band: an empty headline matches nothing), lead token when given (None: the gate is
    off for the language; "" is a token of its own, as in the gate)."""
    out = []
    if lead is not None:
        out.append(("l", band_hash("l", lead)))
    if exact_key:
        out.append(("e", band_hash("e", exact_key)))
    if url_key:
        out.append(("u", band_hash("u", url_key)))
    out.extend(("g", band_hash("g", g)) for g in sorted(set(rare_grams)))
    return out
