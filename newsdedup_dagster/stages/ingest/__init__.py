"""Ingestion: each source's feed fetched (the shared guarded fetcher), parsed defensively in a pool
of worker processes, its items given canonical URLs and ids, and the database side
(store.ingest_partition); replay serves recorded feeds for the demo and the tests.

Pure modules (no database, no Dagster): feed_parse (feed bytes -> items), parse_types,
parse_pool, replay. store.py holds the SQL side; the raw_items asset calls store.ingest_partition.
"""

from newsdedup_dagster.stages.ingest.feed_parse import parse_feed, parse_fetch_result
from newsdedup_dagster.stages.ingest.parse_types import ParseConfig, ParsedItem, ParseResult
from newsdedup_dagster.stages.ingest.replay import load_jsonl_partition, replay_fetch_results, replay_window

__all__ = [
    "ParseConfig", "ParseResult", "ParsedItem", "load_jsonl_partition", "parse_feed", "parse_fetch_result",
    "replay_fetch_results", "replay_window",
]
