"""The database side of the near-duplicate stage: `dedup_partition(conn, hour)`.

Model: a duplicate points at its group's ANCHOR (`item_duplicates.canonical_item_id`),
the item that is embedded and clustered. The anchor never changes once it is in a
story, so no earlier hour's rows are rewritten and story membership stays put; what
switches when a better member arrives is the group's REPRESENTATIVE (shown in stories
and digests), kept in `duplicate_groups` and recomputed from the members.

Rules, in order: 'url' (same article behind scheme / www. / m. / trailing-slash variants
that canonical URLs keep apart), 'exact' (normalised headline), 'near' (3-gram IDF
Jaccard with the lead-token gate where it helps, see headline.NearDupConfig).
Idempotent: the hour's own rows are deleted and recomputed in one transaction.

Re-running H after later hours (`later_partitions`): "keep" leaves the later hours' duplicates in
place (groups then count members that arrived after H); "reset" deletes them first and recomputes
their groups from what is left, so H and every later hour, re-run in time order, rebuild exactly
what the first runs built (as the `stories` asset's option of the same name does for clustering).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import psycopg

from newsdedup_dagster.shared.crashpoints import crash_point
from newsdedup_dagster.shared.db import load_sql
from newsdedup_dagster.shared.text.headline import (
    HeadlineFeatures,
    IdfTable,
    NearDupConfig,
    char_ngrams,
    headline_features,
    word_tokens,
)
from newsdedup_dagster.stages.neardup.bands import band_hash, min_shared_grams, rarest_terms, signature
from newsdedup_dagster.stages.neardup.cluster import cluster_headlines
from newsdedup_dagster.stages.neardup.representative import HeadlineItem, choose_representative

# Lookback for candidates and IDF (the default). Same-story wire copies
# arrive within hours; 36 h also matches the story age limit.
DEFAULT_LOOKBACK_HOURS = 36
# Arbitrary constant namespace for the per-hour advisory lock.
NEARDUP_LOCK_NAMESPACE = 727_020
LATER_PARTITIONS_CHOICES = ("keep", "reset")
# How an hour finds its candidates: "bands" (stored signatures and document frequencies, migration
# 121: memory and time follow the hour, not the window) or "window" (every item of the window read
# and shingled: the reference the bands path is measured against).
CANDIDATES_CHOICES = ("bands", "window")
# Rare 3-grams stored per headline as bands: docs/calibration/neardup.md#banded-candidates.
DEFAULT_BAND_GRAMS = 8
# Key of the advisory lock that serialises moves of the window's counts (any hour's run).
_WINDOW_LOCK = -1
_LOOSE_HOST_PREFIXES = ("www.", "m.", "mobile.", "amp.")


def loose_url_key(canonical_url: str) -> str:
    """Scheme-less, www./m./amp.-less host + path (no trailing slash) + query."""
    parts = urlsplit(canonical_url)
    host = (parts.hostname or "").lower()
    for prefix in _LOOSE_HOST_PREFIXES:
        if host.startswith(prefix):
            host = host[len(prefix):]
            break
    path = parts.path.rstrip("/") or "/"
    return f"{host}{path}" + (f"?{parts.query}" if parts.query else "")


@dataclass
class DedupReport:
    items: int = 0
    window_canonicals: int = 0
    later_duplicates_removed: int = 0  # later hours' duplicates forgotten (later_partitions=reset)
    by_rule: dict[str, int] = field(default_factory=lambda: {"url": 0, "exact": 0, "near": 0})
    groups: list[dict] = field(default_factory=list)  # for the metadata table

    @property
    def duplicates(self) -> int:
        return sum(self.by_rule.values())


def _headline_item(row, existing: bool) -> HeadlineItem:
    return HeadlineItem(item_id=row[0], title=row[1] or "", lang=row[2], url=row[3] or "",
                        source_is_syndicator=bool(row[5]), published_at=row[6], is_existing_canonical=existing)


def dedup_partition(conn: psycopg.Connection, hour: datetime, *, lookback_hours: int = DEFAULT_LOOKBACK_HOURS,
                    config: NearDupConfig | None = None, later_partitions: str = "keep",
                    candidates: str = "window", band_grams: int = DEFAULT_BAND_GRAMS) -> DedupReport:
    """Decide the duplicates of hour H. `conn` must not be inside a transaction; commits.
    later_partitions: "keep" or "reset" (see the module docstring); candidates: "bands" or
    "window" (CANDIDATES_CHOICES)."""
    if later_partitions not in LATER_PARTITIONS_CHOICES:
        raise ValueError(f"later_partitions={later_partitions!r}: expected keep or reset")
    if candidates not in CANDIDATES_CHOICES:
        raise ValueError(f"candidates={candidates!r}: expected bands or window")
    config = config or NearDupConfig()
    report = DedupReport()
    lock = int(hour.timestamp() // 3600)
    with conn.transaction():
        conn.execute(load_sql("advisory_xact_lock_pair"), (NEARDUP_LOCK_NAMESPACE, lock))
        later_anchors: set[str] = set()
        if later_partitions == "reset":
            removed = conn.execute(load_sql("neardup_undo_later"), {"hour": hour}).fetchall()
            report.later_duplicates_removed = len(removed)
            later_anchors = {r[0] for r in removed}
        conn.execute(load_sql("neardup_undo_partition"), {"hour": hour})
        new_rows = conn.execute(load_sql("neardup_partition_items"), {"hour": hour}).fetchall()
        report.items = len(new_rows)
        if not new_rows:
            _reset_groups(conn, sorted(later_anchors))
            return report
        langs = sorted({r[2] or "" for r in new_rows})
        window_start = hour - timedelta(hours=lookback_hours)
        if candidates == "window":
            window_rows = conn.execute(
                load_sql("neardup_window_items"), {"hour": hour, "window_start": window_start, "langs": langs},
            ).fetchall()
            canon_rows = [r for r in window_rows if r[7]]
            idf = None
        else:
            window_rows = []
            canon_rows, idf = _band_candidates(conn, hour, window_start, new_rows, langs, config, band_grams)
        report.window_canonicals = len(canon_rows)
        # 1. URL variants, then 2./3. exact and near headline duplicates over what is left.
        matches = _url_matches(canon_rows, new_rows)  # item -> (anchor, rule, similarity)
        matches.update(_headline_matches(canon_rows, new_rows, window_rows, matches, config, idf))
        if matches:
            _insert_matches(conn, hour, matches, report)
        crash_point("item_duplicates.after_insert")
        anchors = sorted({a for a, _, _ in matches.values()})
        _refresh_groups(conn, anchors, report)
        # Groups that lost their members in this rerun, or members decided by later hours (reset).
        _reset_groups(conn, sorted(later_anchors - set(anchors)))
        conn.execute(load_sql("neardup_groups_prune"), {"anchors": anchors + [r[0] for r in canon_rows]})
    return report


def _url_matches(canon_rows, new_rows) -> dict[str, tuple[str, str, float]]:
    """A new item whose loose URL key equals an earlier canonical's (or an earlier new item's) joins it."""
    matches: dict[str, tuple[str, str, float]] = {}
    first_by_key: dict[str, str] = {}
    for row in sorted(canon_rows, key=lambda r: r[0]):
        first_by_key.setdefault(loose_url_key(row[4]), row[0])
    for row in new_rows:
        key = loose_url_key(row[4])
        anchor = first_by_key.setdefault(key, row[0])
        if anchor != row[0]:
            matches[row[0]] = (anchor, "url", 1.0)
    return matches


def _headline_matches(canon_rows, new_rows, window_rows, url_matches, config: NearDupConfig,
                      idf: IdfTable | None = None) -> dict[str, tuple[str, str, float]]:
    """Exact and near headline duplicates (the pure cluster_headlines) among the window's
    canonicals and the new items no URL matched. `idf` given (bands path): the window's kept
    document frequencies instead of the window's titles."""
    matches: dict[str, tuple[str, str, float]] = {}
    existing = {r[0] for r in canon_rows}
    candidates = [_headline_item(r, True) for r in canon_rows] + [
        _headline_item(r, False) for r in new_rows if r[0] not in url_matches
    ]
    background = [r[1] for r in window_rows if r[1]]
    links = cluster_headlines(candidates, background_titles=background, config=config, idf=idf)
    # Group by the pure function's chosen leader; anchor = an existing canonical if the
    # group has one (it is already embedded and in a story), else the leader. Two earlier
    # canonicals in one group both live in stories already: both stay, new items join the first.
    members: dict[str, list] = defaultdict(list)
    for link in links:
        members[link.canonical_item_id].append(link)
    for leader, group in sorted(members.items()):
        ids = [leader] + [link.item_id for link in group]
        anchors = sorted(i for i in ids if i in existing)
        anchor = anchors[0] if anchors else leader
        sim_of = {link.item_id: (link.rule, link.similarity) for link in group}
        for item in ids:
            if item == anchor or item in existing:
                continue
            rule, sim = sim_of.get(item, ("near", None))
            if item == leader:  # the new leader demoted an existing canonical: use that link's score
                demoted = sim_of.get(anchor)
                rule, sim = demoted if demoted else (rule, sim)
            matches[item] = (anchor, rule, 1.0 if sim is None else sim)
    return matches


def _insert_matches(conn, hour: datetime, matches: dict[str, tuple[str, str, float]], report: DedupReport) -> None:
    item_ids = sorted(matches)
    conn.execute(
        load_sql("neardup_insert"),
        {
            "item_ids": item_ids,
            "canonical_ids": [matches[i][0] for i in item_ids],
            "rules": [matches[i][1] for i in item_ids],
            "similarities": [float(matches[i][2]) for i in item_ids],
            "hours": [hour] * len(item_ids),
        },
    )
    for _, rule, _ in matches.values():
        report.by_rule[rule] += 1


def _reset_groups(conn, anchors: list[str]) -> None:
    """Groups that lost later hours' members: recomputed from what is left, or removed."""
    if anchors:
        _refresh_groups(conn, anchors, None)
        conn.execute(load_sql("neardup_groups_prune"), {"anchors": anchors})


def _refresh_groups(conn, anchors: list[str], report: DedupReport | None) -> None:
    """Representative, size and last deciding hour of each group, from its current members only
    (a pure function of them: the same members give the same row whatever ran before)."""
    if not anchors:
        return
    rows = conn.execute(load_sql("neardup_group_members"), {"anchors": anchors}).fetchall()
    grouped: dict[str, list] = defaultdict(list)
    for anchor, *member in rows:
        grouped[anchor].append(member)
    kept, reps, counts, hours = [], [], [], []
    for anchor in anchors:
        decided = [m[6] for m in grouped[anchor] if m[6] is not None]
        if not decided:  # no duplicate left: not a group (neardup_groups_prune removes its row)
            continue
        items = [HeadlineItem(item_id=m[0], title=m[1] or "", lang=m[2], url=m[3] or "",
                              source_is_syndicator=bool(m[4]), published_at=m[5]) for m in grouped[anchor]]
        rep = choose_representative(items)
        kept.append(anchor)
        reps.append(rep.item_id)
        counts.append(len(items))
        hours.append(max(decided))
        if report is not None:
            report.groups.append({"anchor": anchor, "representative": rep.item_id, "members": len(items),
                                  "titles": [i.title for i in sorted(items, key=lambda i: i.item_id)][:4],
                                  "representative_title": rep.title})
    if kept:
        conn.execute(load_sql("neardup_groups_upsert"),
                     {"anchors": kept, "representatives": reps, "counts": counts, "hours": hours})


# --------------------------------------------------------------------------- bands path (migration 121)


def _features_of(rows, n: int) -> list[tuple[str, str, HeadlineFeatures, str]]:
    """(item id, language, headline features, loose URL key) of rows (id, title, lang, canonical_url)."""
    return [(r[0], r[2] or "", headline_features(r[1] or "", n), loose_url_key(r[3] or "")) for r in rows]


def _term_rows(docs: list[tuple[str, str]], n: int) -> dict[str, list]:
    """Per (language, kind, term): how many of the given distinct headlines (language, normalised
    text) hold it, as arrays."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for lang, normalized in docs:
        counts.update((lang, "g", g) for g in char_ngrams(normalized, n))
        counts.update((lang, "w", w) for w in word_tokens(normalized))
    ordered = sorted(counts)
    return {"langs": [k[0] for k in ordered], "kinds": [k[1] for k in ordered],
            "terms": [k[2] for k in ordered], "counts": [counts[k] for k in ordered]}


def _key_counts(feats) -> tuple[Counter, dict[tuple[str, str], HeadlineFeatures]]:
    counts: Counter[tuple[str, str]] = Counter()
    first: dict[tuple[str, str], HeadlineFeatures] = {}
    for _, lang, f, _ in feats:
        if f.exact_key:
            counts[(lang, f.exact_key)] += 1
            first.setdefault((lang, f.exact_key), f)
    return counts, first


def _key_arrays(counts: Counter, first: dict[tuple[str, str], HeadlineFeatures]) -> dict[str, list]:
    ordered = sorted(counts)
    return {"langs": [k[0] for k in ordered], "keys": [k[1] for k in ordered], "counts": [counts[k] for k in ordered],
            "normalized": [first[k].normalized for k in ordered]}


def _gram_df_by_lang(conn, feats) -> dict[tuple[str, str], int]:
    """Window document frequency of each (language, gram) of these headlines."""
    pairs = sorted({(lang, g) for _, lang, f, _ in feats for g in f.grams})
    if not pairs:
        return {}
    rows = conn.execute(load_sql("neardup_df_per_lang"),
                        {"langs": [p[0] for p in pairs], "terms": [p[1] for p in pairs]}).fetchall()
    return {(lang, term): df for lang, term, df in rows}


def _rare_grams(lang: str, feats: HeadlineFeatures, df: dict[tuple[str, str], int], k: int) -> list[str]:
    return rarest_terms(feats.grams, {g: df.get((lang, g), 0) for g in feats.grams}, k)


def _enter_hour(conn, hour: datetime, config: NearDupConfig, band_grams: int) -> None:
    """Hour `hour` enters the window: its distinct headlines count in the document frequencies,
    then its items' bands are stored (rare grams ranked with those frequencies)."""
    feats = _features_of(conn.execute(load_sql("neardup_hour_titles"), {"hour": hour}).fetchall(), config.ngram)
    counts, first = _key_counts(feats)
    if counts:
        rows = conn.execute(load_sql("neardup_df_docs_add"), _key_arrays(counts, first)).fetchall()
        fresh = [(lang, first[(lang, key)].normalized) for lang, key, items in rows if items == counts[(lang, key)]]
        if fresh:
            conn.execute(load_sql("neardup_df_add"), _term_rows(fresh, config.ngram))
    df = _gram_df_by_lang(conn, feats)
    hashes, langs, item_ids = [], [], []
    for item_id, lang, f, url_key in feats:
        lead = f.lead if config.gate_for(lang) else None
        for kind, h in signature(f.exact_key, url_key, _rare_grams(lang, f, df, band_grams), lead):
            hashes.append(h)
            langs.append("" if kind == "u" else lang)
            item_ids.append(item_id)
    if hashes:
        conn.execute(load_sql("neardup_bands_insert"),
                     {"hour": hour, "hashes": hashes, "langs": langs, "item_ids": item_ids})


def _leave_hour(conn, hour: datetime, config: NearDupConfig) -> None:
    """Hour `hour` leaves the window: the reverse of _enter_hour."""
    feats = _features_of(conn.execute(load_sql("neardup_hour_titles"), {"hour": hour}).fetchall(), config.ngram)
    counts, first = _key_counts(feats)
    if counts:
        gone = conn.execute(load_sql("neardup_df_docs_remove"), _key_arrays(counts, first)).fetchall()
        if gone:
            conn.execute(load_sql("neardup_df_remove"), _term_rows([(r[0], r[1]) for r in gone], config.ngram))
    conn.execute(load_sql("neardup_bands_delete_hour"), {"hour": hour})


def window_hours(start: datetime, end: datetime) -> list[datetime]:
    """The hours h with start <= h < end."""
    hours, h = [], start
    while h < end:
        hours.append(h)
        h += timedelta(hours=1)
    return hours


def move_window(conn, hour: datetime, lookback_hours: int, config: NearDupConfig,
                band_grams: int = DEFAULT_BAND_GRAMS) -> None:
    """Make the kept counts and bands describe the window of `hour` ([hour - lookback, hour)):
    hours that left it go out, hours that entered come in, one hour at a time (a run in time order
    moves one hour each way; a rerun of an earlier hour moves back). Inside the caller's transaction."""
    conn.execute(load_sql("advisory_xact_lock_pair"), (NEARDUP_LOCK_NAMESPACE, _WINDOW_LOCK))
    state = conn.execute(load_sql("neardup_df_window_get")).fetchone()
    target = window_hours(hour - timedelta(hours=lookback_hours), hour)
    current = window_hours(state[0], state[1]) if state else []
    wanted = set(target)
    for h in current:
        if h not in wanted:
            _leave_hour(conn, h, config)
    held = set(current)
    for h in target:
        if h not in held:
            _enter_hour(conn, h, config, band_grams)
    conn.execute(load_sql("neardup_df_window_set"), {"window_from": target[0] if target else hour, "window_to": hour})


def _band_candidates(conn, hour: datetime, window_start: datetime, new_rows, langs: list[str],
                     config: NearDupConfig, band_grams: int) -> tuple[list, IdfTable]:
    """The window's canonical items sharing a band with one of the hour's items (rows as
    neardup_window_items'), and the IDF of the window plus the hour's items over their terms."""
    move_window(conn, hour, int((hour - window_start).total_seconds() // 3600), config, band_grams)
    feats = _features_of([(r[0], r[1], r[2], r[4]) for r in new_rows], config.ngram)
    df = _gram_df_by_lang(conn, feats)
    small_leads = _small_lead_buckets(conn, hour, window_start, feats, config)
    qids, hashes, qlangs, needs = [], [], [], []
    next_qid = 0
    for _, lang, f, url_key in feats:
        rare = _rare_grams(lang, f, df, band_grams)
        gram_qid, next_qid = next_qid, next_qid + 1  # the rare grams count together; each other band alone
        lead = f.lead if (lang, f.lead) in small_leads else None
        for kind, h in signature(f.exact_key, url_key, rare, lead):
            if kind == "g":
                qid = gram_qid
            else:
                qid, next_qid = next_qid, next_qid + 1
            qids.append(qid)
            hashes.append(h)
            qlangs.append("" if kind == "u" else lang)
            needs.append(min_shared_grams(len(rare)) if kind == "g" else 1)
    ids = [r[0] for r in conn.execute(load_sql("neardup_band_candidates"), {
        "qids": qids, "hashes": hashes, "langs": qlangs, "needs": needs,
        "window_start": window_start, "hour": hour}).fetchall()] if qids else []
    # A language whose window and hour fit one exhaustive bucket (config.exhaustive_bucket_size): the
    # whole-window path compares every pair there, so every canonical of the window is a candidate.
    new_per_lang = Counter(lang for _, lang, _, _ in feats)
    window_per_lang = dict(conn.execute(load_sql("neardup_window_canonical_counts"), {
        "window_start": window_start, "hour": hour, "langs": langs}).fetchall())
    small = [lang for lang in langs if 0 < window_per_lang.get(lang, 0)
             and window_per_lang[lang] + new_per_lang[lang] <= config.exhaustive_bucket_size]
    canon_rows = conn.execute(load_sql("neardup_candidate_items"), {
        "ids": ids, "window_start": window_start, "hour": hour, "langs": langs}).fetchall() if ids else []
    if small:
        seen = {r[0] for r in canon_rows}
        whole = conn.execute(load_sql("neardup_window_items"),
                             {"hour": hour, "window_start": window_start, "langs": small}).fetchall()
        canon_rows = sorted(canon_rows + [r for r in whole if r[7] and r[0] not in seen], key=lambda r: r[0])
    return canon_rows, _window_idf(conn, feats, canon_rows, langs, config)


def _small_lead_buckets(conn, hour: datetime, window_start: datetime, feats, config: NearDupConfig
                        ) -> set[tuple[str, str]]:
    """(language, lead token) of the hour's gated items whose bucket (the window's canonicals with
    that lead plus the hour's items) fits config.exhaustive_bucket_size: the whole-window engine
    compares every pair of such a bucket, so all of it is a candidate."""
    new_per_lead = Counter((lang, f.lead) for _, lang, f, _ in feats if config.gate_for(lang))
    if not new_per_lead:
        return set()
    keys = sorted(new_per_lead)
    hashes = [band_hash("l", lead) for _, lead in keys]
    counts = {(lang, h): c for lang, h, c in conn.execute(load_sql("neardup_band_counts"), {
        "hashes": hashes, "langs": [k[0] for k in keys], "window_start": window_start, "hour": hour}).fetchall()}
    return {key for key, h in zip(keys, hashes)
            if counts.get((key[0], h), 0) + new_per_lead[key] <= config.exhaustive_bucket_size}


def _window_idf(conn, new_feats, canon_rows, langs: list[str], config: NearDupConfig) -> IdfTable:
    """Document frequencies of the terms the run scores (its items' and candidates'): the window's
    kept counts over the hour's languages, plus the hour's headlines the window does not hold yet
    (as the whole-window path counts the new items in its corpus)."""
    n = config.ngram
    cand_feats = [headline_features(r[1] or "", n) for r in canon_rows]
    terms = {("g", g) for _, _, f, _ in new_feats for g in f.grams} | {("w", w) for _, _, f, _ in new_feats for w in f.words}
    terms |= {("g", g) for f in cand_feats for g in f.grams} | {("w", w) for f in cand_feats for w in f.words}
    ordered = sorted(terms)
    gram_df: dict[str, int] = {}
    word_df: dict[str, int] = {}
    if ordered:
        for kind, term, df in conn.execute(load_sql("neardup_df_lookup"), {
                "kinds": [t[0] for t in ordered], "terms": [t[1] for t in ordered], "langs": langs}).fetchall():
            (gram_df if kind == "g" else word_df)[term] = int(df)
    n_docs = int(conn.execute(load_sql("neardup_df_docs_count"), {"langs": langs}).fetchone()[0])
    counts, first = _key_counts(new_feats)
    if counts:
        keys = sorted(counts)
        known = {(r[0], r[1]) for r in conn.execute(load_sql("neardup_df_docs_known"), {
            "langs": [k[0] for k in keys], "keys": [k[1] for k in keys]}).fetchall()}
        for key in keys:
            if key in known:
                continue
            n_docs += 1
            for g in first[key].grams:
                gram_df[g] = gram_df.get(g, 0) + 1
            for w in first[key].words:
                word_df[w] = word_df.get(w, 0) + 1
    return IdfTable(gram_df=gram_df, word_df=word_df, n_docs=n_docs, prior_docs=config.idf_prior_docs)
