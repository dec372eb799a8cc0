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

    @property
    def offline(self) -> bool:
        return not self.base_url


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
