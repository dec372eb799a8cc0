"""LLM stage assets: story_scores[H] and story_translations[H] (hourly), plus the "llm" resource.

    stories -> story_scores -> story_translations

The work is in newsdedup_dagster/stages/llm/stages.py; these assets open a connection, build the client
from `LLMResource`, and turn the stage reports into metadata (a markdown table of the partition's
top stories, token and cost totals, and a plain "offline fallback" note when no endpoint is set).
"""

import threading

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetSpec,
    MarkdownMetadataValue,
    MaterializeResult,
    MetadataValue,
)

from newsdedup_dagster.assets.common import OWNERS, ROW_COUNT, HourlyStage, HourRun, hourly_check, table
from newsdedup_dagster.partitions import HOURLY_PARTITIONS, hour_start
from newsdedup_dagster.resources import LLMResource
from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.models.client import Usage, redact
from newsdedup_dagster.shared.models.settings import LLMSettings
from newsdedup_dagster.shared.models.translation import BRIEFING_TASK as BRIEFING_TRANSLATION_TASK
from newsdedup_dagster.stages.briefings.model import TASK as BRIEFING_TASK
from newsdedup_dagster.stages.briefings.store import BriefingReport, brief_hour
from newsdedup_dagster.stages.embeddings.providers import make_embedder
from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings
from newsdedup_dagster.stages.llm import report as llm_report
from newsdedup_dagster.stages.llm.stages import OFFLINE_NOTE, run_scoring, run_translations

__all__ = ["LLMResource", "STORY_SCORES", "STORY_TRANSLATIONS"]  # LLMResource lives in resources.py


# A whole-endpoint outage (run_* raise LLMUnavailable only when nothing got through) is retried by the
# hourly op's retry policy (assets/hourly.py); per-call retries live in the client.
TOP_STORIES_IN_METADATA = 10


def _secrets(settings: LLMSettings) -> tuple[str, ...]:
    return tuple(s for s in (settings.api_key,) if s)


def _scrub(metadata: dict, secrets: tuple) -> dict:
    """Defence in depth: no metadata value may carry the key, whatever a provider echoed."""
    clean = {}
    for key, value in metadata.items():
        if isinstance(value, str):
            value = redact(value, secrets)
        elif isinstance(value, MarkdownMetadataValue):
            value = MetadataValue.md(redact(value.value, secrets))
        clean[key] = value
    return clean


def _usage_metadata(usage: Usage) -> dict:
    return {
        "llm_calls": usage.calls, "llm_attempts": usage.attempts,
        "tokens_in": usage.tokens_in, "tokens_out": usage.tokens_out, "tokens_cached": usage.tokens_cached,
        "cost_usd": MetadataValue.float(float(usage.cost_usd)),
        # answers reused from llm_results (same articles, model, prompt version, languages): no call, no cost
        "llm_reused": usage.reused,
        "cost_saved_usd": MetadataValue.float(float(usage.saved_usd)),
    }


def _counts(counter) -> str:
    return ", ".join(f"{key} {n}" for key, n in sorted(counter.items()))


def _briefing_metadata(briefs: BriefingReport) -> dict:
    """The briefings' own counts and costs, apart from the scores' (`tokens_in`, `cost_usd`, ...)."""
    usage = briefs.usage
    return {
        "briefings_by_method": MetadataValue.json({"extractive": briefs.methods["extractive"],
                                                   "model": briefs.methods["model"]}),
        # stories a model was asked about; calls that reached it (a reused answer is no call)
        "briefing_model_requests": briefs.model_requests,
        "briefing_model_calls": usage.calls,
        "briefing_model_attempts": usage.attempts,
        "briefing_reused": usage.reused,
        # extractive instead of the model's: invalid_output, refused, unavailable, unhandled,
        # unexpected, nothing_checked (no line passed), budget (beyond the run's cap of calls)
        "briefing_fallbacks": MetadataValue.json(dict(sorted(briefs.fallbacks.items()))),
        "briefing_tokens_in": usage.tokens_in,
        "briefing_tokens_out": usage.tokens_out,
        "briefing_tokens_cached": usage.tokens_cached,
        "briefing_cost_usd": MetadataValue.float(float(usage.cost_usd)),
    }


def _partition_totals_md(conn, hour, tasks: list[str]) -> str:
    rows = conn.execute(db.load_sql("llm_partition_totals"), {"hour": hour, "tasks": tasks}).fetchall()
    if not rows:
        return "_no LLM calls recorded for this partition_"
    lines = ["| task | calls | failed | reused | tokens in | tokens out | cost (USD) |", "|---|---|---|---|---|---|---|"]
    for task, calls, failed, reused, tin, tout, cost in rows:
        lines.append(f"| {task} | {calls} | {failed} | {reused} | {tin} | {tout} | {float(cost):.6f} |")
    return "\n".join(lines)


def _mode(settings: LLMSettings, model: str) -> str:
    return "offline fallback (no NEWSDEDUP_LLM_BASE_URL configured)" if settings.offline else f"llm: {model}"


STORY_SCORES_CHECKS = (
    hourly_check("scored_stories_have_scores", asset="story_scores", blocking=True,
                   description="Every story of the partition marked scored (needs_score = 0) has a story_scores row."),
    hourly_check("partition_fully_scored", asset="story_scores",
                   description="No story changed in the partition is still waiting for a score (warn: leftovers "
                               "after transient failures are retried next run)."),
)

STORY_SCORES_SPEC = AssetSpec(
    "story_scores",
    partitions_def=HOURLY_PARTITIONS,
    deps=["raw_items", "item_duplicates", "article_texts", "stories"],
    group_name="llm",
    owners=OWNERS,
    kinds={"openai", "postgres"},
    skippable=True,
    description="Significance (6 dimensions + overall), rewritten headline and 2-3 sentence summary per "
                "story new or substantially changed in the hour; offline heuristic without an endpoint. Then a "
                "briefing (category, summary, key points, quotes with their speakers, perspectives, "
                "background and what to watch, players and places, each line citing the story's articles) for "
                "every story whose articles or pages changed: one model call per story, given the earlier "
                "stories of its event as `events` grouped them up to the previous hour (a read of events' "
                "earlier hours the graph cannot declare), every line checked against what it cites, "
                "extractive from the articles' text offline or when the call fails.",
)


class _LazyEmbed:
    """The multilingual e5 embedder, loaded on the first line that needs it (a model's line citing an
    article in another language): most hours brief offline or in one language and never load it. e5
    whatever the run embeds with: the support bar across languages is e5's (stages/briefings/support.py)."""

    def __init__(self):
        self.embedder = None
        self.loading = threading.Lock()     # the briefing calls run in threads: one load

    def __call__(self, texts: list[str]):
        with self.loading:
            if self.embedder is None:
                self.embedder = make_embedder(EmbeddingSettings(provider="e5"))
        return self.embedder.embed(texts)


def story_scores_hour(run: HourRun, partition_key: str) -> MaterializeResult:
    postgres, llm = run.postgres, run.llm
    hour = hour_start(partition_key)
    settings = llm.settings()
    url = postgres.url()
    with postgres.connection() as conn, llm.client(url) as client:
        rep = run_scoring(conn, hour, settings, client, max_stories=llm.max_stories_per_run)
        conn.commit()
        # The model's briefing where a client is configured, else (or when its call fails) the
        # extractive one; every line checked against the story's articles.
        briefs = brief_hour(conn, hour, settings.pivot_lang, client, model=settings.scoring_model,
                            max_calls=llm.max_stories_per_run, embed=_LazyEmbed())
        conn.commit()
        top = llm_report.top_stories(conn, limit=TOP_STORIES_IN_METADATA, hour=hour)
        totals_md = _partition_totals_md(conn, hour, ["score", BRIEFING_TASK])
        orphans, waiting = conn.execute(db.load_sql("llm_score_backlog"), {"hour": hour}).fetchone()
        stored_scored, stored_briefed = conn.execute(db.load_sql("llm_hour_stored"), {"hour": hour}).fetchone()
        conn.commit()
    mode = _mode(settings, settings.scoring_model)
    if rep.offline:
        run.log.warning("story_scores[%s]: %s; %d stories scored with the heuristic",
                            partition_key, OFFLINE_NOTE, rep.scored)
    run.log.info("story_scores[%s]: %d candidates, %d scored, %d failed permanently, %d pending (transient)",
                     partition_key, rep.candidates, rep.scored, rep.failed_permanent, rep.failed_transient)
    run.log.info("story_scores[%s]: %d briefed (%s), %d model calls, fallbacks %s",
                 partition_key, briefs.briefed, _counts(briefs.methods), briefs.usage.calls,
                 _counts(briefs.fallbacks) or "none")
    metadata = {
        ROW_COUNT: rep.scored,
        "mode": mode,
        "offline_fallback": rep.offline,
        "candidates": rep.candidates,
        "rescore_marked": rep.marked_for_rescore,
        "scored": rep.scored,
        "failed_permanent": rep.failed_permanent,
        "failed_transient": rep.failed_transient,
        "reused": rep.reused,
        "significance_capped": rep.capped,
        "top_stories": MetadataValue.md(llm_report.top_stories_markdown(top)),
        "briefed": briefs.briefed,
        "briefings_with_points": briefs.with_points,
        "briefings_with_quotes": briefs.with_quotes,
        "briefing_articles_from_pages": briefs.from_pages,
        "briefing_categories": MetadataValue.json(dict(sorted(briefs.categories.items()))),
        "briefing_lines_dropped": MetadataValue.json(dict(sorted(briefs.dropped.items()))),
        "briefing_seconds": MetadataValue.float(round(briefs.seconds, 3)),
        **_briefing_metadata(briefs),
        **_usage_metadata(rep.usage),
        "partition_llm_totals": MetadataValue.md(totals_md),
    }
    if not (rep.candidates or rep.marked_for_rescore or briefs.briefed) and (stored_scored or stored_briefed):
        # A rerun with nothing to do: the hour's figures as stored, not this run's zeros, and saying so
        # ("briefed" and the call counts stay this run's: no briefing was written, no model asked).
        metadata.update({ROW_COUNT: stored_scored, "scored": stored_scored, "briefings_stored": stored_briefed,
                         "unchanged": f"unchanged: {stored_scored} stories scored earlier"})
    if rep.errors:
        metadata["errors"] = MetadataValue.md(llm_report.errors_markdown(rep.errors, _secrets(settings)))
    if briefs.errors:
        metadata["briefing_errors"] = MetadataValue.md(llm_report.errors_markdown(briefs.errors, _secrets(settings)))
    return MaterializeResult(
        metadata=_scrub(metadata, _secrets(settings)),
        check_results=[
            AssetCheckResult(check_name="scored_stories_have_scores", passed=orphans == 0,
                             metadata={"stories_without_score_row": orphans}),
            AssetCheckResult(check_name="partition_fully_scored", passed=waiting == 0,
                             severity=AssetCheckSeverity.WARN, metadata={"stories_waiting": waiting}),
        ],
    )


def _briefing_translation_metadata(rep, status_rows, names: dict[int, str]) -> dict:
    """The briefings' lines apart from the headlines' (the stage's totals, `cost_usd`, hold both)."""
    usage = rep.briefing_usage
    return {
        "briefing_rows_reset": rep.briefing_rows_reset,
        "briefing_batches": rep.briefing_batches,
        "briefing_batches_ok": rep.briefing_batches_ok,
        "briefing_batches_failed_permanent": rep.briefing_batches_failed_permanent,
        "briefing_batches_failed_transient": rep.briefing_batches_failed_transient,
        "briefing_rows_translated": rep.briefing_rows_done,
        "briefing_batches_reused": rep.briefing_batches_reused,
        # translated lines not used (the reader reads the line in the briefing's language), by reason:
        # translation_numbers (a number added, changed or lost), translation_names (a name lost)
        "briefing_translation_lines_dropped": MetadataValue.json(dict(sorted(rep.briefing_lines_dropped.items()))),
        # the rows of the briefings written in this hour, by status
        "briefing_translation_status": MetadataValue.json({names.get(status, str(status)): n
                                                           for status, n in status_rows}),
        "briefing_translation_calls": usage.calls,
        "briefing_translation_tokens_in": usage.tokens_in,
        "briefing_translation_tokens_out": usage.tokens_out,
        "briefing_translation_cost_usd": MetadataValue.float(float(usage.cost_usd)),
    }


STORY_TRANSLATIONS_CHECKS = (
    hourly_check("translation_rows_complete", asset="story_translations",
                   description="Every story scored in the partition has a translation row per configured language."),
)

STORY_TRANSLATIONS_SPEC = AssetSpec(
    "story_translations",
    partitions_def=HOURLY_PARTITIONS,
    deps=["story_scores"],
    group_name="llm",
    owners=OWNERS,
    kinds={"openai", "postgres"},
    skippable=True,
    description="Headline and summary of the hour's scored stories in the configured languages, "
                "2 languages per call, each batch committed on its own; then the lines of each new or "
                "changed briefing (summary, key points; never the quotes) in every published language, "
                "the same way in their own calls. Skipped offline.",
)


def story_translations_hour(run: HourRun, partition_key: str) -> MaterializeResult:
    postgres, llm = run.postgres, run.llm
    hour = hour_start(partition_key)
    settings = llm.settings()
    url = postgres.url()
    with postgres.connection() as conn, llm.client(url) as client:
        rep = run_translations(conn, hour, settings, client, max_rows=llm.max_translation_rows_per_run)
        status_rows = conn.execute(db.load_sql("llm_translation_status"), {"hour": hour}).fetchall()
        totals_md = _partition_totals_md(conn, hour, ["translate", BRIEFING_TRANSLATION_TASK])
        missing = conn.execute(db.load_sql("llm_translations_missing"),
                               {"langs": list(settings.translation_langs), "hour": hour}).fetchone()[0]
        briefing_status = conn.execute(db.load_sql("briefing_translation_status"), {"hour": hour}).fetchall()
        conn.commit()
    names = {1: "pending", 0: "done", -1: "failed", 2: "skipped (offline)"}
    by_lang: dict[str, dict[str, int]] = {}
    for lang, status, n in status_rows:
        by_lang.setdefault(lang, {})[names.get(status, str(status))] = n
    status_table = table(
        ({"lang": lang, "done": by_lang[lang].get("done", 0), "pending": by_lang[lang].get("pending", 0),
          "failed": by_lang[lang].get("failed", 0), "skipped_offline": by_lang[lang].get("skipped (offline)", 0)}
         for lang in sorted(by_lang, key=lambda x: (settings.translation_langs + (x,)).index(x))),
        ["lang", "done", "pending", "failed", "skipped_offline"])
    if rep.offline:
        run.log.warning("story_translations[%s]: %s; %d translations reported as skipped",
                            partition_key, OFFLINE_NOTE, rep.skipped_offline)
    run.log.info("story_translations[%s]: briefings: %d batches, %d ok, %d failed permanently, %d pending (transient)",
                 partition_key, rep.briefing_batches, rep.briefing_batches_ok, rep.briefing_batches_failed_permanent,
                 rep.briefing_batches_failed_transient)
    metadata = {
        ROW_COUNT: rep.rows_done,
        "mode": _mode(settings, settings.translation_model),
        "offline_fallback": rep.offline,
        "languages": ", ".join(settings.translation_langs),
        "skipped_offline": rep.skipped_offline,
        "batches": rep.batches,
        "batches_ok": rep.batches_ok,
        "batches_failed_permanent": rep.batches_failed_permanent,
        "batches_failed_transient": rep.batches_failed_transient,
        "rows_translated": rep.rows_done,
        "batches_reused": rep.batches_reused,
        # translated headlines and summaries not used (that language's translation given up), by reason
        "translation_lines_dropped": MetadataValue.json(dict(sorted(rep.lines_dropped.items()))),
        "status_by_language": status_table,
        **_briefing_translation_metadata(rep, briefing_status, names),
        **_usage_metadata(rep.usage),
        "partition_llm_totals": MetadataValue.md(totals_md),
    }
    if rep.errors:
        metadata["errors"] = MetadataValue.md(llm_report.errors_markdown(rep.errors, _secrets(settings)))
    return MaterializeResult(
        metadata=_scrub(metadata, _secrets(settings)),
        check_results=[AssetCheckResult(check_name="translation_rows_complete", passed=missing == 0,
                                        severity=AssetCheckSeverity.WARN,
                                        metadata={"missing_rows": missing})],
    )


STORY_SCORES = HourlyStage(STORY_SCORES_SPEC, STORY_SCORES_CHECKS, story_scores_hour)
STORY_TRANSLATIONS = HourlyStage(STORY_TRANSLATIONS_SPEC, STORY_TRANSLATIONS_CHECKS, story_translations_hour)
