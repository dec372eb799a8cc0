"""Dagster resources: the database, the embedding provider, the LLM endpoint and the mailer.

Resources are the deployment, not run parameters. The deployment binds each one's endpoint and
secrets by name (`dagster.EnvVar`), resolved by the run worker when it initialises the resource,
so no value is in the code location's snapshot or the UI; every other setting comes from the
stage's settings loader (config.py) in the same process, and a field set on the resource (tests
construct the classes directly) overrides it through `config.merged`. `deployment_resources()`
binds each resource with an EMPTY run-config schema: run config that tries to set an endpoint, a
directory or a secret (`resources.llm.config.base_url`, ...) is rejected by Dagster's config
validation before a run starts.

No live connection is stored as a field (the process-wide pool lives in db.py, looked up by URL)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Optional

import psycopg
from dagster import ConfigurableResource, EnvVar, ResourceDefinition

from . import config as app_config
from . import db
from .llm.settings import LLMSettings
from .digest.send import SmtpSettings
from .embeddings import EmbeddingSettings, make_embedder
from .embeddings.providers import Embedder
from .llm.cache import PostgresResultCache
from .llm.client import BackoffPolicy, LLMClient, PostgresCallRecorder
from .llm.stages import MAX_STORIES_PER_RUN, MAX_TRANSLATION_ROWS_PER_RUN


class PostgresResource(ConfigurableResource):
    """The application database. `database_url` None means $NEWSDEDUP_DATABASE_URL, else the
    embedded server under $NEWSDEDUP_HOME."""

    database_url: Optional[str] = None

    def url(self) -> str:
        return db.ensure_ready(self.database_url or db.app_database_url())

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        with db.connection(self.url()) as conn:
            yield conn

    def connect(self) -> psycopg.Connection:
        """A connection of its own (not pooled) that the caller closes."""
        return db.connect(self.url())


class EmbedderResource(ConfigurableResource):
    """The embedding provider. Unset fields keep config.embedding_settings() (NEWSDEDUP_EMBEDDING_*);
    the API key is only ever read from the environment."""

    provider: Optional[str] = None          # use | e5 | openai
    model: Optional[str] = None
    base_url: Optional[str] = None
    api_key: Optional[str] = None           # EnvVar("NEWSDEDUP_EMBEDDING_API_KEY") in the deployment
    dimensions: Optional[int] = None
    text_mode: Optional[str] = None         # title | title_summary
    centre: Optional[str] = None            # auto | on | off (per-language centring)
    hnsw_m: Optional[int] = None
    hnsw_ef_construction: Optional[int] = None

    def settings(self) -> EmbeddingSettings:
        return app_config.merged(
            app_config.embedding_settings(), provider=self.provider, model=self.model, base_url=self.base_url,
            api_key=self.api_key,
            dimensions=self.dimensions, text_mode=self.text_mode, centre=self.centre, hnsw_m=self.hnsw_m,
            hnsw_ef_construction=self.hnsw_ef_construction)

    def embedder(self) -> Embedder:
        return make_embedder(self.settings())


class LLMResource(ConfigurableResource):
    """OpenAI-compatible endpoint settings and the pivot/translation languages every LLM, events and
    digest step uses. Every field left None keeps config.llm_settings() (NEWSDEDUP_LLM_BASE_URL,
    NEWSDEDUP_LLM_API_KEY, NEWSDEDUP_SCORING_MODEL, NEWSDEDUP_PIVOT_LANG, ...)."""

    base_url: Optional[str] = None
    api_key: Optional[str] = None
    scoring_model: Optional[str] = None
    translation_model: Optional[str] = None
    narrative_model: Optional[str] = None
    timeout_s: Optional[float] = None
    max_attempts: Optional[int] = None
    concurrency: Optional[int] = None
    pivot_lang: Optional[str] = None
    translation_langs: Optional[str] = None      # comma-separated, e.g. "zh,ja,ko,fr,de,es,pt,ru,ar,hi"
    prices: Optional[str] = None                  # "model=in/out[/cached_in],..." USD per 1M tokens
    backoff_base_s: Optional[float] = None
    backoff_max_s: Optional[float] = None
    retry_after_max_s: Optional[float] = None
    max_stories_per_run: int = MAX_STORIES_PER_RUN
    max_translation_rows_per_run: int = MAX_TRANSLATION_ROWS_PER_RUN
    force_offline: bool = False                   # run the offline fallback even if an endpoint is set

    def settings(self) -> LLMSettings:
        settings = app_config.merged(
            app_config.llm_settings(), base_url=self.base_url or None, api_key=self.api_key or None,
            scoring_model=self.scoring_model, translation_model=self.translation_model,
            narrative_model=self.narrative_model, timeout_s=self.timeout_s, max_attempts=self.max_attempts,
            concurrency=self.concurrency, pivot_lang=self.pivot_lang, prices=self.prices,
            translation_langs=(tuple(x.strip() for x in self.translation_langs.split(",") if x.strip())
                               if self.translation_langs else None))
        # Offline on purpose: the one override that clears a value (merged() only sets values).
        return replace(settings, base_url=None) if self.force_offline else settings

    def backoff(self) -> BackoffPolicy:
        return app_config.merged(app_config.llm_backoff(), base_s=self.backoff_base_s, max_s=self.backoff_max_s,
                                 retry_after_max_s=self.retry_after_max_s)

    @contextlib.contextmanager
    def client(self, database_url: str) -> Iterator[Optional[LLMClient]]:
        """An LLMClient recording into llm_calls, or None when offline."""
        settings = self.settings()
        if settings.offline:
            yield None
            return
        cache = PostgresResultCache(database_url) if settings.reuse else None
        client = LLMClient(settings, PostgresCallRecorder(database_url), backoff=self.backoff(), cache=cache)
        try:
            yield client
        finally:
            client.close()


class MailerResource(ConfigurableResource):
    """SMTP settings (resource key "mailer"). Fields left None keep config.mail_settings()
    (NEWSDEDUP_SMTP_*, the password included). No host = the outbox files are the delivery."""

    host: Optional[str] = None
    port: Optional[int] = None
    security: Optional[str] = None          # starttls | ssl | none
    user: Optional[str] = None
    password: Optional[str] = None
    from_addr: Optional[str] = None
    batch_size: Optional[int] = None
    timeout_s: Optional[float] = None
    max_attempts: Optional[int] = None
    retry_delay_s: Optional[float] = None
    lease_s: Optional[float] = None
    outage_retries: Optional[int] = None
    outage_delay_s: Optional[float] = None
    outbox_dir: Optional[str] = None
    # No SMTP host on purpose: subscribers' digests are written as .eml files (else refused).
    outbox_only: Optional[bool] = None

    def smtp_settings(self) -> SmtpSettings:
        return app_config.merged(
            app_config.mail_settings(),
            host=self.host, port=self.port, security=self.security.lower() if self.security else None,
            user=self.user, password=self.password or None, from_addr=self.from_addr,
            batch_size=self.batch_size, timeout_s=self.timeout_s, max_attempts=self.max_attempts,
            retry_delay_s=self.retry_delay_s, lease_s=self.lease_s, outbox_only=self.outbox_only,
            outage_retries=self.outage_retries, outage_delay_s=self.outage_delay_s)

    def outbox(self) -> Path:
        return Path(self.outbox_dir).expanduser().resolve() if self.outbox_dir else app_config.outbox_dir()


def fixed(resource: ConfigurableResource) -> ResourceDefinition:
    """Bind a resource built in code with an empty run-config schema: any `resources.<key>.config`
    entry in run config is an error ("Received unexpected config entry"). The resource's `EnvVar`
    fields are resolved when the run worker initialises it (`EnvVar.get_value`), so no value of
    theirs is in the code location's snapshot; an unset or empty variable leaves the field None."""
    resource_class = type(resource)

    def initialise(_context) -> ConfigurableResource:
        values = {}
        for name in resource_class.model_fields:
            value = getattr(resource, name)
            if isinstance(value, EnvVar):
                value = value.get_value() or None
            values[name] = value
        return resource_class(**values)

    return ResourceDefinition(
        resource_fn=initialise,
        config_schema={},
        description=(resource_class.__doc__ or "").strip().splitlines()[0]
        + " Fixed by the deployment (environment variables); not configurable per run.",
    )


def deployment_resources() -> dict[str, ResourceDefinition]:
    """Every resource the assets and sensors use, as the code location binds them."""
    # Endpoints and secrets by name (EnvVar): resolved in the run worker, never in the snapshot.
    # Every other setting comes from the stage's settings loader (config.py) in the same process.
    return {
        "postgres": fixed(PostgresResource(database_url=EnvVar("NEWSDEDUP_DATABASE_URL"))),
        "embedder": fixed(EmbedderResource(base_url=EnvVar("NEWSDEDUP_EMBEDDING_BASE_URL"),
                                           api_key=EnvVar("NEWSDEDUP_EMBEDDING_API_KEY"))),
        "llm": fixed(LLMResource(base_url=EnvVar("NEWSDEDUP_LLM_BASE_URL"), api_key=EnvVar("NEWSDEDUP_LLM_API_KEY"))),
        "mailer": fixed(MailerResource(host=EnvVar("NEWSDEDUP_SMTP_HOST"), user=EnvVar("NEWSDEDUP_SMTP_USER"),
                                       password=EnvVar("NEWSDEDUP_SMTP_PASSWORD"))),
    }
