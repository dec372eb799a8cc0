"""article_texts[H]: the page of each new canonical item of hour H (and the retries of earlier
hours) fetched once, politely, its main text kept. Thin: the work is in newsdedup_dagster/stages/articles/.

A stage of the hourly op, right after raw_items: its cost is bounded per hour (pages, time caps,
one request at a time per host), and a page that failed in hour H is retried in H+1.
"""

from dagster import AssetSpec, MaterializeResult, MetadataValue

from newsdedup_dagster import config
from newsdedup_dagster.assets.common import OWNERS, ROW_COUNT, HourlyStage, HourRun, table
from newsdedup_dagster.partitions import HOURLY_PARTITIONS, READS_PREVIOUS_HOUR, hour_start
from newsdedup_dagster.shared.sources import load_sources
from newsdedup_dagster.stages.articles.store import articles_hour, user_agent
from newsdedup_dagster.stages.ingest.store import configs_for


def run_articles(conn, partition_key: str, *, fetch_live: bool | None = None):
    """One hour of the stage with the deployment's settings (also what tests call)."""
    settings = config.article_settings()
    sources = load_sources(config.sources_file())
    feed_config, _parse = configs_for(config.ingest_settings())
    return articles_hour(conn, hour_start(partition_key), settings=settings, sources=sources, feed_config=feed_config,
                         agent=user_agent(config.contact_url()), fetch_live=fetch_live)


def articles_metadata(report) -> dict:
    return {
        "skipped": report.skipped or "",
        "replayed": report.replayed,
        "candidates": report.candidates,
        "requests": report.requests,
        "robots_fetched": report.robots_fetched,
        "extracted": report.extracted,
        "failed": report.counts.get("failed", 0),
        "deferred": report.counts.get("deferred", 0),
        "words": report.words,
        "seconds": report.seconds,
        "reasons": MetadataValue.json(report.reasons),
        ROW_COUNT: sum(report.counts.values()),
        "pages": table(({"item": o.item_id, "status": o.status, "reason": o.reason, "http_status": o.http_status,
                         "url": o.url, "detail": o.detail} for o in report.rows),
                       ["item", "status", "reason", "http_status", "url", "detail"], limit=100),
    }


ARTICLE_TEXTS_SPEC = AssetSpec(
    "article_texts",
    partitions_def=HOURLY_PARTITIONS,
    deps=["raw_items", "item_duplicates"],
    group_name="articles",
    owners=OWNERS,
    kinds={"http", "postgres"},
    tags=READS_PREVIOUS_HOUR,
    skippable=True,
    description="Main text of each new canonical item's page (robots.txt honoured, one request at a time per "
                "host, HTML only), with its language, times, byline and canonical link, or why it has none. "
                "Reads its own earlier hours: the pages that failed there are retried.",
)


def article_texts_hour(run: HourRun, partition_key: str) -> MaterializeResult:
    with run.postgres.connection() as conn:
        report = run_articles(conn, partition_key)
    run.log.info(f"article_texts {partition_key}: {report.extracted} extracted, {report.counts.get('failed', 0)} "
                 f"failed, {report.counts.get('deferred', 0)} deferred"
                 + (f" ({report.skipped})" if report.skipped else ""))
    return MaterializeResult(metadata=articles_metadata(report))


ARTICLE_TEXTS = HourlyStage(ARTICLE_TEXTS_SPEC, (), article_texts_hour)
