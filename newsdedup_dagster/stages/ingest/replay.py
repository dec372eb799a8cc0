"""Replay sources for demos and evaluation: no network.

Two kinds:

* Feed files (`replay_file` per source): `replay_fetch_results()` returns one
  FetchResult per source with status 'ok', http_status None and url
  'replay:<source_id>/<file name>', so the normal parse path runs. Hour
  selection happens in parsing: for partition hour H pass
  `visible_before=H+1h` (see `replay_window`) to keep what the feed would
  have shown at the end of H; items ingested in earlier hours are
  deduplicated by id when stored.
* A JSON-lines dump (`{"id","title","text","lang","published_at","source","url"?}`):
  `load_jsonl_partition()` selects rows with published_at in [H, H+1h) and
  returns ParsedItems directly (plus the Sources they come from).
"""

from __future__ import annotations

import json
import mimetypes
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from newsdedup_dagster.shared.http.canonical_url import canonical_url, item_id, outlet_of
from newsdedup_dagster.shared.http.fetch import FetchResult
from newsdedup_dagster.shared.sources import Source, normalise_language
from newsdedup_dagster.shared.text.language import detect_language
from newsdedup_dagster.shared.text.sanitise import clean_text, title_from_summary
from newsdedup_dagster.stages.ingest.feed_parse import synthetic_id
from newsdedup_dagster.stages.ingest.parse_types import ParseConfig, ParsedItem

REPLAY_MAX_BYTES = 50 * 1024 * 1024  # a replay file is ours, but a wrong path to a huge file should fail clearly


def replay_window(partition_start: datetime) -> tuple[datetime, datetime]:
    """(fetched_at, visible_before) for replaying partition hour H.

    The replayed "fetch" happens in the last second of H: undated entries
    get a date inside H, and entries dated at or after H+1h are not yet
    visible."""
    start = partition_start.astimezone(UTC)
    end = start + timedelta(hours=1)
    return end - timedelta(seconds=1), end


def replay_url(source: Source) -> str:
    name = source.replay_file.name if source.replay_file else "missing"
    return f"replay:{source.id}/{name}"


def replay_fetch_results(sources: Iterable[Source], partition_start: datetime) -> list[FetchResult]:
    """One FetchResult per source that has a replay_file (others are left out).

    A missing or unreadable file gives a status 'error' result, like a failed fetch."""
    fetched_at, _ = replay_window(partition_start)
    results = []
    for source in sources:
        if source.replay_file is None:
            continue
        url = replay_url(source)
        path = Path(source.replay_file)
        content_type = mimetypes.guess_type(path.name)[0] or "application/xml"
        try:
            with path.open("rb") as handle:
                body = handle.read(REPLAY_MAX_BYTES + 1)
            error = f"replay file {path} is larger than {REPLAY_MAX_BYTES} bytes" if len(body) > REPLAY_MAX_BYTES else None
        except OSError as exc:
            body, error = None, f"cannot read replay file {path}: {exc.strerror or exc}"
        results.append(FetchResult(
            source_id=source.id, url=url, final_url=url, status="error" if error else "ok", http_status=None,
            elapsed_ms=0, etag=None, last_modified=None, body=None if error else body,
            content_type=content_type, headers={"content-type": content_type}, error=error, attempts=1,
            fetched_at=fetched_at,
        ))
    return results


# ------------------------------------------------------------ JSON-lines dumps


@dataclass(frozen=True)
class JsonlPartition:
    items: tuple[ParsedItem, ...]
    sources: tuple[Source, ...]  # synthesised from the dump's `source` values, for the sources table
    rows_read: int
    skipped_counts: dict[str, int] = field(default_factory=dict)


def jsonl_source_id(value: str | None, default: str) -> str:
    """'ar.wikipedia.org' -> 'ar-wikipedia-org' (a valid source slug)."""
    slug = re.sub(r"[^a-z0-9]+", "-", (value or "").lower()).strip("-")[:64].strip("-")
    return slug or default


def _parse_iso(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def load_jsonl_partition(path: str | Path, partition_start: datetime, *, partition_hours: int = 1,
                         config: ParseConfig = ParseConfig()) -> JsonlPartition:
    """Rows of a JSON-lines dump whose published_at falls in [H, H + partition_hours)."""
    path = Path(path)
    start = partition_start.astimezone(UTC)
    end = start + timedelta(hours=partition_hours)
    default_source = jsonl_source_id(path.stem, "jsonl")
    items: dict[str, ParsedItem] = {}
    source_names: dict[str, str] = {}
    source_langs: dict[str, Counter] = {}
    skipped: Counter = Counter()
    rows = 0
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            rows += 1
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                skipped["bad_json"] += 1
                continue
            published = _parse_iso(row.get("published_at"))
            if published is None:
                skipped["no_date"] += 1
                continue
            if not (start <= published < end):
                continue
            source_id = jsonl_source_id(row.get("source"), default_source)
            title = clean_text(row.get("title"), config.max_title_chars)
            text = clean_text(row.get("text"), config.max_summary_chars)
            title_origin = "title"
            if not title:
                if not text:
                    skipped["no_title"] += 1
                    continue
                title, title_origin = title_from_summary(text, config.synthetic_title_chars), "summary"
            guid = str(row["id"]) if row.get("id") is not None else None
            url = row.get("url") or None
            if url:
                canonical = canonical_url(url)
            elif guid or title:
                canonical = synthetic_id(source_id, guid or title)
            else:
                skipped["no_identity"] += 1
                continue
            identifier = item_id(canonical)
            if identifier in items:
                skipped["duplicate_id"] += 1
                continue
            language, language_origin = normalise_language(row.get("lang")), "entry"
            if language is None and config.detect_language:
                language, language_origin = detect_language(f"{title} {text}"), "detected"
            if language is None:
                language_origin = "unknown"
            items[identifier] = ParsedItem(
                item_id=identifier, source_id=source_id, guid=guid, url=url, canonical_url=canonical,
                title=title, summary=(text or None) if text != title else None, content=None, author=None,
                published_at=published.replace(microsecond=0), date_origin="published", date_flag=None,
                language=language, language_origin=language_origin, title_origin=title_origin,
                outlet=outlet_of(url),
            )
            source_names.setdefault(source_id, row.get("source") or path.name)
            source_langs.setdefault(source_id, Counter())[language or "und"] += 1
    sources = tuple(
        Source(id=sid, name=source_names[sid], feed_url=f"replay:jsonl/{path.name}/{sid}",
               language=source_langs[sid].most_common(1)[0][0], country="", syndicator=False, enabled=True)
        for sid in sorted(source_names)
    )
    ordered = tuple(sorted(items.values(), key=lambda item: (item.published_at, item.item_id)))
    return JsonlPartition(items=ordered, sources=sources, rows_read=rows, skipped_counts=dict(skipped))
