"""Ingestion: sources file, concurrent defensive fetching, parsing, canonical
URLs, replay, and the database side (store.ingest_partition).

Pure modules (no database, no Dagster): sources, canonical_url, fetch, replay, and the parse
step: feed_parse (feed bytes -> items), encoding, sanitise, language, parse_types, parse_pool.
store.py holds the SQL side; the raw_items asset calls store.ingest_partition.
"""

from .canonical_url import canonical_url, item_id
from .feed_parse import parse_feed, parse_fetch_result
from .fetch import FetchConfig, FetchRequest, FetchResult, fetch_feeds, fetch_feeds_sync, iter_fetch_feeds
from .parse_types import ParseConfig, ParsedItem, ParseResult
from .replay import load_jsonl_partition, replay_fetch_results, replay_window
from .sources import Source, SourcesConfigError, load_sources

__all__ = [
    "FetchConfig", "FetchRequest", "FetchResult", "ParseConfig", "ParseResult", "ParsedItem", "Source",
    "SourcesConfigError", "canonical_url", "fetch_feeds", "fetch_feeds_sync", "item_id", "iter_fetch_feeds",
    "load_jsonl_partition", "load_sources", "parse_feed", "parse_fetch_result", "replay_fetch_results",
    "replay_window",
]
