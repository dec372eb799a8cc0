"""The two LLM stages as plain functions over a psycopg connection (the Dagster assets are thin
wrappers in assets/llm.py; tests and scripts can call these directly).

`run_scoring(conn, hour, settings, client, ...)`:
  1. marks stories changed in H that must be rescored (llm_mark_rescore; the rule is
     scoring.needs_rescore: grew >= 50 % and >= 2 items; offline-only scores once online),
  2. scores every story with needs_score = 1 changed in H or earlier (biggest first, capped),
     online with the LLM (concurrent calls, each story committed on its own as it returns) or with
     the offline heuristic,
  3. a success writes story_scores, sets needs_score = 0 and scored_item_count, and resets the
     story's translation rows (status 1 online, 2 "skipped: offline fallback" offline);
     an invalid-output / refused failure sets needs_score = -1 (never retried until the story grows
     substantially); a transient failure keeps needs_score = 1 and counts attempts (-1 after
     TRANSIENT_RUNS_BEFORE_GIVING_UP runs' worth), but only when the endpoint answered something in
     the same run: a full outage raises LLMUnavailable (the asset's RetryPolicy) and burns nothing.

`run_translations(conn, hour, settings, client, ...)`: pending (status 1) rows of stories scored in
H or earlier, grouped per story into batches of 2 languages, each batch committed as it returns
(translation.run_batches). It never touches stories.needs_score: a translation failure cannot
re-trigger scoring. The same run translates the briefings' lines (briefing_translations): the
briefings written in the last BRIEFING_SYNC_HOURS up to H get a row per published language for
their current version (a re-briefed story's rows are reset), then the pending rows go in their
own batches (task translation.BRIEFING_TASK), with the same statuses, retries and outage rule.

Every translated line is read against its source line before it is stored (translation.line_problem:
the same numbers, the same names): a story's translation into a language with a line that fails is
given up (-1, the reason as its error: readers keep the story's own text), a briefing's failed line is
stored as null (readers read it in the briefing's language); the run counts both by reason.
"""

from __future__ import annotations

import json
import logging
from collections import Counter, defaultdict
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import psycopg

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.crashpoints import crash_point
from newsdedup_dagster.shared.models import translation
from newsdedup_dagster.shared.models.client import (
    LLMClient,
    LLMConfigError,
    LLMError,
    LLMUnavailable,
    Usage,
    note_error,
)
from newsdedup_dagster.shared.models.settings import LLMSettings
from newsdedup_dagster.stages.llm import scoring

log = logging.getLogger(__name__)

OFFLINE_NOTE = "offline fallback: no NEWSDEDUP_LLM_BASE_URL configured"
# Per run caps: a backlog (first run on a big archive, or after an outage) is worked off over
# several hourly runs instead of one run that outlives its hour. 200 stories x ~2k tokens is
# ~0.4M input tokens, about $0.11 at deepseek-chat's list price (up to twice that when every
# article's page text goes in too).
MAX_STORIES_PER_RUN = 200
MAX_TRANSLATION_ROWS_PER_RUN = 2000
# Briefings written this long before the run's hour still get their translation rows: a run that
# was skipped or failed is caught up by the next one without rescanning every briefing ever written.
BRIEFING_SYNC_HOURS = 48


@dataclass
class ScoringReport:
    hour: datetime
    offline: bool
    marked_for_rescore: int = 0
    candidates: int = 0
    scored: int = 0
    failed_permanent: int = 0
    failed_transient: int = 0
    reused: int = 0            # scores taken from llm_results (no model call)
    capped: int = 0            # significance lowered to what the story's coverage supports
    usage: Usage = field(default_factory=Usage)
    errors: list[str] = field(default_factory=list)   # redacted, at most 10


@dataclass
class TranslationReport:
    hour: datetime
    offline: bool
    skipped_offline: int = 0
    batches: int = 0
    batches_ok: int = 0
    batches_failed_permanent: int = 0
    batches_failed_transient: int = 0
    rows_done: int = 0
    batches_reused: int = 0    # batches taken from llm_results (no model call)
    usage: Usage = field(default_factory=Usage)               # the run's calls, briefings' included
    errors: list[str] = field(default_factory=list)
    # translated headlines and summaries not used, by reason (translation.NUMBERS, translation.NAMES)
    lines_dropped: Counter = field(default_factory=Counter)
    # the briefings' lines, counted apart (usage: their share of `usage`)
    briefing_rows_reset: int = 0       # rows (re)set for a new briefing version, or switched mode
    briefing_batches: int = 0
    briefing_batches_ok: int = 0
    briefing_batches_failed_permanent: int = 0
    briefing_batches_failed_transient: int = 0
    briefing_rows_done: int = 0
    briefing_batches_reused: int = 0
    briefing_usage: Usage = field(default_factory=Usage)
    briefing_lines_dropped: Counter = field(default_factory=Counter)   # translated lines not used, by reason


# ------------------------------------------------------------------ scoring
def load_story_facts(conn: psycopg.Connection, hour: datetime, limit: int) -> list[tuple[scoring.StoryFacts, dict]]:
    """Candidates with their prompt material: [(facts, {story_item_count, score_attempts})]."""
    rows = conn.execute(db.load_sql("llm_score_candidates"), {"hour": hour, "limit": limit}).fetchall()
    if not rows:
        return []
    ids = [r[0] for r in rows]
    articles: dict[str, list[scoring.Article]] = defaultdict(list)
    reps: dict[str, scoring.Article] = {}
    for story_id, item_id, title, summary, lang, source, published, is_rep, page in conn.execute(
        db.load_sql("llm_story_articles"), {"story_ids": ids}
    ):
        art = scoring.Article(title=title or "", summary=summary or "", lang=lang, source=source, published_at=published,
                              item_id=item_id, page_text=page)
        if is_rep and story_id not in reps:
            reps[story_id] = art
        else:
            articles[story_id].append(art)
    appearances: dict[str, list[scoring.Appearance]] = defaultdict(list)
    for story_id, source_id, syndicator, language, outlet, published in conn.execute(
        db.load_sql("llm_story_appearances"), {"story_ids": ids}
    ):
        appearances[story_id].append(scoring.Appearance(source_id, bool(syndicator), language, outlet, published))
    out = []
    for (story_id, item_count, attempts, first, latest, _rep_id, article_count) in rows:
        arts = articles.get(story_id, [])
        rep = reps.get(story_id) or (min(arts, key=lambda a: a.published_at or first) if arts else None)
        coverage = scoring.independent_outlets(appearances.get(story_id, []))
        facts = scoring.StoryFacts(
            story_id=story_id, item_count=int(article_count or item_count or 0),
            source_count=coverage.outlets, languages=coverage.languages,
            first_published_at=first, latest_published_at=latest, representative=rep,
            articles=[a for a in arts if a is not rep],
            outlets_first_at=coverage.first_at, outlets_latest_at=coverage.latest_at)
        out.append((facts, {"story_item_count": item_count, "score_attempts": attempts}))
    return out


def _save_score(conn, facts: scoring.StoryFacts, meta: dict, result: scoring.ScoreResult, model: str,
                hour: datetime, langs: tuple[str, ...], margin: float = scoring.SIGNIFICANCE_MARGIN) -> bool:
    """Store a score. A model's significance is capped by the story's coverage
    (scoring.bound_significance); the model's own figure is kept in model_significance when lowered."""
    significance, model_significance = result.significance, None
    if not result.offline:
        significance = scoring.bound_significance(result.significance, facts, margin)
        model_significance = result.significance if significance < result.significance else None
    params = {
        "story_id": facts.story_id, **{d: result.dims.get(d) for d in scoring.DIMENSIONS},
        "significance": significance, "model_significance": model_significance, "headline": result.headline, "summary": result.summary,
        "pivot_lang": result.pivot_lang, "model": model, "offline": result.offline,
        "article_count": facts.item_count, "languages": facts.languages, "source_count": facts.source_count,
        "hour": hour,
    }
    conn.execute(db.load_sql("llm_score_save"), params)
    conn.execute(db.load_sql("llm_score_done"),
                 {"story_id": facts.story_id, "story_item_count": meta["story_item_count"]})
    targets = [lang for lang in langs if lang != result.pivot_lang]
    conn.execute(db.load_sql("llm_translations_reset"), {
        "story_id": facts.story_id, "langs": targets,
        "status": 2 if result.offline else 1,
        "error": OFFLINE_NOTE if result.offline else None,
    })
    return model_significance is not None


def _fail_score(conn, facts: scoring.StoryFacts, meta: dict, exc: LLMError, max_attempts: int) -> int:
    total = meta["score_attempts"] + exc.attempts
    if exc.permanent or total >= translation.TRANSIENT_RUNS_BEFORE_GIVING_UP * max(1, max_attempts):
        state = -1
    else:
        state = 1
    conn.execute(db.load_sql("llm_score_fail"), {
        "story_id": facts.story_id, "state": state, "attempts": exc.attempts,
        "story_item_count": meta["story_item_count"], "error": str(exc)[:500]})
    return state


def run_scoring(
    conn: psycopg.Connection,
    hour: datetime,
    settings: LLMSettings,
    client: LLMClient | None,
    *,
    max_stories: int = MAX_STORIES_PER_RUN,
) -> ScoringReport:
    """Score partition H (see the module docstring). ``client`` None = offline heuristic."""
    offline = client is None
    report = ScoringReport(hour=hour, offline=offline)
    _idle(conn)
    with conn.transaction():
        report.marked_for_rescore = len(conn.execute(db.load_sql("llm_mark_rescore"), {
            "hour": hour, "min_new": scoring.RESCORE_MIN_NEW_ITEMS, "ratio": scoring.RESCORE_GROWTH_RATIO,
            "online": not offline}).fetchall())
    candidates = load_story_facts(conn, hour, max_stories)
    conn.commit()
    report.candidates = len(candidates)
    if not candidates:
        return report

    if offline:
        _score_offline(conn, hour, settings, candidates, report)
    else:
        transient = _score_with_model(conn, hour, settings, client, candidates, report)
        _settle_transient(conn, settings, transient, report)
    return report


def _score_offline(conn: psycopg.Connection, hour: datetime, settings: LLMSettings, candidates, report) -> None:
    """The coverage heuristic for every candidate, in one transaction."""
    with conn.transaction():
        for facts, meta in candidates:
            _save_score(conn, facts, meta, scoring.offline_score(facts, settings.pivot_lang), scoring.OFFLINE_MODEL,
                        hour, settings.translation_langs)
    report.scored = len(candidates)


def _score_with_model(conn: psycopg.Connection, hour: datetime, settings: LLMSettings, client: LLMClient,
                      candidates, report: ScoringReport) -> list[tuple[scoring.StoryFacts, dict, LLMError]]:
    """Ask the model for every candidate (settings.concurrency calls in flight); each answer commits
    as it returns, a permanent failure is recorded at once. A configuration error stops the run.
    Returns the transient failures, settled by the caller."""
    system = scoring.system_prompt(settings.pivot_lang)
    model = settings.scoring_model

    def work(facts: scoring.StoryFacts):
        return client.complete_json(
            "score", model, system, scoring.user_prompt(facts),
            lambda data: scoring.validate_score(data, settings.pivot_lang),
            story_id=facts.story_id, partition_hour=hour, prompt_version=scoring.PROMPT_VERSION,
            target_langs=(settings.pivot_lang,), input_material=scoring.input_material(facts))

    transient: list[tuple[scoring.StoryFacts, dict, LLMError]] = []
    config_error: LLMConfigError | None = None
    with ThreadPoolExecutor(max_workers=max(1, settings.concurrency), thread_name_prefix="llm-score") as pool:
        futures = {pool.submit(work, facts): (facts, meta) for facts, meta in candidates}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                facts, meta = futures[fut]
                try:
                    result, usage = fut.result()
                except LLMConfigError as exc:
                    config_error = config_error or exc
                    for other in pending:
                        other.cancel()
                    continue
                except LLMError as exc:
                    report.usage.add(exc.usage)
                    note_error(report.errors, f"{facts.story_id}: {exc}")
                    if exc.permanent:
                        with conn.transaction():
                            _fail_score(conn, facts, meta, exc, settings.max_attempts)
                        report.failed_permanent += 1
                    else:
                        transient.append((facts, meta, exc))
                    continue
                report.usage.add(usage)
                with conn.transaction():  # each story commits on its own, as it returns
                    capped = _save_score(conn, facts, meta, result, model, hour, settings.translation_langs,
                                         settings.significance_margin)
                report.scored += 1
                report.reused += usage.reused
                report.capped += capped
                crash_point("story_scores.after_first_commit")
            if config_error is not None:
                pending = {f for f in pending if not f.cancelled()}
    if config_error is not None:
        raise config_error
    return transient


def _settle_transient(conn: psycopg.Connection, settings: LLMSettings, transient, report: ScoringReport) -> None:
    """Transient failures count against their stories only when another story got through."""
    report.failed_transient = len(transient)
    if transient and report.scored == 0 and report.failed_permanent == 0:
        # Nothing got through: an outage, not these stories' fault. Count nothing; let Dagster retry.
        raise LLMUnavailable(f"LLM endpoint unavailable for all {len(transient)} stories: {transient[0][2]}",
                             attempts=transient[0][2].attempts)
    with conn.transaction():
        for facts, meta, exc in transient:
            if _fail_score(conn, facts, meta, exc, settings.max_attempts) == -1:
                report.failed_permanent += 1
                report.failed_transient -= 1


def _idle(conn: psycopg.Connection) -> None:
    """Per-story / per-batch commits need real transactions, not savepoints inside the caller's
    open one: commit whatever the caller left open first."""
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.commit()


# ------------------------------------------------------------------ translation
def run_translations(
    conn: psycopg.Connection,
    hour: datetime,
    settings: LLMSettings,
    client: LLMClient | None,
    *,
    max_rows: int = MAX_TRANSLATION_ROWS_PER_RUN,
) -> TranslationReport:
    offline = client is None
    report = TranslationReport(hour=hour, offline=offline)
    _idle(conn)
    with conn.transaction():
        report.briefing_rows_reset = _sync_briefing_rows(conn, hour, settings, offline)
    if offline:
        with conn.transaction():
            cur = conn.execute(db.load_sql("llm_translations_skip"), {"hour": hour, "reason": OFFLINE_NOTE})
            report.skipped_offline = cur.rowcount
        return report

    rows = conn.execute(db.load_sql("llm_translations_pending"), {"hour": hour, "limit": max_rows}).fetchall()
    conn.commit()
    order = {lang: i for i, lang in enumerate(settings.translation_langs)}
    per_story: dict[str, dict] = {}
    for story_id, lang, attempts, headline, summary, pivot_lang, scored_at in rows:
        entry = per_story.setdefault(story_id, {
            "fields": {"headline": headline, "summary": summary}, "source_lang": pivot_lang,
            "scored_at": scored_at, "langs": [], "attempts": {}})
        entry["langs"].append(lang)
        entry["attempts"][lang] = attempts
    jobs: list[translation.BatchJob] = []
    for story_id, entry in per_story.items():
        langs = sorted(entry["langs"], key=lambda lang: (order.get(lang, len(order)), lang))
        for batch in translation.language_batches(langs):
            jobs.append(translation.BatchJob(
                key=story_id, fields=entry["fields"], langs=batch, source_lang=entry["source_lang"],
                attempts_so_far=max(entry["attempts"][lang] for lang in batch), story_id=story_id,
                extra={"scored_at": entry["scored_at"]}, check=True))
    report.batches = len(jobs)
    briefing_jobs = _briefing_jobs(conn, hour, settings, max_rows, report)
    report.briefing_batches = len(briefing_jobs)
    model = settings.translation_model
    transient: list[translation.BatchOutcome] = []

    def persist(outcome: translation.BatchOutcome) -> None:
        report.usage.add(outcome.usage)
        job = outcome.job
        if job.task == translation.BRIEFING_TASK:
            _persist_briefing(conn, outcome, model, report, transient)
            return
        if outcome.ok:
            _count_drops(outcome, report.lines_dropped, report.errors)
            failed = {drop.lang: drop for drop in reversed(outcome.dropped)}   # a language's first failed line
            langs = [lang for lang in job.langs if lang not in failed]
            with conn.transaction():
                cur = conn.execute(db.load_sql("llm_translation_save"), {
                    "story_id": job.story_id, "langs": langs, "attempts": outcome.answer_attempts, "model": model,
                    "headlines": [outcome.translations[lang]["headline"] for lang in langs],
                    "summaries": [outcome.translations[lang]["summary"] for lang in langs],
                    "scored_at": job.extra["scored_at"]})
                for lang, drop in failed.items():
                    conn.execute(db.load_sql("llm_translation_fail"), {
                        "story_id": job.story_id, "langs": [lang], "status": -1, "attempts": outcome.answer_attempts,
                        "model": model, "error": f"{drop.reason}: {drop.field}: {drop.detail}"[:500],
                        "scored_at": job.extra["scored_at"]})
            report.batches_ok += 1
            report.batches_reused += outcome.usage.reused
            report.rows_done += cur.rowcount
            crash_point("story_translations.after_first_batch")
            return
        note_error(report.errors, f"{job.story_id} {'/'.join(job.langs)}: {outcome.error}")
        if outcome.error.permanent:
            _fail_translation(conn, outcome, -1, model)
            report.batches_failed_permanent += 1
        else:
            transient.append(outcome)

    # Every headline batch first, then the briefings' lines: headlines are what a reader sees first,
    # and a run stopped among the headline batches has no briefing request in flight.
    successes = translation.run_batches(client, model, jobs, persist, task="translate",
                                        partition_hour=hour, workers=settings.concurrency)
    successes += translation.run_batches(client, model, briefing_jobs, persist, task="translate",
                                         partition_hour=hour, workers=settings.concurrency)
    report.batches_failed_transient = sum(o.job.task != translation.BRIEFING_TASK for o in transient)
    report.briefing_batches_failed_transient = len(transient) - report.batches_failed_transient
    permanent = report.batches_failed_permanent + report.briefing_batches_failed_permanent
    if transient and successes == 0 and permanent == 0:
        raise LLMUnavailable(f"LLM endpoint unavailable for all {len(transient)} translation batches: "
                             f"{transient[0].error}", attempts=transient[0].attempts)
    for outcome in transient:
        status = translation.next_status(outcome, settings.max_attempts)
        briefing = outcome.job.task == translation.BRIEFING_TASK
        (_fail_briefing if briefing else _fail_translation)(conn, outcome, status, model)
        if status == -1 and briefing:
            report.briefing_batches_failed_permanent += 1
            report.briefing_batches_failed_transient -= 1
        elif status == -1:
            report.batches_failed_permanent += 1
            report.batches_failed_transient -= 1
    return report


def _count_drops(outcome: translation.BatchOutcome, counts: Counter, errors: list[str]) -> None:
    """Count a batch's translated lines that failed their check, by reason, and note what failed."""
    for drop in outcome.dropped:
        counts[drop.reason] += 1
        note_error(errors, f"{outcome.job.story_id} {drop.lang} {drop.field}: {drop.reason}: {drop.detail}")


def _fail_translation(conn, outcome: translation.BatchOutcome, status: int, model: str) -> None:
    job = outcome.job
    with conn.transaction():
        conn.execute(db.load_sql("llm_translation_fail"), {
            "story_id": job.story_id, "langs": list(job.langs), "status": status,
            "attempts": outcome.attempts, "model": model, "error": str(outcome.error)[:500],
            "scored_at": job.extra["scored_at"]})


# ------------------------------------------------------------------ briefing translation
def briefing_langs(settings: LLMSettings) -> list[str]:
    """The languages a briefing is shown in (the site's: pivot and translation languages)."""
    return list(dict.fromkeys([settings.pivot_lang, *settings.translation_langs]))


def _sync_briefing_rows(conn: psycopg.Connection, hour: datetime, settings: LLMSettings, offline: bool) -> int:
    cur = conn.execute(db.load_sql("briefing_translations_sync"), {
        "hour": hour, "since": hour - timedelta(hours=BRIEFING_SYNC_HOURS), "langs": briefing_langs(settings),
        "status": 2 if offline else 1, "error": OFFLINE_NOTE if offline else None})
    return cur.rowcount


def _briefing_jobs(conn: psycopg.Connection, hour: datetime, settings: LLMSettings, max_rows: int,
                   report: TranslationReport) -> list[translation.BatchJob]:
    """One job per story and 2 languages for the pending briefing rows; a briefing without a line to
    translate is done at once (nothing to ask)."""
    rows = conn.execute(db.load_sql("briefing_translations_pending"), {"hour": hour, "limit": max_rows}).fetchall()
    conn.commit()
    if len(rows) == max_rows and len({r[0] for r in rows}) > 1:
        # The cap may cut the last story's languages mid-pair: it waits for the next run whole, so
        # its requests are those a run without the cap would make.
        rows = [r for r in rows if r[0] != rows[-1][0]]
    order = {lang: i for i, lang in enumerate(briefing_langs(settings))}
    per_story: dict[str, dict] = {}
    for story_id, lang, attempts, briefing, source_lang, material, briefing_md5 in rows:
        entry = per_story.setdefault(story_id, {
            "fields": translation.briefing_fields(briefing or {}), "names": translation.briefing_names(briefing or {}),
            "source_lang": source_lang or "und",
            "extra": {"material": material, "briefing_md5": briefing_md5}, "langs": [], "attempts": {}})
        entry["langs"].append(lang)
        entry["attempts"][lang] = attempts
    jobs: list[translation.BatchJob] = []
    for story_id, entry in per_story.items():
        langs = sorted(entry["langs"], key=lambda lang: (order.get(lang, len(order)), lang))
        if not entry["fields"]:
            with conn.transaction():
                report.briefing_rows_done += _save_briefing(conn, story_id, langs, {lang: {} for lang in langs},
                                                            0, None, entry["extra"])
            continue
        # The pairs are cut from every language the briefing is shown in, not from those still
        # pending: a batch is saved whole, so a rerun after a crash asks the same requests as a run
        # that never stopped (and reuses their stored answers).
        shown = [lang for lang in order if lang != entry["source_lang"]]
        shown += [lang for lang in langs if lang not in shown]      # a language no longer configured
        for pair in translation.language_batches(shown):
            batch = tuple(lang for lang in pair if lang in entry["attempts"])
            if not batch:
                continue
            jobs.append(translation.BatchJob(
                key=story_id, fields=entry["fields"], langs=batch, source_lang=entry["source_lang"],
                attempts_so_far=max(entry["attempts"][lang] for lang in batch), story_id=story_id,
                extra=entry["extra"], task=translation.BRIEFING_TASK, exact=True, check=True,
                names=entry["names"]))
    return jobs


def _save_briefing(conn, story_id: str, langs: list[str], lines: dict[str, dict[str, str]], attempts: int,
                   model: str | None, extra: dict) -> int:
    cur = conn.execute(db.load_sql("briefing_translation_save"), {
        "story_id": story_id, "langs": langs, "attempts": attempts, "model": model,
        "lines": [json.dumps(lines[lang], ensure_ascii=False) for lang in langs], **extra})
    return cur.rowcount


def _persist_briefing(conn, outcome: translation.BatchOutcome, model: str, report: TranslationReport,
                      transient: list[translation.BatchOutcome]) -> None:
    job = outcome.job
    report.briefing_usage.add(outcome.usage)
    if outcome.ok:
        # A failed line is saved as null: the reader reads it in the briefing's language.
        _count_drops(outcome, report.briefing_lines_dropped, report.errors)
        with conn.transaction():
            report.briefing_rows_done += _save_briefing(conn, job.story_id, list(job.langs), outcome.translations,
                                                        outcome.answer_attempts, model, job.extra)
        report.briefing_batches_ok += 1
        report.briefing_batches_reused += outcome.usage.reused
        return
    note_error(report.errors, f"{job.story_id} briefing {'/'.join(job.langs)}: {outcome.error}")
    if outcome.error.permanent:
        _fail_briefing(conn, outcome, -1, model)
        report.briefing_batches_failed_permanent += 1
    else:
        transient.append(outcome)


def _fail_briefing(conn, outcome: translation.BatchOutcome, status: int, model: str) -> None:
    job = outcome.job
    with conn.transaction():
        conn.execute(db.load_sql("briefing_translation_fail"), {
            "story_id": job.story_id, "langs": list(job.langs), "status": status,
            "attempts": outcome.attempts, "model": model, "error": str(outcome.error)[:500], **job.extra})
