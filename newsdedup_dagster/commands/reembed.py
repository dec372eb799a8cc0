"""`newsdedup reembed`: switch the active embedding model to the configured one.

Vectors of two models cannot be compared, so the old model's embeddings and stories stay in the
database but inactive; backfill item_embeddings and then stories (in time order) afterwards.
"""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "reembed",
        help="make the configured embedding model the active one (then backfill item_embeddings and stories)",
        description=__doc__,
    )
    parser.add_argument("--yes", action="store_true", help="do it (without this, only say what would change)")
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from .. import db
    from ..embeddings import EmbeddingSettings, make_embedder
    from ..embeddings.store import active_model, switch_model

    settings = EmbeddingSettings()
    embedder = make_embedder(settings)
    with db.connection() as conn:
        current = active_model(conn)
        conn.commit()
        if current and current.model == embedder.model_id:
            print(f"{embedder.model_id} is already the active model; nothing to do")
            return 0
        print(f"active model: {current.model if current else '(none)'} -> configured: {embedder.model_id} ({embedder.dims} dims)")
        if not args.yes:
            print("re-run with --yes to switch; then backfill item_embeddings and stories in time order")
            return 1
        info = switch_model(conn, embedder, settings)
    print(f"active model is now {info.model}; backfill item_embeddings and stories (in time order) next")
    return 0
