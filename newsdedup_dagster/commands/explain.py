"""`newsdedup explain ID [--json]`: why each article is in the story (what admitted it, the
edges that held it together, what the chaining guard cut away, and the weakest link), and which
events the events stage refused it and why (the anchor check); for an event id, the stories the
events stage refused to join to it."""

from __future__ import annotations

import argparse
import json
import sys


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "explain", help="show why a story holds its articles (pass, similarity, edges, cut communities)",
        description="Every article of the story with its language, source, the pass that admitted it (1: "
                    "centroid of an older story, 2: item-item edge, 3: centroid of the hour's new story), the "
                    "similarity and time gap it was admitted with, the edges that held a pass-2 story together, "
                    "the communities the chaining guard cut away, the weakest link marked >>, and the events "
                    "the events stage refused the story (conflicting anchors). Given an event id (ev_...): "
                    "the stories the events stage refused to join to it.")
    parser.add_argument("story_id", help="story id, or a unique prefix of it (as the stories asset shows); "
                                         "or an event id")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=handle)


def event_vetoes(conn, some_id: str) -> list[dict]:
    """The joins the events stage's anchor check refused for this story or event (event_vetoes)."""
    from newsdedup_dagster.shared import db  # deferred on purpose: fast --help

    rows = conn.execute(db.load_sql("event_vetoes_of"), {"id": some_id}).fetchall()
    conn.commit()
    return [{"partition_hour": hour.isoformat(), "story_id": story, "event_id": event, "similarity": float(sim),
             "kinds": list(kinds), "story_anchors": mine or {}, "event_anchors": theirs or {}}
            for hour, story, event, sim, kinds, mine, theirs in rows]


def veto_lines(vetoes: list[dict], of_event: bool) -> list[str]:
    """One line per refusal: where, the cosine, and each conflicting kind, the story | the event."""
    if not vetoes:
        return []
    lines = ["", f"refused by the events stage ({len(vetoes)}; conflicting anchors, the story | the event):"]
    for v in vetoes[:12]:
        parts = []
        for kind in v["kinds"]:
            mine = ", ".join(map(str, v["story_anchors"].get(kind, [])[:6])) or "–"
            theirs = ", ".join(map(str, v["event_anchors"].get(kind, [])[:6])) or "–"
            parts.append(f"{kind} {mine} | {theirs}")
        other = v["story_id"] if of_event else v["event_id"]
        lines.append(f"   {v['partition_hour'][:16]}  {other}  cos {v['similarity']:.3f}  " + "; ".join(parts))
    if len(vetoes) > 12:
        lines.append(f"   … {len(vetoes) - 12} more")
    return lines


def handle(args: argparse.Namespace) -> int:
    from newsdedup_dagster.shared import db  # deferred on purpose: fast --help
    from newsdedup_dagster.stages.clustering.explain import (  # deferred on purpose: fast --help
        StoryNotFound,
        load,
        render_text,
    )

    with db.connection() as conn:
        if args.story_id.startswith("ev_"):
            vetoes = event_vetoes(conn, args.story_id)
            known = conn.execute(db.load_sql("event_ids_existing"), ([args.story_id],)).fetchall()
            conn.commit()
            if not known and not vetoes:
                print(f"newsdedup explain: error: no event {args.story_id!r}", file=sys.stderr)
                return 1
            if args.json:
                print(json.dumps({"event_id": args.story_id, "event_vetoes": vetoes}, ensure_ascii=False, indent=1))
            else:
                print("\n".join([f"event {args.story_id}", *(veto_lines(vetoes, True) or ["no refused joins"])]))
            return 0
        try:
            story = load(conn, args.story_id)
        except StoryNotFound as exc:
            print(f"newsdedup explain: error: {exc}", file=sys.stderr)
            return 1
        vetoes = event_vetoes(conn, story.story_id)
    if args.json:
        print(json.dumps({**story.as_dict(), "event_vetoes": vetoes}, ensure_ascii=False, indent=1))
    else:
        print("\n".join([render_text(story), *veto_lines(vetoes, False)]))
    return 0
