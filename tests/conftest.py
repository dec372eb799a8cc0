"""Shared fixtures: a real embedded PostgreSQL + pgvector per test session (no mocks)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _XDIST_WORKER:
    # A pytest-xdist worker inherits the controller's homes through the environment and takes its
    # own directory under each: its own embedded PostgreSQL and Dagster instance.
    for _name in ("NEWSDEDUP_HOME", "DAGSTER_HOME"):
        os.environ[_name] = str(Path(os.environ[_name]) / _XDIST_WORKER)
else:
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


# ------------------------------------------------------------------ feed server
@pytest.fixture()
def feed_server():
    """A real HTTP feed server on 127.0.0.1 (tests/feedserver.py) for one test, serving the two
    well-formed feeds (`add_good_feeds`); the test adds its own routes."""
    from feedserver import FeedServer, add_good_feeds

    with FeedServer() as server:
        add_good_feeds(server)
        yield server


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


# ------------------------------------------------------------------ order
def pytest_collection_modifyitems(items):
    """The longest tests first (daemons and browsers, then the other end-to-end tests), each kind in
    collection order: under pytest-xdist (`make test`) the workers then share the long tests out
    first and fill in with the short ones, and none of the long ones starts last."""
    def kind(item) -> int:
        if item.get_closest_marker("daemon") or item.get_closest_marker("browser"):
            return 0
        return 1 if item.get_closest_marker("slow") else 2

    items.sort(key=kind)
