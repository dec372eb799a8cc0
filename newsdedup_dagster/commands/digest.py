"""`newsdedup digest --date YYYY-MM-DD [--lang xx] [--open]`: render a day's digest (never sends)."""

from __future__ import annotations

import argparse
import sys


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "digest", help="render the digest of a day (HTML + text per language) into the outbox; never sends",
        description="Select the day's top stories and render the digest per language into the digests table and "
                    "$NEWSDEDUP_OUTBOX/digests/DAY/. Sending is the `digest` asset's job (daily schedule).")
    parser.add_argument("--date", required=True, metavar="YYYY-MM-DD", help="the UTC day")
    parser.add_argument("--lang", action="append", default=None,
                        help="render only this language (repeatable; default: configured + subscribed languages)")
    parser.add_argument("--open", action="store_true", help="print the path of the HTML file to open")
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from newsdedup_dagster import config  # deferred on purpose: fast --help
    from newsdedup_dagster.shared import db  # deferred on purpose: fast --help
    from newsdedup_dagster.stages.digest.build import (  # deferred on purpose: fast --help
        digest_langs,
        parse_day,
        render_day,
    )

    try:
        day = parse_day(args.date)
    except ValueError as exc:
        print(f"newsdedup digest: error: {exc}", file=sys.stderr)
        return 2
    settings, llm = config.digest_settings(), config.llm_settings()
    with db.connection() as conn:
        langs = args.lang or digest_langs(conn, settings, llm)
        result = render_day(conn, day, langs, settings, outbox_dir=config.outbox_dir())
    pivot = llm.pivot_lang
    print(f"digest {day}: {len(result.selected)} stories of {result.candidates} candidates, "
          f"{len(result.files)} languages ({', '.join(result.files)})")
    if not result.selected:
        print(f"  no scored stories first published on {day} (run the pipeline for that day first)")
    for lang, files in result.files.items():
        print(f"  {lang}: {files.html_path}")
    if args.open:
        lang = (args.lang or [pivot])[0] if (args.lang or [pivot])[0] in result.files else next(iter(result.files))
        print(result.files[lang].html_path)
    return 0
