"""Two-pass story clustering of one hourly partition H (the 3mins.news method in SQL, batched;
docs/ARCHITECTURE.md#sources).

  undo    H's earlier effects (idempotent re-materialisation), same transaction
  pass 1  H's new canonical items -> KNN on story centroids, gated by similarity, gap and age
  pass 2  still-unassigned items of H -> KNN among the window's unassigned items (edges >=
          item_threshold), UnionFind + chaining guard (Louvain split, stages/clustering/guard.py) on the
          raw directed KNN triples, components >= 2 with an item of H -> stories
  pass 3  H's items still alone -> the best story founded in pass 2 of H, if cosine to the centroid
          of all its members >= story_threshold (and the pass-1 time gates hold)
  anchors a pass-2 edge, a pass-1 or pass-3 attachment is refused when the two sides' years,
          same-language names or cross-language places (places.py) conflict, and a pass-2 community whose names say "two events" is
          split again (anchors.py, guard.split_by_anchors); each refusal is recorded on the story
  across  two sides in different languages that name the same magnitude and conflict on nothing
          join below the thresholds by cross_language_margin: a pass-2 edge, the guard's groups it
          joins when they share no language (guard.join_across_languages), a pass-1 / pass-3
          attachment to a story with no member in the item's language
  after   centroid (avg of the 3 most recent members), first/latest published, representative, in SQL
  explain what admitted each member (pass, similarity, neighbour, threshold: story_items) and, for
          pass-2 stories, the edges that held them and the communities the guard cut (decisions.py)

Everything runs in one transaction under an advisory lock; Python sees ids and similarities, and
the headline, summary and language of the items the anchor check compares.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import psycopg

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.crashpoints import crash_point
from newsdedup_dagster.shared.db.story_members import story_member_texts
from newsdedup_dagster.shared.db.vectors import ModelInfo
from newsdedup_dagster.shared.text import anchors as anchor_check
from newsdedup_dagster.shared.text.item_text import LEAD_CHARS
from newsdedup_dagster.stages.clustering import decisions, store
from newsdedup_dagster.stages.clustering.guard import (
    attach_leftovers,
    guarded_components,
    join_across_languages,
    split_by_anchors,
    undirected_edges,
)
from newsdedup_dagster.stages.clustering.settings import ClusterSettings
from newsdedup_dagster.stages.clustering.unionfind import UnionFind

log = logging.getLogger(__name__)

Edge = tuple[str, str, float]
# pass 1: a story's anchors are those of its most recent members (a long story's early details
# may be outdated, and the read stays small)
STORY_ANCHOR_MEMBERS = 20


# ------------------------------------------------------------------ pure helpers
def story_id_for(model: str, founder_item_id: str) -> str:
    """Deterministic story id derived from the founding item (and the model: two models' stories
    never collide)."""
    return "st_" + hashlib.sha256(f"{model}\x1f{founder_item_id}".encode()).hexdigest()[:24]


def undirected(edges: Iterable[Edge]) -> dict[tuple[str, str], float]:
    """{(a, b) with a < b: best similarity}: KNN returns each pair from both ends."""
    return undirected_edges(edges, combine="max")


def plain_components(nodes: Iterable[str], edges, params: dict) -> list[list[str]]:
    """The 3mins.news method's pass 2: UnionFind over every edge (single linkage, no guard): the
    guard's own "none" path."""
    return guarded_components(nodes, edges, {**params, "guard": "none"})


@dataclass
class NewStory:
    story_id: str
    founder: str
    members: list[str]
    # member -> (best in-component similarity, that neighbour)
    best: dict[str, tuple[float, str]]


def pass2_groups(
    model: str,
    h_items: set[str],
    raw_edges: list[Edge] | dict[tuple[str, str], float],
    founder_key: Callable[[str], object],
    components: Callable[[list[str], list[Edge], dict], list[list[str]]] = plain_components,
    params: dict | None = None,
) -> tuple[list[NewStory], list[list[str]], list[Edge]]:
    """Components (after the guard) of >= 2 items that contain at least one item of H become
    stories. raw_edges: the directed KNN triples as the database returned them; the guard gets
    them as they are (a pair found from both ends, i.e. mutual neighbours, weighs double: gnews e5
    centred F1 0.862 vs 0.842 with one weight per pair, stages/clustering/guard.py). Deterministic: nodes
    and edges sorted, founder = min(founder_key). Returns, besides the stories, what the
    explanation records need without running the guard again: (stories, every group the guard
    returned, the sorted directed edges it was given)."""
    if isinstance(raw_edges, dict):  # {(a, b): sim}: one direction per pair
        raw_edges = [(a, b, sim) for (a, b), sim in raw_edges.items()]
    raw_edges = sorted((a, b, float(sim)) for a, b, sim in raw_edges if a != b)
    edges = undirected(raw_edges)
    nodes = sorted({n for pair in edges for n in pair})
    groups = components(nodes, raw_edges, params or {})
    adjacency: dict[str, list[tuple[str, float]]] = {}
    for (a, b), sim in edges.items():
        adjacency.setdefault(a, []).append((b, sim))
        adjacency.setdefault(b, []).append((a, sim))
    out: list[NewStory] = []
    for group in groups:
        members = sorted(set(group))
        if len(members) < 2 or not (h_items & set(members)):
            continue
        inside = set(members)
        best: dict[str, tuple[float, str]] = {}
        for x in members:
            for y, sim in adjacency.get(x, ()):
                # higher similarity wins; equal similarity -> smaller neighbour id (stable)
                if y in inside and (x not in best or sim > best[x][0] or (sim == best[x][0] and y < best[x][1])):
                    best[x] = (sim, y)
        if any(m not in best for m in members):
            # A guard returned a group that is not connected by kept edges: refuse it rather than
            # store a story the "connected at the threshold" check would flag.
            log.warning("pass 2: dropping a component with a member that has no in-component edge")
            continue
        founder = min(members, key=founder_key)
        out.append(NewStory(story_id_for(model, founder), founder, members, best))
    out.sort(key=lambda s: s.story_id)
    return out, groups, raw_edges


# ------------------------------------------------------------------ orchestration
@dataclass
class ClusterResult:
    partition: datetime
    model: str
    new_items: int = 0
    attached: int = 0                       # pass 1 attachments
    new_stories: list[str] = field(default_factory=list)
    updated_stories: list[str] = field(default_factory=list)   # older stories that gained items
    clustered_in_pass2: int = 0             # items (of H and of the window) put in new stories
    attached_pass3: int = 0                 # H's leftovers attached to H's new stories (pass 3)
    left_single: int = 0                    # H's items in no story after both passes
    undone_stories: int = 0                 # stories deleted by the undo step (re-materialisation)
    later_stories_removed: int = 0          # stories of later partitions removed (later_partitions=reset)
    anchor_vetoes: int = 0                  # merges the anchor check refused (pass-2 edges, pass-1/3 attachments)
    anchor_splits: int = 0                  # pass-2 communities the anchor split cut in parts
    recent: dict[str, int] = field(default_factory=dict)  # recent-window rows loaded / pruned
    edges: int = 0
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class _Hour:
    """What the steps of one clustering run share: H's items and when each was published (the
    window's items join `published` as pass 2 reaches them), and the stories each step touched."""
    published: dict[str, datetime]
    touched_old: set[str] = field(default_factory=set)   # older stories whose members the undo changed
    attached_to: set[str] = field(default_factory=set)   # stories pass 1 attached to
    remaining: list[str] = field(default_factory=list)   # H's items left for pass 2
    stories: list[NewStory] = field(default_factory=list)
    existed: set[str] = field(default_factory=set)       # pass-2 story ids that already existed
    in_new: set[str] = field(default_factory=set)        # items placed in H's new stories
    # what pass 2's second connection needs (store.SnapshotReader): the exported snapshot and how
    # to connect, and the membership changes made since the snapshot
    reader: tuple[str, Callable[[], psycopg.Connection]] | None = None
    freed: set[str] = field(default_factory=set)         # memberships the undo removed
    attached: set[str] = field(default_factory=set)      # H's items pass 1 attached
    anchors: dict[str, anchor_check.Anchors] = field(default_factory=dict)   # read once per item
    vetoed_edges: list[tuple[str, str, float, anchor_check.Conflict]] = field(default_factory=list)
    vetoes: dict[str, list[list]] = field(default_factory=dict)   # story_id -> rows (story_decisions.vetoes)
    anchor_splits: list = field(default_factory=list)   # (guard.AnchorSplit, anchors) made in pass 2
    # pass-2 edges (a, b, weight) whose agreeing anchors joined two groups across languages
    cross_language_joins: list = field(default_factory=list)


def cluster_partition(
    conn: psycopg.Connection,
    info: ModelInfo,
    h: datetime,
    settings: ClusterSettings,
    connect: Callable[[], psycopg.Connection] | None = None,
) -> ClusterResult:
    """Cluster partition H (start of the hour, UTC) in one transaction. Idempotent: the memberships,
    stories and explanation rows H writes are the same on every run. connect: opens another
    connection to the same database; with settings.knn_connections > 1, pass 2's KNN statement is
    split over it (the same edges)."""
    t0 = time.perf_counter()
    result = ClusterResult(partition=h, model=info.model)
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.commit()
    with conn.transaction():
        store.begin_clustering(conn, settings.ef_search, settings.lock_timeout_s)
        search = store.Search.of(settings)
        split = connect is not None and settings.knn_connections > 1
        snapshot = db.export_snapshot(conn) if split else None
        hour = _timed(result, "undo", lambda: _undo_and_load(conn, info, h, settings, result))
        result.recent = _timed(result, "recent_window", lambda: _sync_recent(conn, info, h, search))
        _timed(result, "pass1", lambda: _pass1(conn, info, h, settings, search, hour, result))
        crash_point("stories.after_pass1")
        # The reader's snapshot predates this transaction's changes; rows the mirror loaded in it
        # (a first run, an out-of-order rerun) it cannot see: then one connection does it all.
        if snapshot is not None and not result.recent.get("loaded"):
            hour.reader = (snapshot, connect)
        raw = _timed(result, "pass2_knn", lambda: _pass2_edges(conn, info, h, settings, search, hour))
        raw = _timed(result, "pass2_anchors", lambda: _anchor_check_edges(conn, settings, hour, raw, result))
        groups, raw = _timed(result, "pass2_guard", lambda: _pass2_components(info, settings, hour, raw, result))
        _timed(result, "write_members", lambda: _write_pass2(conn, info, h, settings, hour, groups, raw, result))
        grew = _timed(result, "pass3", lambda: _pass3(conn, info, h, settings, hour, result))
        _timed(result, "write", lambda: _finish(conn, info, settings, hour, grew, result))
        store.record_vetoes(conn, h, hour.vetoes)
    result.seconds = time.perf_counter() - t0
    return result


def _sync_recent(conn, info: ModelInfo, h: datetime, search: store.Search) -> dict[str, int]:
    """The recent window of items (pass 2) and of searchable stories (pass 1) for H."""
    recent = store.sync_recent(conn, info, h, search)
    recent["stories_cleared"] = store.sync_stories(conn, info, h, search)
    return recent


def _timed(result: ClusterResult, step: str, run: Callable[[], object]):
    mark = time.perf_counter()
    out = run()
    result.timings[step] = time.perf_counter() - mark
    return out


def _undo_and_load(conn, info: ModelInfo, h: datetime, settings: ClusterSettings, result: ClusterResult) -> _Hour:
    """Undo H's earlier effects (and later hours' with later_partitions=reset), then load H's items."""
    later = store.Undone(set(), set(), set())
    if settings.later_partitions == "reset":
        later = store.undo_later_partitions(conn, info, h)
        result.later_stories_removed = len(later.deleted)
    undone = store.undo_partition(conn, info, h)
    touched_old = (undone.touched | later.touched) - undone.deleted
    result.undone_stories = len(undone.deleted)
    # Stories that lost H's members get their pre-H centroid / latest time back *before* pass 1
    # compares anything with them (else a rerun would match against its own previous result).
    store.recompute(conn, info, touched_old, settings.centroid_window)
    published = store.new_items(conn, info, h)
    result.new_items = len(published)
    return _Hour(published=published, touched_old=touched_old, freed=undone.freed | later.freed)


def _pass1(conn, info: ModelInfo, h: datetime, settings: ClusterSettings, search: store.Search, hour: _Hour,
           result: ClusterResult) -> None:
    """H's items -> the nearest story centroid within the similarity, gap and age gates."""
    published = hour.published
    ids = list(published)
    matches = store.pass1_matches(conn, info, h, published, search)
    matches = _anchor_check_attachments(conn, settings, hour, matches, 1, result)
    store.attach(conn, h, [(i, s, 1, sim, gap, age, None, story_bar(settings, sim))
                           for i, s, sim, gap, age in matches])
    hour.attached_to = {s for _, s, *_ in matches}
    assigned = {m[0] for m in matches}
    hour.attached = assigned
    hour.remaining = [i for i in ids if i not in assigned]
    result.attached = len(matches)


def _top_names(members: list[str], found: dict[str, anchor_check.Anchors], n: int = 6) -> list[str]:
    """The names most members of a part carry (what the anchor split saw in it)."""
    counts: dict[str, int] = {}
    for m in members:
        for name in found[m].names if m in found else ():
            counts[name] = counts.get(name, 0) + 1
    return [name for name, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def anchor_rules(settings: ClusterSettings) -> anchor_check.AnchorRules | None:
    """The anchor check's rules, or None when every kind is off."""
    if (not settings.anchor_years and settings.anchor_min_names <= 0 and not settings.anchor_places
            and not settings.anchor_numbers and not settings.anchor_sports and settings.anchor_min_cross_names <= 0):
        return None
    return anchor_check.AnchorRules(years=settings.anchor_years, min_names=settings.anchor_min_names,
                                    places=settings.anchor_places, numbers=settings.anchor_numbers,
                                    sports=settings.anchor_sports, min_cross_names=settings.anchor_min_cross_names,
                                    places_one_language=settings.anchor_places_one_language)


def _anchors_for(conn, settings: ClusterSettings, hour: _Hour, ids) -> dict[str, anchor_check.Anchors]:
    """Anchors of these items (read from their headline and summary once per run)."""
    missing = sorted(set(ids) - set(hour.anchors))
    for item, (title, summary, lang) in store.item_texts(conn, missing).items():
        hour.anchors[item] = anchor_check.extract(title, summary, lang, LEAD_CHARS, settings.anchor_places)
    return hour.anchors


def _anchor_check_edges(conn, settings: ClusterSettings, hour: _Hour, raw: list[Edge],
                        result: ClusterResult) -> list[Edge]:
    """Pass-2 edges without those whose ends' anchors conflict (kept for the explanation), and
    without the edges below item_threshold (the KNN returns them down to the cross-language bar)
    but those between two languages whose anchors agree (anchors.joins_across_languages)."""
    rules = anchor_rules(settings)
    if rules is None:  # nothing can agree: the item threshold alone
        raw = [e for e in raw if e[2] >= settings.item_threshold]
    if (rules is None and not settings.anchor_split) or not raw:
        return raw
    found = _anchors_for(conn, settings, hour, {n for a, b, _ in raw for n in (a, b)})
    if rules is None:
        return raw
    kept, vetoed = [], {}
    for a, b, sim in raw:
        pair = (a, b) if a < b else (b, a)
        if sim < settings.item_threshold:
            if (sim >= settings.item_threshold - settings.cross_language_margin and pair[0] in found and pair[1] in found
                    and anchor_check.joins_across_languages(found[pair[0]], found[pair[1]], rules)):
                kept.append((a, b, sim))
            continue
        if pair in vetoed:
            vetoed[pair] = (max(vetoed[pair][0], sim), vetoed[pair][1])
            continue
        clash = anchor_check.conflict(found[pair[0]], found[pair[1]], rules) \
            if pair[0] in found and pair[1] in found else None
        if clash is None:
            kept.append((a, b, sim))
        else:
            vetoed[pair] = (sim, clash)
    hour.vetoed_edges = [(a, b, sim, clash) for (a, b), (sim, clash) in sorted(vetoed.items())]
    result.anchor_vetoes += len(vetoed)
    return kept


def admitted_bar(threshold: float, margin: float, sim: float) -> float:
    """The bar a member at this cosine came in by (story_items.threshold): `threshold`, or the
    cross-language bar `margin` below it."""
    return threshold if sim >= threshold - 1e-9 else threshold - margin


def story_bar(settings: ClusterSettings, sim: float) -> float:
    """The bar of a pass-1 / pass-3 attachment at this cosine: story_threshold or the cross-language bar."""
    return admitted_bar(settings.story_threshold, settings.cross_language_margin, sim)


def _anchor_check_attachments(conn, settings: ClusterSettings, hour: _Hour, matches: list[tuple],
                              pass_no: int, result: ClusterResult,
                              members: dict[str, list[str]] | None = None) -> list[tuple]:
    """Centroid attachments (item, story, sim, ...) without those whose item's anchors conflict
    with the story's (anchors.story_anchors over its most recent members); each refusal is
    recorded on the story. A match below story_threshold (the search goes down to the
    cross-language bar) is kept only when the story has no member in the item's language and the
    two agree and conflict on nothing (anchors.joins_across_languages); dropping it is no refusal.
    members: {story_id: member ids} when known (pass 3), else read."""
    rules = anchor_rules(settings)
    if rules is None:  # nothing can agree: the story threshold alone
        matches = [m for m in matches if m[2] >= settings.story_threshold]
    if rules is None or not matches:
        return matches
    if members is None:
        texts = story_member_texts(conn, {m[1] for m in matches}, STORY_ANCHOR_MEMBERS)
        for by_item in texts.values():
            for item, (title, summary, lang) in by_item.items():
                if item not in hour.anchors:
                    hour.anchors[item] = anchor_check.extract(title, summary, lang, LEAD_CHARS, settings.anchor_places)
        members = {story: sorted(by_item) for story, by_item in texts.items()}
    found = _anchors_for(conn, settings, hour, {m[0] for m in matches} | {i for ids in members.values() for i in ids})
    kept = []
    for match in matches:
        item, story, sim = match[0], match[1], match[2]
        theirs = [found[m] for m in members.get(story, ()) if m in found]
        if sim < settings.story_threshold:
            if (sim >= settings.story_threshold - settings.cross_language_margin and item in found
                    and anchor_check.joins_story_across_languages(found[item], theirs, rules)):
                kept.append(match)
            continue
        clash = None
        if item in found and theirs:
            clash = anchor_check.conflict(found[item], anchor_check.story_anchors(found[item], theirs), rules)
        if clash is None:
            kept.append(match)
            continue
        hour.vetoes.setdefault(story, []).append(
            [item, None, round(float(sim), 6), pass_no, list(clash.kinds), clash.a, clash.b])
        result.anchor_vetoes += 1
    return kept


def _pass2_edges(conn, info: ModelInfo, h: datetime, settings: ClusterSettings, search: store.Search,
                 hour: _Hour) -> list[Edge]:
    """KNN edges of H's unassigned items among the window's unassigned items (directed triples)."""
    remaining = hour.remaining
    readers: list[store.SnapshotReader] = []
    try:
        if hour.reader is not None:
            snapshot, connect = hour.reader
            wanted = min(settings.knn_connections, len(remaining) // store.KNN_SPLIT_MIN_ITEMS) - 1
            for _ in range(max(0, wanted)):
                try:
                    readers.append(store.SnapshotReader(connect, snapshot, search, hour.freed, hour.attached))
                except Exception as exc:  # an optional speed-up: fewer connections, the same edges
                    log.warning("pass 2: no extra KNN connection (%s: %s); going on with %d",
                                type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "", len(readers) + 1)
                    break
        found = store.pass2_edges(conn, info, h, remaining, search, readers) if remaining else []
        # One hop: the window's old items that H's items reach get their own neighbourhoods too,
        # so the guard judges a component on all its known edges, not only those touching H.
        hop = sorted({n for _, n, _, _ in found} - set(remaining)) if settings.pass2_expand else []
        if hop:
            found += store.pass2_edges(conn, info, h, hop, search, readers)
    finally:
        for reader in readers:
            reader.close()
    for _, n, _, at in found:
        hour.published.setdefault(n, at)
    return [(a, b, sim) for a, b, sim, _ in found]


def _pass2_components(info: ModelInfo, settings: ClusterSettings, hour: _Hour, raw: list[Edge],
                      result: ClusterResult) -> tuple[list[list[str]], list[Edge]]:
    """UnionFind + chaining guard; components with an item of H become H's new stories."""
    published = hour.published
    splits = []

    def components(nodes, edges, params):
        groups = guarded_components(nodes, edges, params)
        if not settings.anchor_split or not hour.anchors:
            return _join_across_languages(settings, groups, edges, hour.anchors, hour)
        found = hour.anchors
        weights = anchor_check.name_weights(found[n] for n in nodes if n in found)

        def cosine(a, b):
            return anchor_check.name_cosine(found[a], found[b], weights) if a in found and b in found else None

        groups, made = split_by_anchors(groups, undirected_edges(edges), cosine,
                                        settings.anchor_split_resolution, settings.anchor_split_margin)
        splits.extend((split, found) for split in made)
        return _join_across_languages(settings, groups, edges, found, hour)

    hour.stories, groups, raw = pass2_groups(
        info.model, set(hour.remaining), raw,
        founder_key=lambda i: (published[i], i),
        components=components, params=settings.guard,
    )
    hour.anchor_splits = splits
    result.anchor_splits = len(splits)
    result.edges = len(undirected(raw))
    return groups, raw


def _join_across_languages(settings: ClusterSettings, groups: list[list[str]], edges: list[Edge],
                           found: dict[str, anchor_check.Anchors], hour: _Hour) -> list[list[str]]:
    """The guard's groups, those joined by an edge whose ends agree across languages merged
    (guard.join_across_languages; cross_language_margin 0 = off)."""
    rules = anchor_rules(settings)
    if settings.cross_language_margin <= 0 or rules is None or not found:
        return groups
    pairs = {pair: w for pair, w in undirected_edges(edges).items() if pair[0] in found and pair[1] in found
             and found[pair[0]].lang != found[pair[1]].lang}
    if not pairs:
        return groups

    def agree(a: str, b: str) -> bool:
        return bool(anchor_check.joins_across_languages(found[a], found[b], rules))

    def compatible(x: list[str], y: list[str]) -> bool:
        return anchor_check.conflict(anchor_check.group_anchors(found[m] for m in x if m in found),
                                     anchor_check.group_anchors(found[m] for m in y if m in found), rules) is None

    joined, made = join_across_languages(groups, pairs, agree, lambda m: found[m].lang if m in found else "",
                                         compatible)
    hour.cross_language_joins.extend(made)
    return joined


def _write_pass2(conn, info: ModelInfo, h: datetime, settings: ClusterSettings, hour: _Hour,
                 groups: list[list[str]], raw: list[Edge], result: ClusterResult) -> None:
    """Insert H's new stories with their members and what admitted each, and the merge decisions."""
    stories, published = hour.stories, hour.published
    hour.existed = store.create_stories(conn, info, h, [(s.story_id, s.members) for s in stories],
                                        settings.centroid_window)
    rows = []
    for s in stories:
        first = published[s.founder]
        for m in s.members:
            sim, neighbour = s.best[m]
            gap = abs((published[m] - published[neighbour]).total_seconds()) / 3600.0
            age = (published[m] - first).total_seconds() / 3600.0
            # a member held by an edge below the item threshold came in at the cross-language bar
            bar = admitted_bar(settings.item_threshold, settings.cross_language_margin, sim)
            rows.append((m, s.story_id, 2, sim, gap, age, neighbour, bar))
    store.attach(conn, h, rows)
    edge_rows, cut_rows = decisions.component_records(
        [(s.story_id, s.members) for s in stories], groups, raw)
    store.record_decisions(conn, h, edge_rows, cut_rows)
    result.new_stories = [s.story_id for s in stories]
    result.clustered_in_pass2 = len(rows)
    hour.in_new = {r[0] for r in rows}
    story_of = {m: s.story_id for s in stories for m in s.members}
    for split, found in hour.anchor_splits:
        for part in split.parts:
            if part[0] not in story_of:
                continue
            for other in split.parts:
                if other is not part:
                    hour.vetoes.setdefault(story_of[part[0]], []).append(
                        [part[0], other[0], round(split.across, 6), 2, ["names split"],
                         {"names": _top_names(part, found)}, {"names": _top_names(other, found)}])
    for a, b, sim, found in hour.vetoed_edges:
        for member, other, mine, theirs in ((a, b, found.a, found.b), (b, a, found.b, found.a)):
            # both ends in one story (other edges held them together): one row, from the first end
            if member in story_of and not (member == b and story_of.get(a) == story_of[b]):
                hour.vetoes.setdefault(story_of[member], []).append(
                    [member, other, round(sim, 6), 2, list(found.kinds), mine, theirs])


def _pass3(conn, info: ModelInfo, h: datetime, settings: ClusterSettings, hour: _Hour,
           result: ClusterResult) -> set[str]:
    """H's items still alone -> H's best new story; returns the stories that grew."""
    leftovers = [i for i in hour.remaining if i not in hour.in_new]
    rows3: list[tuple] = []
    if settings.pass3 and hour.stories and leftovers:
        rows3 = pass3_rows(conn, info, hour.stories, leftovers, hour.published, settings)
        members = {st.story_id: st.members for st in hour.stories}
        kept = _anchor_check_attachments(conn, settings, hour, [(r[0], r[1], r[3]) for r in rows3], 3, result,
                                         members=members)
        allowed = {(i, st) for i, st, *_ in kept}
        rows3 = [r for r in rows3 if (r[0], r[1]) in allowed]
        store.attach(conn, h, rows3)
        hour.in_new |= {r[0] for r in rows3}
        result.attached_pass3 = len(rows3)
    return {r[1] for r in rows3}


def _finish(conn, info: ModelInfo, settings: ClusterSettings, hour: _Hour, grew: set[str],
            result: ClusterResult) -> None:
    """Aggregates (centroid, times, representative) of every story whose members changed."""
    result.left_single = sum(1 for i in hour.remaining if i not in hour.in_new)
    # New stories were inserted with their aggregates; only those that changed since need them again.
    store.recompute(conn, info, hour.touched_old | hour.attached_to | hour.existed | grew,
                    settings.centroid_window)
    result.updated_stories = sorted(hour.attached_to - set(result.new_stories))


def pass3_rows(conn: psycopg.Connection, info: ModelInfo, stories: list[NewStory], leftovers: list[str],
               published: dict[str, datetime], settings: ClusterSettings) -> list[tuple]:
    """Pass 3 (guard.attach_leftovers with the centroids in SQL): H's items left alone by pass 2 join
    the nearest story founded by this pass 2 when cosine(item, avg of all its pass-2 members) >=
    story_threshold and the pass-1 gates (gap to the story's latest item, story age) hold.
    Returns story_items rows (item, story, 3, cosine, gap_hours, age_hours, None, threshold)."""
    groups = [s.members for s in stories]
    sims: dict[str, tuple[int, float]] = {}

    def nearest(items, gs):  # the NearestCentroidFn of guard.py, answered in SQL
        sims.update(store.nearest_centroids(conn, info, list(items), gs, settings.batch_size))
        return sims

    best = attach_leftovers(leftovers, groups, nearest, settings.story_threshold - settings.cross_language_margin)
    rows = []
    for item, g in sorted(best.items()):
        members = groups[g]
        first = min(published[m] for m in members)
        latest = max(published[m] for m in members)
        gap = abs((published[item] - latest).total_seconds()) / 3600.0
        age = (published[item] - first).total_seconds() / 3600.0
        if gap > settings.max_gap_hours or age > settings.story_max_age_hours:
            continue
        rows.append((item, stories[g].story_id, 3, sims[item][1], gap, age, None, story_bar(settings, sims[item][1])))
    return rows


def story_summaries(conn: psycopg.Connection, story_ids: list[str]) -> list[tuple]:
    """(id, items, articles, languages, sources, headline, created_partition) per story."""
    if not story_ids:
        return []

    rows = conn.execute(db.load_sql("cluster_story_summary"), {"ids": list(story_ids)}).fetchall()
    conn.commit()
    return rows


# ------------------------------------------------------------------ invariants (asset checks)
@dataclass
class Invariants:
    multi_story_items: int
    pass1_gate_violations: int
    age_violations: int
    centroid_max_error: float
    largest_touched: int
    disconnected_stories: list[str]
    embedded: int
    considered: int

    @property
    def all_considered(self) -> bool:
        return self.embedded == self.considered


def check_invariants(conn: psycopg.Connection, info: ModelInfo, h: datetime, settings: ClusterSettings,
                     result: ClusterResult) -> Invariants:
    """The cluster invariants for partition H, computed in SQL (ids and figures only)."""
    # Planner statistics that include the hour just committed: without them a large hour's checks
    # are planned for an empty hour (nested loops over every membership); docs/OPERATING.md#past-one-machine
    conn.execute(db.load_sql("cluster_analyze_hour_tables"))
    row = conn.execute(db.load_sql("cluster_check_invariants"), {
        "h": h, "story_threshold": settings.story_threshold, "cross_margin": settings.cross_language_margin,
        "max_gap_hours": settings.max_gap_hours,
        "story_max_age_hours": settings.story_max_age_hours, "window": settings.centroid_window,
    }).fetchone()
    pairs = conn.execute(db.load_sql("cluster_check_pass2_edges"), {
        "h": h, "model": info.model, "threshold": settings.item_threshold,
        "cross_threshold": settings.item_threshold - settings.cross_language_margin,
    }).fetchall()
    members = conn.execute(
        db.load_sql("cluster_pass2_members"), (h,)
    ).fetchall()
    embedded, elsewhere = conn.execute(db.load_sql("cluster_check_considered"), {
        "h": h, "h_end": h + timedelta(hours=1), "model": info.model,
    }).fetchone()
    conn.commit()
    return Invariants(
        multi_story_items=int(row[0]), pass1_gate_violations=int(row[1]), age_violations=int(row[2]),
        centroid_max_error=float(row[3] or 0.0), largest_touched=int(row[4]),
        disconnected_stories=disconnected(members, pairs),
        embedded=int(embedded), considered=int(result.new_items) + int(elsewhere),
    )


def disconnected(members: list[tuple[str, str]], pairs: list[tuple[str, str, str]]) -> list[str]:
    """Stories whose members (story_id, item_id) are not one component of the threshold edges."""
    by_story: dict[str, list[str]] = {}
    for story, item in members:
        by_story.setdefault(story, []).append(item)
    bad = []
    for story, items in sorted(by_story.items()):
        uf: UnionFind[str] = UnionFind(items)
        for s, a, b in pairs:
            if s == story:
                uf.union(a, b)
        if len(uf.components()) != 1:
            bad.append(story)
    return bad
