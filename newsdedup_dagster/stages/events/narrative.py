"""Event narratives in four sections, regenerated as the event grows, and their translations.

Sections (events.narrative jsonb): what_happened, background, how_it_developed, what_to_watch.

- With an LLM endpoint (NEWSDEDUP_LLM_BASE_URL): the narrative model rewrites the narrative from
  the event's timeline (stories in time order: date, headline, summary, sources, languages)
  with the *previous* narrative as context, so the text evolves instead of restarting.
- Offline (no endpoint), or when the LLM fails permanently and there is no earlier narrative:
  an extractive narrative made of the stories' own headlines and summaries in time order,
  stored with narrative_offline = true and narrative_model = 'offline-extractive' (the digest
  labels it as such). Its own words ("First reported ...", the counts, "The event stays open
  ...") are written in each reader's language when it is shown: the stored narrative keeps, under
  FACTS, what they say (dates, counts, languages, the stories' headlines with their languages),
  and `narrative_lines` writes the four sections in any of the narrative languages (PHRASES),
  each line a sequence of runs (the product's words, dates, the stories' text in its language)
  so that a page or a mail can isolate every run of another language or direction.

Cost bound: an event is regenerated only when it gained stories (needs_narrative = 1) and at
most once per narrative.interval_hours of *partition* time (so backfills regenerate
at the same points a live run would), and at most narrative.max_per_run per run, most
significant first.

Translations into config.LLMSettings.narrative_langs (16 by default) use the LLM client's
llm.translation (two languages per call, each batch committed as it returns, status
1 / 0 / -1 / 2 exactly as story_translations).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import psycopg
from psycopg.types.json import Jsonb

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.crashpoints import crash_point
from newsdedup_dagster.shared.models.client import LLMConfigError, LLMError, OutputInvalid
from newsdedup_dagster.shared.models.settings import LLMSettings
from newsdedup_dagster.shared.models.translation import (
    TRANSIENT_RUNS_BEFORE_GIVING_UP,
    BatchJob,
    language_batches,
    next_status,
    run_batches,
)
from newsdedup_dagster.shared.presentation.narrative import FACTS, narrative_lines, plain
from newsdedup_dagster.stages.events.settings import NarrativeSettings

log = logging.getLogger(__name__)

SECTIONS = ("what_happened", "background", "how_it_developed", "what_to_watch")
OFFLINE_MODEL = "offline-extractive"
# A section longer than this is a runaway reply, not a digest paragraph (the prompt asks for
# 2-4 sentences, ~600 characters in Latin scripts).
SECTION_MAX = 1500
TITLE_MAX = 120
# How many timeline entries the prompt and the extractive "how it developed" carry: the last
# ones matter most; older ones are what the previous narrative already summarises.
TIMELINE_MAX = 12

# Part of every stored answer's key (shared/models/cache.py): bump it when the meaning of an answer changes.
PROMPT_VERSION = "narrative-v1"
SYSTEM_PROMPT = """You are a news editor who keeps a running explainer for a multi-day news event.
The user message is a JSON object with "output_language", "event_title", "previous_narrative" (null the first time)
and "timeline" (the event's stories in time order: date, headline, summary, sources, languages).
Update the explainer so it covers every story in the timeline, keeping what is still true from the previous narrative.
Be factual and neutral; use only facts from the timeline and the previous narrative; keep names, numbers and dates exact.
Reply with a single JSON object and nothing else:
{"title": "<short event title, at most 90 characters>",
 "what_happened": "<2-4 sentences: the core news>",
 "background": "<2-4 sentences: context needed to understand it>",
 "how_it_developed": "<2-4 sentences: how the story moved over the days, with dates>",
 "what_to_watch": "<1-3 sentences: next steps or open questions mentioned in the reporting>"}
Write every value in the output language. Output JSON only."""


# ------------------------------------------------------------------ pure parts
@dataclass(frozen=True)
class TimelineStory:
    story_id: str
    first_published_at: datetime
    headline: str
    summary: str
    lang: str | None = None
    significance: float | None = None
    sources: int = 1
    languages: tuple[str, ...] = ()


def due_for_regeneration(needs_narrative: int, narrative_partition: datetime | None, hour: datetime,
                         interval_hours: float, offline: bool) -> bool:
    """Regenerate when the event gained stories, and (LLM only) the last generation is at least
    `interval_hours` of partition time old. Offline narratives cost nothing: always refreshed.
    -1 (a permanent LLM failure) is never retried automatically."""
    if needs_narrative != 1:
        return False
    if offline or narrative_partition is None:
        return True
    return hour - narrative_partition >= timedelta(hours=interval_hours)


def _sentence(text: str) -> str:
    text = " ".join((text or "").split())
    return text if not text or text[-1] in ".!?。！？" else text + "."








def _story_fact(s: TimelineStory, with_summary: bool = False) -> dict:
    fact = {"at": s.first_published_at.astimezone(UTC).isoformat(), "headline": _sentence(s.headline),
            "lang": s.lang if s.lang not in ("und", "mul") else None}
    if with_summary and s.summary and s.summary != s.headline:
        fact["summary"] = _sentence(s.summary)
    return fact


def offline_facts(timeline: list[TimelineStory], quiet_hours: float = 72.0) -> dict:
    """What an extractive narrative says, in no language: the most significant story, the first
    (with its summary when it is the only one), the last TIMELINE_MAX and the latest, with their
    times, headlines and languages; the counts of stories and sources; the articles' languages."""
    if not timeline:
        raise ValueError("an event without stories has no narrative")
    ordered = sorted(timeline, key=lambda s: (s.first_published_at, s.story_id))
    top = max(ordered, key=lambda s: (s.significance if s.significance is not None else -1, -ordered.index(s)))
    entries = ordered[-TIMELINE_MAX:]
    return {
        "top": _story_fact(top, with_summary=True),
        "first": _story_fact(ordered[0], with_summary=len(ordered) == 1),
        "latest": _story_fact(ordered[-1]),
        "timeline": [_story_fact(s) for s in entries],
        "earlier": len(ordered) - len(entries),
        "stories": len(ordered),
        "sources": sum(s.sources for s in ordered),
        "languages": sorted({lang for s in ordered for lang in (s.languages or ((s.lang,) if s.lang else ()))}),
        "quiet_hours": quiet_hours,
    }






def offline_narrative(timeline: list[TimelineStory], quiet_hours: float = 72.0, lang: str = "en") -> dict[str, str]:
    """Extractive narrative as plain text in `lang`: the stories' own headlines and summaries in
    time order (their languages as reported; nothing invented)."""
    lines = narrative_lines(offline_facts(timeline, quiet_hours), lang)
    return {key: plain(runs) for key, runs in lines.items()}


def offline_record(timeline: list[TimelineStory], quiet_hours: float = 72.0, lang: str = "en") -> dict:
    """What is stored for an extractive narrative: its sections in `lang` and, under FACTS, what
    they say, from which a page or a mail writes them in its reader's language."""
    return {**offline_narrative(timeline, quiet_hours, lang), FACTS: offline_facts(timeline, quiet_hours)}


def narrative_prompt(title: str, timeline: list[TimelineStory], previous: dict | None, output_lang: str) -> str:
    ordered = sorted(timeline, key=lambda s: (s.first_published_at, s.story_id))[-TIMELINE_MAX:]
    payload = {
        "output_language": output_lang,
        "event_title": title,
        "previous_narrative": {k: previous[k] for k in SECTIONS if k in previous} if previous else None,
        "timeline": [
            {"date": s.first_published_at.strftime("%Y-%m-%d %H:%M UTC"), "headline": s.headline,
             "summary": s.summary, "sources": s.sources, "languages": list(s.languages)}
            for s in ordered
        ],
    }
    return json.dumps(payload, ensure_ascii=False)


def validate_narrative(data: dict) -> dict[str, str]:
    out: dict[str, str] = {}
    for key in SECTIONS:
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            raise OutputInvalid(f'missing or empty "{key}"')
        value = " ".join(value.split())
        if len(value) > SECTION_MAX:
            raise OutputInvalid(f'"{key}" is {len(value)} characters (max {SECTION_MAX})')
        out[key] = value
    title = data.get("title")
    if isinstance(title, str) and title.strip():
        out["title"] = " ".join(title.split())[:TITLE_MAX]
    return out


def narrative_language(timeline: list[TimelineStory]) -> str:
    """The language of an extractive narrative: the one language of its stories, or 'mul'."""
    langs = {s.lang for s in timeline if s.lang}
    return langs.pop() if len(langs) == 1 else "mul"


# ------------------------------------------------------------------ database parts
@dataclass
class NarrativeResult:
    generated: int = 0
    offline: int = 0
    failed: int = 0
    pending_transient: int = 0
    skipped_interval: int = 0
    translated_batches: int = 0
    failed_batches: int = 0
    translation_rows_skipped: int = 0
    reused: int = 0              # narratives and translation batches reused from llm_results (no model call)
    errors: list[str] = field(default_factory=list)

    def as_metadata(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "errors"} | {"errors": self.errors[:5]}


def _load_timelines(conn: psycopg.Connection, event_ids: list[str]) -> dict[str, list[TimelineStory]]:
    timelines: dict[str, list[TimelineStory]] = {}
    for row in conn.execute(db.load_sql("event_narrative_timeline"), {"event_ids": event_ids}):
        event_id, story_id, first, headline, summary, lang, significance, sources, langs = row
        timelines.setdefault(event_id, []).append(TimelineStory(
            story_id, first, headline or story_id, summary or "", lang,
            float(significance) if significance is not None else None, int(sources or 1), tuple(langs or ())))
    return timelines


def generate_narratives(
    conn: psycopg.Connection,
    hour: datetime,
    llm_settings: LLMSettings | None = None,
    settings: NarrativeSettings | None = None,
    client=None,
    quiet_hours: float = 72.0,
) -> NarrativeResult:
    """(Re)generate the narratives due in this hour. `client` is an llm.client.LLMClient or None
    (offline). Each event commits on its own: a failure of one leaves the others written."""
    llm_settings = llm_settings or LLMSettings()
    settings = settings or NarrativeSettings()
    offline = client is None
    result = NarrativeResult()
    candidates = conn.execute(db.load_sql("event_narrative_due"), {"limit": max(1, settings.max_per_run) * 4}).fetchall()
    conn.commit()
    due = []
    for event_id, title, needs, narrative_partition, previous, attempts, narrative_offline in candidates:
        if due_for_regeneration(needs, narrative_partition, hour, settings.interval_hours, offline):
            due.append((event_id, title, previous if (previous and not narrative_offline) else None, attempts, previous))
        else:
            result.skipped_interval += 1
    due = due[: settings.max_per_run]
    if not due:
        return result
    timelines = _load_timelines(conn, [d[0] for d in due])
    conn.commit()
    langs = tuple(dict.fromkeys(llm_settings.narrative_langs))

    for event_id, title, previous, attempts, any_previous in due:
        timeline = timelines.get(event_id)
        if not timeline:
            continue
        story_count = len(timeline)
        if offline:
            _store(conn, event_id, hour, offline_record(timeline, quiet_hours, llm_settings.pivot_lang),
                   narrative_language(timeline), OFFLINE_MODEL, True, story_count, langs)
            result.offline += 1
            continue

        try:
            data, usage = client.complete_json(
                "narrative", llm_settings.narrative_model, SYSTEM_PROMPT,
                narrative_prompt(title, timeline, previous, llm_settings.pivot_lang), validate_narrative,
                event_id=event_id, partition_hour=hour, max_tokens=1500, prompt_version=PROMPT_VERSION,
                target_langs=(llm_settings.pivot_lang,))
        except LLMConfigError:
            raise
        except LLMError as exc:
            total_attempts = attempts + exc.attempts
            permanent = exc.permanent or total_attempts >= TRANSIENT_RUNS_BEFORE_GIVING_UP * max(1, llm_settings.max_attempts)
            result.errors.append(f"{event_id}: {exc}")
            if permanent:
                result.failed += 1
                if not any_previous:  # the digest must still have something: the extractive one
                    _store(conn, event_id, hour, offline_record(timeline, quiet_hours, llm_settings.pivot_lang),
                           narrative_language(timeline), OFFLINE_MODEL, True, story_count, langs)
                conn.execute(db.load_sql("event_narrative_failed"),
                             {"event_id": event_id, "attempts": total_attempts, "error": str(exc)[:500], "status": -1})
            else:
                result.pending_transient += 1
                conn.execute(db.load_sql("event_narrative_failed"),
                             {"event_id": event_id, "attempts": total_attempts, "error": str(exc)[:500], "status": 1})
            conn.commit()
            continue
        sections = {k: data[k] for k in SECTIONS}
        _store(conn, event_id, hour, sections, llm_settings.pivot_lang, llm_settings.narrative_model, False,
               story_count, langs, llm_title=data.get("title"))
        result.generated += 1
        result.reused += usage.reused
        crash_point("events.after_first_narrative")
    return result


def _store(conn, event_id, hour, sections, lang, model, offline, story_count, langs, llm_title=None) -> None:
    with conn.transaction():
        conn.execute(db.load_sql("event_narrative_store"), {
            "event_id": event_id, "narrative": Jsonb(sections), "lang": lang, "model": model, "offline": offline,
            "hour": hour, "story_count": story_count, "llm_title": llm_title})
        # A new narrative is new content: its translations start over (2 = skipped offline).
        targets = [x for x in langs if x != lang]
        conn.execute(db.load_sql("event_translations_reset"), {
            "event_id": event_id, "langs": targets, "status": 2 if offline else 1})


def translate_narratives(
    conn: psycopg.Connection,
    hour: datetime,
    client,
    llm_settings: LLMSettings | None = None,
    settings: NarrativeSettings | None = None,
    result: NarrativeResult | None = None,
) -> NarrativeResult:
    """Translate pending event narratives (status 1), two languages per call, each batch
    committed as it returns. Transient failures count against the rows only when another batch
    of the same run succeeded (a provider outage must not burn the attempts)."""
    llm_settings = llm_settings or LLMSettings()
    settings = settings or NarrativeSettings()
    result = result or NarrativeResult()
    rows = conn.execute(db.load_sql("event_translations_pending"), {"limit_events": settings.translate_max_events}).fetchall()
    conn.commit()
    by_event: dict[str, dict] = {}
    for event_id, lang, attempts, title, narrative, narrative_lang, generated_at in rows:
        entry = by_event.setdefault(event_id, {"title": title, "narrative": narrative, "source": narrative_lang,
                                               "generated_at": generated_at, "langs": [], "attempts": 0})
        entry["langs"].append(lang)
        entry["attempts"] = max(entry["attempts"], attempts)
    jobs = []
    for event_id, entry in by_event.items():
        fields = {"title": entry["title"], **{k: (entry["narrative"] or {}).get(k, "") for k in SECTIONS}}
        for batch in language_batches(entry["langs"]):
            jobs.append(BatchJob(key=event_id, fields=fields, langs=batch, source_lang=entry["source"] or "en",
                                 attempts_so_far=entry["attempts"], event_id=event_id,
                                 extra={"generated_at": entry["generated_at"]}))
    transient: list = []

    def persist(outcome) -> None:
        job = outcome.job
        if outcome.ok:
            with conn.transaction():
                for lang, values in outcome.translations.items():
                    conn.execute(db.load_sql("event_translation_store"), {
                        "event_id": job.key, "lang": lang, "title": values.get("title"),
                        "narrative": Jsonb({k: values.get(k, "") for k in SECTIONS}),
                        "model": llm_settings.translation_model, "generated_at": job.extra["generated_at"],
                        "attempts": outcome.attempts})
            result.translated_batches += 1
            result.reused += outcome.usage.reused
            return
        result.failed_batches += 1
        result.errors.append(f"{job.key} {','.join(job.langs)}: {outcome.error}")
        if outcome.error.permanent:
            _mark_failed(conn, job, -1, outcome.attempts, str(outcome.error))
        else:
            transient.append(outcome)

    if jobs:
        successes = run_batches(client, llm_settings.translation_model, jobs, persist, task="narrative_translate",
                                partition_hour=hour, workers=max(1, llm_settings.concurrency))
        for outcome in transient:
            if successes:
                _mark_failed(conn, outcome.job, next_status(outcome, llm_settings.max_attempts), outcome.attempts,
                             str(outcome.error))
            else:  # endpoint down for everyone: note the error, keep the attempt budget
                _mark_failed(conn, outcome.job, 1, 0, str(outcome.error))
    return result


def _mark_failed(conn, job, status: int, attempts: int, error: str) -> None:
    with conn.transaction():
        conn.execute(db.load_sql("event_translation_failed"), {
            "event_id": job.key, "langs": list(job.langs), "status": status, "attempts": attempts,
            "error": error[:500], "generated_at": job.extra["generated_at"]})
