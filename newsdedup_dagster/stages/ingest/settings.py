"""Limits for hostile feeds and where a fetch may connect (built by config.ingest_settings())."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from newsdedup_dagster.shared.settings import setting

MIB = 1024 * 1024


@dataclass(frozen=True)
class IngestSettings:
    """Limits for hostile feeds and where a fetch may connect (README: "Hostile input")."""

    CALIBRATION: ClassVar[str] = "ingest"  # its section in the calibration file

    # Networks (CIDR) or host names (`*.corp.example` for all below) that the sources saying
    # `allow_private: true` (intranet feeds) may reach although they are not public addresses;
    # every other source reaches public addresses only. Tests use 127.0.0.0/8. Empty = public only.
    allow_private: tuple[str, ...] = setting(
        (), env="NEWSDEDUP_FETCH_ALLOW_PRIVATE", shown="empty (public addresses only)",
        doc="comma list of networks (`10.20.0.0/16`) and host names (`feeds.corp.example`, `*.corp.example`) "
            "that sources with `allow_private: true` in the sources file may reach although they are not "
            "public addresses; other sources reach public addresses only")
    max_concurrency: int = setting(32, env="NEWSDEDUP_FETCH_CONCURRENCY", doc="requests in flight in total")
    max_per_host: int = setting(4, env="NEWSDEDUP_FETCH_PER_HOST", doc="requests in flight per host")
    total_timeout: float = setting(60.0, env="NEWSDEDUP_FETCH_TIMEOUT", doc="seconds per source, retries included")
    max_body_bytes: int = setting(10 * MIB, calibrated=True, was="NEWSDEDUP_FETCH_MAX_BYTES", doc="body cap on the wire (bytes)")
    max_decoded_bytes: int = setting(20 * MIB, calibrated=True, was="NEWSDEDUP_FETCH_MAX_DECODED_BYTES",
                                     doc="body cap after gzip/deflate (bytes)")
    max_entries: int = setting(1_000, calibrated=True, was="NEWSDEDUP_INGEST_MAX_ENTRIES",
                               doc="entries kept per feed (the newest by date); the rest are counted as "
                                   "`over_entry_cap`")
    max_field_chars: int = setting(200_000, calibrated=True, was="NEWSDEDUP_INGEST_MAX_FIELD_CHARS",
                                   doc="raw characters of one field kept before markup is stripped")
    max_title_chars: int = setting(500, calibrated=True, was="NEWSDEDUP_INGEST_MAX_TITLE_CHARS", doc="plain-text title length stored")
    max_summary_chars: int = setting(5_000, calibrated=True, was="NEWSDEDUP_INGEST_MAX_SUMMARY_CHARS",
                                     doc="plain-text summary length stored")
    max_content_chars: int = setting(100_000, calibrated=True, was="NEWSDEDUP_INGEST_MAX_CONTENT_CHARS",
                                     doc="plain-text content length stored")
    max_url_chars: int = setting(2_048, calibrated=True, was="NEWSDEDUP_INGEST_MAX_URL_CHARS",
                                 doc="longer links are dropped (the entry keeps its GUID's URL or a synthetic id); "
                                     "at most 2600")
    parse_time_budget: float = setting(15.0, calibrated=True, was="NEWSDEDUP_INGEST_PARSE_TIMEOUT",
                                       doc="seconds to parse one feed (in a worker process); on expiry the source "
                                           "is recorded as failed")

    def __post_init__(self) -> None:
        if self.max_url_chars > 2_600:
            # items.url and item_sources.url are not indexed, but keep them in the btree row limit anyway.
            raise ValueError(f"ingest.max_url_chars={self.max_url_chars}: expected at most 2600")
        for name in ("max_concurrency", "max_per_host", "max_entries", "max_field_chars", "max_title_chars",
                     "max_summary_chars", "max_content_chars", "max_url_chars"):
            if getattr(self, name) < 1:
                raise ValueError(f"ingest setting {name}={getattr(self, name)}: expected at least 1")
        if self.parse_time_budget <= 0 or self.total_timeout <= 0:
            raise ValueError("ingest.parse_time_budget and NEWSDEDUP_FETCH_TIMEOUT: expected positive numbers")
