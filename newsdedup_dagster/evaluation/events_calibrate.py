"""Calibrate the event threshold and quiet period on labelled multi-day, multi-language data.

    python -m newsdedup_dagster.evaluation.events_calibrate itn_multilingual_dev.jsonl [--data-dir DIR]

Each labelled row (Wikipedia "In the news" blurb; `cluster` = Wikidata subject = one event;
`published_at` = when that language edition posted it, often days apart) is fed as one story
through the real grouping rules (grouping.plan_hour), hour by hour in time order. Vectors: the
ones the pipeline would store for the configured provider (NEWSDEDUP_EMBEDDING_PROVIDER or
--provider; e5 = the default, per-language centred), produced by the real embedding step in a
temporary database (evaluation.clustering, which reuses the eval embedding cache). Event
centroids = average of member vectors, as the SQL does. Scores: B-cubed P/R/F1 against the subject
labels (evaluation.metrics).

The data is read at run time from the given path, or from the data directory when the argument is a
bare file name (evaluation.data), and never copied into the repository.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from datetime import UTC, datetime, timedelta

import numpy as np

from newsdedup_dagster import config
from newsdedup_dagster.evaluation import clustering, metrics
from newsdedup_dagster.evaluation.data import DATA_DIR_VARIABLE, data_directory, resolve_data_file
from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.text import anchors as anchor_check
from newsdedup_dagster.shared.text.centring_prior import PRIOR_TEXTS
from newsdedup_dagster.shared.text.item_text import LEAD_CHARS, text_hash
from newsdedup_dagster.stages.embeddings import ensure_model, make_embedder
from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings
from newsdedup_dagster.stages.events.grouping import OpenEvent, StoryCandidate, plan_hour
from newsdedup_dagster.stages.events.settings import GroupingSettings


def load_rows(path: str, limit: int | None = None) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if not row.get("published_at"):
                continue
            row["ts"] = datetime.fromisoformat(row["published_at"]).astimezone(UTC)
            rows.append(row)
    rows.sort(key=lambda r: (r["ts"], r["id"]))
    return rows[:limit] if limit else rows


def stored_vectors(path: str, ids: list[str], settings: EmbeddingSettings) -> tuple[np.ndarray, str]:
    """The vectors item_embeddings would hold for these rows (embedding step of the pipeline, one
    hour partition at a time, centring included), in the order of ids; and the model id."""
    rows = clustering.load_rows(path)
    embedder = make_embedder(settings)
    base_url = db.app_database_url()
    cache_url = clustering.eval_cache_url(base_url)
    with clustering.temporary_database(base_url) as url, db.connect(url) as conn:
        clustering.load_into(conn, rows)
        info = ensure_model(conn, embedder, settings)
        texts = clustering.eval_texts(rows, settings.text_mode) + list(PRIOR_TEXTS)
        clustering.cache_fetch(cache_url, conn, info.model, sorted({text_hash(t) for t in texts}))
        clustering.embed_all(conn, embedder, clustering.partitions_of(rows), settings)
        clustering.cache_store(cache_url, conn, info.model)
        got = dict(conn.execute(
            db.load_sql("calibrate_item_vectors"), (info.model,)
        ).fetchall())
    vectors = np.array([json.loads(got[i]) for i in ids], dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True), info.model


def row_anchors(rows: list[dict]) -> dict[str, anchor_check.Anchors]:
    """Each row's anchors (its blurb as headline), as the events stage reads a story's."""
    return {r["id"]: anchor_check.extract(r.get("title"), r.get("text"), r.get("lang"), LEAD_CHARS) for r in rows}


def simulate(rows: list[dict], vectors: np.ndarray, settings: GroupingSettings,
             anchors: dict[str, anchor_check.Anchors] | None = None) -> dict[str, str]:
    """Run plan_hour over the rows hour by hour; returns row id -> event id. With `anchors` (row id ->
    anchors) each join passes the events stage's anchor check (each side the union of its rows')."""
    index = {row["id"]: i for i, row in enumerate(rows)}
    languages = {row["id"]: frozenset({row["lang"]}) for row in rows}
    lowest = settings.threshold - settings.cross_language_margin
    rows_of_event: dict[str, list[str]] = {}

    def veto(story_id: str, event_id: str, joined_this_hour) -> dict | None:
        theirs = [anchors[i] for i in [*rows_of_event.get(event_id, []), *joined_this_hour]]
        if not theirs:
            return None
        clash = anchor_check.conflict(anchors[story_id], anchor_check.group_anchors(theirs))
        return clash.as_dict() if clash is not None else None

    by_hour: dict[datetime, list[dict]] = defaultdict(list)
    for row in rows:
        by_hour[row["ts"].replace(minute=0, second=0, microsecond=0)].append(row)

    members: dict[str, list[int]] = {}
    windows: dict[str, tuple[datetime, datetime]] = {}
    open_ids: set[str] = set()
    assignment: dict[str, str] = {}
    for hour in sorted(by_hour):
        batch = by_hour[hour]
        ids = [r["id"] for r in batch]
        batch_vecs = vectors[[index[i] for i in ids]]
        open_list = sorted(open_ids)
        se: dict[tuple[str, str], float] = {}
        if open_list:
            centroids = np.vstack([vectors[members[e]].mean(axis=0) for e in open_list])
            centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
            sims = batch_vecs @ centroids.T
            for a, b in zip(*np.nonzero(sims >= lowest)):
                se[(ids[a], open_list[b])] = float(sims[a, b])
        ss: dict[tuple[str, str], float] = {}
        pair = batch_vecs @ batch_vecs.T
        for a, b in zip(*np.nonzero(pair >= lowest)):
            if a < b:
                ss[(ids[a], ids[b])] = float(pair[a, b])
        stories = [StoryCandidate(r["id"], r["ts"], r["ts"], 10.0) for r in batch]
        events = [OpenEvent(e, *windows[e]) for e in open_list]
        event_languages = {e: frozenset({rows[i]["lang"] for i in members[e]}) for e in open_list}
        plan = plan_hour(stories, events, se, ss, hour + timedelta(hours=1), settings,
                         veto if anchors is not None else None, {**languages, **event_languages})
        for join in plan.joins:
            assignment[join.story_id] = join.event_id
            members.setdefault(join.event_id, []).append(index[join.story_id])
            rows_of_event.setdefault(join.event_id, []).append(join.story_id)
        open_ids |= {n.event_id for n in plan.new_events}
        for event_id, window in plan.event_windows.items():
            windows[event_id] = window
        open_ids -= set(plan.closes)
    return assignment


def cluster_gap_stats(rows: list[dict]) -> dict[str, float]:
    """Gaps between consecutive postings of the same subject (hours)."""
    by_cluster: dict[str, list[datetime]] = defaultdict(list)
    for row in rows:
        by_cluster[row["cluster"]].append(row["ts"])
    gaps = []
    for times in by_cluster.values():
        times.sort()
        gaps.extend((b - a).total_seconds() / 3600 for a, b in zip(times, times[1:]))
    gaps.sort()
    q = lambda f: gaps[min(len(gaps) - 1, int(f * len(gaps)))]  # noqa: E731
    return {"pairs": len(gaps), "median_h": statistics.median(gaps), "p75_h": q(0.75), "p90_h": q(0.9),
            "share_le_72h": sum(g <= 72 for g in gaps) / len(gaps)}


def pair_similarity_stats(rows: list[dict], vectors: np.ndarray) -> dict[str, float]:
    labels = np.array([r["cluster"] for r in rows])
    sims = vectors @ vectors.T
    same = labels[:, None] == labels[None, :]
    upper = np.triu(np.ones_like(same, dtype=bool), k=1)
    pos, neg = sims[same & upper], sims[~same & upper]
    return {"same_median": float(np.median(pos)), "same_p25": float(np.percentile(pos, 25)),
            "diff_median": float(np.median(neg)), "diff_p99": float(np.percentile(neg, 99)),
            "diff_p999": float(np.percentile(neg, 99.9))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="labelled JSON-lines file: a path, or a file name in the data directory")
    parser.add_argument("--data-dir", default=None, metavar="DIR",
                        help=f"where bare file names are found (default ${DATA_DIR_VARIABLE}, else ./data)")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--thresholds", default="0.3,0.35,0.4,0.45,0.5,0.55,0.6,0.65,0.7")
    parser.add_argument("--quiet-hours", default="24,72,168")
    parser.add_argument("--cross-language-margins", default="0",
                        help="comma-separated margins: a row that shares no language with an event joins it at the "
                             "threshold minus this")
    parser.add_argument("--anchors", action="store_true",
                        help="each join passes the events stage's anchor check (shared/text/anchors.py)")
    parser.add_argument("--langs", help="keep only these languages (comma-separated), e.g. the 16 USE languages")
    parser.add_argument("--provider", help="embedding provider (default: NEWSDEDUP_EMBEDDING_PROVIDER / e5)")
    args = parser.parse_args(argv)

    path = resolve_data_file(args.path, data_directory(args.data_dir, config.eval_data_dir()))
    rows = load_rows(path, args.limit)
    if args.langs:
        keep = set(args.langs.split(","))
        rows = [r for r in rows if r["lang"] in keep]
    emb_settings = config.merged(config.embedding_settings(), provider=args.provider or None)
    vectors, model = stored_vectors(path, [r["id"] for r in rows], emb_settings)
    gold = {r["id"]: r["cluster"] for r in rows}
    print(f"model={model} rows={len(rows)} subjects={len(set(gold.values()))}")
    print("same-subject posting gaps:", {k: round(v, 2) for k, v in cluster_gap_stats(rows).items()})
    print("pair cosine:", {k: round(v, 3) for k, v in pair_similarity_stats(rows, vectors).items()})
    anchors = row_anchors(rows) if args.anchors else None
    print("threshold margin quiet_h  P     R     F1    events largest")
    for quiet in [float(q) for q in args.quiet_hours.split(",")]:
        for threshold in [float(t) for t in args.thresholds.split(",")]:
            for margin in [float(m) for m in args.cross_language_margins.split(",")]:
                settings = GroupingSettings(threshold=threshold, join_gap_hours=quiet, quiet_hours=quiet,
                                            max_span_days=3650, min_significance=0.0, cross_language_margin=margin)
                pred = simulate(rows, vectors, settings, anchors)
                p, r, f1 = metrics.bcubed(pred, gold)
                sizes = defaultdict(int)
                for event_id in pred.values():
                    sizes[event_id] += 1
                print(f"{threshold:9.2f} {margin:6.2f} {quiet:7.0f}  {p:.3f} {r:.3f} {f1:.3f} {len(sizes):6d} "
                      f"{max(sizes.values()):7d}")
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
