"""Dagster resources: the database, the embedding provider, the LLM endpoint and the mailer.

Resources are the deployment, not run parameters. The deployment binds each one's endpoint and
secrets by name (`dagster.EnvVar`), resolved by the run worker when it initialises the resource,
so no value is in the code location's snapshot or the UI; those are the only settings a resource
holds (tests set them directly, e.g. a test server's address). Every other setting comes from the
stage's settings loader (config.py), reading the environment of the process when the resource's
settings are asked for: a setting is declared once, on its settings class. `deployment_resources()`
binds each resource with an EMPTY run-config schema: run config that tries to set an endpoint, a
directory or a secret (`resources.llm.config.base_url`, ...) is rejected by Dagster's config
validation before a run starts. (Bound directly, a resource's fields, EnvVar ones included, could
be replaced at launch: Dagster docs, "Defining resources" and "Configuring resources".)

No live connection is stored as a field (the process-wide pool lives in db.py, looked up by URL)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import psycopg
from dagster import ConfigurableResource, EnvVar, ResourceDefinition

from newsdedup_dagster import config as app_config
from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.models.cache import PostgresResultCache
from newsdedup_dagster.shared.models.client import LLMClient, PostgresCallRecorder
from newsdedup_dagster.shared.models.settings import BackoffPolicy, LLMSettings
from newsdedup_dagster.stages.digest.settings import SmtpSettings
from newsdedup_dagster.stages.embeddings import EmbeddingSettings, make_embedder
from newsdedup_dagster.stages.embeddings.providers import Embedder
from newsdedup_dagster.stages.llm.stages import MAX_STORIES_PER_RUN, MAX_TRANSLATION_ROWS_PER_RUN


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


class EmbedderResource(ConfigurableResource):
    """The embedding provider: config.embedding_settings() (NEWSDEDUP_EMBEDDING_*), with the
    deployment's endpoint and key bound by name."""

    base_url: str | None = None          # EnvVar("NEWSDEDUP_EMBEDDING_BASE_URL") in the deployment
    api_key: str | None = None           # EnvVar("NEWSDEDUP_EMBEDDING_API_KEY") in the deployment

    def settings(self) -> EmbeddingSettings:
        return app_config.merged(app_config.embedding_settings(), base_url=self.base_url or None,
                                 api_key=self.api_key or None)

    def embedder(self) -> Embedder:
        return make_embedder(self.settings())


class LLMResource(ConfigurableResource):
    """The OpenAI-compatible endpoint and the pivot/translation languages every LLM, events and
    digest step uses: config.llm_settings() and config.llm_backoff() (NEWSDEDUP_LLM_*, the
    languages), with the deployment's endpoint and key bound by name."""

    base_url: str | None = None          # EnvVar("NEWSDEDUP_LLM_BASE_URL") in the deployment
    api_key: str | None = None           # EnvVar("NEWSDEDUP_LLM_API_KEY") in the deployment
    # How much of an hour's backlog one run takes on (no environment variable: a fixed cap).
    max_stories_per_run: int = MAX_STORIES_PER_RUN
    max_translation_rows_per_run: int = MAX_TRANSLATION_ROWS_PER_RUN

    def settings(self) -> LLMSettings:
        return app_config.merged(app_config.llm_settings(), base_url=self.base_url or None,
                                 api_key=self.api_key or None)

    def backoff(self) -> BackoffPolicy:
        return app_config.llm_backoff()

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
    """SMTP (resource key "mailer"): config.mail_settings() (NEWSDEDUP_SMTP_*) and the outbox
    (NEWSDEDUP_OUTBOX), with the deployment's server, login and password bound by name. No host =
    the outbox files are the delivery."""

    host: str | None = None              # EnvVar("NEWSDEDUP_SMTP_HOST") in the deployment
    user: str | None = None              # EnvVar("NEWSDEDUP_SMTP_USER") in the deployment
    password: str | None = None          # EnvVar("NEWSDEDUP_SMTP_PASSWORD") in the deployment

    def smtp_settings(self) -> SmtpSettings:
        return app_config.merged(app_config.mail_settings(), host=self.host or None, user=self.user or None,
                                 password=self.password or None)

    def outbox(self) -> Path:
        return app_config.outbox_dir()


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
