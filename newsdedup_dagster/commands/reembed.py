"""`newsdedup reembed`: switch the active embedding model, or the centring choice, to the configured one.

Another model: vectors of two models cannot be compared, so the old model's embeddings and stories
stay in the database but inactive; backfill item_embeddings and stories afterwards.
Same model, embeddings.centre switched: the stored vectors are rewritten in place, in one
transaction, from the raw vectors (no embedding calls); backfill stories afterwards.
Same model and centring, another embedded text (a lead length, a token budget, the page lead): the
stored vectors whose text differs are counted; backfill item_embeddings and stories over their hours.
The command prints that backfill (its assets and the hours that hold items) as a `dagster asset
materialize` line and as the UI's steps: one run, hour by hour in time order; Dagster then shows the
assets downstream of them as stale.
"""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "reembed",
        help="make the configured embedding model / centring choice the active one (then backfill)",
        description=__doc__,
    )
    parser.add_argument("--yes", action="store_true", help="do it (without this, only say what would change)")
    parser.set_defaults(func=handle)


def _centring_word(centring: bool | None) -> str:
    return {True: "centred", False: "raw", None: "not recorded"}[centring]


def backfill_instruction(assets: list[str], first_hour: str | None, last_hour: str | None) -> str:
    """What to launch after the switch: the assets over the hours that hold items."""
    if first_hour is None or last_hour is None:
        return f"materialise {' and '.join(assets)} with the next hours (no items yet)"
    hours = f"{first_hour}...{last_hour}"
    return (f"backfill {' and '.join(assets)} over {hours} (one run, in time order): in the UI, select "
            f"{', '.join(assets)} -> Materialize -> that partition range; or\n"
            f"  dagster asset materialize -m newsdedup_dagster.definitions --select {','.join(assets)} "
            f"--partition-range {hours}")


def handle(args: argparse.Namespace) -> int:
    from newsdedup_dagster import config  # deferred on purpose: fast --help
    from newsdedup_dagster.partitions import hour_key  # deferred on purpose: fast --help
    from newsdedup_dagster.shared import db  # deferred on purpose: fast --help
    from newsdedup_dagster.stages.embeddings import make_embedder  # deferred on purpose: fast --help
    from newsdedup_dagster.stages.embeddings.providers import centring_enabled  # deferred on purpose: fast --help
    from newsdedup_dagster.stages.embeddings.store import (  # deferred on purpose: fast --help
        active_model,
        stale_texts,
        switch_model,
    )

    settings = config.embedding_settings()
    embedder = make_embedder(settings)
    wanted_centring = centring_enabled(embedder.model_id, settings.centre)
    with db.connection() as conn:
        current = active_model(conn)
        first, last = conn.execute(db.load_sql("reembed_hours")).fetchone()
        conn.commit()
        first_hour, last_hour = (hour_key(first), hour_key(last)) if first and last else (None, None)
        same_model = bool(current and current.model == embedder.model_id)
        if same_model and current.centring in (None, wanted_centring):
            stale = stale_texts(conn, current.model, settings)
            conn.commit()
            if not stale.stale:
                print(f"{embedder.model_id} ({_centring_word(wanted_centring)} vectors) is already active and "
                      f"every stored vector is of the text the settings embed; nothing to do")
                return 0
            # The embedded text changed (a lead length, a token budget, the page lead): the vectors
            # are content-addressed, so re-materialising the hours re-embeds exactly those items.
            print(f"{embedder.model_id} is active, but {stale.stale} of {stale.items} stored vectors were embedded "
                  f"from another text than the NEWSDEDUP_EMBEDDING_* settings give now")
            # To the last hour: a run over a range rebuilds the stories of the hours after it.
            print("next, " + backfill_instruction(["item_embeddings", "stories"], hour_key(stale.first_hour),
                                                  last_hour))
            return 0
        if same_model:
            print(f"{current.model}: stored vectors {_centring_word(current.centring)} -> configured "
                  f"{_centring_word(wanted_centring)} (embeddings.centre={settings.centre})")
            next_step = backfill_instruction(["stories"], first_hour, last_hour)
        else:
            print(f"active model: {current.model if current else '(none)'} -> configured: {embedder.model_id} "
                  f"({embedder.dims} dims, {_centring_word(wanted_centring)} vectors)")
            next_step = backfill_instruction(["item_embeddings", "stories"], first_hour, last_hour)
        if not args.yes:
            print(f"re-run with --yes to switch; then {next_step}")
            return 1
        info = switch_model(conn, embedder, settings)
    print(f"active model is now {info.model} ({_centring_word(info.centring)} vectors); next, {next_step}")
    return 0
