"""The article stage's settings (built by config.article_settings())."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from newsdedup_dagster.shared.deployment import SAMPLE_DATA_DIR
from newsdedup_dagster.shared.settings import setting

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True)
class ArticleSettings:
    """How many pages an hour fetches, how politely, and what is kept of them."""

    CALIBRATION: ClassVar[str] = "articles"  # its section in the calibration file

    enabled: bool = setting(True, env="NEWSDEDUP_ARTICLES",
                            doc="fetch each new item's page and keep its main text (`article_texts`); hours "
                                "whose feeds were replayed read their pages from `NEWSDEDUP_ARTICLES_REPLAY_DIR` "
                                "and never from the network")
    # Recorded pages of replayed hours, one file per link (`replay_page_name`): the sample day's.
    replay_dir: Path = setting(SAMPLE_DATA_DIR / "pages", env="NEWSDEDUP_ARTICLES_REPLAY_DIR",
                               shown="bundled `sample_data/pages`",
                               doc="recorded pages read instead of fetching in hours whose feeds were replayed "
                                   "(`<sha256 of the link>.html`); a link without a file there gets no row")
    max_pages_per_hour: int = setting(300, env="NEWSDEDUP_ARTICLES_PER_HOUR", bounds=(0, 100_000),
                                      doc="pages fetched per hour at most (newest, most-covered items first; "
                                          "the rest wait for a later hour)")
    min_host_delay: float = setting(5.0, env="NEWSDEDUP_ARTICLES_HOST_DELAY", bounds=(0.0, 3600.0),
                                    doc="seconds between two requests to one host (a longer robots.txt "
                                        "`Crawl-delay` wins, up to 60 s); one request at a time per host")
    # The stage waits on per-host delays, not on CPU: bench/hour.py --pages, 300 pages on 243 hosts,
    # 206.4 s at 8 hosts, 85.3 s at 32 (two runs, load 1-3); docs/calibration/articles.md#article-pages-in-an-hour
    hosts_in_parallel: int = setting(32, calibrated=True, was="NEWSDEDUP_ARTICLES_HOSTS", bounds=(1, 256),
                                     doc="hosts fetched from at the same time")
    page_timeout: float = setting(20.0, calibrated=True, was="NEWSDEDUP_ARTICLES_PAGE_TIMEOUT", bounds=(0.1, 600.0),
                                  doc="seconds for one page, redirects included (the fetch is not retried "
                                      "within the hour)")
    hour_budget: float = setting(900.0, calibrated=True, was="NEWSDEDUP_ARTICLES_HOUR_BUDGET", bounds=(1.0, 3600.0),
                                 doc="seconds the stage spends on an hour; pages not reached by then wait for a "
                                     "later hour")
    max_page_bytes: int = setting(5 * MIB, calibrated=True, was="NEWSDEDUP_ARTICLES_MAX_BYTES", bounds=(1024, 10 * MIB),
                                  doc="page size cap on the wire and after gzip/deflate (bytes; never more than "
                                      "the feed caps)")
    max_attempts: int = setting(3, calibrated=True, was="NEWSDEDUP_ARTICLES_ATTEMPTS", bounds=(1, 20),
                                doc="hours a page whose fetch failed for a passing reason (timeout, 5xx, "
                                    "Retry-After) is tried in, one attempt per hour")
    retry_hours: int = setting(24, calibrated=True, was="NEWSDEDUP_ARTICLES_RETRY_HOURS", bounds=(0, 720),
                               doc="items of this many hours before H are still fetched (retries, pages the "
                                   "hour cap left out)")
    robots_cache_hours: float = setting(24.0, calibrated=True, was="NEWSDEDUP_ARTICLES_ROBOTS_HOURS", bounds=(0.0, 24.0),
                                        doc="hours a host's robots.txt is kept before it is fetched again "
                                            "(RFC 9309: at most 24)")
    max_robots_bytes: int = setting(512 * KIB, calibrated=True, was="NEWSDEDUP_ARTICLES_ROBOTS_MAX_BYTES",
                                    bounds=(1024, 10 * MIB),
                                    doc="robots.txt size cap (RFC 9309 asks parsers to read at least 500 KiB); "
                                        "a larger one counts as unavailable: nothing on the host is fetched")
    extract_timeout: float = setting(10.0, calibrated=True, was="NEWSDEDUP_ARTICLES_EXTRACT_TIMEOUT", bounds=(0.1, 600.0),
                                     doc="seconds to extract one page (in a worker process, stopped on expiry)")
    min_words: int = setting(25, calibrated=True, was="NEWSDEDUP_ARTICLES_MIN_WORDS", bounds=(1, 10_000),
                             doc="fewer extracted words than this: the page counts as `extraction_empty`")
    max_text_chars: int = setting(100_000, calibrated=True, was="NEWSDEDUP_ARTICLES_MAX_TEXT_CHARS", bounds=(100, 1_000_000),
                                  doc="characters of main text kept (cut at a paragraph)")
    keep_html: bool = setting(False, env="NEWSDEDUP_ARTICLES_KEEP_HTML",
                              doc="also keep the fetched page (gzip) until retention removes it; off: the page "
                                  "is dropped once its text is extracted")
