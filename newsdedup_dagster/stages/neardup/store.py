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

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import psycopg

from newsdedup_dagster.shared.crashpoints import crash_point
from newsdedup_dagster.shared.db import load_sql
from newsdedup_dagster.shared.text.headline import NearDupConfig
from newsdedup_dagster.stages.neardup.cluster import cluster_headlines
from newsdedup_dagster.stages.neardup.representative import HeadlineItem, choose_representative

# Lookback for candidates and IDF (the default). Same-story wire copies
# arrive within hours; 36 h also matches the story age limit.
DEFAULT_LOOKBACK_HOURS = 36
# Arbitrary constant namespace for the per-hour advisory lock.
NEARDUP_LOCK_NAMESPACE = 727_020
LATER_PARTITIONS_CHOICES = ("keep", "reset")
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
                    config: NearDupConfig | None = None, later_partitions: str = "keep") -> DedupReport:
    """Decide the duplicates of hour H. `conn` must not be inside a transaction; commits.
    later_partitions: "keep" or "reset" (see the module docstring)."""
    if later_partitions not in LATER_PARTITIONS_CHOICES:
        raise ValueError(f"later_partitions={later_partitions!r}: expected keep or reset")
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
        window_rows = conn.execute(
            load_sql("neardup_window_items"),
            {"hour": hour, "window_start": hour - timedelta(hours=lookback_hours), "langs": langs},
        ).fetchall()
        canon_rows = [r for r in window_rows if r[7]]
        report.window_canonicals = len(canon_rows)
        # 1. URL variants, then 2./3. exact and near headline duplicates over what is left.
        matches = _url_matches(canon_rows, new_rows)  # item -> (anchor, rule, similarity)
        matches.update(_headline_matches(canon_rows, new_rows, window_rows, matches, config))
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


def _headline_matches(canon_rows, new_rows, window_rows, url_matches, config: NearDupConfig
                      ) -> dict[str, tuple[str, str, float]]:
    """Exact and near headline duplicates (the pure cluster_headlines) among the window's
    canonicals and the new items no URL matched."""
    matches: dict[str, tuple[str, str, float]] = {}
    existing = {r[0] for r in canon_rows}
    candidates = [_headline_item(r, True) for r in canon_rows] + [
        _headline_item(r, False) for r in new_rows if r[0] not in url_matches
    ]
    background = [r[1] for r in window_rows if r[1]]
    links = cluster_headlines(candidates, background_titles=background, config=config)
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
