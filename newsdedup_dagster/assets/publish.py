"""`story_feeds` (hourly): the deduplicated stories as an Atom feed and a JSON Feed per language
and a static site (today's index, a page per story and per event), written atomically into
NEWSDEDUP_PUBLISH_DIR. Thin: the rules live in newsdedup_dagster/stages/publish/.

A run over several hours writes the directory at the last hour of each UTC day of its range and at
its last hour; each hour between is computed and recorded as an hourly run records it, its files
held for that hour (stages/publish/files.py), and its materialisation names the hour that wrote
them (`written_by`).
"""

from datetime import UTC, datetime

from dagster import AssetSpec, MaterializeResult, MetadataValue
from pydantic import Field

from newsdedup_dagster import config as app_config
from newsdedup_dagster.assets.common import OWNERS, HourlyStage, HourRun
from newsdedup_dagster.assets.run_options import RunOptions, language_type
from newsdedup_dagster.partitions import HOURLY_PARTITIONS, hour_start
from newsdedup_dagster.stages.publish.build import PublishResult, publish_hour
from newsdedup_dagster.stages.publish.files import writing_hours


class StoryFeedsConfig(RunOptions):
    """Per-run overrides (launchpad); unset fields come from NEWSDEDUP_PUBLISH_* env vars. The
    directory is the deployment's (NEWSDEDUP_PUBLISH_DIR), never chosen at launch."""

    langs: list[language_type()] | None = Field(  # type: ignore[valid-type]
        None, description="languages this deployment publishes; unset: every feed language")
    # Write even when the directory already holds a newer hour (normally a backfill is skipped).
    force: bool = Field(False, description="true or false")

    @classmethod
    def run_languages(cls, llm_settings) -> tuple[str, ...]:
        # The pivot and translation languages come from the llm resource, as for story_scores.
        return app_config.publish_settings().feed_langs(llm_settings)


STORY_FEEDS_SPEC = AssetSpec(
    "story_feeds",
    partitions_def=HOURLY_PARTITIONS,
    # The tables its hour reads (tests/test_hourly_lineage.py).
    deps=["raw_items", "item_duplicates", "stories", "story_scores", "story_translations", "events"],
    group_name="publish",
    owners=OWNERS,
    kinds={"html", "json"},
    skippable=True,
    description="Atom 1.0 and JSON Feed 1.1 per language (one entry per story, updated in place when the story "
                "grows) and a static reader site, written atomically into the publish directory.",
)


def _publish_plan(run: HourRun, partition_key: str):
    """What publishing the hour takes: the settings, languages, hour, clock and force flag."""
    published = StoryFeedsConfig.run_languages(run.llm.settings())
    config = run.options.story_feeds
    langs = list(dict.fromkeys(config.langs or published))
    return app_config.publish_settings(), langs, hour_start(partition_key), datetime.now(UTC), config.force


def writing_hour(run_hours: list[str], partition_key: str) -> str:
    """The hour of the run that writes `partition_key`'s files (itself in a one-hour run)."""
    keys = {hour_start(key): key for key in run_hours or [partition_key]}
    return keys[writing_hours(sorted(keys))[hour_start(partition_key)]]


def story_feeds_hour(run: HourRun, partition_key: str) -> MaterializeResult:
    settings, langs, hour, now, force = _publish_plan(run, partition_key)
    writer = writing_hour(list(run.hours), partition_key)
    run.site_files.deferring = writer != partition_key
    with run.postgres.connection() as conn:
        result = publish_hour(conn, hour, settings, langs, now=now, force=force, files=run.site_files)
    return _materialization(run, partition_key, settings, result, writer)


def _materialization(run: HourRun, partition_key: str, settings, result: PublishResult,
                     writer: str) -> MaterializeResult:
    if result.skipped:
        run.log.info("story_feeds %s: skipped: %s", partition_key, result.skipped)
        return MaterializeResult(metadata={"skipped": MetadataValue.text(result.skipped),
                                           "output_dir": MetadataValue.path(str(result.output_dir))})
    counts = result.counts()
    run.log.info("story_feeds %s: %s", partition_key, counts)
    rows = ["| language | feed entries | new | updated | index | feed |", "|---|---|---|---|---|---|"]
    for lang, out in result.languages.items():
        rows.append(f"| {lang} | {out.feed_entries} | {out.new} | {out.updated} | {out.index_stories} "
                    f"| {lang}/atom.xml, {lang}/feed.json |")
    first = next(iter(result.languages.values()), None)
    if writer != partition_key:
        # Recorded as an hourly run records it; its files are written with a later hour's.
        return MaterializeResult(metadata={
            **{k: MetadataValue.int(v) for k, v in counts.items() if k != "files_changed"},
            "written_by": MetadataValue.text(writer),
            "output_dir": MetadataValue.path(str(result.output_dir)),
            "feeds": MetadataValue.md("\n".join(rows)),
            "files": MetadataValue.text(f"held for story_feeds[{writer}], the last hour of its UTC day in this "
                                        "run's range or the range's last hour (written when the run stops, if "
                                        "it stops before)"),
        })
    return MaterializeResult(metadata={
        "written_by": MetadataValue.text(partition_key),
        **{k: MetadataValue.int(v) for k, v in counts.items()},
        "output_dir": MetadataValue.path(str(result.output_dir)),
        "index": MetadataValue.path(str(result.output_dir / "index.html")),
        "atom_feed": MetadataValue.path(str(first.atom_path)) if first else MetadataValue.text("-"),
        "base_url": MetadataValue.url(settings.base_url),
        "feeds": MetadataValue.md("\n".join(rows)),
    })


STORY_FEEDS = HourlyStage(STORY_FEEDS_SPEC, (), story_feeds_hour)
