"""`newsdedup config [--markdown | --calibration-markdown [FILE ...]]`: every setting, its variable or
calibration key, default and meaning (from the declarations)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "config", help="list every setting: variable or calibration key, default, accepted values, meaning",
        description="Every environment variable and calibration file key newsdedup reads, from the settings' "
                    "declarations. --markdown prints docs/CONFIGURATION.md; --calibration-markdown the "
                    "calibrated constants' tables (with their marker comments), or with files (the stage "
                    "files docs/calibration/*.md) rewrites the generated tables in each, the sections its "
                    "marker names.")
    parser.add_argument("--markdown", action="store_true", help="print the configuration table as Markdown")
    parser.add_argument("--calibration-markdown", nargs="*", metavar="FILE", default=None,
                        help="print the calibrated constants' tables as Markdown; with files, rewrite their "
                             "generated tables in place")
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from newsdedup_dagster import config  # deferred on purpose: fast --help

    if args.markdown:
        print(config.configuration_markdown(), end="")
        return 0
    if args.calibration_markdown == []:
        print(config.calibration_markdown(), end="")
        return 0
    if args.calibration_markdown:
        for name in args.calibration_markdown:
            path = Path(name)
            document = path.read_text(encoding="utf-8")
            if not config.generated_sections(document):
                print(f"{path}: no generated tables")
                continue
            updated = config.with_calibration_markdown(document)
            if updated != document:
                path.write_text(updated, encoding="utf-8")
            print(f"{path}: {'rewritten' if updated != document else 'current'} "
                  f"({', '.join(config.generated_sections(document))})")
        return 0
    print(config.configuration_summary())
    for section, env, default, accepts, doc in config.configuration_rows():
        print(f"{env}  [{section}]  default {default}; {accepts}\n    {doc}")
    for _, key, default, accepts, doc, _ in config.calibration_rows():
        print(f"{key}  (calibration file)  default {default}; {accepts}\n    {doc}")
    return 0
