"""Near-duplicate headline clustering (pure; the `item_duplicates` asset calls it).

    cluster_headlines(items, background_titles=(), config=None) -> list[DuplicateMatch]

Per language (never across languages):

1. Exact pass: items whose normalised, space-free headline is equal form a
   group; its representative (representative.choose_representative) is canonical.
2. Near pass over what is left (exact-group representatives and singletons):
   candidate pairs come from an exact weighted prefix filter over 3-grams
   (only pairs whose 3-gram weighted Jaccard can reach config.min_gram_jaccard
   are ever scored), inside buckets: with the lead-token gate on, a bucket is
   (language, lead token), the empty token being one bucket of its own; with
   it off, the whole language is one bucket.
3. Greedy clustering against each group's representative, no chaining: items
   are visited in representative-preference order, so the first item of a
   group is its best representative and stays its leader; every later item
   joins the leader it scores highest with (>= threshold), else leads a new
   group. A~B and B~C never put C with A unless C matches A itself.

Existing canonical items (from the lookback window) take part. They can be
demoted when a better representative arrives (a DuplicateMatch is returned
for them; the caller must re-point their own duplicates), but two existing
canonicals are never merged with each other unless a new item of the same
exact group ties them together: merges always involve new items.

IDF: document frequencies over `background_titles` (pass the lookback window's
headlines) plus the items, distinct normalised headlines counted once, smoothed
by config.idf_prior_docs (see headline.IdfTable).

The result is deterministic: it depends on the set of items, not their order.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from scipy import sparse

from .headline import (
    HeadlineFeatures,
    IdfTable,
    NearDupConfig,
    finish_score,
    headline_features,
    idf_weight,
)
from .representative import HeadlineItem, choose_representative, representative_key

_BITS = 21  # a Unicode code point fits in 21 bits; 3 of them in one int64
_CHUNK_PAIRS = 500_000


@dataclass(frozen=True)
class DuplicateMatch:
    """`item_id` is a duplicate of `canonical_item_id` (rule 'exact' or 'near')."""

    item_id: str
    canonical_item_id: str
    rule: str
    similarity: float


# --------------------------------------------------------------------------- vectorised grams


def encode_grams(keys: Sequence[str], n: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Character n-grams of space-free texts as (row, code) arrays, unique per row.

    A gram's code packs its code points (21 bits each); a text shorter than n
    gives one gram, itself (as headline.char_ngrams does).
    """
    lengths = np.fromiter((len(k) for k in keys), dtype=np.int64, count=len(keys))
    if lengths.sum() == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    codes = np.frombuffer("".join(keys).encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    per_row = np.where(lengths >= n, lengths - n + 1, np.where(lengths > 0, 1, 0))
    rows = np.repeat(np.arange(len(keys), dtype=np.int64), per_row)
    within = np.arange(per_row.sum(), dtype=np.int64) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    pos = starts[rows] + within
    row_len = lengths[rows]
    gram = np.zeros(len(pos), dtype=np.int64)
    last = len(codes) - 1
    for k in range(n):
        valid = (within + k) < row_len
        char = np.where(valid, codes[np.minimum(pos + k, last)], 0)
        gram = (gram << _BITS) | char
    order = np.lexsort((gram, rows))
    rows, gram = rows[order], gram[order]
    keep = np.ones(len(rows), dtype=bool)
    keep[1:] = (rows[1:] != rows[:-1]) | (gram[1:] != gram[:-1])
    return rows[keep], gram[keep]


def decode_gram(code: int, n: int = 3) -> str:
    """Inverse of the packing in encode_grams (for debugging and tests)."""
    chars = [(code >> (_BITS * (n - 1 - k))) & ((1 << _BITS) - 1) for k in range(n)]
    return "".join(chr(c) for c in chars if c)


def gram_document_frequencies(keys: Iterable[str], n: int = 3) -> tuple[np.ndarray, np.ndarray, int]:
    """(sorted gram codes, df, number of distinct texts) over distinct non-empty keys."""
    distinct = sorted({k for k in keys if k})
    _, grams = encode_grams(distinct, n)
    codes, df = np.unique(grams, return_counts=True)
    return codes, df, len(distinct)


def prefix_filter_pairs(
    rows: np.ndarray, cols: np.ndarray, weights: np.ndarray, n_rows: int, min_jaccard: float,
    prefix_jaccard: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All row pairs (i < j) sharing a column whose weighted Jaccard >= min_jaccard.

    Exact: with columns ordered globally by (weight desc, column), the first
    common column of a pair reaching `min_jaccard` lies in both rows' prefixes
    (each row's prefix = its leading entries while the mass from there on is
    still >= min_jaccard * row mass). Only prefix-sharing pairs are verified.
    With `prefix_jaccard` > min_jaccard the prefixes are cut for that higher
    value: still exact for pairs reaching `prefix_jaccard`, a blocking heuristic
    below it (pairs between the two values are found when they share one of
    their rarest grams). Returns (i, j, jaccard) for pairs >= min_jaccard.
    """
    cut = max(min_jaccard, prefix_jaccard or 0.0)
    empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    if len(rows) == 0:
        return empty
    mass = np.bincount(rows, weights=weights, minlength=n_rows)
    order = np.lexsort((cols, -weights, rows))
    r, c, w = rows[order], cols[order], weights[order]
    cum = np.cumsum(w)
    first = np.ones(len(r), dtype=bool)
    first[1:] = r[1:] != r[:-1]
    row_base = np.maximum.accumulate(np.where(first, cum - w, 0.0))
    before = cum - w - row_base
    in_prefix = (mass[r] - before) >= cut * mass[r] - 1e-9
    n_cols = int(cols.max()) + 1
    prefix = sparse.csr_matrix(
        (np.ones(int(in_prefix.sum()), dtype=np.float32), (r[in_prefix], c[in_prefix])), shape=(n_rows, n_cols)
    )
    shared = sparse.triu(prefix @ prefix.T, k=1).tocoo()
    ia, ib = shared.row.astype(np.int64), shared.col.astype(np.int64)
    if len(ia) == 0:
        return empty
    # Length filter: J <= min(mass) / max(mass).
    lo, hi = np.minimum(mass[ia], mass[ib]), np.maximum(mass[ia], mass[ib])
    ok = lo >= min_jaccard * hi - 1e-9
    ia, ib = ia[ok], ib[ok]
    full = sparse.csr_matrix((w, (r, c)), shape=(n_rows, n_cols))
    indicator = full.copy()
    indicator.data[:] = 1.0
    inter = np.empty(len(ia))
    for lo_i in range(0, len(ia), _CHUNK_PAIRS):
        sl = slice(lo_i, lo_i + _CHUNK_PAIRS)
        inter[sl] = np.asarray(full[ia[sl]].multiply(indicator[ib[sl]]).sum(axis=1)).ravel()
    union = mass[ia] + mass[ib] - inter
    jac = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)
    keep = jac >= min_jaccard - 1e-12
    return ia[keep], ib[keep], jac[keep]


# --------------------------------------------------------------------------- scoring engine


class HeadlineIndex:
    """Features, IDF and candidate search for one clustering run."""

    def __init__(
        self,
        titles: Sequence[str],
        langs: Sequence[str],
        background_titles: Iterable[str] = (),
        config: NearDupConfig | None = None,
    ) -> None:
        self.config = config or NearDupConfig()
        n = self.config.ngram
        self.langs = [lang or "" for lang in langs]
        self.features: list[HeadlineFeatures] = [headline_features(t, n) for t in titles]
        background = [headline_features(t, n) for t in background_titles]
        corpus = {f.exact_key: f for f in background}
        corpus.update({f.exact_key: f for f in self.features})
        corpus.pop("", None)
        self.gram_codes, self.gram_df, self.n_docs = gram_document_frequencies(corpus.keys(), n)
        word_df: Counter[str] = Counter()
        if any(self.config.word_weight_for(lang) > 0 for lang in set(self.langs)):
            for feats in corpus.values():
                word_df.update(feats.words)
        # Words only: the engine weighs grams from the arrays above.
        self.idf = IdfTable(gram_df={}, word_df=dict(word_df), n_docs=self.n_docs,
                            prior_docs=self.config.idf_prior_docs)

    def bucket_of(self, idx: int) -> tuple[str, str]:
        lang = self.langs[idx]
        return (lang, self.features[idx].lead) if self.config.gate_for(lang) else (lang, "\x00all")

    def scored_pairs(self, members: Sequence[int]) -> list[tuple[int, int, float]]:
        """(i, j, score) for member pairs in one bucket with score >= their language threshold."""
        members = list(members)
        if len(members) < 2:
            return []
        cfg = self.config
        buckets: dict[tuple[str, str], int] = {}
        bucket_ids = np.array([buckets.setdefault(self.bucket_of(m), len(buckets)) for m in members], dtype=np.int64)
        rows, grams = encode_grams([self.features[m].exact_key for m in members], cfg.ngram)
        if len(rows) == 0:
            return []
        pos = np.searchsorted(self.gram_codes, grams)
        pos = np.minimum(pos, len(self.gram_codes) - 1) if len(self.gram_codes) else pos
        known = len(self.gram_codes) > 0
        df = np.where(known & (self.gram_codes[pos] == grams), self.gram_df[pos], 0) if known else np.zeros(len(grams))
        weights = idf_weight(df, self.n_docs, cfg.idf_prior_docs)
        _, dense_gram = np.unique(grams, return_inverse=True)
        n_dense = int(dense_gram.max()) + 1
        _, cols = np.unique(bucket_ids[rows] * n_dense + dense_gram, return_inverse=True)
        ia, ib, jac = prefix_filter_pairs(rows, cols.astype(np.int64), weights, len(members), cfg.min_gram_jaccard,
                                          cfg.prefix_jaccard)
        out = []
        for a, b, j in zip(ia.tolist(), ib.tolist(), jac.tolist()):
            i, k = members[a], members[b]
            lang = self.langs[i]
            score = finish_score(j, self.features[i], self.features[k], self.idf, lang, cfg)
            if score >= cfg.threshold_for(lang):
                out.append((i, k, score))
        return out

    def score(self, i: int, k: int) -> float:
        """Full score of one pair (used for reporting, not for candidate search)."""
        from .headline import weighted_jaccard

        a, b = self.features[i], self.features[k]
        if a.exact_key and a.exact_key == b.exact_key:
            return 1.0
        rows, grams = encode_grams([a.exact_key, b.exact_key], self.config.ngram)
        pos = np.minimum(np.searchsorted(self.gram_codes, grams), max(0, len(self.gram_codes) - 1))
        df = np.where(self.gram_codes[pos] == grams, self.gram_df[pos], 0) if len(self.gram_codes) else 0 * grams
        weight = dict(zip(grams.tolist(), idf_weight(df, self.n_docs, self.config.idf_prior_docs).tolist()))
        set_a = frozenset(grams[rows == 0].tolist())
        set_b = frozenset(grams[rows == 1].tolist())
        jac = weighted_jaccard(set_a, set_b, weight.__getitem__)
        return finish_score(jac, a, b, self.idf, self.langs[i], self.config)


# --------------------------------------------------------------------------- clustering


def cluster_headlines(
    items: Sequence[HeadlineItem],
    background_titles: Iterable[str] = (),
    config: NearDupConfig | None = None,
) -> list[DuplicateMatch]:
    """Duplicate links for a batch (see module doc). Sorted by item_id."""
    config = config or NearDupConfig()
    by_id: dict[str, HeadlineItem] = {}
    for item in items:
        by_id.setdefault(item.item_id, item)
    ordered = [by_id[k] for k in sorted(by_id)]
    if not ordered:
        return []
    index = HeadlineIndex([it.title for it in ordered], [it.lang or "" for it in ordered], background_titles, config)
    keep_existing = config.keep_existing_canonical_on_tie
    pref = {i: representative_key(it, keep_existing) for i, it in enumerate(ordered)}

    # ---- pass 1: exact groups per (language, key)
    exact_groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, feats in enumerate(index.features):
        if feats.exact_key:
            exact_groups[(index.langs[i], feats.exact_key)].append(i)
    exact_rep: dict[int, int] = {}  # member -> its exact group's representative
    participants: list[int] = []
    for i, feats in enumerate(index.features):
        if not feats.exact_key:
            participants.append(i)  # empty headline: nothing to match
    for members in exact_groups.values():
        if len(members) > 1 and any(not ordered[m].is_existing_canonical for m in members):
            rep_item = choose_representative([ordered[m] for m in members], keep_existing)
            rep = next(m for m in members if ordered[m] is rep_item)
            for m in members:
                exact_rep[m] = rep
            participants.append(rep)
        else:
            participants.extend(members)

    # ---- pass 2: near duplicates among participants, language by language
    leader_of: dict[int, tuple[int, float]] = {}  # participant -> (leader, score)
    by_lang: dict[str, list[int]] = defaultdict(list)
    for p in participants:
        if index.features[p].exact_key:
            by_lang[index.langs[p]].append(p)
    for lang in sorted(by_lang):
        members = sorted(by_lang[lang], key=pref.__getitem__)
        edges: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for i, k, score in index.scored_pairs(members):
            edges[i].append((k, score))
            edges[k].append((i, score))
        rank = {m: r for r, m in enumerate(members)}
        leaders: set[int] = set()
        for m in members:
            existing = ordered[m].is_existing_canonical
            best: tuple[float, int] | None = None
            for other, score in edges.get(m, ()):
                if other not in leaders or (existing and ordered[other].is_existing_canonical):
                    continue
                cand = (score, -rank[other])
                if best is None or cand > best:
                    best = cand
            if best is None:
                leaders.add(m)
            else:
                leader = members[-best[1]]
                leader_of[m] = (leader, best[0])

    # ---- results: every item whose final canonical is another item
    matches: list[DuplicateMatch] = []
    for i, item in enumerate(ordered):
        rep = exact_rep.get(i, i)
        leader, near_score = leader_of.get(rep, (rep, 1.0))
        if leader == i:
            continue
        if rep == leader:
            matches.append(DuplicateMatch(item.item_id, ordered[leader].item_id, "exact", 1.0))
        else:
            score = near_score if rep == i else index.score(i, leader)
            matches.append(DuplicateMatch(item.item_id, ordered[leader].item_id, "near", round(float(score), 6)))
    return matches
