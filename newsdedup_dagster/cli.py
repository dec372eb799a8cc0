"""The `newsdedup` console script."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from newsdedup_dagster import __version__
from newsdedup_dagster.commands import COMMAND_MODULES
from newsdedup_dagster.shared.db import DatabaseError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="newsdedup",
        description="Multilingual news feeds -> deduplicated cross-lingual stories (Dagster + PostgreSQL/pgvector).",
    )
    parser.add_argument("--version", action="version", version=f"newsdedup {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"newsdedup_dagster.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"newsdedup_dagster.commands.{name}":
                continue  # stage not installed in this build
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2

    try:
        return int(args.func(args) or 0)
    except DatabaseError as exc:
        print(f"newsdedup: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
