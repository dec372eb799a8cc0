"""Settings read from the environment (one place, so the README's table stays true).

Every variable is optional; the defaults run the whole pipeline offline on the
embedded PostgreSQL under ``$NEWSDEDUP_HOME``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
SAMPLE_DATA_DIR = PACKAGE_DIR / "sample_data"
STARTER_SOURCES = PACKAGE_DIR / "sources" / "starter_sources.yaml"


def env_str(name: str, default: str | None = None) -> str | None:
    """The variable, or `default` when unset or empty."""
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def env_float(name: str, default: float) -> float:
    """A number from the environment, with a one-line error naming the variable."""
    raw = env_str(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise ValueError(f"{name}={raw!r} is not a number") from exc


def env_int(name: str, default: int) -> int:
    """An integer from the environment, with a one-line error naming the variable."""
    raw = env_str(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{name}={raw!r} is not an integer") from exc


def env_list(name: str, default: str) -> tuple[str, ...]:
    raw = env_str(name, default) or ""
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def home_dir() -> Path:
    """$NEWSDEDUP_HOME, default `.newsdedup/` in the working directory."""
    return Path(env_str("NEWSDEDUP_HOME", ".newsdedup")).expanduser().resolve()


def database_url() -> str | None:
    """$NEWSDEDUP_DATABASE_URL or None (= embedded server)."""
    return env_str("NEWSDEDUP_DATABASE_URL")


def sources_file() -> Path:
    return Path(env_str("NEWSDEDUP_SOURCES", str(SAMPLE_DATA_DIR / "sources.yaml"))).expanduser().resolve()


def fetch_mode() -> str:
    """live | replay | auto (auto: replay when the sources file names replay files, else live)."""
    mode = (env_str("NEWSDEDUP_FETCH_MODE", "auto") or "auto").lower()
    if mode not in ("live", "replay", "auto"):
        raise ValueError(f"NEWSDEDUP_FETCH_MODE={mode!r}: expected live, replay or auto")
    return mode


# ---------------------------------------------------------------- near-duplicates
def neardup_later_partitions() -> str | None:
    """NEWSDEDUP_LATER_PARTITIONS (keep | reset) for item_duplicates; the stories asset reads the same
    variable through clustering/settings.py. None when unset."""
    return env_str("NEWSDEDUP_LATER_PARTITIONS")


# ---------------------------------------------------------------- ingestion
# Limits for hostile feeds and where a fetch may connect (README: "Hostile input").


@dataclass(frozen=True)
class IngestSettings:
    # Networks (CIDR) or host names (`*.corp.example` for all below) a fetch may reach although
    # they are not public addresses: intranet feeds; tests use 127.0.0.0/8. Empty = public only.
    allow_private: tuple[str, ...] = field(default_factory=lambda: env_list("NEWSDEDUP_FETCH_ALLOW_PRIVATE", ""))
    max_concurrency: int = field(default_factory=lambda: env_int("NEWSDEDUP_FETCH_CONCURRENCY", 32))
    max_per_host: int = field(default_factory=lambda: env_int("NEWSDEDUP_FETCH_PER_HOST", 4))
    total_timeout: float = field(default_factory=lambda: env_float("NEWSDEDUP_FETCH_TIMEOUT", 60.0))
    max_body_bytes: int = field(default_factory=lambda: env_int("NEWSDEDUP_FETCH_MAX_BYTES", 10 * 1024 * 1024))
    max_decoded_bytes: int = field(
        default_factory=lambda: env_int("NEWSDEDUP_FETCH_MAX_DECODED_BYTES", 20 * 1024 * 1024))
    max_entries: int = field(default_factory=lambda: env_int("NEWSDEDUP_INGEST_MAX_ENTRIES", 1_000))
    max_field_chars: int = field(default_factory=lambda: env_int("NEWSDEDUP_INGEST_MAX_FIELD_CHARS", 200_000))
    max_title_chars: int = field(default_factory=lambda: env_int("NEWSDEDUP_INGEST_MAX_TITLE_CHARS", 500))
    max_summary_chars: int = field(default_factory=lambda: env_int("NEWSDEDUP_INGEST_MAX_SUMMARY_CHARS", 5_000))
    max_content_chars: int = field(default_factory=lambda: env_int("NEWSDEDUP_INGEST_MAX_CONTENT_CHARS", 100_000))
    max_url_chars: int = field(default_factory=lambda: env_int("NEWSDEDUP_INGEST_MAX_URL_CHARS", 2_048))
    parse_time_budget: float = field(default_factory=lambda: env_float("NEWSDEDUP_INGEST_PARSE_TIMEOUT", 15.0))

    def __post_init__(self) -> None:
        if self.max_url_chars > 2_600:
            # items.url and item_sources.url are not indexed, but keep them in the btree row limit anyway.
            raise ValueError(f"NEWSDEDUP_INGEST_MAX_URL_CHARS={self.max_url_chars}: at most 2600")
        for name in ("max_concurrency", "max_per_host", "max_entries", "max_field_chars", "max_title_chars",
                     "max_summary_chars", "max_content_chars", "max_url_chars"):
            if getattr(self, name) < 1:
                raise ValueError(f"ingest setting {name} must be at least 1, got {getattr(self, name)}")
        if self.parse_time_budget <= 0 or self.total_timeout <= 0:
            raise ValueError("NEWSDEDUP_INGEST_PARSE_TIMEOUT and NEWSDEDUP_FETCH_TIMEOUT must be positive")


def partitions_start() -> str:
    """First hourly partition (format YYYY-MM-DD-HH:MM). Fixed at definitions load."""
    return env_str("NEWSDEDUP_PARTITIONS_START", "2026-11-01-00:00")


def outbox_dir() -> Path:
    return Path(env_str("NEWSDEDUP_OUTBOX", str(home_dir() / "outbox"))).expanduser().resolve()


def dagster_home() -> Path:
    return Path(env_str("DAGSTER_HOME", str(home_dir() / "dagster"))).expanduser().resolve()


@dataclass(frozen=True)
class LLMSettings:
    base_url: str | None = field(default_factory=lambda: env_str("NEWSDEDUP_LLM_BASE_URL"))
    # The key is read here and handed only to the openai client; it is never logged.
    api_key: str | None = field(default_factory=lambda: env_str("NEWSDEDUP_LLM_API_KEY"), repr=False)
    scoring_model: str = field(default_factory=lambda: env_str("NEWSDEDUP_SCORING_MODEL", "deepseek-chat"))
    translation_model: str = field(default_factory=lambda: env_str("NEWSDEDUP_TRANSLATION_MODEL", "qwen-plus"))
    narrative_model: str = field(default_factory=lambda: env_str("NEWSDEDUP_NARRATIVE_MODEL", "deepseek-chat"))
    timeout_s: float = field(default_factory=lambda: env_float("NEWSDEDUP_LLM_TIMEOUT", 60.0))
    max_attempts: int = field(default_factory=lambda: env_int("NEWSDEDUP_LLM_MAX_ATTEMPTS", 3))
    concurrency: int = field(default_factory=lambda: env_int("NEWSDEDUP_LLM_CONCURRENCY", 4))
    pivot_lang: str = field(default_factory=lambda: env_str("NEWSDEDUP_PIVOT_LANG", "en"))
    translation_langs: tuple[str, ...] = field(
        default_factory=lambda: env_list("NEWSDEDUP_TRANSLATION_LANGS", "zh,ja,ko,fr,de,es,pt,ru,ar,hi")
    )
    narrative_langs: tuple[str, ...] = field(
        default_factory=lambda: env_list(
            "NEWSDEDUP_NARRATIVE_LANGS", "en,zh,ja,ko,fr,de,es,pt,it,ru,ar,hi,id,vi,th,tr"
        )
    )
    # USD per 1M tokens, "model=in/out,model=in/out"; unknown models cost 0 and are flagged.
    prices: str = field(default_factory=lambda: env_str("NEWSDEDUP_LLM_PRICES", "deepseek-chat=0.27/1.10,qwen-plus=0.40/1.20,gpt-4o-mini=0.15/0.60"))
    # Reuse stored answers for identical requests (llm/cache.py); off = always ask the model.
    reuse: bool = field(default_factory=lambda: (env_str("NEWSDEDUP_LLM_REUSE", "true") or "").strip().lower()
                        not in ("0", "false", "no", "off"))
    # How far a model's significance may exceed the coverage heuristic (llm/scoring.py: bound_significance).
    significance_margin: float = field(default_factory=lambda: env_float("NEWSDEDUP_SIGNIFICANCE_MARGIN", 4.0))

    @property
    def offline(self) -> bool:
        return not self.base_url


# ------------------------------------------------------------------ publish (story feeds + site)
@dataclass(frozen=True)
class PublishSettings:
    """Where and what `story_feeds` publishes: Atom + JSON Feed per language and a static site."""

    output_dir: Path = field(default_factory=lambda: Path(
        env_str("NEWSDEDUP_PUBLISH_DIR", str(home_dir() / "public"))).expanduser().resolve())
    # Empty = the pivot language and every story translation language.
    langs: tuple[str, ...] = field(default_factory=lambda: env_list("NEWSDEDUP_PUBLISH_LANGS", ""))
    # A feed holds the stories active in the last N hours, the most significant first, at most
    # max_stories of them (0 = no limit on either, but not both).
    window_hours: int = field(default_factory=lambda: env_int("NEWSDEDUP_PUBLISH_WINDOW_HOURS", 24))
    max_stories: int = field(default_factory=lambda: env_int("NEWSDEDUP_PUBLISH_MAX_STORIES", 100))
    min_significance: float = field(default_factory=lambda: env_float("NEWSDEDUP_PUBLISH_MIN_SIGNIFICANCE", 0.0))
    # Absolute URL the directory is served at: feeds need absolute links (self, entries).
    base_url: str = field(default_factory=lambda: env_str("NEWSDEDUP_PUBLISH_BASE_URL", "http://127.0.0.1:8000/"))
    # Entry ids are tag URIs minted under this name once per story and then kept for good.
    tag_authority: str = field(default_factory=lambda: env_str("NEWSDEDUP_PUBLISH_TAG_AUTHORITY", "newsdedup.localhost"))
    title: str = field(default_factory=lambda: env_str("NEWSDEDUP_PUBLISH_TITLE", "newsdedup"))

    def __post_init__(self) -> None:
        if self.window_hours < 0 or self.max_stories < 0 or (self.window_hours == 0 and self.max_stories == 0):
            raise ValueError("NEWSDEDUP_PUBLISH_WINDOW_HOURS / _MAX_STORIES: >= 0, and not both 0")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"NEWSDEDUP_PUBLISH_BASE_URL={self.base_url!r}: expected an http(s) URL")
        if not self.base_url.endswith("/"):
            object.__setattr__(self, "base_url", self.base_url + "/")

    def feed_langs(self, llm: LLMSettings | None = None) -> tuple[str, ...]:
        if self.langs:
            return self.langs
        llm = llm or LLMSettings()
        return tuple(dict.fromkeys([llm.pivot_lang, *llm.translation_langs]))
# ------------------------------------------------------------------ delivery (digest mail)
def env_flag(name: str, default: bool = False) -> bool:
    raw = env_str(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name}={raw!r}: expected true or false")


def smtp_environment() -> dict:
    """SMTP settings from NEWSDEDUP_SMTP_* (and NEWSDEDUP_OUTBOX_ONLY); keys are the fields of
    digest.send.SmtpSettings. Unset variables are left out (the dataclass defaults apply)."""
    values = {
        "host": env_str("NEWSDEDUP_SMTP_HOST"),
        "port": env_int("NEWSDEDUP_SMTP_PORT", 0) or None,
        "security": (env_str("NEWSDEDUP_SMTP_SECURITY") or "").lower() or None,
        "user": env_str("NEWSDEDUP_SMTP_USER"),
        "password": env_str("NEWSDEDUP_SMTP_PASSWORD"),
        "from_addr": env_str("NEWSDEDUP_SMTP_FROM"),
        "batch_size": env_int("NEWSDEDUP_SMTP_BATCH_SIZE", 0) or None,
        "timeout_s": env_float("NEWSDEDUP_SMTP_TIMEOUT", 0) or None,
        "max_attempts": env_int("NEWSDEDUP_SMTP_MAX_ATTEMPTS", 0) or None,
        "lease_s": env_float("NEWSDEDUP_SMTP_LEASE", 0) or None,
        "outage_retries": env_int("NEWSDEDUP_SMTP_OUTAGE_RETRIES", 0) if env_str("NEWSDEDUP_SMTP_OUTAGE_RETRIES") else None,
        "outage_delay_s": env_float("NEWSDEDUP_SMTP_OUTAGE_DELAY", 0) or None,
        "outbox_only": env_flag("NEWSDEDUP_OUTBOX_ONLY") if env_str("NEWSDEDUP_OUTBOX_ONLY") else None,
    }
    return {k: v for k, v in values.items() if v is not None}


def delivery_crash_point() -> str | None:
    """Test-only: `POINT[:N]` makes the delivery process kill itself the N-th time it reaches
    POINT (handed_over | accepted), to prove what a crash there costs. Never set in production."""
    return env_str("NEWSDEDUP_TEST_DELIVERY_CRASH")


# ------------------------------------------------------------------ retention (newsdedup prune)
@dataclass(frozen=True)
class RetentionSettings:
    """Ages after which `newsdedup prune` (and the daily `prune` asset) thins data; 0 = keep forever."""

    # Archived feed bodies (the fetch row stays): re-parsing an hour needs its bodies.
    feed_body_days: int = field(default_factory=lambda: env_int("NEWSDEDUP_RETENTION_FEED_BODY_DAYS", 30))
    # llm_calls rows (per-call detail); their daily totals are kept in llm_call_daily_totals.
    llm_call_days: int = field(default_factory=lambda: env_int("NEWSDEDUP_RETENTION_LLM_CALL_DAYS", 90))
    # Item vectors; must exceed the longest clustering window (checked by retention.check_settings).
    vector_days: int = field(default_factory=lambda: env_int("NEWSDEDUP_RETENTION_VECTOR_DAYS", 7))
    # Embedding cache entries no item vector uses are kept this long (a run may be filling the cache).
    cache_days: int = field(default_factory=lambda: env_int("NEWSDEDUP_RETENTION_CACHE_DAYS", 2))
    # Rows per statement (each batch is its own transaction, so prune never holds long locks).
    batch_rows: int = field(default_factory=lambda: env_int("NEWSDEDUP_RETENTION_BATCH", 5000))
# ----------------------------------------------------------------- Dagster deployment
# Secrets are handed to resources as dagster.EnvVar (read by the run worker, never shown in the UI);
# an EnvVar whose variable is unset fails the run, so optional secrets are bound only when set.
LLM_API_KEY_ENV = "NEWSDEDUP_LLM_API_KEY"
SMTP_PASSWORD_ENV = "NEWSDEDUP_SMTP_PASSWORD"


def secret_is_set(name: str) -> bool:
    return env_str(name) is not None


def alert_recipients() -> tuple[str, ...]:
    """Who hears about failed runs (comma-separated addresses); none = alert files in the outbox."""
    return env_list("NEWSDEDUP_ALERT_TO", "")


def dagster_ui_url() -> str | None:
    """Public URL of the Dagster UI, for links in alerts (e.g. https://dagster.example.org)."""
    return env_str("NEWSDEDUP_DAGSTER_UI_URL")


def clustering_busy_retry() -> tuple[int, float]:
    """(retries, seconds between them) when another clustering run holds the lock past its timeout."""
    return env_int("NEWSDEDUP_CLUSTERING_BUSY_RETRIES", 5), env_float("NEWSDEDUP_CLUSTERING_BUSY_WAIT", 60.0)
