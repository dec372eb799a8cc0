"""`newsdedup` subcommands, one module each. A module exposes `register(subparsers)`,
which adds its parser and sets `func(args) -> int` as the handler."""

COMMAND_MODULES = (
    "platform",     # dev, demo, migrate, db
    "ingest",       # ingest
    "neardup",      # neardup-eval
    "evaluate",     # eval
    "reembed",      # reembed (after changing the embedding model)
    "subscribers",  # subscribers add/update/remove/list
    "digest",       # digest
    "doctor",       # doctor (checks every part and says how to fix it)
    "serve",        # serve (the published feeds and site)
    "prune",        # prune (retention)
    "explain",      # explain STORY_ID
    "configuration",  # config (every setting, from the declarations)
    "sources",      # sources import/export/add/list/check
)
