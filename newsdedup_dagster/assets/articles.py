"""article_texts[H]: the page of each new canonical item of hour H (and the retries of earlier
hours) fetched once, politely, its main text kept. Thin: the work is in newsdedup_dagster/articles/.

An asset of its own, after the hourly chain's raw_items of the same hour: nothing in the chain
reads it, so a slow site never holds the hour's stories back. A ranged run (a backfill) computes
its hours in time order in one run.
"""

from dagster import AssetExecutionContext, BackfillPolicy, MaterializeResult, MetadataValue, asset

from .. import config
from ..articles.store import articles_hour, user_agent
from ..ingest.sources import load_sources
from ..ingest.store import configs_for
from ..partitions import HOURLY_PARTITIONS, hour_start
from ..resources import PostgresResource
from .common import OWNERS, ROW_COUNT, table


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


@asset(
    name="article_texts",
    deps=["raw_items"],
    partitions_def=HOURLY_PARTITIONS,
    backfill_policy=BackfillPolicy.single_run(),
    group_name="articles",
    owners=OWNERS,
    kinds={"http", "postgres"},
    config_schema={},  # no run option: every limit is the deployment's
    description="Main text of each new canonical item's page (robots.txt honoured, one request at a time per "
                "host, HTML only), with its language, times, byline and canonical link, or why it has none.",
)
def article_texts(context: AssetExecutionContext, postgres: PostgresResource) -> MaterializeResult:
    # One hour, or a backfill's range hour by hour: a page that failed in hour H is retried in H+1.
    keys = sorted(context.partition_keys)
    reports = []
    with postgres.connection() as conn:
        for key in keys:
            report = run_articles(conn, key)
            context.log.info(f"article_texts {key}: {report.extracted} extracted, {report.counts.get('failed', 0)} "
                             f"failed, {report.counts.get('deferred', 0)} deferred"
                             + (f" ({report.skipped})" if report.skipped else ""))
            reports.append(report)
    if len(reports) == 1:
        return MaterializeResult(metadata=articles_metadata(reports[0]))
    return MaterializeResult(metadata={
        "hours": len(reports),
        "extracted": sum(r.extracted for r in reports),
        "failed": sum(r.counts.get("failed", 0) for r in reports),
        "deferred": sum(r.counts.get("deferred", 0) for r in reports),
        ROW_COUNT: sum(sum(r.counts.values()) for r in reports),
    })


ASSETS = [article_texts]
