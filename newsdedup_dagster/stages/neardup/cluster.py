"""Near-duplicate headline clustering (pure; the `item_duplicates` asset calls it).

    cluster_headlines(items, background_titles=(), config=None) -> list[DuplicateMatch]

Per language (never across languages):

1. Exact pass: items whose normalised, space-free headline is equal form a
   group; its representative (representative.choose_representative) is canonical.
2. Near pass over what is left (exact-group representatives and singletons),
   inside buckets: with the lead-token gate on, a bucket is (language, lead
   token), the empty token being one bucket of its own; with it off, the whole
   language is one bucket. A bucket of at most config.exhaustive_bucket_size
   headlines compares every pair; a larger one takes as candidates the pairs
   sharing three of their config.blocking_grams rarest 3-grams (an inverted
   index over triples of rare grams, so 100k headlines stay far from 5e9
   pairs). Candidates are verified with the exact 3-gram weighted Jaccard
   (sparse, vectorised) and then fully scored.
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import sparse

from newsdedup_dagster.shared.text.headline import (
    HeadlineFeatures,
    IdfTable,
    NearDupConfig,
    PairOverlaps,
    combine_scores,
    headline_features,
    idf_weight,
    pair_overlaps,
)
from newsdedup_dagster.stages.neardup.representative import HeadlineItem, choose_representative, representative_key

_BITS = 21  # a Unicode code point fits in 21 bits; 3 of them in one int64
_CHUNK_PAIRS = 500_000
_SCORE_DECIMALS = 9


@dataclass(frozen=True)
class DuplicateMatch:
    """`item_id` is a duplicate of `canonical_item_id` (rule 'exact' or 'near')."""

    item_id: str
    canonical_item_id: str
    rule: str
    similarity: float


# --------------------------------------------------------------------------- vectorised grams


def unique_sorted(values: np.ndarray) -> np.ndarray:
    """np.unique without its overhead (measured 20x slower than a plain sort on
    3.5M int64 here)."""
    ordered = np.sort(values)
    if len(ordered) == 0:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def dense_ids(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, index of each value among them)."""
    distinct = unique_sorted(values)
    return distinct, np.searchsorted(distinct, values)


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
    # Unique (row, gram): rows are already ascending, so dedupe on a dense key
    # (two int64 sorts are much cheaper than a lexsort on 63-bit codes).
    codes_u, dense = dense_ids(gram)
    key = unique_sorted(rows * np.int64(len(codes_u)) + dense)
    return key // len(codes_u), codes_u[key % len(codes_u)]


def decode_gram(code: int, n: int = 3) -> str:
    """Inverse of the packing in encode_grams (for debugging and tests)."""
    chars = [(code >> (_BITS * (n - 1 - k))) & ((1 << _BITS) - 1) for k in range(n)]
    return "".join(chr(c) for c in chars if c)


def rank_within_rows(rows: np.ndarray, cols: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, ...]:
    """Entries sorted by (row, weight desc, column) and each entry's rank in its row.
    Weight depends on the column only, so columns get one global "rarest first"
    order, and a single sort of row * n + column_order does the rest."""
    n_cols = int(cols.max()) + 1
    col_weight = np.zeros(n_cols)
    col_weight[cols] = weights
    col_order = np.empty(n_cols, dtype=np.int64)
    col_order[np.lexsort((np.arange(n_cols), -col_weight))] = np.arange(n_cols)
    key = np.sort(rows * np.int64(n_cols) + col_order[cols])
    r = key // n_cols
    by_order = np.empty(n_cols, dtype=np.int64)
    by_order[col_order] = np.arange(n_cols)
    c = by_order[key % n_cols]
    idx = np.arange(len(r))
    first = np.ones(len(r), dtype=bool)
    first[1:] = r[1:] != r[:-1]
    rank = idx - np.maximum.accumulate(np.where(first, idx, 0))
    return r, c, rank


def _pairs_within_runs(sorted_keys: np.ndarray, rows_in_key_order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of rows that carry an equal key (keys sorted), as unique (i < j)."""
    n = len(sorted_keys)
    if n < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    eq = sorted_keys[1:] == sorted_keys[:-1]
    shared = np.zeros(n, dtype=bool)
    shared[1:] |= eq
    shared[:-1] |= eq
    keys, rows = sorted_keys[shared], rows_in_key_order[shared]
    if len(keys) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    new_run = np.ones(len(keys), dtype=bool)
    new_run[1:] = keys[1:] != keys[:-1]
    run_start = np.flatnonzero(new_run)
    run_end = np.append(run_start[1:], len(keys))
    run_of = np.cumsum(new_run) - 1
    later = run_end[run_of] - np.arange(len(keys)) - 1  # partners after each position
    left = np.repeat(np.arange(len(keys)), later)
    offset = np.arange(len(left)) - np.repeat(np.cumsum(later) - later, later)
    right = left + 1 + offset
    a, b = rows[left], rows[right]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    n_rows = int(rows.max()) + 1
    pair = unique_sorted(lo[lo != hi] * np.int64(n_rows) + hi[lo != hi])
    return pair // n_rows, pair % n_rows


def blocking_pairs(
    rows: np.ndarray, cols: np.ndarray, weights: np.ndarray, n_rows: int, k: int, band: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """Row pairs (i < j) sharing `band` of their k rarest columns (a row with fewer
    columns keys on all it has). Like LSH bands over an IDF-ordered sketch instead
    of random permutations: a near duplicate keeps most of its rare grams, two
    unrelated headlines rarely share three of them. Deterministic."""
    empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    if len(rows) == 0:
        return empty
    r, c, rank = rank_within_rows(rows, cols, weights)
    sel = rank < k
    # Dense ids over the selected columns only (fits 21 bits for n_rows * k < 2M).
    distinct, dense = dense_ids(c[sel])
    top = np.full((n_rows, k), -1, dtype=np.int64)
    top[r[sel], rank[sel]] = dense
    top.sort(axis=1)  # -1 (missing) first, then ascending ids: combinations come out canonical
    valid = (top >= 0).sum(axis=1)
    fits = len(distinct) < (1 << 21) - 1
    keys, key_rows = [], []

    def pack(parts: list[np.ndarray]) -> np.ndarray:
        if fits:
            out = np.zeros(len(parts[0]), dtype=np.int64)
            for part in parts:
                out = (out << 21) | (part + 1)
            return out
        out = np.zeros(len(parts[0]), dtype=np.uint64)  # wrapping hash: a collision only adds a candidate
        for part in parts:
            out = out * np.uint64(0x9E3779B97F4A7C15) + (part + 1).astype(np.uint64)
        return out.view(np.int64)

    for comb in combinations(range(k), band):
        cols_at = [top[:, k - 1 - j] for j in comb]  # rarest-k sit at the right end after the sort
        ok = np.ones(n_rows, dtype=bool)
        for part in cols_at:
            ok &= part >= 0
        if ok.any():
            keys.append(pack([part[ok] for part in cols_at]))
            key_rows.append(np.flatnonzero(ok))
    for m in range(1, band):  # rows with fewer than `band` columns: one key of all they have
        few = valid == m
        if few.any():
            keys.append(pack([top[few, k - 1 - j] for j in range(m)] + [np.full(int(few.sum()), -1)] * (band - m)))
            key_rows.append(np.flatnonzero(few))
    if not keys:
        return empty
    all_keys, all_rows = np.concatenate(keys), np.concatenate(key_rows)
    row_bits = max(1, int(n_rows - 1).bit_length())
    if row_bits <= 24:
        # Hash each key to 63 - row_bits bits and put the row below it: one plain
        # sort instead of an argsort. A hash collision only adds a candidate.
        key_bits = 63 - row_bits
        hashed = (all_keys.view(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - key_bits)
        packed = np.sort((hashed << np.uint64(row_bits) | all_rows.astype(np.uint64)).view(np.int64))
        return _pairs_within_runs(packed >> row_bits, packed & ((1 << row_bits) - 1))
    order = np.argsort(all_keys, kind="stable")
    return _pairs_within_runs(all_keys[order], all_rows[order])


def all_pairs_within(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (i < j) of rows with the same group id."""
    order = np.argsort(groups, kind="stable")
    return _pairs_within_runs(groups[order], order.astype(np.int64))


def weighted_intersections(
    matrix: sparse.csr_matrix, ia: np.ndarray, ib: np.ndarray
) -> np.ndarray:
    """sum of row ia's weights over the columns row ib also has, for each pair."""
    indicator = matrix.copy()
    indicator.data[:] = 1.0
    out = np.empty(len(ia))
    for lo in range(0, len(ia), _CHUNK_PAIRS):
        sl = slice(lo, lo + _CHUNK_PAIRS)
        out[sl] = np.asarray(matrix[ia[sl]].multiply(indicator[ib[sl]]).sum(axis=1)).ravel()
    return out


# --------------------------------------------------------------------------- scoring engine


class HeadlineIndex:
    """Features, IDF and candidate search for one clustering run."""

    def __init__(
        self,
        titles: Sequence[str],
        langs: Sequence[str],
        background_titles: Iterable[str] = (),
        config: NearDupConfig | None = None,
        idf: IdfTable | None = None,
    ) -> None:
        """`idf`: document frequencies kept elsewhere (the store's window counts, covering the
        titles too); given, `background_titles` is ignored and only the titles are shingled."""
        self.config = config or NearDupConfig()
        n = self.config.ngram
        if idf is not None:
            background_titles = ()
        self.langs = [lang or "" for lang in langs]
        self.features: list[HeadlineFeatures] = [headline_features(t, n) for t in titles]
        corpus = {f.exact_key: f for f in (headline_features(t, n) for t in background_titles)}
        corpus.update({f.exact_key: f for f in self.features})
        corpus.pop("", None)
        self._corpus = corpus
        # Grams of every distinct text, encoded once: (doc row, gram code), rows ascending.
        self._doc_keys = sorted(corpus)
        self._doc_of_key = {key: d for d, key in enumerate(self._doc_keys)}
        self._doc_rows, self._doc_grams = encode_grams(self._doc_keys, n)
        self._doc_ptr = np.searchsorted(self._doc_rows, np.arange(len(self._doc_keys) + 1))
        self.gram_codes = unique_sorted(self._doc_grams)
        self._word_df: dict[str, int] | None = None
        if idf is None:
            self.gram_df = np.bincount(np.searchsorted(self.gram_codes, self._doc_grams),
                                       minlength=len(self.gram_codes))
            self.n_docs = len(self._doc_keys)
        else:
            self.gram_df = np.fromiter((idf.gram_df.get(decode_gram(c, n), 0) for c in self.gram_codes.tolist()),
                                       dtype=np.int64, count=len(self.gram_codes))
            self.n_docs = idf.n_docs
            self._word_df = dict(idf.word_df)

    def member_grams(self, members: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(position in members, gram code) for the members' headlines (from the cache)."""
        docs = np.array([self._doc_of_key.get(self.features[m].exact_key, -1) for m in members], dtype=np.int64)
        ok = docs >= 0
        starts = np.where(ok, self._doc_ptr[np.maximum(docs, 0)], 0)
        counts = np.where(ok, self._doc_ptr[np.maximum(docs, 0) + 1] - starts, 0)
        positions = np.repeat(np.arange(len(members), dtype=np.int64), counts)
        offsets = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        return positions, self._doc_grams[np.repeat(starts, counts) + offsets]

    @property
    def idf(self) -> IdfTable:
        """Word document frequencies (computed on first need); grams are weighed from arrays."""
        if self._word_df is None:
            word_df: Counter[str] = Counter()
            for feats in self._corpus.values():
                word_df.update(feats.words)
            self._word_df = dict(word_df)
        return IdfTable(gram_df={}, word_df=self._word_df, n_docs=self.n_docs, prior_docs=self.config.idf_prior_docs)

    def gram_weights(self, grams: np.ndarray) -> np.ndarray:
        if len(self.gram_codes) == 0:
            df = np.zeros(len(grams))
        else:
            pos = np.minimum(np.searchsorted(self.gram_codes, grams), len(self.gram_codes) - 1)
            df = np.where(self.gram_codes[pos] == grams, self.gram_df[pos], 0)
        return idf_weight(df, self.n_docs, self.config.idf_prior_docs)

    def bucket_of(self, idx: int) -> tuple[str, str]:
        lang = self.langs[idx]
        return (lang, self.features[idx].lead) if self.config.gate_for(lang) else (lang, "\x00all")

    def candidate_pairs(self, members: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(a, b, 3-gram weighted Jaccard) over positions in `members`, same bucket,
        Jaccard >= config.min_gram_jaccard."""
        ia, ib, inter, mass_a, mass_b = self.candidate_overlaps(members)
        union = mass_a + mass_b - inter
        return ia, ib, np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)

    def candidate_overlaps(
        self, members: Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(a, b, shared 3-gram weight, a's gram weight, b's gram weight) over
        positions in `members`, same bucket, 3-gram weighted Jaccard >=
        config.min_gram_jaccard."""
        cfg = self.config
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0), np.zeros(0))
        n_rows = len(members)
        if n_rows < 2:
            return empty
        buckets: dict[tuple[str, str], int] = {}
        bucket_ids = np.array([buckets.setdefault(self.bucket_of(m), len(buckets)) for m in members], dtype=np.int64)
        rows, grams = self.member_grams(members)
        if len(rows) == 0:
            return empty
        weights = self.gram_weights(grams)
        _, dense_gram = dense_ids(grams)
        n_dense = int(dense_gram.max()) + 1
        _, cols = dense_ids(bucket_ids[rows] * n_dense + dense_gram)
        matrix = sparse.csr_matrix((weights, (rows, cols)), shape=(n_rows, int(cols.max()) + 1))
        mass = np.asarray(matrix.sum(axis=1)).ravel()
        # Small buckets: every pair. Large ones: blocking on rare grams.
        sizes = np.bincount(bucket_ids)
        small = sizes[bucket_ids] <= cfg.exhaustive_bucket_size
        ia_s, ib_s = all_pairs_within(np.where(small, bucket_ids, -1 - np.arange(n_rows)))
        large_rows = np.flatnonzero(~small)
        if len(large_rows):
            keep = ~small[rows]
            la, lb = blocking_pairs(rows[keep], cols[keep], weights[keep], n_rows, cfg.blocking_grams)
            ia, ib = np.concatenate([ia_s, la]), np.concatenate([ib_s, lb])
        else:
            ia, ib = ia_s, ib_s
        if len(ia) == 0:
            return empty
        # Length filter: weighted Jaccard <= min(mass) / max(mass).
        ok = np.minimum(mass[ia], mass[ib]) >= cfg.min_gram_jaccard * np.maximum(mass[ia], mass[ib]) - 1e-9
        ia, ib = ia[ok], ib[ok]
        inter = weighted_intersections(matrix, ia, ib)
        union = mass[ia] + mass[ib] - inter
        jac = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)
        keep = jac >= cfg.min_gram_jaccard - 1e-12
        ia, ib = ia[keep], ib[keep]
        return ia, ib, inter[keep], mass[ia], mass[ib]

    def scored_pairs(self, members: Sequence[int], lang: str) -> list[tuple[int, int, float]]:
        """(i, j, score) for pairs of `members` (all of language `lang`) whose score
        reaches the language's threshold; the gate is applied through the buckets."""
        members = list(members)
        cfg = self.config
        ia, ib, gram_inter, gram_a, gram_b = self.candidate_overlaps(members)
        if len(ia) == 0:
            return []
        # Re-index to the rows that take part in some candidate pair.
        involved, inverse = dense_ids(np.concatenate([ia, ib]))
        ia, ib = inverse[: len(ia)], inverse[len(ia):]
        members = [members[m] for m in involved.tolist()]
        feats = [self.features[m] for m in members]
        use_words = cfg.word_features_for(lang)
        if use_words:
            word_inter, word_a, word_b = self._set_overlaps(feats, ia, ib, "words", self.idf.word_weight)
            phrase_inter, phrase_a, phrase_b = self._set_overlaps(feats, ia, ib, "phrases", None)
        else:
            word_inter = word_a = word_b = phrase_inter = phrase_a = phrase_b = np.zeros(len(ia))
        lengths = np.array([f.length for f in feats], dtype=np.float64)
        number_ids: dict[frozenset[str], int] = {}
        number_keys = np.array([number_ids.setdefault(f.numbers, len(number_ids) + 1) if f.numbers else 0
                                for f in feats], dtype=np.int64)
        mismatch = (number_keys[ia] != 0) & (number_keys[ib] != 0) & (number_keys[ia] != number_keys[ib])
        # The same function as headline.score_features, on arrays.
        score = combine_scores(PairOverlaps(
            gram_inter=gram_inter, gram_mass_a=gram_a, gram_mass_b=gram_b,
            word_inter=word_inter, word_mass_a=word_a, word_mass_b=word_b,
            phrase_inter=phrase_inter, phrase_count_a=phrase_a, phrase_count_b=phrase_b,
            length_a=lengths[ia], length_b=lengths[ib], number_mismatch=mismatch,
            exact=self._exact_equal(feats, ia, ib),
        ), use_words, cfg)
        hit = np.flatnonzero(score >= cfg.threshold_for(lang) - 1e-12)
        return [(members[ia[h]], members[ib[h]], float(score[h])) for h in hit.tolist()]

    @staticmethod
    def _exact_equal(feats, ia, ib) -> np.ndarray:
        ids = {}
        codes = np.array([ids.setdefault(f.exact_key, len(ids)) for f in feats], dtype=np.int64)
        return codes[ia] == codes[ib]

    @staticmethod
    def _set_overlaps(feats: Sequence[HeadlineFeatures], ia: np.ndarray, ib: np.ndarray, attr: str, weight
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(shared weight, a's weight, b's weight) of a per-headline set
        (`attr`: "words" with IDF weights, "phrases" with weight 1 = counts)."""
        vocab: dict = {}
        rows, cols, vals = [], [], []
        for r, f in enumerate(feats):
            for x in getattr(f, attr):
                rows.append(r)
                cols.append(vocab.setdefault(x, len(vocab)))
                vals.append(weight(x) if weight else 1.0)
        if not vocab:
            zeros = np.zeros(len(ia))
            return zeros, zeros, zeros
        matrix = sparse.csr_matrix((vals, (rows, cols)), shape=(len(feats), len(vocab)))
        mass = np.asarray(matrix.sum(axis=1)).ravel()
        return weighted_intersections(matrix, ia, ib), mass[ia], mass[ib]

    def score(self, i: int, k: int) -> float:
        """Full score of one pair (for reporting), identical to headline.score_features
        (grams weighed from this index's document frequencies)."""
        a, b = self.features[i], self.features[k]
        rows, grams = encode_grams([a.exact_key, b.exact_key], self.config.ngram)
        weight = dict(zip(grams.tolist(), self.gram_weights(grams).tolist()))
        by_text = {decode_gram(g, self.config.ngram): w for g, w in weight.items()}
        use_words = self.config.word_features_for(self.langs[i])
        overlaps = pair_overlaps(a, b, self.idf, use_words, gram_weight=by_text.__getitem__)
        return float(combine_scores(overlaps, use_words, self.config))


# --------------------------------------------------------------------------- clustering


def cluster_headlines(
    items: Sequence[HeadlineItem],
    background_titles: Iterable[str] = (),
    config: NearDupConfig | None = None,
    idf: IdfTable | None = None,
) -> list[DuplicateMatch]:
    """Duplicate links for a batch (see module doc). Sorted by item_id. `idf`: document
    frequencies kept elsewhere, covering the items too (then `background_titles` is ignored)."""
    config = config or NearDupConfig()
    by_id: dict[str, HeadlineItem] = {}
    for item in items:
        by_id.setdefault(item.item_id, item)
    ordered = [by_id[k] for k in sorted(by_id)]
    if not ordered:
        return []
    index = HeadlineIndex([it.title for it in ordered], [it.lang or "" for it in ordered], background_titles, config,
                          idf=idf)
    keep_existing = config.keep_existing_canonical_on_tie
    pref = {i: representative_key(it, keep_existing) for i, it in enumerate(ordered)}

    # ---- pass 1: exact groups per (language, key)
    exact_groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, feats in enumerate(index.features):
        if feats.exact_key:
            exact_groups[(index.langs[i], feats.exact_key)].append(i)
    exact_rep: dict[int, int] = {}  # member -> its exact group's representative
    participants: list[int] = []  # headlines empty after normalisation never match
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
        for i, k, score in index.scored_pairs(members, lang):
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
