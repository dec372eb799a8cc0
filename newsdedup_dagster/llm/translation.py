"""Translation of short text fields into many languages, two languages per call (pure + client).

Reusable by any stage (stories here; event narratives in the events stage)::

    from newsdedup_dagster.llm.translation import (
        BatchJob, language_batches, run_batches, next_status, translate_fields)

    # one call, one batch:
    out, usage = translate_fields(client, settings.translation_model,
                                  {"title": t, "what_happened": w}, ["fr", "de"],
                                  source_lang="en", task="narrative_translate", event_id="ev1")
    # out == {"fr": {"title": ..., "what_happened": ...}, "de": {...}}

    # many items, per-batch commit (the pattern story_translations uses):
    jobs = [BatchJob(key=ev_id, fields=fields, langs=batch, source_lang="en", attempts_so_far=a, event_id=ev_id)
            for batch in language_batches(pending_langs)]
    def persist(outcome):                       # runs in the calling thread, once per batch, as it returns
        status = next_status(outcome, settings.max_attempts)
        with conn.transaction(): ...            # write outcome.translations (status 0) or status/attempts/error
    run_batches(client, settings.translation_model, jobs, persist, task="narrative_translate",
                partition_hour=hour, workers=settings.concurrency)

Status values (story_translations.status / event_translations.status):
   1 needs translation, 0 done, -1 permanent failure (never retried automatically), 2 skipped (offline).

Rules (`next_status`):
- ok -> 0.
- permanent failure (invalid output after all attempts, or the request refused) -> -1 for every
  language of the batch.
- transient failure (timeouts, 429, 5xx after all attempts) -> stays 1 with its attempts counted;
  -1 once the item has used TRANSIENT_RUNS_BEFORE_GIVING_UP runs' worth of attempts. Callers
  should only count transient failures when the endpoint answered something else in the same run
  (`run_batches` returns whether any batch succeeded), so a provider outage does not burn them.

Why two languages per call: one call per language repeats the source text ten times (input tokens
x10); all ten in one call makes one bad language fail the other nine and produces long outputs
that small models truncate. Two per call keeps retries cheap and outputs short.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .client import LLMClient, LLMConfigError, LLMError, OutputInvalid, Usage
from .scoring import language_name

LANGS_PER_CALL = 2
# Part of every stored answer's key (llm/cache.py): bump it when the meaning of an answer changes.
PROMPT_VERSION = "translate-v1"
# A transient failure (endpoint trouble) is retried on later runs; after this many runs' worth of
# attempts (x settings.max_attempts) the item is given up as -1 so it cannot be retried forever.
TRANSIENT_RUNS_BEFORE_GIVING_UP = 3
# A translation longer than this multiple of its source (+ slack) is a runaway, not a translation.
# CJK -> Latin expands 2-3x in characters; 4x + 80 accepts that and rejects pasted articles.
MAX_EXPANSION = 4.0
EXPANSION_SLACK = 80

SYSTEM_PROMPT = """You are a professional news translator.
The user message is a JSON object with "source_language", "target_languages" and "fields" (name -> text).
Translate every field into every target language, faithfully and neutrally, keeping names, numbers and dates exact.
Reply with a single JSON object and nothing else:
{"translations": {"<language code>": {"<field name>": "<translated text>", ...}, ...}}
Use exactly the language codes and field names given. Output JSON only."""


def language_batches(langs: Sequence[str], size: int = LANGS_PER_CALL) -> list[tuple[str, ...]]:
    """['zh','ja','ko'] -> [('zh','ja'), ('ko',)] in the configured order."""
    langs = list(dict.fromkeys(langs))  # keep order, drop repeats
    return [tuple(langs[i:i + size]) for i in range(0, len(langs), size)]


def translation_prompt(fields: dict[str, str], langs: Sequence[str], source_lang: str) -> str:
    payload = {
        "source_language": f"{source_lang} ({language_name(source_lang)})",
        "target_languages": list(langs),
        "target_language_names": {lang: language_name(lang) for lang in langs},
        "fields": fields,
    }
    return json.dumps(payload, ensure_ascii=False)


def validate_translations(data: dict, fields: dict[str, str], langs: Sequence[str]) -> dict[str, dict[str, str]]:
    translations = data.get("translations")
    if not isinstance(translations, dict):
        raise OutputInvalid('missing "translations" object')
    out: dict[str, dict[str, str]] = {}
    for lang in langs:
        entry = translations.get(lang)
        if not isinstance(entry, dict):
            raise OutputInvalid(f'missing translations for "{lang}"')
        out[lang] = {}
        for name, source in fields.items():
            text = entry.get(name)
            if not isinstance(text, str) or not text.strip():
                raise OutputInvalid(f'missing or empty "{name}" for "{lang}"')
            text = " ".join(text.split())
            if len(text) > MAX_EXPANSION * len(source) + EXPANSION_SLACK:
                raise OutputInvalid(f'"{name}" for "{lang}" is {len(text)} characters, far longer than its source')
            out[lang][name] = text
    return out


def translate_fields(
    client: LLMClient,
    model: str,
    fields: dict[str, str],
    langs: Sequence[str],
    *,
    source_lang: str,
    task: str = "translate",
    story_id: str | None = None,
    event_id: str | None = None,
    partition_hour: datetime | None = None,
) -> tuple[dict[str, dict[str, str]], Usage]:
    """Translate ``fields`` into ``langs`` in ONE call (pass at most LANGS_PER_CALL languages).
    Raises the client's LLMError subclasses on failure."""
    fields = {k: v for k, v in fields.items() if v}
    # Long inputs: allow room for every language's copy of every field.
    budget = int(sum(len(v) for v in fields.values()) * len(langs) * 1.5) + 300
    return client.complete_json(
        task, model, SYSTEM_PROMPT, translation_prompt(fields, langs, source_lang),
        lambda data: validate_translations(data, fields, langs),
        story_id=story_id, event_id=event_id, partition_hour=partition_hour,
        max_tokens=max(800, min(4000, budget)), prompt_version=PROMPT_VERSION, target_langs=tuple(langs),
    )


# ------------------------------------------------------------------ batches
@dataclass
class BatchJob:
    key: str                                  # the item translated (story id, event id)
    fields: dict[str, str]
    langs: tuple[str, ...]
    source_lang: str
    attempts_so_far: int = 0                  # highest attempts among the batch's rows
    story_id: str | None = None
    event_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # caller's bookkeeping (e.g. scored_at guard)


@dataclass
class BatchOutcome:
    job: BatchJob
    translations: dict[str, dict[str, str]] | None
    error: LLMError | None
    usage: Usage

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def attempts(self) -> int:
        return self.error.attempts if self.error is not None else self.usage.attempts


def next_status(outcome: BatchOutcome, max_attempts: int) -> int:
    """0 done, -1 permanent failure, 1 still pending (see the module docstring)."""
    if outcome.ok:
        return 0
    if outcome.error is not None and outcome.error.permanent:
        return -1
    total = outcome.job.attempts_so_far + outcome.attempts
    return -1 if total >= TRANSIENT_RUNS_BEFORE_GIVING_UP * max(1, max_attempts) else 1


def run_batches(
    client: LLMClient,
    model: str,
    jobs: Iterable[BatchJob],
    on_outcome: Callable[[BatchOutcome], None],
    *,
    task: str = "translate",
    partition_hour: datetime | None = None,
    workers: int = 4,
) -> int:
    """Translate every job concurrently; ``on_outcome`` runs in THIS thread as each batch returns,
    so the caller can commit it at once on its own connection (batch 3 failing leaves 1-2 committed
    and 4-5 still running). An LLMConfigError stops the run and is re-raised after the batches in
    flight are handled. Returns the number of successful batches."""
    jobs = list(jobs)
    successes = 0
    config_error: LLMConfigError | None = None

    def work(job: BatchJob) -> BatchOutcome:
        try:
            data, usage = translate_fields(
                client, model, job.fields, job.langs, source_lang=job.source_lang, task=task,
                story_id=job.story_id, event_id=job.event_id, partition_hour=partition_hour)
            return BatchOutcome(job, data, None, usage)
        except LLMConfigError:
            raise
        except LLMError as exc:
            return BatchOutcome(job, None, exc, exc.usage)

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="llm-translate") as pool:
        pending: set[Future] = {pool.submit(work, job) for job in jobs}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                exc = fut.exception()
                if isinstance(exc, LLMConfigError):
                    config_error = config_error or exc
                    for other in pending:
                        other.cancel()
                    continue
                if exc is not None:
                    raise exc
                outcome = fut.result()
                successes += outcome.ok
                on_outcome(outcome)
            if config_error is not None:
                pending = {f for f in pending if not f.cancelled()}
    if config_error is not None:
        raise config_error
    return successes
