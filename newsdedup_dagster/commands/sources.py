"""`newsdedup sources import FILE.opml | export | add URL | list | check [ID ...]`: the sources file
managed from the command line (newsdedup_dagster/sources/).

Every command reads the sources file `--sources FILE` (default $NEWSDEDUP_SOURCES); `import` and
`add` write it back with its comments and layout kept, validated first, in one rename, and refuse
to write the starter file bundled with the package. Exit codes: 0 done, 1 something was refused or
failed (named on its line), 2 the command could not run (unreadable file, bad argument)."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit


def register(subparsers) -> None:
    parser = subparsers.add_parser("sources", help="manage the sources file: import | export | add | list | check",
                                   description="The sources file: OPML in and out, a feed added from a feed's or "
                                               "a site's address, each source's health.")
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    def sources_argument(p) -> None:
        p.add_argument("--sources", default=None, help="the sources YAML file (default $NEWSDEDUP_SOURCES)")

    p = sub.add_parser("import", help="merge an OPML file's feeds into the sources file")
    p.add_argument("opml", help="OPML file (Miniflux, FreshRSS, NewsBlur, Feedly, Inoreader exports ...)")
    sources_argument(p)
    p.add_argument("--language", default=None, help="language (ISO 639-1) of the feeds whose outline names none")
    p.add_argument("--country", default=None,
                   help="country (ISO 3166-1 alpha-2) of the feeds for which neither the outline nor the "
                        "country-code domain says one")
    p.add_argument("--disabled", action="store_true", help="add the new feeds with enabled: false")
    p.add_argument("--dry-run", action="store_true", help="say what would be added; write nothing")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("export", help="write the sources as OPML 2.0")
    sources_argument(p)
    p.add_argument("-o", "--output", default=None, help="file to write (default: standard output)")
    p.add_argument("--include-disabled", action="store_true", help="also the disabled sources (marked so)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("add", help="add a feed from its address or its site's")
    p.add_argument("url", help="a feed's address, or a site's page that declares its feed")
    sources_argument(p)
    p.add_argument("--id", default=None, help="the source's id (default: from its name and language)")
    p.add_argument("--name", default=None, help="display name (default: the feed's title)")
    p.add_argument("--language", default=None, help="ISO 639-1 code (default: proposed from the feed)")
    p.add_argument("--country", default=None, help="ISO 3166-1 alpha-2 code (default: proposed from the domain)")
    p.add_argument("--category", default=None, help="a folder name kept for OPML export")
    p.add_argument("--allow-private", action="store_true",
                   help="an intranet feed: may reach the networks NEWSDEDUP_FETCH_ALLOW_PRIVATE names (written "
                        "to the entry)")
    p.add_argument("--disabled", action="store_true", help="add it with enabled: false")
    p.add_argument("--dry-run", action="store_true", help="find and propose; write nothing")
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("list", help="each source's health: last success, errors, items per day, last item")
    sources_argument(p)
    p.add_argument("--json", action="store_true", help="one JSON object per source, in a list")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("check", help="fetch sources now and report (nothing is stored)")
    p.add_argument("ids", nargs="*", metavar="ID", help="source ids (default: every enabled source)")
    sources_argument(p)
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.set_defaults(func=cmd_check)


def _error(message: str) -> int:
    print(f"newsdedup: error: {message}", file=sys.stderr)
    return 2


def _sources_path(args) -> Path:
    from newsdedup_dagster import config  # deferred on purpose: fast --help

    return Path(args.sources).expanduser().resolve() if args.sources else config.sources_file()


def _load(path: Path):
    from newsdedup_dagster.shared.sources import load_sources  # deferred on purpose: fast --help

    return load_sources(path)


def _writable(path: Path) -> str | None:
    from newsdedup_dagster import config  # deferred on purpose: fast --help

    if path == Path(config.STARTER_SOURCES).resolve():
        return (f"{path} is the starter file bundled with the package: copy it, point --sources or "
                "NEWSDEDUP_SOURCES at the copy, and edit that")
    return None


def _code(value: str | None, known: frozenset[str], upper: bool) -> str | None:
    if value is None:
        return None
    value = value.strip().upper() if upper else value.strip().lower()
    if value not in known:
        raise ValueError(value)
    return value


def _language_and_country(args) -> tuple[str | None, str | None]:
    """--language and --country as codes, or ValueError naming the one that is not a code."""
    from newsdedup_dagster.shared.sources import ISO_639_1, ISO_3166_1_ALPHA2  # deferred on purpose: fast --help

    try:
        return _code(args.language, ISO_639_1, upper=False), _code(args.country, ISO_3166_1_ALPHA2, upper=True)
    except ValueError as exc:
        raise ValueError(f"{exc.args[0]!r} is not a language (ISO 639-1) or country (ISO 3166-1 alpha-2) code") from None


# ------------------------------------------------------------------ import / export


def cmd_import(args) -> int:
    from newsdedup_dagster.shared.sources import (  # deferred on purpose: fast --help
        SourcesConfigError,
    )
    from newsdedup_dagster.sources.edit import (  # deferred on purpose: fast --help
        append_sources,
        plan_import,
        write_sources_file,
    )
    from newsdedup_dagster.sources.opml import (  # deferred on purpose: fast --help
        MAX_OPML_BYTES,
        OpmlRefused,
        read_opml,
    )

    path = _sources_path(args)
    try:
        language, country = _language_and_country(args)
    except ValueError as exc:
        return _error(str(exc))
    if not args.dry_run and (refusal := _writable(path)):
        return _error(refusal)
    try:
        existing = _load(path)
    except (SourcesConfigError, OSError) as exc:
        return _error(str(exc))
    opml_path = Path(args.opml)
    try:
        size = opml_path.stat().st_size
        with opml_path.open("rb") as handle:   # never more than the cap into memory
            data = handle.read(MAX_OPML_BYTES + 1)
    except OSError as exc:
        return _error(f"{opml_path}: cannot read: {exc.strerror or exc}")
    try:
        if size > MAX_OPML_BYTES:
            raise OpmlRefused(f"file is larger than {MAX_OPML_BYTES} bytes ({size} bytes)")
        document = read_opml(data)
    except OpmlRefused as exc:
        print(f"{opml_path}: refused, nothing imported: {exc}")
        return 1
    plan = plan_import(document, existing, default_language=language, default_country=country,
                       enabled=not args.disabled)
    for refusal in plan.refused:
        print(f"{opml_path}:{refusal.line or ''}: refused: {refusal.reason}")
    for duplicate in plan.duplicates:
        print(f"{opml_path}: duplicate, not added: {duplicate}")
    for entry in plan.added:
        print(f"{'would add' if args.dry_run else 'added'} {entry.id}: {entry.feed_url} ({entry.language}, {entry.country}"
              + (f", {entry.category}" if entry.category else "") + ")")
    if plan.added and not args.dry_run:
        try:
            write_sources_file(path, append_sources(path.read_text(encoding="utf-8"), plan.added))
        except (SourcesConfigError, OSError, ValueError) as exc:
            return _error(f"nothing written to {path}: {exc}")
    verb = "would add" if args.dry_run else "added"
    print(f"{len(document.feeds) + len(document.refused)} feeds in {opml_path}: {verb} {len(plan.added)}, "
          f"{len(plan.duplicates)} duplicates, {len(plan.refused)} refused"
          + ("" if args.dry_run or not plan.added else f"; {path} updated"))
    return 1 if plan.refused else 0


def cmd_export(args) -> int:
    from newsdedup_dagster.shared.sources import SourcesConfigError  # deferred on purpose: fast --help
    from newsdedup_dagster.sources.opml import ExportedFeed, write_opml  # deferred on purpose: fast --help

    path = _sources_path(args)
    try:
        sources = _load(path)
    except (SourcesConfigError, OSError) as exc:
        return _error(str(exc))
    feeds = [ExportedFeed(source_id=s.id, name=s.name, feed_url=s.feed_url, language=s.language, country=s.country,
                          site_url=f"https://{s.own_outlet}/" if s.own_outlet else None, category=s.category,
                          enabled=s.enabled)
             for s in sources if s.enabled or args.include_disabled]
    data = write_opml(feeds, title=f"newsdedup sources ({path.name})", created=datetime.now(UTC))
    if args.output:
        Path(args.output).write_bytes(data)
        print(f"{len(feeds)} sources written to {args.output}", file=sys.stderr)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return 0


# ------------------------------------------------------------------ add


def cmd_add(args) -> int:
    from newsdedup_dagster import config  # deferred on purpose: fast --help
    from newsdedup_dagster.shared.http.fetch import run_sync  # deferred on purpose: fast --help
    from newsdedup_dagster.shared.sources import (  # deferred on purpose: fast --help
        SOURCE_ID_RE,
        SourcesConfigError,
    )
    from newsdedup_dagster.sources.discovery import discover  # deferred on purpose: fast --help
    from newsdedup_dagster.sources.edit import (  # deferred on purpose: fast --help
        NewSource,
        append_sources,
        feed_url_key,
        propose_id,
        site_outlet,
        write_sources_file,
    )
    from newsdedup_dagster.stages.ingest.store import configs_for  # deferred on purpose: fast --help

    path = _sources_path(args)
    try:
        language, country = _language_and_country(args)
    except ValueError as exc:
        return _error(str(exc))
    if args.id is not None and not SOURCE_ID_RE.match(args.id):
        return _error(f"--id {args.id[:70]!r} is not a slug (lower-case letters, digits, '-' or '_')")
    if not args.dry_run and (refusal := _writable(path)):
        return _error(refusal)
    try:
        existing = _load(path)
    except (SourcesConfigError, OSError) as exc:
        return _error(str(exc))
    fetch_config, parse_config = configs_for(config.ingest_settings())
    found = run_sync(lambda: discover(args.url, fetch_config, parse_config, allow_private=args.allow_private))
    for step in found.tried:
        print(f"  {step}")
    if not found.found:
        print(f"no feed added: {found.error}")
        return 1
    key = feed_url_key(found.feed_url)
    same = next((s for s in existing if feed_url_key(s.feed_url) == key), None)
    if same is not None:
        print(f"no feed added: {found.feed_url} is already source {same.id!r}")
        return 1
    print(f"feed: {found.feed_url} ({found.how}; {found.feed_format}, {found.items} items)"
          + (f", title {found.title!r}" if found.title else ""))
    print(f"proposed: language {found.language or '?'}, country {found.country or '?'}")
    language = language or found.language
    country = country or found.country
    if not language or not country:
        missing = " and ".join(name for name, value in (("--language", language), ("--country", country)) if not value)
        print(f"no feed added: no {missing.replace('--', '')} could be proposed; give {missing}")
        return 1
    taken = {s.id for s in existing}
    name = args.name or found.title or urlsplit(found.feed_url).hostname or found.feed_url
    source_id = args.id or propose_id(name, found.feed_url, language, taken)
    if source_id in taken:
        print(f"no feed added: id {source_id!r} is already used in {path}")
        return 1
    entry = NewSource(id=source_id, name=name, feed_url=found.feed_url, language=language, country=country,
                      outlet=site_outlet(found.feed_url, found.site_url), category=args.category,
                      enabled=not args.disabled, allow_private=args.allow_private)
    if args.dry_run:
        print(f"would add {entry.as_mapping()}")
        return 0
    try:
        write_sources_file(path, append_sources(path.read_text(encoding="utf-8"), [entry]))
    except (SourcesConfigError, OSError, ValueError) as exc:
        return _error(f"nothing written to {path}: {exc}")
    print(f"added {entry.id} ({language}, {country}) to {path}")
    return 0


# ------------------------------------------------------------------ list / check


def _when(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return "-"
    hours = (now - moment).total_seconds() / 3600
    return f"{hours:.0f} h ago" if hours < 48 else f"{hours / 24:.0f} d ago"


def cmd_list(args) -> int:
    from newsdedup_dagster.shared import db  # deferred on purpose: fast --help
    from newsdedup_dagster.shared.sources import SourcesConfigError  # deferred on purpose: fast --help
    from newsdedup_dagster.sources.health import source_health, state_counts  # deferred on purpose: fast --help

    try:
        sources = _load(_sources_path(args))
    except (SourcesConfigError, OSError) as exc:
        return _error(str(exc))
    db.ensure_ready()
    now = datetime.now(UTC)
    with db.connection() as conn:
        healths = source_health(conn, sources, now)
    if args.json:
        print(json.dumps([{
            "id": h.source_id, "state": h.state, "enabled": h.enabled,
            "last_success": h.last_success.isoformat() if h.last_success else None,
            "error_streak": h.failures, "failing_since": h.failing_since.isoformat() if h.failing_since else None,
            "last_error": h.last_error, "items_per_day": round(h.items_per_day, 2),
            "last_item": h.last_item.isoformat() if h.last_item else None,
            "usual_gap_hours": h.usual_gap_hours} for h in healths], ensure_ascii=False))
        return 0
    print(f"{'source':<28} {'state':<9} {'last success':>12} {'errors':>6} {'items/day':>9} {'last item':>10}  last error")
    for h in healths:
        print(f"{h.source_id[:28]:<28} {h.state:<9} {_when(h.last_success, now):>12} {h.failures:>6} "
              f"{h.items_per_day:>9.1f} {_when(h.last_item, now):>10}  {(h.last_error or '')[:80]}")
    counts = state_counts(healths)
    print(", ".join(f"{count} {state}" for state, count in counts.items() if count) or "no sources")
    return 0


def cmd_check(args) -> int:
    from newsdedup_dagster import config  # deferred on purpose: fast --help
    from newsdedup_dagster.shared.http.fetch import FetchRequest, fetch_feeds_sync  # deferred on purpose: fast --help
    from newsdedup_dagster.shared.sources import SourcesConfigError  # deferred on purpose: fast --help
    from newsdedup_dagster.stages.ingest.parse_pool import parse_many  # deferred on purpose: fast --help
    from newsdedup_dagster.stages.ingest.store import configs_for  # deferred on purpose: fast --help

    try:
        sources = _load(_sources_path(args))
    except (SourcesConfigError, OSError) as exc:
        return _error(str(exc))
    by_id = {s.id: s for s in sources}
    unknown = [i for i in args.ids if i not in by_id]
    if unknown:
        return _error(f"no source with id {', '.join(repr(i) for i in unknown)}")
    chosen = [by_id[i] for i in dict.fromkeys(args.ids)] if args.ids else [s for s in sources if s.enabled]
    fetch_config, parse_config = configs_for(config.ingest_settings())
    results = fetch_feeds_sync([FetchRequest(s.id, s.feed_url, allow_private=s.allow_private) for s in chosen],
                               fetch_config)
    parsed = parse_many([(r, s, None, parse_config) for r, s in zip(results, chosen)])
    rows = []
    for source, result, outcome in zip(chosen, results, parsed):
        error = result.error or outcome.error
        rows.append({"id": source.id, "ok": error is None, "http_status": result.http_status,
                     "elapsed_ms": result.elapsed_ms, "items": len(outcome.items), "error": error})
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
    else:
        print(f"{'source':<28} {'result':<7} {'http':>4} {'ms':>6} {'items':>5}  error")
        for row in rows:
            print(f"{row['id'][:28]:<28} {'ok' if row['ok'] else 'FAILED':<7} {row['http_status'] or '':>4} "
                  f"{row['elapsed_ms']:>6} {row['items']:>5}  {(row['error'] or '')[:100]}")
        failed = sum(1 for row in rows if not row["ok"])
        print(f"{len(rows) - failed} ok, {failed} failed")
    return 1 if any(not row["ok"] for row in rows) else 0
