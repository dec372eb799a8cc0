"""Embedding providers, text choice, cache, model registry and the item_embeddings asset."""

from __future__ import annotations

import hashlib
import json
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from clustering_fixtures import EU_AI, H0, insert_items
from newsdedup_dagster.embeddings import EmbeddingSettings, embed_partition, embedding_text, ensure_model
from newsdedup_dagster.embeddings.providers import OpenAIEmbedder
from newsdedup_dagster.embeddings.store import (
    EmbeddingCentringMismatch,
    EmbeddingModelMismatch,
    active_model,
    index_type_for,
    switch_model,
)
from newsdedup_dagster.embeddings.text import text_hash


class CountingEmbedder:
    """Deterministic fake: a vector from the text's hash; counts texts embedded."""

    provider = "fake"

    def __init__(self, dims=8, name="fake:v1"):
        self.dims, self.model_id, self.calls = dims, name, []

    def embed(self, texts):
        self.calls.append(list(texts))
        out = np.array([np.frombuffer(hashlib.sha256(t.encode()).digest() * (self.dims // 32 + 1), dtype=np.uint8)[: self.dims]
                        for t in texts], dtype=np.float32) + 1
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_embedding_text_modes():
    assert embedding_text("  EU   approves\nAI act ", "ignored") == "EU approves AI act"
    assert embedding_text("EU approves AI act", "The vote was 523 to 46.", "title_summary") == \
        "EU approves AI act. The vote was 523 to 46."
    assert embedding_text("EU approves AI act", "EU approves AI act", "title_summary") == "EU approves AI act"
    assert len(embedding_text("x" * 1000)) == 300
    with pytest.raises(ValueError):
        embedding_text("a", mode="everything")


def test_index_type_by_dimension():
    assert index_type_for(512) == "vector" and index_type_for(2000) == "vector"
    assert index_type_for(3072) == "halfvec"
    with pytest.raises(ValueError, match="NEWSDEDUP_EMBEDDING_DIMENSIONS"):
        index_type_for(4096)


def test_embed_partition_caches_and_skips_duplicates(conn):
    insert_items(conn, EU_AI, H0)
    conn.execute("INSERT INTO item_duplicates (item_id, canonical_item_id, rule, partition_hour) VALUES ('eu-fr', 'eu-en', 'near', %s)", (H0,))
    conn.commit()
    fake = CountingEmbedder()
    stats = embed_partition(conn, fake, H0, H0 + timedelta(hours=1), EmbeddingSettings())
    assert (stats.items, stats.computed, stats.written) == (3, 3, 3)
    again = embed_partition(conn, fake, H0, H0 + timedelta(hours=1), EmbeddingSettings())
    assert (again.computed, again.cache_hits) == (0, 3) and len(fake.calls) == 1
    ids = [r[0] for r in conn.execute("SELECT item_id FROM item_embeddings ORDER BY 1")]
    assert ids == ["eu-en", "eu-ja", "eu-zh"]  # the duplicate shares its canonical item's vector
    # an item that becomes a duplicate later loses its own row on the rerun
    conn.execute("INSERT INTO item_duplicates (item_id, canonical_item_id, rule, partition_hour) VALUES ('eu-ja', 'eu-en', 'near', %s)", (H0,))
    conn.commit()
    third = embed_partition(conn, fake, H0, H0 + timedelta(hours=1), EmbeddingSettings())
    assert third.removed == 1
    row = conn.execute("SELECT text_hash FROM item_embeddings WHERE item_id = 'eu-en'").fetchone()
    assert row[0] == text_hash(EU_AI[0][1])
    conn.commit()


def test_model_recorded_and_a_different_model_is_a_clear_error(conn):
    info = ensure_model(conn, CountingEmbedder(8, "fake:v1"))
    assert active_model(conn) == info and info.index_type == "vector"
    conn.commit()
    indexes = {r[0] for r in conn.execute(
        "SELECT indexdef FROM pg_indexes WHERE indexdef LIKE '%%hnsw%%' AND indexdef LIKE '%%fake:v1%%'")}
    assert len(indexes) == 2 and all("vector_cosine_ops" in d and "vector(8)" in d for d in indexes)
    conn.commit()
    with pytest.raises(EmbeddingModelMismatch, match="newsdedup reembed"):
        ensure_model(conn, CountingEmbedder(16, "fake:v2"))


def test_large_models_get_halfvec_indexes(conn):
    info = ensure_model(conn, CountingEmbedder(2560, "fake:big"))
    assert info.index_type == "halfvec"
    defs = [r[0] for r in conn.execute("SELECT indexdef FROM pg_indexes WHERE indexdef LIKE '%%fake:big%%'")]
    assert defs and all("halfvec(2560)" in d and "halfvec_cosine_ops" in d for d in defs)
    conn.commit()


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server = self.server
        server.requests.append(body)
        if server.fail_next > 0:
            server.fail_next -= 1
            self.send_response(503)
            self.end_headers()
            return
        dims = body.get("dimensions", 6)
        data = [{"object": "embedding", "index": i, "embedding": [float(len(t) % 5 + 1)] + [0.5] * (dims - 1)}
                for i, t in enumerate(body["input"])]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"],
                              "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture()
def embeddings_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    server.requests, server.fail_next = [], 0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()


def test_openai_provider_batches_retries_and_passes_dimensions(embeddings_server, monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)
    settings = EmbeddingSettings(provider="openai", model="text-embedding-3-small", dimensions=64,
                                 base_url=f"http://127.0.0.1:{embeddings_server.server_port}/v1",
                                 api_key="test", batch_size=2, timeout_s=5, max_attempts=3)
    embedder = OpenAIEmbedder(settings)
    assert embedder.model_id == "openai:text-embedding-3-small@64" and embedder.dims == 64
    embeddings_server.fail_next = 1
    out = embedder.embed(["a", "bb", "ccc"])
    assert out.shape == (3, 64)
    assert np.allclose(np.linalg.norm(out, axis=1), 1)
    assert [len(r["input"]) for r in embeddings_server.requests] == [2, 2, 1]  # 503, retry, then rest
    assert all(r["dimensions"] == 64 for r in embeddings_server.requests)


def test_openai_provider_requires_dimensions_above_4000():
    with pytest.raises(ValueError, match="NEWSDEDUP_EMBEDDING_DIMENSIONS"):
        OpenAIEmbedder(EmbeddingSettings(provider="openai", model="huge", dimensions=None), client=_StubClient(4096))


class _StubClient:
    def __init__(self, dims):
        self.dims = dims
        outer = self

        class _Embeddings:
            @staticmethod
            def create(model, input, **kw):  # noqa: A002
                class D:
                    def __init__(self, i):
                        self.index, self.embedding = i, [1.0] * outer.dims

                class R:
                    data = [D(i) for i in range(len(input))]

                return R()

        self.embeddings = _Embeddings()


# ------------------------------------------------------------------ per-language centring
def _stored(conn, column="embedding"):
    rows = conn.execute(f"SELECT item_id, {column}::text FROM item_embeddings ORDER BY item_id").fetchall()
    conn.commit()
    return {i: np.array(json.loads(v), dtype=np.float64) for i, v in rows}


def _centring_rows():
    from clustering_fixtures import QUAKE_DAY1, UNRELATED

    return EU_AI + UNRELATED, QUAKE_DAY1


def test_centring_matches_the_formula_and_is_rerun_idempotent(conn):
    from newsdedup_dagster.embeddings.centring_prior import PRIOR_TEXTS, PRIOR_WEIGHT
    from newsdedup_dagster.embeddings.providers import CENTRE_MIN_LANG_ITEMS

    first, _ = _centring_rows()
    insert_items(conn, first, H0)
    fake = CountingEmbedder(dims=16, name="fake:centred16")
    settings = EmbeddingSettings(centre="on")
    stats = embed_partition(conn, fake, H0, H0 + timedelta(hours=1), settings)
    assert stats.centred
    raw, centred = _stored(conn, "raw_embedding"), _stored(conn)
    # expected, in numpy: language mean shrunk to the all-items mean, which starts from the prior
    texts = {i: t for i, t, *_ in first}
    langs = {i: lang for i, _, lang, _ in first}
    prior = fake.embed(list(PRIOR_TEXTS)).astype(np.float64).mean(0)
    for item_id, v in raw.items():
        assert np.allclose(v, fake.embed([texts[item_id]])[0], atol=1e-6)  # raw = the model's vector
    all_sum = sum(raw.values()) + PRIOR_WEIGHT * prior
    mean_all = all_sum / (len(raw) + PRIOR_WEIGHT)
    for item_id, v in raw.items():
        same = [raw[j] for j in raw if langs[j] == langs[item_id]]
        mean = (sum(same) + CENTRE_MIN_LANG_ITEMS * mean_all) / (len(same) + CENTRE_MIN_LANG_ITEMS)
        want = (v - mean) / np.linalg.norm(v - mean)
        assert np.allclose(centred[item_id], want, atol=1e-5), item_id
    # rerun: same vectors, no embedding call
    calls = len(fake.calls)
    embed_partition(conn, fake, H0, H0 + timedelta(hours=1), settings)
    assert len(fake.calls) == calls
    again = _stored(conn)
    assert all(np.allclose(again[i], centred[i], atol=1e-6) for i in centred)


def test_centring_uses_only_earlier_partitions_and_a_backfill_reproduces_it(conn):
    first, second = _centring_rows()
    h1 = H0 + timedelta(hours=1)
    insert_items(conn, first, H0)
    insert_items(conn, second, h1)
    fake = CountingEmbedder(dims=16, name="fake:centred16")
    settings = EmbeddingSettings(centre="on")
    embed_partition(conn, fake, H0, h1, settings)
    before_h1 = _stored(conn)
    embed_partition(conn, fake, h1, h1 + timedelta(hours=1), settings)
    live = _stored(conn)
    # H1 does not change H0's vectors, and re-running H0 after H1 gives H0's vectors again
    assert all(np.allclose(live[i], before_h1[i], atol=1e-6) for i in before_h1)
    embed_partition(conn, fake, H0, h1, settings)
    assert all(np.allclose(_stored(conn)[i], live[i], atol=1e-6) for i in live)
    # backfill from scratch in time order: the same vectors
    conn.execute("DELETE FROM item_embeddings")
    conn.execute("DELETE FROM embedding_language_means")
    conn.commit()
    for h in (H0, h1):
        embed_partition(conn, fake, h, h + timedelta(hours=1), settings)
    backfilled = _stored(conn)
    assert all(np.allclose(backfilled[i], live[i], atol=1e-6) for i in live)
    # centring off again: only through the reembed path (switch_model), then the stored vector is the raw one
    with pytest.raises(EmbeddingCentringMismatch, match="newsdedup reembed"):
        embed_partition(conn, fake, H0, h1, EmbeddingSettings(centre="off"))
    conn.rollback()
    switch_model(conn, fake, EmbeddingSettings(centre="off"))
    embed_partition(conn, fake, H0, h1, EmbeddingSettings(centre="off"))
    raw = _stored(conn, "raw_embedding")
    assert all(np.allclose(_stored(conn)[i], raw[i]) for i, *_ in first)


def test_centring_defaults_per_model():
    from newsdedup_dagster.embeddings.providers import centring_enabled

    assert centring_enabled("e5:multilingual-e5-small-q4") is True
    assert centring_enabled("use:multilingual-v3") is False
    assert centring_enabled("use:multilingual-v3", "on") is True
    with pytest.raises(ValueError):
        centring_enabled("x", "maybe")


def test_centring_is_recorded_and_a_toggle_is_a_clear_error(conn):
    fake = CountingEmbedder(dims=16, name="fake:centred16")
    info = ensure_model(conn, fake, EmbeddingSettings(centre="on"))
    conn.commit()
    assert info.centring is True and active_model(conn).centring is True
    assert conn.execute("SELECT centring FROM embedding_models WHERE model = 'fake:centred16'").fetchone()[0] is True
    conn.commit()
    with pytest.raises(EmbeddingCentringMismatch, match="newsdedup reembed") as err:
        ensure_model(conn, fake, EmbeddingSettings(centre="off"))
    assert "NEWSDEDUP_EMBEDDING_CENTRE=on" in str(err.value)
    assert isinstance(err.value, EmbeddingModelMismatch)  # callers that report model mismatches report this too
    conn.rollback()


def test_unrecorded_centring_is_adopted_on_first_run(conn):
    # a model row written before migration 032 with no vectors: the configured choice becomes the record
    conn.execute("INSERT INTO embedding_models (model, provider, dims, index_type, active) "
                 "VALUES ('fake:centred16', 'fake', 16, 'vector', true)")
    conn.commit()
    info = ensure_model(conn, CountingEmbedder(dims=16, name="fake:centred16"), EmbeddingSettings(centre="off"))
    conn.commit()
    assert info.centring is False and active_model(conn).centring is False
    conn.commit()


def test_reembed_switches_centring_in_place_like_a_backfill(conn):
    first, second = _centring_rows()
    h1 = H0 + timedelta(hours=1)
    insert_items(conn, first, H0)
    insert_items(conn, second, h1)
    fake = CountingEmbedder(dims=16, name="fake:centred16")
    off, on = EmbeddingSettings(centre="off"), EmbeddingSettings(centre="on")
    for h in (H0, h1):
        embed_partition(conn, fake, h, h + timedelta(hours=1), off)
    raw = _stored(conn)
    # off -> on: the prior's texts are embedded (never needed while raw), every partition centred in time order
    info = switch_model(conn, fake, on)
    conn.commit()
    assert info.centring is True
    switched = _stored(conn)
    assert not any(np.allclose(switched[i], raw[i]) for i in raw)
    # the same vectors as a database that was centred from the start
    conn.execute("DELETE FROM item_embeddings")
    conn.execute("DELETE FROM embedding_language_means")
    conn.commit()
    for h in (H0, h1):
        embed_partition(conn, fake, h, h + timedelta(hours=1), on)
    fresh = _stored(conn)
    assert all(np.allclose(switched[i], fresh[i], atol=1e-5) for i in fresh)
    # on -> off: back to the raw vectors, and no running sums left behind
    calls = len(fake.calls)
    assert switch_model(conn, fake, off).centring is False
    conn.commit()
    assert all(np.allclose(_stored(conn)[i], raw[i], atol=1e-6) for i in raw)
    assert conn.execute("SELECT count(*) FROM embedding_language_means").fetchone()[0] == 0
    assert len(fake.calls) == calls  # no embedding calls: rewritten from raw_embedding
    conn.commit()


def test_reembed_command_switches_centring(clean_db, conn, monkeypatch):
    import argparse

    from newsdedup_dagster.commands import reembed

    insert_items(conn, EU_AI, H0)
    conn.commit()
    fake = CountingEmbedder(dims=16, name="fake:centred16")
    embed_partition(conn, fake, H0, H0 + timedelta(hours=1), EmbeddingSettings(centre="off"))
    monkeypatch.setattr("newsdedup_dagster.embeddings.make_embedder", lambda settings=None: fake)
    monkeypatch.setenv("NEWSDEDUP_EMBEDDING_CENTRE", "on")
    monkeypatch.setenv("NEWSDEDUP_DATABASE_URL", clean_db)
    assert reembed.handle(argparse.Namespace(yes=False)) == 1
    assert active_model(conn).centring is False
    conn.commit()
    assert reembed.handle(argparse.Namespace(yes=True)) == 0
    assert active_model(conn).centring is True
    conn.commit()
    assert reembed.handle(argparse.Namespace(yes=True)) == 0  # nothing to do now
