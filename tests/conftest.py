"""Shared fixtures: a real embedded PostgreSQL + pgvector per test session (no mocks)."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import psutil
import pytest

_SESSION_PREFIX = "newsdedup-test-"
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _XDIST_WORKER:
    # A pytest-xdist worker inherits the controller's homes through the environment and takes its
    # own directory under each: its own embedded PostgreSQL and Dagster instance.
    _SESSION_HOME = Path(os.environ["NEWSDEDUP_HOME"])
    for _name in ("NEWSDEDUP_HOME", "DAGSTER_HOME"):
        os.environ[_name] = str(Path(os.environ[_name]) / _XDIST_WORKER)
    _SESSION_MADE = _SESSION_HOME.name.startswith(_SESSION_PREFIX)   # not a home the developer set
    # Removed at the session's end: this worker's own directories under the session's.
    _OWN_DIRS = [path for path in (Path(os.environ["NEWSDEDUP_HOME"]), Path(os.environ["DAGSTER_HOME"]))
                 if _SESSION_MADE and path.is_relative_to(_SESSION_HOME)]
else:
    # Per-session home so parallel sessions and the developer's own .newsdedup never collide.
    _SESSION_HOME = Path(tempfile.mkdtemp(prefix=_SESSION_PREFIX))
    os.environ.setdefault("NEWSDEDUP_HOME", str(_SESSION_HOME))
    os.environ.setdefault("DAGSTER_HOME", str(_SESSION_HOME / "dagster"))
    _SESSION_MADE = os.environ["NEWSDEDUP_HOME"] == str(_SESSION_HOME)
    _OWN_DIRS = [_SESSION_HOME]
_HOME = Path(os.environ["NEWSDEDUP_HOME"])
os.environ.pop("NEWSDEDUP_LLM_BASE_URL", None)
os.environ.pop("NEWSDEDUP_SMTP_HOST", None)

APP_TABLES = (
    "duplicate_groups, deliveries, subscribers, digests, event_translations, event_stories, events, "
    "story_translations, story_scores, story_items, stories, item_embeddings, embedding_cache, "
    "embedding_models, item_duplicates, item_sources, items, feed_fetches, sources, llm_calls, "
    "llm_results, llm_call_daily_totals, publish_entries, publish_state, story_decisions, "
    "cluster_recent_items, cluster_recent_state, event_vetoes, article_texts, article_robots"
    ", publish_archive_days, neardup_df_window, neardup_df_docs, neardup_df"
)


@pytest.fixture(scope="session")
def database_url() -> str:
    from newsdedup_dagster.shared import db

    return db.ensure_ready()


@pytest.fixture()
def clean_db(database_url):
    """An empty application schema (all tables truncated) and its URL."""
    from newsdedup_dagster.shared import db

    with db.connection(database_url) as conn:
        conn.execute(f"TRUNCATE {APP_TABLES} RESTART IDENTITY CASCADE")
        conn.commit()
    return database_url


@pytest.fixture()
def conn(clean_db):
    from newsdedup_dagster.shared import db

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


# ------------------------------------------------------------ end of session
def _stop_session_server(pgdata: Path) -> None:
    """Stop the session's embedded server even when a process a test left behind still holds it
    (its directory is removed next): SIGINT, PostgreSQL's fast shutdown, then SIGQUIT."""
    try:
        postmaster = psutil.Process(int((pgdata / "postmaster.pid").read_text().split()[0]))
        if str(pgdata) not in postmaster.cmdline():
            return   # not this server (it stopped, and its pid was reused)
        postmaster.send_signal(signal.SIGINT)
        try:
            postmaster.wait(60)
        except psutil.TimeoutExpired:
            postmaster.send_signal(signal.SIGQUIT)
            postmaster.wait(30)
    except (OSError, ValueError, IndexError, psutil.Error):
        return   # no server running there, or one that would not stop: nothing more to do here


def pytest_sessionfinish(session):
    """Each test process (each pytest-xdist worker) stops the embedded server it started and removes
    the directories made for it. A worker does it before it reports its end: at the session's end
    the controller kills a worker still exiting 10 s later, and a server left to the worker's exit
    hooks would then run on. The controller (or a session without workers) removes the session's
    directory last."""
    db = sys.modules.get("newsdedup_dagster.shared.db")
    if db is not None:
        db.stop_embedded_server()  # this process's handle (the server stops if it was the last)
    if _SESSION_MADE:
        _stop_session_server(_HOME.resolve() / "pg")
    for path in _OWN_DIRS:
        shutil.rmtree(path, ignore_errors=True)


# ------------------------------------------------------------------ order
# The files whose tests take longest (`--durations` of `make test`), longest first.
LONGEST_FILES = ("test_dagster_daemon.py", "test_wheel_install.py", "test_ui_browser.py", "test_run_config_trust.py",
                 "test_crash_suite.py", "test_crash_suite_retries.py", "test_dagster_daemon_digest.py",
                 "test_production_setup.py")


def pytest_collection_modifyitems(items):
    """The longest tests first (the files above, then daemons and browsers, then the other
    end-to-end tests), each kind in collection order: under pytest-xdist (`make test`) the workers
    share the long tests out first and fill in with the short ones, and none of the long ones starts last."""
    def rank(item) -> tuple[int, int]:
        if item.path.name in LONGEST_FILES:
            return 0, LONGEST_FILES.index(item.path.name)
        if item.get_closest_marker("daemon") or item.get_closest_marker("browser"):
            return 1, 0
        return (2, 0) if item.get_closest_marker("slow") else (3, 0)

    items.sort(key=rank)
