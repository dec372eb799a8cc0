"""Dagster resources: the database, the embedding provider, the LLM endpoint and the mailer.

Resources are the deployment, not run parameters. The deployment binds each one's endpoint and
secrets by name (`dagster.EnvVar`), resolved by the run worker when it initialises the resource,
so no value is in the code location's snapshot or the UI; every other setting comes from the
stage's settings loader (config.py) in the same process, and a field set on the resource (tests
construct the classes directly) overrides it through `config.merged`. `deployment_resources()`
binds each resource with an EMPTY run-config schema: run config that tries to set an endpoint, a
directory or a secret (`resources.llm.config.base_url`, ...) is rejected by Dagster's config
validation before a run starts. (Bound directly, a resource's fields, EnvVar ones included, could
be replaced at launch: Dagster docs, "Defining resources" and "Configuring resources".)

No live connection is stored as a field (the process-wide pool lives in db.py, looked up by URL)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
from dagster import ConfigurableResource, EnvVar, ResourceDefinition

from . import config as app_config, db
from .digest.send import SmtpSettings
from .embeddings import EmbeddingSettings, make_embedder
from .embeddings.providers import Embedder
from .llm.cache import PostgresResultCache
from .llm.client import BackoffPolicy, LLMClient, PostgresCallRecorder
from .llm.settings import LLMSettings
from .llm.stages import MAX_STORIES_PER_RUN, MAX_TRANSLATION_ROWS_PER_RUN


class PostgresResource(ConfigurableResource):
    """The application database. `database_url` None means $NEWSDEDUP_DATABASE_URL, else the
    embedded server under $NEWSDEDUP_HOME."""

    database_url: str | None = None

    def url(self) -> str:
        return db.ensure_ready(self.database_url or db.app_database_url())

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        with db.connection(self.url()) as conn:
            yield conn

    def connect(self) -> psycopg.Connection:
        """A connection of its own (not pooled) that the caller closes."""
        return db.connect(self.url())


def _overrides(resource: ConfigurableResource, settings_class: type) -> dict[str, Any]:
    """The resource's fields that name a field of `settings_class` (so no field is listed twice):
    what `config.merged` lays over the environment's settings (None keeps the environment's)."""
    names = {f.name for f in dataclasses.fields(settings_class)}
    values = {name: getattr(resource, name) for name in type(resource).model_fields if name in names}
    return {name: None if value == "" else value for name, value in values.items()}


class EmbedderResource(ConfigurableResource):
    """The embedding provider: config.embedding_settings() (NEWSDEDUP_EMBEDDING_*), with the
    deployment's endpoint and key bound by name."""

    base_url: str | None = None          # EnvVar("NEWSDEDUP_EMBEDDING_BASE_URL") in the deployment
    api_key: str | None = None           # EnvVar("NEWSDEDUP_EMBEDDING_API_KEY") in the deployment

    def settings(self) -> EmbeddingSettings:
        return app_config.merged(app_config.embedding_settings(), **_overrides(self, EmbeddingSettings))

    def embedder(self) -> Embedder:
        return make_embedder(self.settings())


class LLMResource(ConfigurableResource):
    """The OpenAI-compatible endpoint and the pivot/translation languages every LLM, events and
    digest step uses: config.llm_settings() and config.llm_backoff(), with the deployment's
    endpoint and key bound by name. The other fields are the per-call limits tests set (a
    deployment sets them through the environment); each names an LLMSettings or BackoffPolicy
    field (`backoff_` + the policy's name)."""

    base_url: str | None = None          # EnvVar("NEWSDEDUP_LLM_BASE_URL") in the deployment
    api_key: str | None = None           # EnvVar("NEWSDEDUP_LLM_API_KEY") in the deployment
    timeout_s: float | None = None
    max_attempts: int | None = None
    concurrency: int | None = None
    pivot_lang: str | None = None
    translation_langs: str | None = None      # comma-separated, e.g. "zh,ja,ko,fr,de,es,pt,ru,ar,hi"
    backoff_base_s: float | None = None
    backoff_max_s: float | None = None
    retry_after_max_s: float | None = None
    max_stories_per_run: int = MAX_STORIES_PER_RUN
    max_translation_rows_per_run: int = MAX_TRANSLATION_ROWS_PER_RUN

    def settings(self) -> LLMSettings:
        overrides = _overrides(self, LLMSettings)
        if self.translation_langs:
            overrides["translation_langs"] = tuple(x.strip() for x in self.translation_langs.split(",") if x.strip())
        return app_config.merged(app_config.llm_settings(), **overrides)

    def backoff(self) -> BackoffPolicy:
        return app_config.merged(app_config.llm_backoff(), base_s=self.backoff_base_s, max_s=self.backoff_max_s,
                                 retry_after_max_s=self.retry_after_max_s)

    @contextlib.contextmanager
    def client(self, database_url: str) -> Iterator[LLMClient | None]:
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
    """SMTP (resource key "mailer"): config.mail_settings() (NEWSDEDUP_SMTP_*), with the
    deployment's server, login and password bound by name. No host = the outbox files are the
    delivery. The other fields are what tests set (a test SMTP server, short timeouts); each
    names an SmtpSettings field."""

    host: str | None = None              # EnvVar("NEWSDEDUP_SMTP_HOST") in the deployment
    user: str | None = None              # EnvVar("NEWSDEDUP_SMTP_USER") in the deployment
    password: str | None = None          # EnvVar("NEWSDEDUP_SMTP_PASSWORD") in the deployment
    port: int | None = None
    security: str | None = None          # starttls | ssl | none
    batch_size: int | None = None
    timeout_s: float | None = None
    max_attempts: int | None = None
    retry_delay_s: float | None = None
    lease_s: float | None = None
    outage_retries: int | None = None
    outage_delay_s: float | None = None
    outbox_dir: str | None = None

    def smtp_settings(self) -> SmtpSettings:
        overrides = _overrides(self, SmtpSettings)
        overrides["security"] = self.security.lower() if self.security else None
        return app_config.merged(app_config.mail_settings(), **overrides)

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
