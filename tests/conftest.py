"""Shared fixtures: a real embedded PostgreSQL + pgvector per test session (no mocks)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# Per-session home so parallel sessions and the developer's own .newsdedup never collide.
_SESSION_HOME = Path(tempfile.mkdtemp(prefix="newsdedup-test-"))
os.environ.setdefault("NEWSDEDUP_HOME", str(_SESSION_HOME))
os.environ.setdefault("DAGSTER_HOME", str(_SESSION_HOME / "dagster"))
os.environ.pop("NEWSDEDUP_LLM_BASE_URL", None)
os.environ.pop("NEWSDEDUP_SMTP_HOST", None)

APP_TABLES = (
    "duplicate_groups, deliveries, subscribers, digests, event_translations, event_stories, events, "
    "story_translations, story_scores, story_items, stories, item_embeddings, embedding_cache, "
    "embedding_models, item_duplicates, item_sources, items, feed_fetches, sources, llm_calls, "
    "llm_results, llm_call_daily_totals, publish_entries, publish_state, story_decisions, "
    "cluster_recent_items, cluster_recent_state"
)


@pytest.fixture(scope="session")
def database_url() -> str:
    from newsdedup_dagster import db

    return db.ensure_ready()


@pytest.fixture()
def clean_db(database_url):
    """An empty application schema (all tables truncated) and its URL."""
    from newsdedup_dagster import db

    with db.connection(database_url) as conn:
        conn.execute(f"TRUNCATE {APP_TABLES} RESTART IDENTITY CASCADE")
        conn.commit()
    return database_url


@pytest.fixture()
def conn(clean_db):
    from newsdedup_dagster import db

    with db.connection(clean_db) as connection:
        yield connection


# ------------------------------------------------------- local OpenAI-compatible server
@pytest.fixture(scope="module")
def openai_server():
    """A real HTTP server on 127.0.0.1 speaking the chat-completions API (tests/fake_openai.py)."""
    from fake_openai import FakeOpenAI

    with FakeOpenAI() as srv:
        yield srv


@pytest.fixture()
def fake(openai_server):
    """The shared fake OpenAI server with its scripted replies and request log cleared."""
    openai_server.reset()
    return openai_server
