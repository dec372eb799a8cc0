"""The LLM stages' settings: the endpoint, the models, the languages (built by config.llm_settings()),
and the client's retry policy (built by config.llm_backoff())."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from newsdedup_dagster.shared.settings import check_language_codes, setting

TRANSLATION_LANGS = ("zh", "ja", "ko", "fr", "de", "es", "pt", "ru", "ar", "hi")
NARRATIVE_LANGS = ("en", "zh", "ja", "ko", "fr", "de", "es", "pt", "it", "ru", "ar", "hi", "id", "vi", "th", "tr")


@dataclass(frozen=True)
class LLMSettings:
    CALIBRATION: ClassVar[str] = "llm"  # its section in the calibration file

    base_url: str | None = setting(None, env="NEWSDEDUP_LLM_BASE_URL", shown="unset = offline fallback",
                                   doc="any OpenAI-compatible endpoint")
    # Handed only to the openai client; never logged.
    api_key: str | None = setting(None, env="NEWSDEDUP_LLM_API_KEY", secret=True, doc="its key")
    scoring_model: str = setting("deepseek-chat", env="NEWSDEDUP_SCORING_MODEL", doc="model that scores stories")
    translation_model: str = setting("qwen-plus", env="NEWSDEDUP_TRANSLATION_MODEL",
                                     doc="model that translates stories")
    narrative_model: str = setting("deepseek-chat", env="NEWSDEDUP_NARRATIVE_MODEL",
                                   doc="model that writes event narratives")
    timeout_s: float = setting(60.0, calibrated=True, was="NEWSDEDUP_LLM_TIMEOUT", doc="seconds per call")
    max_attempts: int = setting(3, calibrated=True, was="NEWSDEDUP_LLM_MAX_ATTEMPTS", doc="tries per call")
    concurrency: int = setting(4, env="NEWSDEDUP_LLM_CONCURRENCY", doc="calls in flight at once")
    # The language stories are scored and narrated in; the digest's and the feeds' first language.
    pivot_lang: str = setting("en", env="NEWSDEDUP_PIVOT_LANG",
                              doc="language of rewritten headlines and summaries")
    translation_langs: tuple[str, ...] = setting(TRANSLATION_LANGS, env="NEWSDEDUP_TRANSLATION_LANGS",
                                                 doc="story translations (2 per call), comma-separated")
    narrative_langs: tuple[str, ...] = setting(NARRATIVE_LANGS, env="NEWSDEDUP_NARRATIVE_LANGS",
                                               doc="event narrative translations, comma-separated")
    # USD per 1M tokens, "model=in/out,model=in/out"; unknown models cost 0 and are flagged.
    prices: str = setting("deepseek-chat=0.27/1.10,qwen-plus=0.40/1.20,gpt-4o-mini=0.15/0.60",
                          env="NEWSDEDUP_LLM_PRICES",
                          doc="USD per 1M tokens, `model=in/out[/cached_in]`; unknown models cost 0 and are flagged")
    # Reuse stored answers for identical requests (shared/models/cache.py); off = always ask the model.
    reuse: bool = setting(True, calibrated=True, was="NEWSDEDUP_LLM_REUSE",
                          doc="reuse a stored answer for the same articles, model, prompt version and languages "
                              "(`false`: always call)")
    # How far a model's significance may exceed the coverage heuristic (stages/llm/scoring.py: bound_significance).
    significance_margin: float = setting(4.0, calibrated=True, was="NEWSDEDUP_SIGNIFICANCE_MARGIN",
                                         doc="how far a model's significance may exceed the coverage heuristic "
                                             "(sources, languages, articles, speed)")

    def __post_init__(self) -> None:
        # Every language here names files and directories of the feeds, the site and the digests.
        check_language_codes("NEWSDEDUP_PIVOT_LANG", (self.pivot_lang,))
        check_language_codes("NEWSDEDUP_TRANSLATION_LANGS", self.translation_langs)
        check_language_codes("NEWSDEDUP_NARRATIVE_LANGS", self.narrative_langs)

    @property
    def offline(self) -> bool:
        return not self.base_url


@dataclass(frozen=True)
class BackoffPolicy:
    """Delays between attempts (config.llm_backoff()). Tests use tiny values; defaults: 1 s doubling to 30 s."""

    CALIBRATION: ClassVar[str] = "llm"  # its section in the calibration file

    base_s: float = setting(1.0, calibrated=True, was="NEWSDEDUP_LLM_BACKOFF_BASE", doc="LLM retries: first delay (s), doubling")
    max_s: float = setting(30.0, calibrated=True, was="NEWSDEDUP_LLM_BACKOFF_MAX", doc="LLM retries: longest delay (s)")
    # A Retry-After above this ends the call instead of sleeping (the run moves on; the item stays pending).
    retry_after_max_s: float = setting(120.0, calibrated=True, was="NEWSDEDUP_LLM_RETRY_AFTER_MAX",
                                       doc="a 429's `Retry-After` is honoured up to this (s); longer ends the call")
