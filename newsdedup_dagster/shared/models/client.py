"""One LLM client for every stage: JSON chat completions against any OpenAI-compatible endpoint.

Usable standalone (no Dagster imports), e.g. from the events/narrative stage::

    from newsdedup_dagster import config
    from newsdedup_dagster.shared.models.client import LLMClient, PostgresCallRecorder, LLMError

    settings = config.llm_settings()              # env: NEWSDEDUP_LLM_BASE_URL, NEWSDEDUP_LLM_API_KEY, ...
    if settings.offline: ...                      # no endpoint: use your offline fallback, do not build a client
    with LLMClient(settings, recorder=PostgresCallRecorder(db_url)) as client:
        try:
            data, usage = client.complete_json(
                task="narrative", model=settings.narrative_model,
                system=SYSTEM_PROMPT,             # keep it byte-identical across calls (prompt caches)
                user=user_text,
                validator=my_validator,           # dict -> dict (cleaned); raise OutputInvalid("why")
                event_id="ev1", partition_hour=hour_start,
            )
        except LLMError as exc:                   # exc.permanent, exc.attempts, exc.usage, str(exc) is key-free
            ...

`complete_json` returns ``(data, usage)``: ``data`` is what the validator returned, ``usage`` a
`Usage` (tokens_in, tokens_out, tokens_cached, cost_usd, attempts, latency_ms, model), summed over
attempts. Every HTTP attempt is recorded through the recorder (one ``llm_calls`` row per attempt:
task, model, story/event, partition, attempt number, tokens, cost, latency, status ok|invalid|error,
redacted error).

Retry rules (``settings.max_attempts`` attempts in total per call):
- timeouts, connection errors, HTTP 408/409/429/5xx: retried after an exponential backoff with
  "equal jitter" (delay d = min(cap, base * 2**(n-1)); sleep d/2 + uniform(0, d/2)); on 429 (or any
  status) a ``Retry-After`` / ``retry-after-ms`` header is honoured as a lower bound, but a server
  asking for more than ``backoff.retry_after_max_s`` ends the call at once (LLMUnavailable) rather
  than blocking a worker for an hour. Exhausted -> `LLMUnavailable` (permanent=False: the caller
  keeps the work item pending for a later run).
- output that is not JSON, not an object, or that the validator rejects: retried at once with the
  validator's message appended as a follow-up turn (the prefix stays identical, so caches hit).
  Exhausted -> `OutputInvalid` (permanent=True). A reply longer than REPLY_MAX_CHARS or nested
  deeper than REPLY_MAX_DEPTH is refused before parsing, and every parse error (an integer past
  Python's digit limit, NaN, ...) is this same invalid output; so is a 200 whose body the client
  library cannot decode (not JSON, nested past the decoder's recursion limit).
- a reply our own handling fails on unexpectedly (a bug, not the model's mistake): the paid call is
  recorded (status error) and `ReplyUnhandled` (permanent=True) fails this call only.
- HTTP 400/413/422 (the request itself is refused, e.g. context too long): `RequestRejected`
  (permanent=True), not retried.
- HTTP 401/403/404 (bad key, no access, unknown model): `LLMConfigError` at once; a configuration
  problem must fail the run, not mark every story as failed.

Reuse and text: with a result cache (shared/models/cache.py) and a ``prompt_version``, an answer stored for the
same request is returned without a call and recorded as a cached ``llm_calls`` row at zero cost;
every reply is cleaned to plain text (shared/text/cleaning.py) before validation and storage.

Concurrency: at most ``settings.concurrency`` requests in flight per client (a semaphore), so a
caller may simply submit work to a thread pool. The API key is given only to the openai client; every
error string passes through `redact()` (newsdedup_dagster/shared/redaction.py: the key, ``Bearer ...``, ``sk-...``,
URL userinfo), and the openai/httpx loggers get its redacting filter.
"""

from __future__ import annotations

import dataclasses
import email.utils
import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Protocol

from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.models import pricing
from newsdedup_dagster.shared.models.cache import CachedAnswer, CacheKey, CallRecordRefused, ResultCache, cache_key
from newsdedup_dagster.shared.models.settings import BackoffPolicy, LLMSettings
from newsdedup_dagster.shared.redaction import add_log_redaction, redact, remove_log_redaction
from newsdedup_dagster.shared.text.cleaning import clean_model_output

log = logging.getLogger(__name__)

__all__ = [
    "LLMClient", "LLMError", "LLMUnavailable", "OutputInvalid", "RequestRejected", "LLMConfigError", "ReplyUnhandled",
    "Usage", "CallRecord", "CallRecorder", "MemoryRecorder", "PostgresCallRecorder",
    "parse_json_reply", "redact", "backoff_delay", "parse_retry_after",
]

ERROR_TEXT_MAX = 500  # llm_calls.error is for humans; provider bodies can be long
# Bounds checked before a reply is parsed. The longest answer asked for (two languages' translation,
# max_tokens 4000) is far shorter, even written as \uXXXX escapes; answers are at most three levels
# deep ({"translations": {"fr": {...}}}), and the JSON decoder recurses once per level.
REPLY_MAX_CHARS = 100_000
REPLY_MAX_DEPTH = 20


# ------------------------------------------------------------------ errors
class LLMError(RuntimeError):
    """A call that did not produce valid output. ``str(exc)`` never contains the API key."""

    permanent = False
    status = "error"  # llm_calls.status of the last attempt

    def __init__(self, message: str, *, attempts: int = 0, usage: Usage | None = None):
        super().__init__(message)
        self.attempts = attempts
        self.usage = usage or Usage()


class LLMUnavailable(LLMError):
    """Timeouts / 429 / 5xx / connection errors after all attempts: transient, try again later."""


class OutputInvalid(LLMError):
    """The model's reply failed JSON parsing or validation. Validators raise it with the reason;
    the client retries, and raises it (permanent) once attempts are exhausted."""

    permanent = True
    status = "invalid"


class RequestRejected(LLMError):
    """HTTP 400/413/422: this request will never succeed as it is (e.g. input too long)."""

    permanent = True


class LLMConfigError(LLMError):
    """HTTP 401/403/404: wrong key, no access or unknown model. Fails the run; marks nothing."""

    permanent = True


class ReplyUnhandled(LLMError):
    """Handling a reply raised something other than OutputInvalid: that item fails (permanently, as
    asking again would fail the same way), its call is recorded, and the run goes on."""

    permanent = True


# A run's metadata keeps the first errors of its model calls, each cut short (they are redacted by
# the client already): enough to see what went wrong without a page of repeats.
RUN_ERRORS_KEPT = 10
RUN_ERROR_CHARS = 300


def note_error(errors: list[str], text: str) -> None:
    """Add `text` to a run's error list while it holds fewer than RUN_ERRORS_KEPT."""
    if len(errors) < RUN_ERRORS_KEPT:
        errors.append(text[:RUN_ERROR_CHARS])


# ------------------------------------------------------------------ usage
@dataclass
class Usage:
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    cost_usd: Decimal = Decimal(0)
    attempts: int = 0
    calls: int = 0          # completed complete_json() calls that reached the model (ok or failed)
    latency_ms: int = 0
    model: str = ""
    reused: int = 0         # answers reused from llm_results instead of calling the model
    saved_usd: Decimal = Decimal(0)  # what those answers cost when they were first paid for
    # The attempts the answer took when it was paid for: this call's, or a reused answer's original
    # count (a row that records attempts is then the same whether its answer was asked or reused).
    answer_attempts: int = 0

    def add(self, other: Usage) -> Usage:
        self.tokens_in += other.tokens_in
        self.tokens_out += other.tokens_out
        self.tokens_cached += other.tokens_cached
        self.cost_usd += other.cost_usd
        self.attempts += other.attempts
        self.calls += other.calls
        self.latency_ms += other.latency_ms
        self.reused += other.reused
        self.saved_usd += other.saved_usd
        return self

    def as_dict(self) -> dict:
        return {
            "tokens_in": self.tokens_in, "tokens_out": self.tokens_out, "tokens_cached": self.tokens_cached,
            "cost_usd": float(self.cost_usd), "attempts": self.attempts, "calls": self.calls,
            "reused": self.reused, "saved_usd": float(self.saved_usd),
        }


@dataclass
class CallRecord:
    """One HTTP attempt, as stored in llm_calls."""

    task: str
    model: str
    status: str                     # ok | invalid | error
    attempt: int
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    cost_usd: Decimal = Decimal(0)
    latency_ms: int | None = None
    error: str | None = None
    story_id: str | None = None
    event_id: str | None = None
    partition_hour: datetime | None = None
    cached: bool = False            # a reused answer (llm_results), no HTTP request made
    cache_key: str | None = None


class CallRecorder(Protocol):
    def record(self, rec: CallRecord) -> None: ...


class MemoryRecorder:
    """Keeps records in a list (tests, dry runs)."""

    def __init__(self) -> None:
        self.records: list[CallRecord] = []
        self._lock = threading.Lock()

    def record(self, rec: CallRecord) -> None:
        with self._lock:
            self.records.append(rec)

    def close(self) -> None:
        pass


class PostgresCallRecorder:
    """Inserts one llm_calls row per attempt on its own autocommit connection, so the accounting
    survives even when the caller's transaction rolls back (money spent is money spent).
    Thread-safe: one connection behind a lock (inserts are tiny)."""

    def __init__(self, database_url: str):
        self.database_url = database_url
        self._conn = None
        self._lock = threading.Lock()

    def record(self, rec: CallRecord) -> None:
        with self._lock:
            if self._conn is None or self._conn.closed:
                self._conn = db.connect(self.database_url, autocommit=True)
            self._conn.execute(db.load_sql("llm_record_call"), dataclasses.asdict(rec))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _with_correction(messages: list[dict], content: str | None, exc: OutputInvalid) -> list[dict]:
    """Show the model its mistake; the conversation prefix stays identical (caches still hit)."""
    return messages[:2] + [
        {"role": "assistant", "content": (content or "")[:4000]},
        {"role": "user", "content": f"That reply was invalid: {exc}. Reply again with only the corrected JSON object."},
    ]


# ------------------------------------------------------------------ policy
def backoff_delay(attempt: int, policy: BackoffPolicy, rng: random.Random) -> float:
    """Equal jitter: never zero (unlike full jitter), yet spread so parallel workers don't retry in step."""
    ceiling = min(policy.max_s, policy.base_s * (2 ** max(0, attempt - 1)))
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


def parse_retry_after(headers: Any, now: float | None = None) -> float | None:
    """Seconds from ``retry-after-ms`` (OpenAI) or ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


# ------------------------------------------------------------------ parsing
# In a JSON text, what can change the nesting depth: an escape pair (skipped: it may be \"), a quote,
# a bracket. Scanned left to right as the decoder reads, so up to the first error (where the decoder
# stops) the depth counted is the depth the decoder would reach.
_DEPTH_TOKENS = re.compile(r'\\.|["\[\]{}]', re.DOTALL)


def _without_fence(text: str) -> str:
    """The inside of a Markdown code fence (common even in JSON mode), else the text. No regex: a
    backtracking pattern over a long reply of whitespace is quadratic."""
    if len(text) >= 6 and text.startswith("```") and text.endswith("```"):
        inner = text[3:-3]
        return (inner[4:] if inner[:4] in ("json", "JSON") else inner).strip()
    return text


def _deeper_than(text: str, limit: int) -> bool:
    depth, in_string = 0, False
    for match in _DEPTH_TOKENS.finditer(text):
        token = match.group()
        if token == '"':
            in_string = not in_string
        elif in_string or len(token) == 2:
            continue
        elif token in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _not_json_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:20]}… is out of range")
    return value


def parse_json_reply(content: str | None) -> dict:
    """The reply as a JSON object, or OutputInvalid: too long or too deep (checked before parsing),
    not JSON by any error the decoder raises (NaN, Infinity and numbers past float range included),
    or not an object."""
    if content is None or not isinstance(content, str) or not content.strip():
        raise OutputInvalid("empty reply" if not content else f"reply is {type(content).__name__}, not text")
    if len(content) > REPLY_MAX_CHARS:
        raise OutputInvalid(f"reply refused before parsing: longer than {REPLY_MAX_CHARS} characters")
    text = _without_fence(content.strip())
    if _deeper_than(text, REPLY_MAX_DEPTH):
        raise OutputInvalid(f"reply refused before parsing: nested deeper than {REPLY_MAX_DEPTH} levels")
    try:
        data = json.loads(text, parse_constant=_not_json_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise OutputInvalid(f"reply is not valid JSON ({exc.msg} at char {exc.pos})") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer past Python's 4300-digit limit
        raise OutputInvalid(f"reply is not valid JSON ({str(exc)[:120]})") from None
    if not isinstance(data, dict):
        raise OutputInvalid(f"reply is JSON {type(data).__name__}, expected an object")
    return data


# ------------------------------------------------------------------ client
Validator = Callable[[dict], Any]


class LLMClient:
    """Thread-safe JSON-completion client with retries, a concurrency limit and call recording."""

    def __init__(
        self,
        settings: LLMSettings,
        recorder: CallRecorder | None = None,
        *,
        backoff: BackoffPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        json_mode: bool = True,
        cache: ResultCache | None = None,
    ):
        if settings.offline:
            raise ValueError("LLMClient needs NEWSDEDUP_LLM_BASE_URL; use the offline fallback instead")
        import openai  # deferred on purpose: the openai client stack loads only when an endpoint is used

        self.settings = settings
        self.recorder = recorder or MemoryRecorder()
        self.backoff = backoff or BackoffPolicy()
        self.prices = pricing.parse_prices(settings.prices)
        self.json_mode = json_mode
        self.cache = cache
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._rng_lock = threading.Lock()
        self._secrets = tuple(s for s in (settings.api_key,) if s)
        self._slots = threading.BoundedSemaphore(max(1, settings.concurrency))
        self._totals: dict[str, Usage] = {}
        self._totals_lock = threading.Lock()
        self._unpriced_warned: set[str] = set()
        self._filter = add_log_redaction(self._secrets)
        self._openai = openai.OpenAI(
            base_url=settings.base_url,
            # Local servers (vLLM, Ollama) accept any key; the client library insists on one.
            api_key=settings.api_key or "no-key",
            # The client library's own Timeout: openai 3.61+ runs on httpx2 and refuses an httpx.Timeout.
            timeout=openai.Timeout(settings.timeout_s, connect=min(10.0, settings.timeout_s)),
            max_retries=0,  # our own loop: it honours Retry-After, records every attempt and jitters
        )
        self._openai_errors = openai

    # -------------------------------------------------------------- public
    def complete_json(
        self,
        task: str,
        model: str,
        system: str,
        user: str,
        validator: Validator | None = None,
        *,
        story_id: str | None = None,
        event_id: str | None = None,
        partition_hour: datetime | None = None,
        max_attempts: int | None = None,
        temperature: float = 0.2,
        max_tokens: int | None = 1200,
        prompt_version: str | None = None,
        target_langs: tuple[str, ...] | list[str] = (),
        input_material: str | None = None,
    ) -> tuple[Any, Usage]:
        """One validated JSON answer (see the module docstring for the retry rules).

        With a result cache and a ``prompt_version``, an answer stored for the same task, model,
        prompt version, target languages and request text is reused (shared/models/cache.py) and no request
        is made; every valid answer is stored. Everything the model writes is cleaned to plain text
        (shared/text/cleaning.py) before the validator, the cache or the caller see it."""
        attempts_allowed = max(1, max_attempts or self.settings.max_attempts)
        messages: list[dict] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        usage = Usage(model=model)
        key: CacheKey | None = None
        if self.cache is not None and prompt_version is not None:
            key = cache_key(task, model, prompt_version, system, user, tuple(target_langs), input_material)
            reused = self._reuse(key, validator, story_id, event_id, partition_hour, usage)
            if reused is not None:
                return reused, usage
        last_invalid: OutputInvalid | None = None
        last_error = "no attempt made"
        last_kind = "error"  # what the final attempt ended with decides the exception type
        for attempt in range(1, attempts_allowed + 1):
            usage.attempts = usage.answer_attempts = attempt
            started = time.monotonic()
            rec = CallRecord(task=task, model=model, status="error", attempt=attempt,
                             story_id=story_id, event_id=event_id, partition_hour=partition_hour)
            try:
                with self._slots:
                    started = time.monotonic()
                    completion = self._create(model, messages, temperature, max_tokens)
            except self._openai_errors.APIStatusError as exc:
                last_error, last_kind = self._status_failed(exc, rec, started, attempts_allowed, task, usage, key), "error"
                continue
            except (self._openai_errors.APITimeoutError, self._openai_errors.APIConnectionError) as exc:
                last_error, last_kind = self._transport_failed(exc, rec, started, attempts_allowed, task, usage), "error"
                continue
            except (ValueError, RecursionError) as exc:  # the client library could not decode the response body
                last_invalid = self._body_unreadable(exc, rec, started)
                last_error, last_kind = rec.error, "invalid"
                continue

            rec.latency_ms = int((time.monotonic() - started) * 1000)
            content = None
            try:
                self._add_usage(rec, completion, model, usage)
                content = completion.choices[0].message.content if completion.choices else None
                data = clean_model_output(parse_json_reply(content))
                result = validator(data) if validator is not None else data
            except OutputInvalid as exc:
                rec.status = "invalid"
                rec.error = self._error_text(str(exc))
                self._record(rec)
                last_invalid = exc
                last_error, last_kind = rec.error, "invalid"
                messages = _with_correction(messages, content, exc)
                continue
            except Exception as exc:  # our handling of this reply failed: this call fails, the run goes on
                self._reply_unhandled(exc, rec, task, usage)
            rec.status = "ok"
            rec.cache_key = key.key if key is not None else None
            if key is not None:
                self._store_paid(key, CachedAnswer(data, rec.tokens_in, rec.tokens_out, rec.cost_usd), rec)
            else:
                self._record(rec)
            self._finish(task, usage)
            return result, usage
        self._give_up(task, usage, key, last_error, invalid=last_invalid is not None and last_kind == "invalid")

    # -------------------------------------------------------------- one attempt's outcome
    def _reply_unhandled(self, exc: Exception, rec: CallRecord, task: str, usage: Usage):
        """Record the paid call with what went wrong, then fail this call only (ReplyUnhandled)."""
        rec.status = "error"
        rec.error = self._error_text(f"unexpected {type(exc).__name__} handling the reply: {exc}")
        log.error("llm %s: %s", task, rec.error)
        self._record(rec)
        self._finish(task, usage)
        raise ReplyUnhandled(rec.error, attempts=rec.attempt, usage=usage) from None

    def _status_failed(self, exc, rec: CallRecord, started: float, attempts_allowed: int, task: str, usage: Usage,
                       key: CacheKey | None) -> str:
        """An HTTP error status: 401/403/404 end the call (configuration), 400/413/422 end it (the
        request itself), anything else waits for the next attempt. Returns the recorded error."""
        rec.latency_ms = int((time.monotonic() - started) * 1000)
        status = exc.status_code
        rec.error = self._error_text(f"HTTP {status}: {exc.message}")
        self._record(rec)
        if status in (401, 403, 404):
            self._finish(task, usage)
            raise LLMConfigError(rec.error, attempts=rec.attempt, usage=usage) from None
        if status in (400, 413, 422):
            self._finish(task, usage)
            if key is not None:
                self._store(key, CachedAnswer(None, usage.tokens_in, usage.tokens_out, usage.cost_usd,
                                              "rejected", rec.error, rec.attempt))
            raise RequestRejected(rec.error, attempts=rec.attempt, usage=usage) from None
        retry_after = parse_retry_after(getattr(exc.response, "headers", None))
        if rec.attempt < attempts_allowed:
            self._wait(rec.attempt, retry_after, task, usage, rec.error)
        return rec.error

    def _body_unreadable(self, exc: Exception, rec: CallRecord, started: float) -> OutputInvalid:
        """A 200 whose body is not JSON (or nested too deep for the decoder): invalid output, as a reply
        that is not JSON; the next attempt asks again (there is no reply to show the model)."""
        rec.latency_ms = int((time.monotonic() - started) * 1000)
        rec.status = "invalid"
        rec.error = self._error_text(f"response body is not valid JSON ({type(exc).__name__}: {str(exc)[:120]})")
        self._record(rec)
        return OutputInvalid(rec.error)

    def _transport_failed(self, exc, rec: CallRecord, started: float, attempts_allowed: int, task: str,
                          usage: Usage) -> str:
        """A timeout or a connection error: recorded, then wait for the next attempt."""
        rec.latency_ms = int((time.monotonic() - started) * 1000)
        kind = "timeout" if isinstance(exc, self._openai_errors.APITimeoutError) else "connection error"
        rec.error = self._error_text(f"{kind}: {exc}")
        self._record(rec)
        if rec.attempt < attempts_allowed:
            self._wait(rec.attempt, None, task, usage, rec.error)
        return rec.error

    def _add_usage(self, rec: CallRecord, completion, model: str, usage: Usage) -> None:
        self._account(rec, completion, model)
        usage.tokens_in += rec.tokens_in
        usage.tokens_out += rec.tokens_out
        usage.tokens_cached += rec.tokens_cached
        usage.cost_usd += rec.cost_usd
        usage.latency_ms += rec.latency_ms

    def _give_up(self, task: str, usage: Usage, key: CacheKey | None, last_error: str, *, invalid: bool):
        """Every attempt failed: invalid output (remembered, so a rerun does not pay again) or unavailable."""
        self._finish(task, usage)
        if invalid:
            if key is not None:
                self._store(key, CachedAnswer(None, usage.tokens_in, usage.tokens_out, usage.cost_usd,
                                              "invalid", last_error, usage.attempts))
            raise OutputInvalid(f"invalid output after {usage.attempts} attempts: {last_error}",
                                attempts=usage.attempts, usage=usage)
        raise LLMUnavailable(f"failed after {usage.attempts} attempts: {last_error}",
                             attempts=usage.attempts, usage=usage)

    def totals(self) -> dict[str, Usage]:
        """Usage per task since this client was created (for asset metadata)."""
        with self._totals_lock:
            return {task: dataclasses.replace(u) for task, u in self._totals.items()}

    def unpriced_models(self) -> list[str]:
        return sorted(self._unpriced_warned)

    def close(self) -> None:
        remove_log_redaction(self._filter)
        self._openai.close()
        for part in (self.recorder, self.cache):
            close = getattr(part, "close", None)
            if close is not None:
                close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -------------------------------------------------------------- internals
    def _create(self, model: str, messages: list[dict], temperature: float, max_tokens: int | None):
        kwargs: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature}
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        if self.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        return self._openai.chat.completions.create(**kwargs)

    def _account(self, rec: CallRecord, completion: Any, model: str) -> None:
        u = getattr(completion, "usage", None)
        if u is None:
            return
        rec.tokens_in = int(getattr(u, "prompt_tokens", 0) or 0)
        rec.tokens_out = int(getattr(u, "completion_tokens", 0) or 0)
        details = getattr(u, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) if details is not None else None
        if cached is None:  # DeepSeek reports cache hits in its own field
            cached = getattr(u, "prompt_cache_hit_tokens", None)
        rec.tokens_cached = int(cached or 0)
        rec.cost_usd, known = pricing.cost_usd(self.prices, model, rec.tokens_in, rec.tokens_out, rec.tokens_cached)
        if not known and model not in self._unpriced_warned:
            self._unpriced_warned.add(model)
            log.warning("no price for model %r in NEWSDEDUP_LLM_PRICES; its calls are recorded at cost 0", model)

    def _wait(self, attempt: int, retry_after: float | None, task: str, usage: Usage, error: str) -> None:
        with self._rng_lock:
            delay = backoff_delay(attempt, self.backoff, self._rng)
        if retry_after is not None:
            if retry_after > self.backoff.retry_after_max_s:
                self._finish(task, usage)
                raise LLMUnavailable(
                    f"server asked to retry after {retry_after:.0f}s (> {self.backoff.retry_after_max_s:.0f}s): {error}",
                    attempts=attempt, usage=usage)
            delay = max(delay, retry_after)
        log.info("llm %s attempt %d failed (%s); retrying in %.2fs", task, attempt, error, delay)
        self._sleep(delay)

    def _reuse(self, key: CacheKey, validator: Validator | None, story_id, event_id, partition_hour,
               usage: Usage) -> Any:
        """The validated stored answer for ``key`` (recorded as a cached call), or None."""
        try:
            answer = self.cache.get(key)
        except Exception as exc:  # a cache outage costs money, not correctness
            log.error("llm result cache lookup failed: %s", self._error_text(str(exc)))
            return None
        if answer is None:
            return None
        if answer.status != "ok":  # the same request failed permanently before: fail the same way, free
            self._record(CallRecord(task=key.task, model=key.model, status="invalid" if answer.status == "invalid" else "error",
                                    attempt=0, latency_ms=0, story_id=story_id, event_id=event_id,
                                    partition_hour=partition_hour, error=answer.error, cached=True, cache_key=key.key))
            usage.reused, usage.saved_usd, usage.attempts = 1, answer.cost_usd, answer.attempts
            with self._totals_lock:
                self._totals.setdefault(key.task, Usage(model=usage.model)).add(usage)
            error_class = OutputInvalid if answer.status == "invalid" else RequestRejected
            raise error_class(f"{answer.error} (stored answer for the same request)",
                              attempts=answer.attempts, usage=usage)
        try:
            data = clean_model_output(answer.data)
            result = validator(data) if validator is not None else data
        except Exception as exc:  # OutputInvalid or worse: the stored answer is not used
            log.info("stored %s answer no longer validates (%s); asking the model again", key.task,
                     self._error_text(str(exc)))
            return None
        self._record(CallRecord(task=key.task, model=key.model, status="ok", attempt=0, latency_ms=0,
                                story_id=story_id, event_id=event_id, partition_hour=partition_hour,
                                cached=True, cache_key=key.key))
        usage.reused = 1
        usage.saved_usd = answer.cost_usd
        usage.answer_attempts = answer.attempts
        with self._totals_lock:
            self._totals.setdefault(key.task, Usage(model=usage.model)).add(usage)
        return result

    def _store(self, key: CacheKey, answer: CachedAnswer) -> None:
        try:
            self.cache.put(key, answer)
        except Exception as exc:  # the answer is still good for this run
            log.error("could not store an llm answer for reuse: %s", self._error_text(str(exc)))

    def _store_paid(self, key: CacheKey, answer: CachedAnswer, rec: CallRecord) -> None:
        """A paid answer and its call record. When the cache and the call log are one database, one
        transaction writes both (a crash between them would pay for the answer again on the rerun)."""
        together = getattr(self.cache, "put_with_call", None)
        if together is not None and getattr(self.cache, "database_url", None) == \
                getattr(self.recorder, "database_url", object()):
            try:
                together(key, answer, dataclasses.asdict(rec))
                return
            except CallRecordRefused as exc:  # the answer is stored; its call row is written apart
                log.error("an llm answer was stored, but its call record was refused (%s); recording it again",
                          self._error_text(str(exc)))
                self._record(rec)
                return
            except Exception as exc:  # the answer is still good for this run; the call is still recorded
                log.error("could not store an llm answer for reuse: %s", self._error_text(str(exc)))
                self._record(rec)
                return
        self._record(rec)
        self._store(key, answer)

    def _record(self, rec: CallRecord) -> None:
        try:
            self.recorder.record(rec)
        except Exception as exc:  # accounting must not turn a good answer into a failure
            log.error("could not record an llm call: %s", self._error_text(str(exc)))

    def _finish(self, task: str, usage: Usage) -> None:
        usage.calls = 1
        with self._totals_lock:
            self._totals.setdefault(task, Usage(model=usage.model)).add(usage)

    def _error_text(self, text: str) -> str:
        return redact(text, self._secrets)[:ERROR_TEXT_MAX]
