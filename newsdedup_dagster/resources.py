"""Dagster resources. Configured from the environment; no live connection is stored as a field
(the process-wide pool lives in db.py and is looked up by URL)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Optional

import psycopg
from dagster import ConfigurableResource

from . import db


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
