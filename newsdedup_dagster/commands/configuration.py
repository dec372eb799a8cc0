"""`newsdedup config [--markdown]`: every setting, its variable, default and meaning (from the declarations)."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "config", help="list every setting: variable, default, accepted values, meaning",
        description="Every environment variable newsdedup reads, from the settings' declarations. "
                    "--markdown prints docs/CONFIGURATION.md.")
    parser.add_argument("--markdown", action="store_true", help="print the configuration table as Markdown")
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from .. import config  # deferred on purpose: fast --help

    if args.markdown:
        print(config.configuration_markdown(), end="")
        return 0
    print(config.configuration_summary())
    for section, env, default, accepts, doc in config.configuration_rows():
        print(f"{env}  [{section}]  default {default}; {accepts}\n    {doc}")
    return 0
