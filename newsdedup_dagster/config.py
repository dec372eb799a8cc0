"""Every setting the project reads from the environment, built here and nowhere else.

One frozen dataclass per pipeline stage, each built by one function below from the environment:

    ingest_settings()      IngestSettings        (this module)
    dedup_settings()       DedupSettings         (this module)
    embedding_settings()   EmbeddingSettings     (embeddings/providers.py)
    clustering_settings()  ClusterSettings       (clustering/settings.py)
    llm_settings()         LLMSettings           (this module)   llm_backoff() -> llm/client.py BackoffPolicy
    grouping_settings()    GroupingSettings      (events/grouping.py)   narrative_settings() -> events/narrative.py
    digest_settings()      DigestSettings        (digest/select.py)
    mail_settings()        SmtpSettings          (digest/send.py)
    publish_settings()     PublishSettings       (this module)
    retention_settings()   RetentionSettings     (this module)

The classes hold plain defaults (the README's configuration table lists them) and never read the
environment; the pure modules take an instance as an argument. Dagster resources and run config
override a built instance through `merged()`. A bad value fails with one message style:
"NAME='value': expected <what>". Every variable is optional; the defaults run the whole pipeline
offline on the embedded PostgreSQL under ``$NEWSDEDUP_HOME``.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, TypeVar

if TYPE_CHECKING:  # the stage modules import this one; their classes are imported where built
    from .clustering.settings import ClusterSettings
    from .digest.select import DigestSettings
    from .digest.send import SmtpSettings
    from .embeddings.providers import EmbeddingSettings
    from .events.grouping import GroupingSettings
    from .events.narrative import NarrativeSettings
    from .llm.client import BackoffPolicy

PACKAGE_DIR = Path(__file__).resolve().parent
SAMPLE_DATA_DIR = PACKAGE_DIR / "sample_data"
STARTER_SOURCES = PACKAGE_DIR / "sources" / "starter_sources.yaml"

S = TypeVar("S")


def merged(settings: S, **overrides: Any) -> S:
    """`settings` with every override that is not None (a resource field or run-config value left
    unset keeps the environment's value). The one way resources and run config override settings;
    the dataclass validates the result again."""
    changes = {key: value for key, value in overrides.items() if value is not None}
    return dataclasses.replace(settings, **changes) if changes else settings


# ---------------------------------------------------------------- reading one variable
def _invalid(name: str, raw: str, expected: str) -> ValueError:
    return ValueError(f"{name}={raw!r}: expected {expected}")


def env_str(name: str, default: str | None = None) -> str | None:
    """The variable, or `default` when unset or empty."""
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def env_float(name: str, default: float | None) -> float | None:
    raw = env_str(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        raise _invalid(name, raw, "a number") from None


def env_int(name: str, default: int | None) -> int | None:
    raw = env_str(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise _invalid(name, raw, "an integer") from None


def env_flag(name: str, default: bool = False) -> bool:
    raw = env_str(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise _invalid(name, raw, "true or false")


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = env_str(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value not in choices:
        raise _invalid(name, raw, " or ".join(choices))
    return value


def env_list(name: str, default: str) -> tuple[str, ...]:
    raw = env_str(name, default) or ""
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def _path(name: str, default: Path | str) -> Path:
    return Path(env_str(name, str(default))).expanduser().resolve()


# ---------------------------------------------------------------- deployment: paths and databases
def home_dir() -> Path:
    """$NEWSDEDUP_HOME, default `.newsdedup/` in the working directory."""
    return _path("NEWSDEDUP_HOME", ".newsdedup")


def database_url() -> str | None:
    """$NEWSDEDUP_DATABASE_URL or None (= embedded server)."""
    return env_str("NEWSDEDUP_DATABASE_URL")


# The embedded server's buffer cache. PostgreSQL's 128 MB default holds less than the recent window's
# HNSW graph and vectors (100k items: ~0.4 GB), so every pass-2 search re-read pages from the OS
# cache: bench/clustering.py, pass-2 KNN of one hour 0.73 s at 128 MB, 0.47 s at 1 GB (synthetic
# vectors); docs/CALIBRATION.md#embedded-server-memory
EMBEDDED_SHARED_BUFFERS_MAX_MB = 1024
EMBEDDED_SHARED_BUFFERS_MIN_MB = 128


def embedded_shared_buffers() -> str:
    """$NEWSDEDUP_EMBEDDED_SHARED_BUFFERS (`512MB`, `2GB`, ...) or `auto`: a quarter of the
    machine's memory, between 128 MB and 1 GB. Only the embedded server reads it."""
    raw = env_str("NEWSDEDUP_EMBEDDED_SHARED_BUFFERS", "auto")
    if raw.lower() == "auto":
        try:
            total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
        except (ValueError, OSError):
            total_mb = 4 * EMBEDDED_SHARED_BUFFERS_MIN_MB
        quarter = total_mb // 4
        return f"{max(EMBEDDED_SHARED_BUFFERS_MIN_MB, min(EMBEDDED_SHARED_BUFFERS_MAX_MB, quarter))}MB"
    number, unit = raw[:-2], raw[-2:].upper()
    if not number.isdigit() or unit not in ("MB", "GB") or int(number) == 0:
        raise _invalid("NEWSDEDUP_EMBEDDED_SHARED_BUFFERS", raw, "`auto` or a size such as 512MB or 2GB")
    return f"{int(number)}{unit}"


def dagster_database_url() -> str | None:
    """$NEWSDEDUP_DAGSTER_DATABASE_URL or None (= database `dagster` beside the application's)."""
    return env_str("NEWSDEDUP_DAGSTER_DATABASE_URL")


def sql_dir() -> Path:
    """Named SQL and migrations: $NEWSDEDUP_SQL_DIR, else the package's own `sql/` (a wheel ships
    the repository's top-level `sql/` inside the package, see setup.py), else the checkout's."""
    override = env_str("NEWSDEDUP_SQL_DIR")
    if override:
        return Path(override).expanduser().resolve()
    installed = PACKAGE_DIR / "sql"
    return installed if installed.is_dir() else PACKAGE_DIR.parent / "sql"


def dagster_home() -> Path:
    return _path("DAGSTER_HOME", home_dir() / "dagster")


def dagster_home_variable() -> Path | None:
    """$DAGSTER_HOME as Dagster's own commands see it: they refuse to start without it (newsdedup's
    commands fall back to `dagster_home()`'s default and set it for their Dagster runs)."""
    raw = env_str("DAGSTER_HOME")
    return Path(raw).expanduser().resolve() if raw else None


def partitions_start() -> str:
    """First hourly partition (format YYYY-MM-DD-HH:MM). Fixed at definitions load."""
    return env_str("NEWSDEDUP_PARTITIONS_START", "2026-11-01-00:00")


def outbox_dir() -> Path:
    return _path("NEWSDEDUP_OUTBOX", home_dir() / "outbox")


def alert_recipients() -> tuple[str, ...]:
    """Who hears about failed runs (comma-separated addresses); none = alert files in the outbox."""
    return env_list("NEWSDEDUP_ALERT_TO", "")


def dagster_ui_url() -> str | None:
    """Public URL of the Dagster UI, for links in alerts (e.g. https://dagster.example.org)."""
    return env_str("NEWSDEDUP_DAGSTER_UI_URL")


def delivery_crash_point() -> str | None:
    """Test-only: `POINT[:N]` makes the delivery process kill itself the N-th time it reaches
    POINT (handed_over | accepted), to prove what a crash there costs. Never set in production."""
    return env_str("NEWSDEDUP_TEST_DELIVERY_CRASH")


# ---------------------------------------------------------------- ingest
def sources_file() -> Path:
    return _path("NEWSDEDUP_SOURCES", SAMPLE_DATA_DIR / "sources.yaml")


def fetch_mode() -> str:
    """live | replay | auto (auto: replay when the sources file names replay files, else live)."""
    return env_choice("NEWSDEDUP_FETCH_MODE", "auto", ("live", "replay", "auto"))


@dataclass(frozen=True)
class IngestSettings:
    """Limits for hostile feeds and where a fetch may connect (README: "Hostile input")."""

    # Networks (CIDR) or host names (`*.corp.example` for all below) a fetch may reach although
    # they are not public addresses: intranet feeds; tests use 127.0.0.0/8. Empty = public only.
    allow_private: tuple[str, ...] = ()
    max_concurrency: int = 32
    max_per_host: int = 4
    total_timeout: float = 60.0
    max_body_bytes: int = 10 * 1024 * 1024
    max_decoded_bytes: int = 20 * 1024 * 1024
    max_entries: int = 1_000
    max_field_chars: int = 200_000
    max_title_chars: int = 500
    max_summary_chars: int = 5_000
    max_content_chars: int = 100_000
    max_url_chars: int = 2_048
    parse_time_budget: float = 15.0

    def __post_init__(self) -> None:
        if self.max_url_chars > 2_600:
            # items.url and item_sources.url are not indexed, but keep them in the btree row limit anyway.
            raise ValueError(f"NEWSDEDUP_INGEST_MAX_URL_CHARS={self.max_url_chars}: expected at most 2600")
        for name in ("max_concurrency", "max_per_host", "max_entries", "max_field_chars", "max_title_chars",
                     "max_summary_chars", "max_content_chars", "max_url_chars"):
            if getattr(self, name) < 1:
                raise ValueError(f"ingest setting {name}={getattr(self, name)}: expected at least 1")
        if self.parse_time_budget <= 0 or self.total_timeout <= 0:
            raise ValueError("NEWSDEDUP_INGEST_PARSE_TIMEOUT and NEWSDEDUP_FETCH_TIMEOUT: expected positive numbers")


def ingest_settings() -> IngestSettings:
    d = IngestSettings()
    return IngestSettings(
        allow_private=env_list("NEWSDEDUP_FETCH_ALLOW_PRIVATE", ""),
        max_concurrency=env_int("NEWSDEDUP_FETCH_CONCURRENCY", d.max_concurrency),
        max_per_host=env_int("NEWSDEDUP_FETCH_PER_HOST", d.max_per_host),
        total_timeout=env_float("NEWSDEDUP_FETCH_TIMEOUT", d.total_timeout),
        max_body_bytes=env_int("NEWSDEDUP_FETCH_MAX_BYTES", d.max_body_bytes),
        max_decoded_bytes=env_int("NEWSDEDUP_FETCH_MAX_DECODED_BYTES", d.max_decoded_bytes),
        max_entries=env_int("NEWSDEDUP_INGEST_MAX_ENTRIES", d.max_entries),
        max_field_chars=env_int("NEWSDEDUP_INGEST_MAX_FIELD_CHARS", d.max_field_chars),
        max_title_chars=env_int("NEWSDEDUP_INGEST_MAX_TITLE_CHARS", d.max_title_chars),
        max_summary_chars=env_int("NEWSDEDUP_INGEST_MAX_SUMMARY_CHARS", d.max_summary_chars),
        max_content_chars=env_int("NEWSDEDUP_INGEST_MAX_CONTENT_CHARS", d.max_content_chars),
        max_url_chars=env_int("NEWSDEDUP_INGEST_MAX_URL_CHARS", d.max_url_chars),
        parse_time_budget=env_float("NEWSDEDUP_INGEST_PARSE_TIMEOUT", d.parse_time_budget),
    )


# ---------------------------------------------------------------- near-duplicates
@dataclass(frozen=True)
class DedupSettings:
    # Canonical items of this many hours before H are compared with H's items: the stories stage's
    # 36 h story age, so a copy arriving late still finds its original.
    lookback_hours: int = 36
    # keep | reset for item_duplicates (neardup/store.py); None = decided per run (assets/neardup.py).
    # The same variable is the clustering key `later_partitions`.
    later_partitions: str | None = None


def dedup_settings() -> DedupSettings:
    return DedupSettings(
        lookback_hours=env_int("NEWSDEDUP_NEARDUP_LOOKBACK_HOURS", DedupSettings.lookback_hours),
        later_partitions=env_str("NEWSDEDUP_LATER_PARTITIONS"),
    )


# ---------------------------------------------------------------- embeddings
def embedding_settings() -> EmbeddingSettings:
    from .embeddings.providers import EmbeddingSettings

    d = EmbeddingSettings()
    return EmbeddingSettings(
        provider=env_str("NEWSDEDUP_EMBEDDING_PROVIDER", d.provider).lower(),
        model=env_str("NEWSDEDUP_EMBEDDING_MODEL"),
        base_url=env_str("NEWSDEDUP_EMBEDDING_BASE_URL"),
        # The key is read here and handed only to the openai client; it is never logged.
        api_key=env_str("NEWSDEDUP_EMBEDDING_API_KEY"),
        dimensions=env_int("NEWSDEDUP_EMBEDDING_DIMENSIONS", None),
        batch_size=env_int("NEWSDEDUP_EMBEDDING_BATCH", d.batch_size),
        timeout_s=env_float("NEWSDEDUP_EMBEDDING_TIMEOUT", d.timeout_s),
        max_attempts=env_int("NEWSDEDUP_EMBEDDING_MAX_ATTEMPTS", d.max_attempts),
        text_mode=env_str("NEWSDEDUP_EMBEDDING_TEXT", d.text_mode),
        lead_chars=env_int("NEWSDEDUP_EMBEDDING_LEAD_CHARS", d.lead_chars),
        hnsw_m=env_int("NEWSDEDUP_HNSW_M", d.hnsw_m),
        hnsw_ef_construction=env_int("NEWSDEDUP_HNSW_EF_CONSTRUCTION", d.hnsw_ef_construction),
        centroid_hnsw_m=env_int("NEWSDEDUP_CENTROID_HNSW_M", d.centroid_hnsw_m),
        centroid_hnsw_ef_construction=env_int("NEWSDEDUP_CENTROID_HNSW_EF_CONSTRUCTION",
                                              d.centroid_hnsw_ef_construction),
        threads=env_int("NEWSDEDUP_EMBEDDING_THREADS", d.threads),
        workers=env_int("NEWSDEDUP_EMBEDDING_WORKERS", d.workers),
        concurrency=env_int("NEWSDEDUP_EMBEDDING_CONCURRENCY", d.concurrency),
        backoff_base_s=env_float("NEWSDEDUP_EMBEDDING_BACKOFF_BASE", d.backoff_base_s),
        backoff_max_s=env_float("NEWSDEDUP_EMBEDDING_BACKOFF_MAX", d.backoff_max_s),
        retry_after_max_s=env_float("NEWSDEDUP_EMBEDDING_RETRY_AFTER_MAX", d.retry_after_max_s),
        centre=env_str("NEWSDEDUP_EMBEDDING_CENTRE", d.centre).lower(),
    )


# ---------------------------------------------------------------- clustering
def clustering_environment() -> dict[str, str]:
    """NEWSDEDUP_<KEY> for every clustering key (clustering/settings.py), as set: {key: raw}."""
    from .clustering.settings import setting_keys

    values = {}
    for key in setting_keys():
        raw = env_str(f"NEWSDEDUP_{key.upper()}")
        if raw is not None:
            values[key] = raw
    return values


def clustering_settings(model: str | None = None, overrides: Mapping[str, Any] | None = None) -> ClusterSettings:
    """Defaults -> per-model calibration -> NEWSDEDUP_<KEY> -> `overrides` (run config, --set)."""
    from .clustering.settings import settings_for

    return settings_for(model, overrides, environment=clustering_environment())


def clustering_busy_retry() -> tuple[int, float]:
    """(retries, seconds between them) when another clustering run holds the lock past its timeout."""
    return env_int("NEWSDEDUP_CLUSTERING_BUSY_RETRIES", 5), env_float("NEWSDEDUP_CLUSTERING_BUSY_WAIT", 60.0)


# ---------------------------------------------------------------- LLM stages
@dataclass(frozen=True)
class LLMSettings:
    base_url: str | None = None
    # Handed only to the openai client; never logged.
    api_key: str | None = dataclasses.field(default=None, repr=False)
    scoring_model: str = "deepseek-chat"
    translation_model: str = "qwen-plus"
    narrative_model: str = "deepseek-chat"
    timeout_s: float = 60.0
    max_attempts: int = 3
    concurrency: int = 4
    # The language stories are scored and narrated in; the digest's and the feeds' first language.
    pivot_lang: str = "en"
    translation_langs: tuple[str, ...] = ("zh", "ja", "ko", "fr", "de", "es", "pt", "ru", "ar", "hi")
    narrative_langs: tuple[str, ...] = ("en", "zh", "ja", "ko", "fr", "de", "es", "pt", "it", "ru", "ar", "hi",
                                        "id", "vi", "th", "tr")
    # USD per 1M tokens, "model=in/out,model=in/out"; unknown models cost 0 and are flagged.
    prices: str = "deepseek-chat=0.27/1.10,qwen-plus=0.40/1.20,gpt-4o-mini=0.15/0.60"
    # Reuse stored answers for identical requests (llm/cache.py); off = always ask the model.
    reuse: bool = True
    # How far a model's significance may exceed the coverage heuristic (llm/scoring.py: bound_significance).
    significance_margin: float = 4.0

    @property
    def offline(self) -> bool:
        return not self.base_url


def llm_settings() -> LLMSettings:
    d = LLMSettings()
    return LLMSettings(
        base_url=env_str("NEWSDEDUP_LLM_BASE_URL"),
        # The key is read here and handed only to the openai client; it is never logged.
        api_key=env_str("NEWSDEDUP_LLM_API_KEY"),
        scoring_model=env_str("NEWSDEDUP_SCORING_MODEL", d.scoring_model),
        translation_model=env_str("NEWSDEDUP_TRANSLATION_MODEL", d.translation_model),
        narrative_model=env_str("NEWSDEDUP_NARRATIVE_MODEL", d.narrative_model),
        timeout_s=env_float("NEWSDEDUP_LLM_TIMEOUT", d.timeout_s),
        max_attempts=env_int("NEWSDEDUP_LLM_MAX_ATTEMPTS", d.max_attempts),
        concurrency=env_int("NEWSDEDUP_LLM_CONCURRENCY", d.concurrency),
        pivot_lang=env_str("NEWSDEDUP_PIVOT_LANG", d.pivot_lang),
        translation_langs=env_list("NEWSDEDUP_TRANSLATION_LANGS", ",".join(d.translation_langs)),
        narrative_langs=env_list("NEWSDEDUP_NARRATIVE_LANGS", ",".join(d.narrative_langs)),
        prices=env_str("NEWSDEDUP_LLM_PRICES", d.prices),
        reuse=env_flag("NEWSDEDUP_LLM_REUSE", d.reuse),
        significance_margin=env_float("NEWSDEDUP_SIGNIFICANCE_MARGIN", d.significance_margin),
    )


def llm_backoff() -> BackoffPolicy:
    from .llm.client import BackoffPolicy

    d = BackoffPolicy()
    return BackoffPolicy(
        base_s=env_float("NEWSDEDUP_LLM_BACKOFF_BASE", d.base_s),
        max_s=env_float("NEWSDEDUP_LLM_BACKOFF_MAX", d.max_s),
        retry_after_max_s=env_float("NEWSDEDUP_LLM_RETRY_AFTER_MAX", d.retry_after_max_s),
    )


# ---------------------------------------------------------------- events
def grouping_settings(model: str | None = None) -> GroupingSettings:
    """`model`: the embedding model id the stories' centroids were made with; None = the configured
    provider's offline model. Its calibrated threshold applies unless NEWSDEDUP_EVENT_THRESHOLD is set."""
    from .embeddings.providers import DEFAULT_PROVIDER, OFFLINE_MODEL_IDS
    from .events.grouping import GroupingSettings, event_threshold_for

    if model is None:
        provider = embedding_settings().provider
        model = OFFLINE_MODEL_IDS.get(provider, OFFLINE_MODEL_IDS[DEFAULT_PROVIDER])
    d = GroupingSettings()
    return GroupingSettings(
        threshold=env_float("NEWSDEDUP_EVENT_THRESHOLD", event_threshold_for(model)),
        join_gap_hours=env_float("NEWSDEDUP_EVENT_JOIN_GAP_HOURS", d.join_gap_hours),
        quiet_hours=env_float("NEWSDEDUP_EVENT_QUIET_HOURS", d.quiet_hours),
        max_span_days=env_float("NEWSDEDUP_EVENT_MAX_SPAN_DAYS", d.max_span_days),
        min_significance=env_float("NEWSDEDUP_EVENT_MIN_SIGNIFICANCE", d.min_significance),
    )


def narrative_settings() -> NarrativeSettings:
    from .events.narrative import NarrativeSettings

    d = NarrativeSettings()
    return NarrativeSettings(
        interval_hours=env_float("NEWSDEDUP_NARRATIVE_INTERVAL_HOURS", d.interval_hours),
        max_per_run=env_int("NEWSDEDUP_NARRATIVE_MAX_PER_RUN", d.max_per_run),
        translate_max_events=env_int("NEWSDEDUP_NARRATIVE_TRANSLATE_MAX_EVENTS", d.translate_max_events),
    )


# ---------------------------------------------------------------- digest and mail
def digest_settings() -> DigestSettings:
    from .digest.select import DigestSettings

    d = DigestSettings()
    return DigestSettings(
        max_stories=env_int("NEWSDEDUP_DIGEST_MAX_STORIES", d.max_stories),
        max_per_event=env_int("NEWSDEDUP_DIGEST_MAX_PER_EVENT", d.max_per_event),
        max_per_region=env_int("NEWSDEDUP_DIGEST_MAX_PER_REGION", d.max_per_region),
        min_significance=env_float("NEWSDEDUP_DIGEST_MIN_SIGNIFICANCE", d.min_significance),
        langs=env_list("NEWSDEDUP_DIGEST_LANGS", ""),
        allow_backfill_send=env_flag("NEWSDEDUP_DIGEST_ALLOW_BACKFILL_SEND", d.allow_backfill_send),
    )


def mail_settings() -> SmtpSettings:
    """SMTP from NEWSDEDUP_SMTP_* and NEWSDEDUP_OUTBOX_ONLY. The password is read here only; the
    Dagster mailer resource gets it through this function in the run worker."""
    from .digest.send import SECURITY_MODES, SmtpSettings

    d = SmtpSettings()
    return SmtpSettings(
        host=env_str("NEWSDEDUP_SMTP_HOST"),
        port=env_int("NEWSDEDUP_SMTP_PORT", None) or None,
        security=env_choice("NEWSDEDUP_SMTP_SECURITY", d.security, SECURITY_MODES),
        user=env_str("NEWSDEDUP_SMTP_USER"),
        password=env_str("NEWSDEDUP_SMTP_PASSWORD"),
        from_addr=env_str("NEWSDEDUP_SMTP_FROM", d.from_addr),
        batch_size=env_int("NEWSDEDUP_SMTP_BATCH_SIZE", None) or d.batch_size,
        timeout_s=env_float("NEWSDEDUP_SMTP_TIMEOUT", None) or d.timeout_s,
        max_attempts=env_int("NEWSDEDUP_SMTP_MAX_ATTEMPTS", None) or d.max_attempts,
        lease_s=env_float("NEWSDEDUP_SMTP_LEASE", None) or d.lease_s,
        outage_retries=env_int("NEWSDEDUP_SMTP_OUTAGE_RETRIES", d.outage_retries),
        outage_delay_s=env_float("NEWSDEDUP_SMTP_OUTAGE_DELAY", None) or d.outage_delay_s,
        outbox_only=env_flag("NEWSDEDUP_OUTBOX_ONLY", d.outbox_only),
    )


# ---------------------------------------------------------------- publish (story feeds + site)
@dataclass(frozen=True)
class PublishSettings:
    """Where and what `story_feeds` publishes: Atom + JSON Feed per language and a static site."""

    output_dir: Path = Path(".newsdedup/public")  # publish_settings(): $NEWSDEDUP_HOME/public
    # Empty = the pivot language and every story translation language.
    langs: tuple[str, ...] = ()
    # A feed holds the stories active in the last N hours, the most significant first, at most
    # max_stories of them (0 = no limit on either, but not both).
    window_hours: int = 24
    max_stories: int = 100
    min_significance: float = 0.0
    # Absolute URL the directory is served at: feeds need absolute links (self, entries).
    base_url: str = "http://127.0.0.1:8000/"
    # Entry ids are tag URIs minted under this name once per story and then kept for good.
    tag_authority: str = "newsdedup.localhost"
    title: str = "newsdedup"

    def __post_init__(self) -> None:
        if self.window_hours < 0 or self.max_stories < 0 or (self.window_hours == 0 and self.max_stories == 0):
            raise ValueError("NEWSDEDUP_PUBLISH_WINDOW_HOURS / _MAX_STORIES: expected >= 0, and not both 0")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"NEWSDEDUP_PUBLISH_BASE_URL={self.base_url!r}: expected an http(s) URL")
        if not self.base_url.endswith("/"):
            object.__setattr__(self, "base_url", self.base_url + "/")

    def feed_langs(self, llm: LLMSettings) -> tuple[str, ...]:
        if self.langs:
            return self.langs
        return tuple(dict.fromkeys([llm.pivot_lang, *llm.translation_langs]))


# A language code (BCP 47 shape, RFC 5646): languages name files and directories, so nothing else passes.
LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")


def published_languages() -> tuple[str, ...]:
    """Every language the deployment publishes in (pivot, translations, narratives, feeds,
    digests), from the environment: what a run's `langs` may choose from. Only code-shaped values."""
    d = LLMSettings()
    langs = [env_str("NEWSDEDUP_PIVOT_LANG", d.pivot_lang),
             *env_list("NEWSDEDUP_TRANSLATION_LANGS", ",".join(d.translation_langs)),
             *env_list("NEWSDEDUP_NARRATIVE_LANGS", ",".join(d.narrative_langs)),
             *env_list("NEWSDEDUP_PUBLISH_LANGS", ""), *env_list("NEWSDEDUP_DIGEST_LANGS", "")]
    return tuple(dict.fromkeys(lang for lang in langs if lang and LANGUAGE_CODE.match(lang)))


def publish_settings() -> PublishSettings:
    d = PublishSettings()
    return PublishSettings(
        output_dir=_path("NEWSDEDUP_PUBLISH_DIR", home_dir() / "public"),
        langs=env_list("NEWSDEDUP_PUBLISH_LANGS", ""),
        window_hours=env_int("NEWSDEDUP_PUBLISH_WINDOW_HOURS", d.window_hours),
        max_stories=env_int("NEWSDEDUP_PUBLISH_MAX_STORIES", d.max_stories),
        min_significance=env_float("NEWSDEDUP_PUBLISH_MIN_SIGNIFICANCE", d.min_significance),
        base_url=env_str("NEWSDEDUP_PUBLISH_BASE_URL", d.base_url),
        tag_authority=env_str("NEWSDEDUP_PUBLISH_TAG_AUTHORITY", d.tag_authority),
        title=env_str("NEWSDEDUP_PUBLISH_TITLE", d.title),
    )


# ---------------------------------------------------------------- retention (newsdedup prune)
@dataclass(frozen=True)
class RetentionSettings:
    """Ages after which `newsdedup prune` (and the daily `prune` asset) thins data; 0 = keep forever."""

    # Archived feed bodies (the fetch row stays): re-parsing an hour needs its bodies.
    feed_body_days: int = 30
    # llm_calls rows (per-call detail); their daily totals are kept in llm_call_daily_totals.
    llm_call_days: int = 90
    # Item vectors; must exceed the longest clustering window (checked by retention.check_settings).
    vector_days: int = 7
    # Embedding cache entries no item vector uses are kept this long (a run may be filling the cache).
    cache_days: int = 2
    # Rows per statement (each batch is its own transaction, so prune never holds long locks).
    batch_rows: int = 5000


def retention_settings() -> RetentionSettings:
    d = RetentionSettings()
    return RetentionSettings(
        feed_body_days=env_int("NEWSDEDUP_RETENTION_FEED_BODY_DAYS", d.feed_body_days),
        llm_call_days=env_int("NEWSDEDUP_RETENTION_LLM_CALL_DAYS", d.llm_call_days),
        vector_days=env_int("NEWSDEDUP_RETENTION_VECTOR_DAYS", d.vector_days),
        cache_days=env_int("NEWSDEDUP_RETENTION_CACHE_DAYS", d.cache_days),
        batch_rows=env_int("NEWSDEDUP_RETENTION_BATCH", d.batch_rows),
    )
