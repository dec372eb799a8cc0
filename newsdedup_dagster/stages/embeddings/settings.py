"""The embedding stage's settings: the provider, its model and endpoint, the text embedded, the
vector indexes (built by config.embedding_settings())."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from newsdedup_dagster.shared.settings import setting
from newsdedup_dagster.shared.text.item_text import DEFAULT_TEXT_MODE, HEAD_TOKENS, LEAD_CHARS, LEAD_TOKENS, PAGE_LEAD

PROVIDERS = ("use", "e5", "openai")
DEFAULT_PROVIDER = "e5"
# Model ids of the offline providers (known without loading the model).
OFFLINE_MODEL_IDS = {"use": "use:multilingual-v3", "e5": "e5:multilingual-e5-small-q4"}


@dataclass(frozen=True)
class EmbeddingSettings:
    """Built from NEWSDEDUP_EMBEDDING_* by config.embedding_settings(); defaults here."""

    CALIBRATION: ClassVar[str] = "embeddings"  # its section in the calibration file

    provider: str = setting(DEFAULT_PROVIDER, env="NEWSDEDUP_EMBEDDING_PROVIDER", lower=True,
                            doc="`e5` (multilingual-e5-small 4-bit, 384-d, offline), `use` (USE multilingual v3, "
                                "512-d, faster, lower quality), `openai` (any OpenAI-compatible endpoint)")
    model: str | None = setting(None, env="NEWSDEDUP_EMBEDDING_MODEL", shown="provider default",
                                doc="`openai`: the model")
    base_url: str | None = setting(None, env="NEWSDEDUP_EMBEDDING_BASE_URL",
                                   doc="`openai`: the endpoint, or a pool of them separated by commas (requests "
                                       "go round the pool)")
    # Handed only to the openai client; never logged or shown.
    api_key: str | None = setting(None, env="NEWSDEDUP_EMBEDDING_API_KEY", secret=True, doc="`openai`: its key")
    dimensions: int | None = setting(None, env="NEWSDEDUP_EMBEDDING_DIMENSIONS", shown="provider default",
                                     doc="`openai`: reduced dimensions (> 2,000 are indexed as `halfvec`; > 4,000 "
                                         "need it)")
    batch_size: int = setting(128, calibrated=True, was="NEWSDEDUP_EMBEDDING_BATCH", doc="texts per embedding request")
    timeout_s: float = setting(60.0, calibrated=True, was="NEWSDEDUP_EMBEDDING_TIMEOUT", doc="seconds per embedding request")
    max_attempts: int = setting(4, calibrated=True, was="NEWSDEDUP_EMBEDDING_MAX_ATTEMPTS", doc="tries per embedding request")
    text_mode: str = setting(DEFAULT_TEXT_MODE, calibrated=True, was="NEWSDEDUP_EMBEDDING_TEXT",
                             doc="`title_lead` (headline + the summary's cleaned lead; headline alone when there "
                                 "is none) or `title`")
    # Headline-only feeds: the page's first paragraph as the lead (article_texts, fetched earlier in
    # the same hour); docs/calibration/embeddings.md#page-lead has the measurement behind the default.
    page_lead: bool = setting(PAGE_LEAD, calibrated=True, was="NEWSDEDUP_EMBEDDING_PAGE_LEAD",
                              doc="when the feed gives no usable lead, embed the first paragraph of the item's page "
                                  "(if `article_texts` extracted it by the item's hour) as the lead; a change applies to "
                                  "hours embedded after it (backfill `item_embeddings` and `stories` for the earlier "
                                  "ones)")
    # Lead budget (characters, cut at a sentence boundary): shared/text/item_text.py LEAD_CHARS.
    lead_chars: int = setting(LEAD_CHARS, calibrated=True, was="NEWSDEDUP_EMBEDDING_LEAD_CHARS",
                              doc="lead's upper bound in characters, cut at a sentence boundary")
    # Token budgets (e5's tokenizer whatever the provider): shared/text/item_text.py LEAD_TOKENS, HEAD_TOKENS.
    lead_tokens: int = setting(LEAD_TOKENS, calibrated=True, was="NEWSDEDUP_EMBEDDING_LEAD_TOKENS", bounds=(0, 512),
                               doc="lead budget in tokens, cut at a sentence boundary (0 = characters only)")
    head_tokens: int = setting(HEAD_TOKENS, calibrated=True, was="NEWSDEDUP_EMBEDDING_HEAD_TOKENS", bounds=(0, 512),
                               doc="headline budget in tokens, cut at a word boundary (0 = no token cut)")
    # HNSW build parameters of the item index (pgvector defaults; the bench measured recall with them).
    # The same variables are the clustering keys hnsw_m / hnsw_ef_construction, declared there.
    hnsw_m: int = 16
    hnsw_ef_construction: int = 64
    index_build_memory_mb: int = 256
    # The searchable stories' centroid index (an insert per new story and per moved centroid): the
    # hour's story writes 0.94 -> 0.55 s at m 8, pass 1 still identical to exact with 1M history
    # (bench/clustering.py, synthetic); ef_construction 32 cost ITN F1 0.723 -> 0.717 (newsdedup eval,
    # calibrated on that file); docs/calibration/clustering.md#centroid-index
    centroid_hnsw_m: int = setting(8, calibrated=True, was="NEWSDEDUP_CENTROID_HNSW_M",
                                   doc="HNSW m of the searchable stories' centroid index (rebuilt when it changes)")
    centroid_hnsw_ef_construction: int = setting(64, calibrated=True, was="NEWSDEDUP_CENTROID_HNSW_EF_CONSTRUCTION",
                                                 doc="HNSW ef_construction of the centroid index")
    threads: int = setting(1, calibrated=True, was="NEWSDEDUP_EMBEDDING_THREADS", doc="`use`: its own threads")
    # Offline models: worker processes embedding batches in parallel (0 = one per available core;
    # 1 = in this process). bench/embeddings.py measures the gain.
    workers: int = setting(0, calibrated=True, was="NEWSDEDUP_EMBEDDING_WORKERS",
                           doc="offline models: workers embedding chunks of a batch in parallel (0 = one per "
                               "available core)")
    # openai: requests in flight at once, and the retry policy (same rules as the LLM client).
    concurrency: int = setting(4, env="NEWSDEDUP_EMBEDDING_CONCURRENCY", doc="`openai`: batches in flight at once")
    backoff_base_s: float = setting(1.0, calibrated=True, was="NEWSDEDUP_EMBEDDING_BACKOFF_BASE",
                                    doc="`openai` retries: first delay (s), equal-jitter doubling")
    backoff_max_s: float = setting(30.0, calibrated=True, was="NEWSDEDUP_EMBEDDING_BACKOFF_MAX", doc="`openai` retries: longest delay (s)")
    retry_after_max_s: float = setting(120.0, calibrated=True, was="NEWSDEDUP_EMBEDDING_RETRY_AFTER_MAX",
                                       doc="`openai`: a `Retry-After` is honoured up to this (s)")
    # Per-language centring of stored vectors (see CENTRING_DEFAULTS): auto = the model's default.
    centre: str = setting("auto", calibrated=True, was="NEWSDEDUP_EMBEDDING_CENTRE", lower=True, shown="`auto` (on for e5, off for use)",
                          doc="subtract the running per-language mean vector before storing and indexing "
                              "(`auto`, `on`, `off`)")
