"""Translation of short text fields into many languages, two languages per call (pure + client).

Reusable by any stage (stories here; event narratives in the events stage)::

    from newsdedup_dagster.shared.models.translation import (
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

A story's briefing (story_briefings) is translated the same way, in its own requests (task
BRIEFING_TASK): `briefing_fields` names its lines (summary, point_1.., perspective_1..; quotes are
verbatim and never sent), the reply must hold exactly those names (validate_exact_translations), and
`translated_briefing` puts the translated texts back into the stored briefing for a reader.

A checked job (`BatchJob.check`: a story's headline and summary, a briefing's lines) has every
translated line read against its source line (`line_problem`): the same numbers by value, each side
read in its own language (claims.py), and, in a Latin-script translation, the Latin-script names of
the source (and the briefing's players and places it names). A line that fails is not used: it comes
back as None with its reason in `BatchOutcome.dropped` (a briefing stores it as null and the reader
reads the source line in its own language; a story's translation into that language is given up),
and `translated_briefing` checks stored lines again, so a translation stored before the check is
never shown either.

Status values (story_translations.status / event_translations.status / briefing_translations.status):
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
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from newsdedup_dagster.shared.models.client import LLMClient, LLMConfigError, LLMError, OutputInvalid, Usage
from newsdedup_dagster.shared.models.prompts import language_name
from newsdedup_dagster.shared.text import claims
from newsdedup_dagster.shared.text.cleaning import clean_visible_line

LANGS_PER_CALL = 2
# Part of every stored answer's key (shared/models/cache.py): bump it when the meaning of an answer changes.
PROMPT_VERSION = "translate-v1"
# A transient failure (endpoint trouble) is retried on later runs; after this many runs' worth of
# attempts (x settings.max_attempts) the item is given up as -1 so it cannot be retried forever.
TRANSIENT_RUNS_BEFORE_GIVING_UP = 3
# A translation longer than this multiple of its source (+ slack) is a runaway, not a translation.
# CJK -> Latin expands 2-3x in characters; 4x + 80 accepts that and rejects pasted articles.
MAX_EXPANSION = 4.0
EXPANSION_SLACK = 80
# The llm_calls task of a briefing's lines (apart from "translate", the headline and summary).
BRIEFING_TASK = "briefing_translate"
# Lists of a stored briefing whose lines a reader reads in his language, and their field prefix.
BRIEFING_LISTS = (("points", "point"), ("perspectives", "perspective"), ("background", "background"),
                  ("watch", "watch"))

# Why a translated line is not used (the run's metadata counts them).
NUMBERS = "translation_numbers"
NAMES = "translation_names"

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
    """Every field in every language, cleaned to one line (shared/text/cleaning.py)."""
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
            text = clean_visible_line(text) if isinstance(text, str) else ""
            if not text:
                raise OutputInvalid(f'missing or empty "{name}" for "{lang}"')
            if len(text) > MAX_EXPANSION * len(source) + EXPANSION_SLACK:
                raise OutputInvalid(f'"{name}" for "{lang}" is {len(text)} characters, far longer than its source')
            out[lang][name] = text
    return out


def validate_exact_translations(data: dict, fields: dict[str, str], langs: Sequence[str]) -> dict[str, dict[str, str]]:
    """validate_translations, and no language may hold a field that was not asked for: a briefing's
    lines must map back one to one (an extra or merged line means the model lost count)."""
    translations = data.get("translations")
    for lang in langs:
        entry = translations.get(lang) if isinstance(translations, dict) else None
        extra = sorted(set(entry) - set(fields)) if isinstance(entry, dict) else []
        if extra:
            raise OutputInvalid(f'fields not asked for in "{lang}": {", ".join(map(repr, extra[:3]))}; '
                                f'expected exactly the {len(fields)} fields {", ".join(fields)}')
    return validate_translations(data, fields, langs)


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
    exact: bool = False,
) -> tuple[dict[str, dict[str, str]], Usage]:
    """Translate ``fields`` into ``langs`` in ONE call (pass at most LANGS_PER_CALL languages).
    Raises the client's LLMError subclasses on failure. ``exact``: see validate_exact_translations."""
    fields = {k: v for k, v in fields.items() if v}
    # Long inputs: allow room for every language's copy of every field.
    budget = int(sum(len(v) for v in fields.values()) * len(langs) * 1.5) + 300
    return client.complete_json(
        task, model, SYSTEM_PROMPT, translation_prompt(fields, langs, source_lang),
        lambda data: (validate_exact_translations if exact else validate_translations)(data, fields, langs),
        story_id=story_id, event_id=event_id, partition_hour=partition_hour,
        max_tokens=max(800, min(4000, budget)), prompt_version=PROMPT_VERSION, target_langs=tuple(langs),
    )


# ------------------------------------------------------------------ checks
@dataclass(frozen=True)
class Drop:
    """A translated line not used: its language, field, reason (NUMBERS, NAMES) and what failed."""

    lang: str
    field: str
    reason: str
    detail: str


def line_problem(source: str, source_lang: str | None, text: str, lang: str,
                 names: Sequence[str] = ()) -> tuple[str, str] | None:
    """(reason, detail) when `text`, the translation of `source` into `lang`, changes a fact of it;
    None when it holds. Numbers: each side gives every number of the other, by value, each read in
    its own language. Names: in a Latin-script translation, every Latin-script name of the source
    (claims.names_in) and each of `names` the source names is carried (claims.name_carried: exact,
    or adapted as translations adapt places and shorten people's names); in another script names are
    not compared (transliterations differ)."""
    added = claims.unsupported_numbers(text, lang, [(source, source_lang)])
    if added:
        return NUMBERS, f"{added[0]} is not in the source"
    lost = claims.unsupported_numbers(source, source_lang, [(text, lang)])
    if lost:
        return NUMBERS, f"the source's {lost[0]} is missing"
    if not claims.latin_script(text):
        return None
    wanted = claims.names_in(source, source_lang)
    wanted += [n for n in names if isinstance(n, str) and n not in wanted and claims.names_match(n, source)]
    for name in wanted:
        if claims.latin_script(name) and not claims.name_carried(name, source_lang, text, lang):
            return NAMES, f"{name} is missing"
    return None


def checked_translations(translations: Mapping[str, Mapping[str, str]], fields: Mapping[str, str],
                         source_lang: str | None, names: Sequence[str] = ()
                         ) -> tuple[dict[str, dict[str, str | None]], list[Drop]]:
    """The translations with each line that fails `line_problem` replaced by None, and the drops."""
    out: dict[str, dict[str, str | None]] = {}
    drops: list[Drop] = []
    for lang, lines in translations.items():
        out[lang] = {}
        for name, text in lines.items():
            problem = line_problem(fields.get(name, ""), source_lang, text, lang, names)
            if problem is not None:
                drops.append(Drop(lang, name, *problem))
            out[lang][name] = None if problem is not None else text
    return out, drops


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
    task: str | None = None                   # the llm_calls task when not run_batches' own
    exact: bool = False                       # the reply must hold exactly `fields` (validate_exact_translations)
    check: bool = False                       # each line read against its source (checked_translations)
    names: tuple[str, ...] = ()               # names the source lines may hold besides their own capitals


@dataclass
class BatchOutcome:
    job: BatchJob
    translations: dict[str, dict[str, str | None]] | None    # a checked job's failed lines are None
    error: LLMError | None
    usage: Usage
    dropped: list[Drop] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def attempts(self) -> int:
        return self.error.attempts if self.error is not None else self.usage.attempts

    @property
    def answer_attempts(self) -> int:
        """What a saved translation records: the attempts its answer took, asked now or reused."""
        return self.usage.answer_attempts or self.attempts


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
                client, model, job.fields, job.langs, source_lang=job.source_lang, task=job.task or task,
                story_id=job.story_id, event_id=job.event_id, partition_hour=partition_hour, exact=job.exact)
            if job.check:
                checked, dropped = checked_translations(data, job.fields, job.source_lang, job.names)
                return BatchOutcome(job, checked, None, usage, dropped)
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


# ------------------------------------------------------------------ briefings
def _text(line: Any) -> str:
    return line["text"] if isinstance(line, Mapping) and isinstance(line.get("text"), str) else ""


def briefing_fields(briefing: Mapping) -> dict[str, str]:
    """The lines of a stored briefing to translate, as fields: "summary", "point_<n>",
    "perspective_<n>", "background_<n>", "watch_<n>" (n: the line's 1-based place in its list, so a
    malformed line in between does not shift the others). Quotes are never among them: they are
    verbatim; nor are players and places (names: `names_in`)."""
    fields: dict[str, str] = {}
    summary = _text(briefing.get("summary"))
    if summary.strip():
        fields["summary"] = summary
    for key, prefix in BRIEFING_LISTS:
        lines = briefing.get(key)
        for n, line in enumerate(lines if isinstance(lines, list) else (), 1):
            if _text(line).strip():
                fields[f"{prefix}_{n}"] = _text(line)
    return fields


def briefing_names(briefing: Mapping) -> tuple[str, ...]:
    """The players and places of a stored briefing: names its lines' translations must carry."""
    names = [name for key in ("players", "places") if isinstance(briefing.get(key), list) for name in briefing[key]]
    return tuple(dict.fromkeys(n for n in names if isinstance(n, str) and n.strip()))


def translated_briefing(briefing: Mapping, lines: Mapping | None, lang: str) -> dict:
    """A copy of `briefing` with its lines' texts from `lines` (briefing_fields' names -> the text in
    `lang`), each such line marked as `lang`; citations, quotes and everything else unchanged.
    `briefing` itself (a copy) when `lines` does not name exactly its lines: a translation of
    another version of the briefing is never shown. A line stored as null (its translation failed
    the check) or failing it now (`line_problem`) stays as the briefing has it, in its own language."""
    out = dict(briefing)
    if not isinstance(lines, Mapping) or set(lines) != set(briefing_fields(briefing)):
        return out
    if not all(text is None or (isinstance(text, str) and text) for text in lines.values()):
        return out
    # The players and places stay as the articles write them: their language is the briefing's own.
    out.setdefault("names_lang", next((line.get("lang") for line in (briefing.get("summary"), *(
        briefing.get("points") if isinstance(briefing.get("points"), list) else ())) if isinstance(line, Mapping)
        and line.get("lang")), None))
    names = briefing_names(briefing)

    def shown(line: Mapping, field: str) -> Mapping:
        text = lines.get(field)
        if text is None or line_problem(_text(line), line.get("lang") or out["names_lang"], text, lang, names):
            return line
        return {**line, "text": text, "lang": lang}

    if "summary" in lines:
        out["summary"] = shown(briefing["summary"], "summary")
    for key, prefix in BRIEFING_LISTS:
        if not isinstance(briefing.get(key), list):
            continue
        out[key] = [shown(line, f"{prefix}_{n}") if f"{prefix}_{n}" in lines else line
                    for n, line in enumerate(briefing[key], 1)]
    return out
