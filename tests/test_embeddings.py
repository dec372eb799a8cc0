"""Embedding providers, text choice, cache, model registry and the item_embeddings asset."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from clustering_fixtures import EU_AI, H0, insert_items
from helpers import calibrate

from newsdedup_dagster.shared.db.vectors import index_type_for
from newsdedup_dagster.shared.text.item_text import text_hash
from newsdedup_dagster.stages.embeddings import EmbeddingSettings, embed_partition, embedding_text, ensure_model
from newsdedup_dagster.stages.embeddings.providers import OpenAIEmbedder
from newsdedup_dagster.stages.embeddings.store import (
    EmbeddingCentringMismatch,
    EmbeddingModelMismatch,
    active_model,
    switch_model,
)


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
    assert embedding_text("  EU   approves\nAI act ", "ignored", "title") == "EU approves AI act"
    assert embedding_text("EU approves AI act", "The vote was 523 to 46.") == \
        "EU approves AI act. The vote was 523 to 46."  # title_lead is the default
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


def test_index_build_memory_is_the_setting_for_the_build_transaction_only(conn, monkeypatch, tmp_path):
    """clustering.index_build_memory_mb reaches the embedding stage (item and centroid indexes) and the
    clustering settings (the mirror's index), and applies to the build's transaction only."""
    from newsdedup_dagster import config
    from newsdedup_dagster.shared.db.vectors import index_build_memory
    from newsdedup_dagster.stages.clustering.settings import settings_for

    calibrate(monkeypatch, tmp_path, clustering={"index_build_memory_mb": 2048})
    assert config.embedding_settings().index_build_memory_mb == 2048
    assert settings_for("fake:model", calibration=config.clustering_calibration()).index_build_memory_mb == 2048
    before = conn.execute("SHOW maintenance_work_mem").fetchone()[0]
    conn.commit()
    with conn.transaction():   # as ensure_indexes builds: a transaction of its own
        index_build_memory(conn, 2048)
        assert conn.execute("SHOW maintenance_work_mem").fetchone()[0] == "2GB"
    assert conn.execute("SHOW maintenance_work_mem").fetchone()[0] == before != "2GB"
    conn.commit()


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    """OpenAI-compatible /v1/embeddings: records requests and concurrency; optional latency, 503s
    (fail_next) and 429s with Retry-After (throttle_next)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server = self.server
        with server.lock:
            server.requests.append(body)
            server.in_flight += 1
            server.max_in_flight = max(server.max_in_flight, server.in_flight)
            fail = server.fail_next > 0
            server.fail_next -= 1 if fail else 0
            throttle = not fail and server.throttle_next > 0
            server.throttle_next -= 1 if throttle else 0
        try:
            headers = {}
            if fail:
                status, payload = 503, b""
            elif throttle:
                status, headers = 429, {"Retry-After": str(server.retry_after)}
                payload = json.dumps({"error": {"message": "slow down", "type": "rate_limit"}}).encode()
            else:
                time.sleep(server.latency_s)
                dims = body.get("dimensions", 6)
                data = [{"object": "embedding", "index": i,
                         "embedding": [float(len(t) % 5 + 1)] + [0.5] * (dims - 1)}
                        for i, t in enumerate(body["input"])]
                status = 200
                payload = json.dumps({"object": "list", "data": data, "model": body["model"],
                                      "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        finally:
            with server.lock:
                server.in_flight -= 1


def _serve_embeddings(latency_s: float):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    server.daemon_threads = True
    server.requests, server.lock, server.in_flight, server.max_in_flight = [], threading.Lock(), 0, 0
    server.latency_s, server.fail_next, server.throttle_next, server.retry_after = latency_s, 0, 0, 0
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture()
def embeddings_server():
    server = _serve_embeddings(latency_s=0.0)
    yield server
    server.shutdown()


def test_openai_provider_batches_retries_and_passes_dimensions(embeddings_server, monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)
    settings = EmbeddingSettings(provider="openai", model="text-embedding-3-small", dimensions=64,
                                 base_url=f"http://127.0.0.1:{embeddings_server.server_port}/v1",
                                 api_key="test", batch_size=2, timeout_s=5, max_attempts=3, concurrency=1)
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
    from newsdedup_dagster.shared.text.centring_prior import PRIOR_TEXTS, PRIOR_WEIGHT
    from newsdedup_dagster.stages.embeddings.providers import CENTRE_MIN_LANG_ITEMS

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


def _stored_bits(conn) -> dict:
    """Every stored row and partition sum, bit for bit (vector_send: the binary form)."""
    rows = conn.execute("SELECT item_id, text_hash, partition_hour, vector_send(embedding), vector_send(raw_embedding)"
                        " FROM item_embeddings ORDER BY item_id").fetchall()
    sums = conn.execute("SELECT lang, partition_hour::text, item_count, vector_send(vec_sum) FROM embedding_language_means"
                        " ORDER BY partition_hour, lang").fetchall()
    conn.commit()
    return {"rows": rows, "sums": sums}


def _centring_scenario(conn, fake, settings) -> list[dict]:
    """Two hours of several languages, then the reruns that move things: an item of the first hour
    becomes a duplicate (the first hour's sums change, so the second hour's means move), an item of
    the second hour changes its time. The stored state after each run."""
    h1, h2 = H0 + timedelta(hours=1), H0 + timedelta(hours=2)
    states = []
    for start, end in ((H0, h1), (h1, h2)):
        embed_partition(conn, fake, start, end, settings)
        states.append(_stored_bits(conn))
    conn.execute("INSERT INTO item_duplicates (item_id, canonical_item_id, rule, partition_hour)"
                 " VALUES ('u-2', 'u-1', 'near', %s)", (H0,))
    conn.commit()
    for start, end in ((H0, h1), (h1, h2)):
        embed_partition(conn, fake, start, end, settings)
        states.append(_stored_bits(conn))
    conn.execute("UPDATE items SET published_at = published_at + interval '1 minute' WHERE id = 'q1-b'")
    conn.commit()
    embed_partition(conn, fake, h1, h2, settings)
    embed_partition(conn, fake, h1, h2, settings)  # nothing changed: nothing written
    states.append(_stored_bits(conn))
    return states


def test_an_hour_is_written_once_centred_bit_for_bit_as_raw_then_centred(conn, monkeypatch):
    # Each write of `embedding` is an insert into two HNSW indexes (item_embeddings' and, through
    # its trigger, cluster_recent_items'). Writing the raw vectors and then the centred ones over
    # them cost every row twice, and at 20,000 items an hour the centring statement ran for minutes.
    from newsdedup_dagster.shared import db
    from newsdedup_dagster.stages.embeddings import store

    first, second = _centring_rows()
    insert_items(conn, first, H0)
    insert_items(conn, second, H0 + timedelta(hours=1))
    fake = CountingEmbedder(dims=16, name="fake:centred16")
    settings = EmbeddingSettings(centre="on")
    conn.execute("CREATE TABLE test_embedding_writes (op text NOT NULL)")
    conn.execute("CREATE FUNCTION test_embedding_write() RETURNS trigger LANGUAGE plpgsql AS"
                 " $$ BEGIN INSERT INTO test_embedding_writes VALUES (TG_OP); RETURN NULL; END $$")
    conn.execute("CREATE TRIGGER test_embedding_write AFTER INSERT OR UPDATE OF embedding ON item_embeddings"
                 " FOR EACH ROW EXECUTE FUNCTION test_embedding_write()")
    conn.commit()
    try:
        embed_partition(conn, fake, H0, H0 + timedelta(hours=1), settings)
        writes = conn.execute("SELECT op, count(*) FROM test_embedding_writes GROUP BY op").fetchall()
        conn.commit()
        assert writes == [("INSERT", len(first))]  # each row written once, centred; never rewritten
        embed_partition(conn, fake, H0, H0 + timedelta(hours=1), settings)
        assert conn.execute("SELECT count(*) FROM test_embedding_writes").fetchone()[0] == len(first)  # rerun: none
        conn.commit()
        for table in ("item_embeddings", "embedding_language_means", "test_embedding_writes"):
            conn.execute(f"DELETE FROM {table}")
        conn.commit()
        once = _centring_scenario(conn, fake, settings)
        # the same runs through the raw write and the centring UPDATE over it: the same bits
        for table in ("item_embeddings", "embedding_language_means", "item_duplicates"):
            conn.execute(f"DELETE FROM {table}")
        conn.execute("UPDATE items SET published_at = published_at - interval '1 minute' WHERE id = 'q1-b'")
        conn.commit()

        def raw_then_centred(conn, info, start, end, ids, hashes):
            conn.execute(db.load_sql("embed_upsert"), {"model": info.model, "ids": ids, "hashes": hashes,
                                                       "centred": True})
            return store.centre_partition(conn, info, start, end)

        monkeypatch.setattr(store, "upsert_centred", raw_then_centred)
        assert _centring_scenario(conn, fake, settings) == once
    finally:
        conn.rollback()
        conn.execute("DROP TRIGGER IF EXISTS test_embedding_write ON item_embeddings")
        conn.execute("DROP FUNCTION IF EXISTS test_embedding_write()")
        conn.execute("DROP TABLE IF EXISTS test_embedding_writes")
        conn.commit()


def _most_loops(node: dict, kind: str) -> int:
    """The most times any `kind` node of an EXPLAIN (ANALYZE, FORMAT JSON) plan ran."""
    here = node.get("Actual Loops", 0) if node.get("Node Type") == kind else 0
    return max([here, *(_most_loops(child, kind) for child in node.get("Plans", []))])


def test_the_centring_means_are_computed_once_per_statement(conn):
    # Inlined, the means' aggregates ran once per row written (a nested loop planned on statistics
    # without the hour), over every hour's sums: rows x hours of history.
    from newsdedup_dagster.shared import db
    from newsdedup_dagster.stages.embeddings.store import _centre_params

    first, second = _centring_rows()
    h1, h2 = H0 + timedelta(hours=1), H0 + timedelta(hours=2)
    insert_items(conn, first, H0)
    insert_items(conn, second, h1)
    fake = CountingEmbedder(dims=16, name="fake:centred16")
    settings = EmbeddingSettings(centre="on")
    info = ensure_model(conn, fake, settings)
    conn.commit()
    for start, end in ((H0, h1), (h1, h2)):
        embed_partition(conn, fake, start, end, settings)
    ids, hashes = map(list, zip(*conn.execute("SELECT item_id, text_hash FROM item_embeddings"
                                               " WHERE partition_hour = %s ORDER BY item_id", (h1,))))
    params = {**_centre_params(info, h1, h2), "ids": ids, "hashes": hashes}
    for name in ("embed_centre_apply", "embed_upsert_centred"):
        plan = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + db.load_sql(name), params).fetchone()[0][0]["Plan"]
        conn.rollback()
        assert _most_loops(plan, "Aggregate") == 1, name


def test_centring_defaults_per_model():
    from newsdedup_dagster.stages.embeddings.providers import centring_enabled

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
    assert "embeddings.centre=on" in str(err.value)
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


def test_reembed_command_switches_centring(clean_db, conn, monkeypatch, tmp_path):
    import argparse

    from newsdedup_dagster.commands import reembed

    insert_items(conn, EU_AI, H0)
    conn.commit()
    fake = CountingEmbedder(dims=16, name="fake:centred16")
    embed_partition(conn, fake, H0, H0 + timedelta(hours=1), EmbeddingSettings(centre="off"))
    monkeypatch.setattr("newsdedup_dagster.stages.embeddings.make_embedder", lambda settings=None: fake)
    calibrate(monkeypatch, tmp_path, embeddings={"centre": "on"})
    monkeypatch.setenv("NEWSDEDUP_DATABASE_URL", clean_db)
    assert reembed.handle(argparse.Namespace(yes=False)) == 1
    assert active_model(conn).centring is False
    conn.commit()
    assert reembed.handle(argparse.Namespace(yes=True)) == 0
    assert active_model(conn).centring is True
    conn.commit()
    assert reembed.handle(argparse.Namespace(yes=True)) == 0  # nothing to do now


# ------------------------------------------------------------------ parallel and concurrent embedding
def test_e5_on_two_workers_gives_the_single_core_vectors():
    from newsdedup_dagster.stages.embeddings.providers import E5Embedder

    texts = [f"{title} ({n})" for n in range(3) for _, title, _, _ in EU_AI] + ["Local bakery wins award"] * 9
    serial, parallel = E5Embedder(workers=1), E5Embedder(workers=2)
    assert parallel.workers == 2 and len(texts) > E5Embedder.CHUNK  # really split across the workers
    a, b = serial.embed(texts), parallel.embed(texts)
    assert a.shape == b.shape == (len(texts), 384)
    assert np.allclose(a, b, atol=1e-6)  # same vectors, same order


@pytest.fixture()
def latency_server():
    server = _serve_embeddings(latency_s=0.05)
    yield server
    server.shutdown()


def _openai_settings(server, **kw) -> EmbeddingSettings:
    base = dict(provider="openai", model="local-embed", dimensions=4, api_key="test", timeout_s=5,
                base_url=f"http://127.0.0.1:{server.server_port}/v1", batch_size=4, max_attempts=3,
                concurrency=4, backoff_base_s=0.01, backoff_max_s=0.02)
    base.update(kw)
    return EmbeddingSettings(**base)


def test_openai_provider_sends_concurrent_batches_within_the_limit(latency_server):
    texts = [f"headline {i:02d} " + "x" * (i % 5) for i in range(40)]
    embedder = OpenAIEmbedder(_openai_settings(latency_server, concurrency=4))
    out = embedder.embed(texts)
    assert len(latency_server.requests) == 10 and all(len(r["input"]) == 4 for r in latency_server.requests)
    assert 1 < latency_server.max_in_flight <= 4  # concurrent, never above the limit
    # Order is kept: each row is the vector of its own text.
    serial = OpenAIEmbedder(_openai_settings(latency_server, concurrency=1)).embed(texts)
    assert np.allclose(out, serial)
    latency_server.max_in_flight = 0
    OpenAIEmbedder(_openai_settings(latency_server, concurrency=1)).embed(texts)
    assert latency_server.max_in_flight == 1


def test_openai_provider_honours_retry_after_and_gives_up_on_long_waits(latency_server):
    slept = []
    latency_server.throttle_next, latency_server.retry_after = 1, 2
    embedder = OpenAIEmbedder(_openai_settings(latency_server, concurrency=1), sleep=slept.append)
    assert embedder.embed(["a", "b"]).shape == (2, 4)
    assert embedder.attempts == 2 and slept and slept[0] >= 2  # waited at least what the server asked
    latency_server.throttle_next, latency_server.retry_after = 1, 3600
    impatient = OpenAIEmbedder(_openai_settings(latency_server, concurrency=1, retry_after_max_s=60),
                               sleep=slept.append)
    with pytest.raises(Exception, match="429|slow down"):
        impatient.embed(["c"])
    assert impatient.attempts == 1  # an hour's Retry-After ends the call instead of sleeping


# ------------------------------------------------------------------ items with and without a lead
QUAKE_SHAPES = [  # (id, title, summary, lang): one event, feeds that give a lead and feeds that don't
    ("qk-lead-en", "Strong earthquake shakes northern Chile",
     "A magnitude 7.1 earthquake struck off the coast of northern Chile on Monday, cutting power in "
     "Iquique and Arica. Continue reading...", "en"),
    ("qk-bare-en", "Magnitude 7.1 quake hits off northern Chile coast", None, "en"),
    ("qk-gnews-en", "Chile earthquake: 7.1 tremor cuts power in Iquique",
     "Chile earthquake: 7.1 tremor cuts power in Iquique  Andes Daily", "en"),
    ("qk-lead-es", "Fuerte sismo sacude el norte de Chile",
     "SANTIAGO (Reuters) - Un sismo de magnitud 7,1 sacudió el lunes el norte de Chile y dejó sin luz a "
     "Iquique y Arica.", "es"),
    ("qk-bare-fr", "Un séisme de magnitude 7,1 frappe le nord du Chili", "", "fr"),
]
OTHER_SHAPES = [
    ("eu-lead-en", "EU lawmakers approve landmark artificial intelligence act",
     "The European Parliament voted 523 to 46 to adopt the world's first comprehensive AI law. "
     "The post EU lawmakers approve landmark artificial intelligence act appeared first on Tech Wire.", "en"),
    ("eu-bare-de", "EU-Parlament verabschiedet Gesetz über künstliche Intelligenz", None, "de"),
    ("bakery", "Local bakery wins national bread competition",
     "A family bakery in Leeds took the top prize for its sourdough loaf. (Photo by Jane Doe/Getty Images)", "en"),
]


def test_items_with_and_without_a_lead_cluster_together(conn, monkeypatch):
    """The default text (title + lead) on the default model and thresholds, through the real
    embedding and clustering steps: one story per event whichever shape each feed gives."""
    from newsdedup_dagster.stages.clustering.passes import cluster_partition
    from newsdedup_dagster.stages.clustering.settings import settings_for
    from newsdedup_dagster.stages.embeddings.providers import make_embedder

    for var in ("NEWSDEDUP_EMBEDDING_PROVIDER", "NEWSDEDUP_CALIBRATION_FILE"):
        monkeypatch.delenv(var, raising=False)
    conn.execute("INSERT INTO sources (id, name, feed_url, language) VALUES ('s', 's', 'http://s/feed', 'und')")
    for n, (item_id, title, summary, lang) in enumerate(QUAKE_SHAPES + OTHER_SHAPES):
        conn.execute(
            "INSERT INTO items (id, canonical_url, url, title, summary, lang, published_at, partition_hour, source_id)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 's')",
            (item_id, f"http://x/{item_id}", f"http://x/{item_id}", title, summary or "", lang,
             H0 + timedelta(minutes=3 * n), H0))
    conn.commit()
    settings = EmbeddingSettings()
    assert settings.text_mode == "title_lead"
    embedder = make_embedder(settings)
    embed_partition(conn, embedder, H0, H0 + timedelta(hours=1), settings)
    info = active_model(conn)
    cluster_partition(conn, info, H0, settings_for(info.model))
    story = dict(conn.execute("SELECT item_id, story_id FROM story_items").fetchall())
    conn.commit()
    quake = {story.get(i) for i, *_ in QUAKE_SHAPES}
    assert len(quake) == 1 and None not in quake, sorted(story.items())
    assert story.get("eu-lead-en") == story.get("eu-bare-de") is not None
    assert story.get("eu-lead-en") not in quake and story.get("bakery") not in quake


def test_an_item_with_a_lead_stores_the_sum_of_headline_and_headline_plus_lead(conn):
    from newsdedup_dagster.shared.text.item_text import embedding_key, embedding_parts

    conn.execute("INSERT INTO sources (id, name, feed_url, language) VALUES ('s', 's', 'http://s/feed', 'und')")
    for item_id, summary in (("with-lead", "Rescue teams reached Iquique on Monday. Read more »"), ("bare", "")):
        conn.execute(
            "INSERT INTO items (id, canonical_url, url, title, summary, lang, published_at, partition_hour, source_id)"
            " VALUES (%s, %s, %s, 'Quake hits Chile', %s, 'en', %s, %s, 's')",
            (item_id, f"http://x/{item_id}", f"http://x/{item_id}", summary, H0, H0))
    conn.commit()
    fake = CountingEmbedder()
    embed_partition(conn, fake, H0, H0 + timedelta(hours=1), EmbeddingSettings(centre="off"))
    assert sorted(fake.calls[0]) == ["Quake hits Chile", "Quake hits Chile. Rescue teams reached Iquique on Monday."]
    rows = dict(conn.execute("SELECT item_id, text_hash FROM item_embeddings").fetchall())
    parts = embedding_parts("Quake hits Chile", "Rescue teams reached Iquique on Monday. Read more »")
    assert rows["with-lead"] == text_hash(embedding_key(parts)) and rows["bare"] == text_hash("Quake hits Chile")
    stored = np.array(json.loads(conn.execute(
        "SELECT embedding::text FROM item_embeddings WHERE item_id = 'with-lead'").fetchone()[0]))
    conn.commit()
    expected = fake.embed(list(parts)).sum(0)
    assert np.allclose(stored, expected / np.linalg.norm(expected), atol=1e-6)


def _index_options(conn, table: str, model: str) -> tuple[int, dict[str, str]]:
    row = conn.execute(
        "SELECT c.oid, c.reloptions FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid"
        " WHERE i.indrelid = %s::regclass AND pg_get_indexdef(c.oid) LIKE %s",
        (table, f"%hnsw%{model}%")).fetchone()
    return row[0], dict(option.split("=", 1) for option in row[1])


def test_centroid_index_has_its_own_parameters_and_is_rebuilt_when_they_change(conn):
    model = "fake:centroid-index"
    embedder = CountingEmbedder(16, model)
    ensure_model(conn, embedder)
    conn.commit()
    item_oid, item_options = _index_options(conn, "item_embeddings", model)
    story_oid, story_options = _index_options(conn, "stories", model)
    assert item_options == {"m": "16", "ef_construction": "64"}
    assert story_options == {"m": "8", "ef_construction": "64"}

    ensure_model(conn, embedder)  # same parameters: nothing rebuilt
    conn.commit()
    assert _index_options(conn, "stories", model)[0] == story_oid

    ensure_model(conn, embedder, EmbeddingSettings(centroid_hnsw_m=12, centroid_hnsw_ef_construction=40))
    conn.commit()
    rebuilt_oid, rebuilt_options = _index_options(conn, "stories", model)
    assert rebuilt_oid != story_oid and rebuilt_options == {"m": "12", "ef_construction": "40"}
    # the item index (millions of rows in a deployment) is left as it is
    assert _index_options(conn, "item_embeddings", model) == (item_oid, item_options)
    ensure_model(conn, embedder)  # back to the defaults
    conn.commit()
    assert _index_options(conn, "stories", model)[1] == {"m": "8", "ef_construction": "64"}


# ------------------------------------------------------------------ one text, one vector
def test_an_item_with_another_items_text_shares_its_vector_and_explain_says_so(conn):
    """Two outlets carry the same wire text (not flagged by the near-duplicate stage here): one cache
    row, one embedding call for the text, both items on that vector in one story, and `explain`
    names the item whose vector the later one shares. A headline that two items share with different
    leads is embedded once too."""
    from newsdedup_dagster.stages.clustering import explain
    from newsdedup_dagster.stages.clustering.passes import cluster_partition
    from newsdedup_dagster.stages.clustering.settings import settings_for

    wire = ("Strong earthquake hits northern Chile", "A magnitude 7.1 earthquake struck northern Chile on Monday.")
    rows = [("wire-a", *wire), ("wire-b", *wire),
            ("own-lead", wire[0], "Rescue teams reached the coastal town of Iquique before dawn on Tuesday.")]
    conn.execute("INSERT INTO sources (id, name, feed_url, language) VALUES ('s', 's', 'http://s/feed', 'en')")
    for n, (item_id, title, summary) in enumerate(rows):
        conn.execute(
            "INSERT INTO items (id, canonical_url, url, title, summary, lang, published_at, partition_hour, source_id)"
            " VALUES (%s, %s, %s, %s, %s, 'en', %s, %s, 's')",
            (item_id, f"http://x/{item_id}", f"http://x/{item_id}", title, summary, H0 + timedelta(minutes=n), H0))
    conn.commit()
    fake = CountingEmbedder()
    settings = EmbeddingSettings(centre="off", batch_size=1)  # one key per batch: the headline crosses batches
    stats = embed_partition(conn, fake, H0, H0 + timedelta(hours=1), settings)
    assert stats.items == 3 and stats.computed == 2  # two distinct keys
    embedded = [t for call in fake.calls for t in call]
    assert sorted(embedded) == sorted(set(embedded)) and embedded.count(wire[0]) == 1
    hashes = dict(conn.execute("SELECT item_id, text_hash FROM item_embeddings").fetchall())
    conn.commit()
    assert hashes["wire-a"] == hashes["wire-b"] != hashes["own-lead"]
    info = active_model(conn)
    cluster_partition(conn, info, H0, settings_for(info.model, {"item_threshold": "0.5", "story_threshold": "0.5"}))
    story = conn.execute("SELECT story_id FROM story_items WHERE item_id = 'wire-b'").fetchone()[0]
    conn.commit()
    members = {m.item_id: m for m in explain.load(conn, story).members}
    assert members["wire-b"].vector_of == "wire-a"  # the later item shares the first one's vector
    assert members["wire-a"].vector_of is None and members["own-lead"].vector_of is None
    text = explain.render_text(explain.load(conn, story))
    assert "shared vectors" in text and "wire-b = wire-a" in text


def test_reembed_names_the_hours_whose_embedded_text_changed(clean_db, conn, monkeypatch, capsys, tmp_path):
    """Same model and centring, another lead length: the stored vectors of the items whose text it
    changes are counted, and the backfill printed starts at the first such hour and runs to the last
    hour that holds items; once those hours are re-embedded there is nothing to do."""
    import argparse

    from newsdedup_dagster.commands import reembed

    h1 = H0 + timedelta(hours=1)
    long_lead = [(f"{item_id}-2", title, lang, source) for item_id, title, lang, source in EU_AI]
    insert_items(conn, EU_AI, H0)
    insert_items(conn, long_lead, h1)
    conn.execute("UPDATE items SET summary = 'A lead of sixty characters or more, so that a shorter cut bites.' "
                 "WHERE partition_hour = %s", (h1,))
    conn.commit()
    fake = CountingEmbedder(dims=16, name="fake:text16")
    for h in (H0, h1):
        embed_partition(conn, fake, h, h + timedelta(hours=1), EmbeddingSettings(centre="off"))
    monkeypatch.setattr("newsdedup_dagster.stages.embeddings.make_embedder", lambda settings=None: fake)
    calibrate(monkeypatch, tmp_path, embeddings={"centre": "off"})
    monkeypatch.setenv("NEWSDEDUP_DATABASE_URL", clean_db)
    assert reembed.handle(argparse.Namespace(yes=False)) == 0
    assert "nothing to do" in capsys.readouterr().out

    calibrate(monkeypatch, tmp_path, embeddings={"lead_chars": 20})
    assert reembed.handle(argparse.Namespace(yes=False)) == 0
    out = capsys.readouterr().out
    assert f"{len(long_lead)} of {2 * len(EU_AI)} stored vectors" in out, out
    assert "--select item_embeddings,stories --partition-range 2026" in out
    first = h1.strftime("%Y-%m-%d-%H:00")
    assert f"--partition-range {first}...{first}" in out, out
    # The hour re-embedded under the new settings: nothing left to do.
    embed_partition(conn, fake, h1, h1 + timedelta(hours=1), EmbeddingSettings(centre="off", lead_chars=20))
    assert reembed.handle(argparse.Namespace(yes=False)) == 0
    assert "nothing to do" in capsys.readouterr().out
