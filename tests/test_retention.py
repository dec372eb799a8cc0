"""Retention (`newsdedup prune`, the daily `prune` asset) on the real database: what is old goes,
what is needed stays, a second run removes nothing, a dry run changes nothing."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from dagster import materialize

from newsdedup_dagster import cli
from newsdedup_dagster.assets.retention import prune as prune_asset
from newsdedup_dagster.resources import PostgresResource
from newsdedup_dagster.shared.text.centring_prior import PRIOR_TEXTS
from newsdedup_dagster.shared.text.item_text import text_hash
from newsdedup_dagster.stages.retention.prune import check_settings, cutoffs, prune
from newsdedup_dagster.stages.retention.settings import RetentionSettings

NOW = datetime(2026, 12, 20, 12, 0, tzinfo=UTC)
SETTINGS = RetentionSettings(feed_body_days=30, llm_call_days=90, vector_days=7, cache_days=2, batch_rows=2)
TABLES = ("feed_fetches", "llm_calls", "llm_call_daily_totals", "item_embeddings", "embedding_cache", "items")


def ago(now: datetime = NOW, **kw) -> datetime:
    return now - timedelta(**kw)


def _fill(conn, now: datetime = NOW) -> None:
    def ago(**kw):  # noqa: F811 - relative to this fill's `now`
        return now - timedelta(**kw)

    conn.execute("INSERT INTO sources (id, name, feed_url, language) VALUES ('src', 'Source', 'http://x.example/f', 'en')")
    # feed fetches: (id, hour, body, parsed?)
    for fid, hour, body, parsed in [(1, ago(days=40), b"old-parsed", True), (2, ago(days=40), b"old-unparsed", False),
                                    (3, ago(days=10), b"recent", True), (4, ago(days=40), None, True)]:
        conn.execute("INSERT INTO feed_fetches (id, source_id, partition_hour, url, status, body_gzip, body_bytes,"
                     " items_parsed) VALUES (%s, 'src', %s, 'http://x.example/f', %s, %s, %s, %s)",
                     (fid, hour, "ok" if body else "error", body, len(body) if body else None, 3 if parsed else None))
    # LLM calls: three old (two on the same day/task/model), one recent
    for cid, when, task, cost in [(1, ago(days=100, hours=1), "score", "0.001000"), (2, ago(days=100), "score", "0.002500"),
                                  (3, ago(days=95), "translate", "0.000300"), (4, ago(days=10), "score", "0.004000")]:
        conn.execute("INSERT INTO llm_calls (id, task, model, status, tokens_in, tokens_out, cost_usd, latency_ms, created_at)"
                     " VALUES (%s, %s, 'deepseek-chat', 'ok', 100, 20, %s, 500, %s)", (cid, task, Decimal(cost), when))
    conn.execute("INSERT INTO embedding_models (model, provider, dims, index_type) VALUES ('m', 'test', 3, 'vector')")
    # items: one ingested 10 days ago (out of every window), one an hour ago
    for iid, when in [("old", ago(days=10)), ("new", ago(hours=1))]:
        conn.execute("INSERT INTO items (id, canonical_url, url, title, published_at, partition_hour, source_id)"
                     " VALUES (%s, %s, %s, %s, %s, %s, 'src')", (iid, f"http://x.example/{iid}", f"http://x.example/{iid}",
                                                                  f"title {iid}", when, when))
        conn.execute("INSERT INTO item_embeddings (item_id, model, text_hash, embedding, raw_embedding, partition_hour,"
                     " published_at) VALUES (%s, 'm', %s, '[1,0,0]', '[1,1,0]', %s, %s)", (iid, f"h-{iid}", when, when))
        conn.execute("INSERT INTO embedding_cache (text_hash, model, embedding, created_at) VALUES (%s, 'm', '[1,1,0]', %s)",
                     (f"h-{iid}", when))
    # cache: unused and old (goes), unused but fresh (a run may be filling it: stays), centring prior (stays)
    conn.execute("INSERT INTO embedding_cache (text_hash, model, embedding, created_at) VALUES"
                 " ('h-orphan', 'm', '[0,1,0]', %s), ('h-fresh', 'm', '[0,1,0]', %s), (%s, 'm', '[0,0,1]', %s)",
                 (ago(days=5), ago(hours=3), text_hash(PRIOR_TEXTS[0]), ago(days=300)))
    conn.commit()


def _fingerprint(conn) -> dict[str, str]:
    out = {}
    for table in TABLES:
        rows = conn.execute(f"SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM {table} t").fetchone()[0]
        out[table] = rows
    conn.commit()
    return out


def _q(conn, sql, *args):
    rows = conn.execute(sql, args).fetchall()
    conn.commit()
    return rows


def test_prune_removes_exactly_what_is_old_keeps_what_is_needed_and_is_idempotent(conn):
    _fill(conn)
    report = prune(conn, SETTINGS, now=NOW)
    steps = {s.name: s for s in report.steps}
    # feed bodies: only the parsed one older than 30 days; its row stays, marked
    assert steps["feed_bodies"].rows == 1 and steps["feed_bodies"].bytes > 0
    assert _q(conn, "SELECT id, body_gzip IS NULL, body_pruned_at IS NOT NULL, body_bytes FROM feed_fetches ORDER BY id") == [
        (1, True, True, 10), (2, False, False, 12), (3, False, False, 6), (4, True, False, None)]
    # llm_calls: detail older than 90 days folded into exact daily totals
    assert steps["llm_calls"].rows == 3
    assert _q(conn, "SELECT id FROM llm_calls") == [(4,)]
    totals = _q(conn, "SELECT day, task, calls, tokens_in, cost_usd, latency_ms_sum FROM llm_call_daily_totals ORDER BY day, task")
    assert totals == [(ago(days=100).date(), "score", 2, 200, Decimal("0.003500"), 1000),
                      (ago(days=95).date(), "translate", 1, 100, Decimal("0.000300"), 500)]
    # item vectors: the 10-day-old item's row goes, the recent one stays (the items themselves stay)
    assert steps["item_vectors"].rows == 1
    assert _q(conn, "SELECT item_id FROM item_embeddings") == [("new",)]
    assert _q(conn, "SELECT count(*) FROM items") == [(2,)]
    # cache: the retired vector's entry and the old orphan go; used, fresh and prior entries stay
    assert steps["embedding_cache"].rows == 2
    kept = {h for (h,) in _q(conn, "SELECT text_hash FROM embedding_cache")}
    assert kept == {"h-new", "h-fresh", text_hash(PRIOR_TEXTS[0])}

    before = _fingerprint(conn)
    again = prune(conn, SETTINGS, now=NOW)
    assert again.rows == 0 and again.bytes == 0
    assert _fingerprint(conn) == before


def test_dry_run_changes_nothing_and_counts_what_a_real_run_removes(conn):
    _fill(conn)
    before = _fingerprint(conn)
    dry = prune(conn, SETTINGS, now=NOW, dry_run=True)
    assert dry.dry_run and dry.rows == 7
    assert _fingerprint(conn) == before
    real = prune(conn, SETTINGS, now=NOW)
    assert [(s.name, s.rows, s.bytes) for s in real.steps] == [(s.name, s.rows, s.bytes) for s in dry.steps]


def test_zero_keeps_forever_and_unsafe_settings_are_refused(conn):
    _fill(conn)
    keep_all = RetentionSettings(feed_body_days=0, llm_call_days=0, vector_days=0, cache_days=0)
    assert all(v is None for v in cutoffs(keep_all, NOW).values())
    before = _fingerprint(conn)
    assert prune(conn, keep_all, now=NOW).rows == 0 and _fingerprint(conn) == before
    with pytest.raises(ValueError, match="VECTOR_DAYS=1"):
        check_settings(RetentionSettings(vector_days=1), longest_vector_window_hours=36)
    with pytest.raises(ValueError, match=">= 0"):
        check_settings(RetentionSettings(cache_days=-1), longest_vector_window_hours=36)


def test_command_and_asset(clean_db, conn, monkeypatch, capsys):
    _fill(conn, now=datetime.now(UTC))   # the command and the asset prune as of the database clock
    monkeypatch.setenv("NEWSDEDUP_DATABASE_URL", clean_db)
    assert cli.main(["prune", "--dry-run", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dry_run"] is True and out["rows"] == 7 and out["steps"]["llm_calls"]["rows"] == 3
    assert "llm_calls" in out["table_bytes"]
    assert _q(conn, "SELECT count(*) FROM llm_calls") == [(4,)]
    result = materialize([prune_asset], resources={"postgres": PostgresResource(database_url=clean_db)})
    md = result.asset_materializations_for_node("prune")[-1].metadata
    assert md["rows_removed"].value == out["rows"] and md["dry_run"].value is False
    assert _q(conn, "SELECT count(*) FROM llm_call_daily_totals") != [(0,)]
    capsys.readouterr()
    assert cli.main(["prune"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if " removed " in line]
    assert len(lines) == 5 and all(re.search(r"removed\s+0 rows", line) for line in lines)   # idempotent


def test_article_texts_go_with_the_feed_bodies_and_their_rows_stay(conn):
    _fill(conn)
    for iid, hour in (("old", ago(days=40)), ("new", ago(hours=1))):
        conn.execute("INSERT INTO article_texts (item_id, status, url, text_gzip, text_chars, lead, word_count, language,"
                     " html_gzip, attempts, fetched_hour) VALUES (%s, 'ok', %s, %s, 11, 'lead', 2, 'en', %s, 1, %s)",
                     (iid, f"http://x.example/{iid}", b"gzipped text", b"gzipped page", hour))
    conn.commit()
    report = prune(conn, SETTINGS, now=NOW)
    assert {s.name: s.rows for s in report.steps}["article_texts"] == 1
    assert _q(conn, "SELECT item_id, status, text_gzip IS NULL, html_gzip IS NULL, lead, word_count, language,"
                    " text_pruned_at IS NOT NULL FROM article_texts ORDER BY item_id") == [
        ("new", "ok", False, False, "lead", 2, "en", False), ("old", "ok", True, True, None, 2, "en", True)]
    assert {s.name: s.rows for s in prune(conn, SETTINGS, now=NOW).steps}["article_texts"] == 0
