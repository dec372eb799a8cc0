"""`newsdedup explain STORY_ID [--json]`: why each article is in the story (what admitted it, the
edges that held it together, what the chaining guard cut away, and the weakest link)."""

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
                    "the communities the chaining guard cut away, and the weakest link marked >>.")
    parser.add_argument("story_id", help="story id, or a unique prefix of it (as the stories asset shows)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from .. import db  # deferred on purpose: fast --help
    from ..clustering.explain import StoryNotFound, load, render_text  # deferred on purpose: fast --help

    with db.connection() as conn:
        try:
            story = load(conn, args.story_id)
        except StoryNotFound as exc:
            print(f"newsdedup explain: error: {exc}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(story.as_dict(), ensure_ascii=False, indent=1))
    else:
        print(render_text(story))
    return 0
