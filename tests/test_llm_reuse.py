"""A rerun pays nothing twice: rebuilding hours that were already processed reuses the stored
model answers (llm_results) instead of calling the model again. Real parts: the hourly Dagster
job on the bundled sample feeds (replayed), the embedded PostgreSQL, and a real OpenAI-compatible
HTTP server on 127.0.0.1 (tests/fake_openai.py) that counts the requests it receives."""

from __future__ import annotations

import pytest
from dagster import DagsterInstance
from helpers import calibrate

from newsdedup_dagster.assets.hourly import hourly_run_config
from newsdedup_dagster.commands.platform import SAMPLE_DAY
from newsdedup_dagster.instance import QUIET_RUN_CONFIG
from newsdedup_dagster.shared import db

HOURS = 3  # the sample day's first hours: stories, rescoring as they grow, events, narratives


@pytest.fixture()
def online_env(monkeypatch, fake, tmp_path):
    monkeypatch.setenv("NEWSDEDUP_FETCH_MODE", "replay")
    monkeypatch.setenv("NEWSDEDUP_LLM_BASE_URL", fake.base_url)
    monkeypatch.setenv("NEWSDEDUP_LLM_API_KEY", "sk-reuse-test-0123456789")
    monkeypatch.setenv("NEWSDEDUP_TRANSLATION_LANGS", "fr,de,ja")
    monkeypatch.setenv("NEWSDEDUP_NARRATIVE_LANGS", "en,fr,de")
    calibrate(monkeypatch, tmp_path, llm={"base_s": 0.01, "max_s": 0.02})
    return fake


def run_hours(instance) -> list:
    """The demo's loop: every hour in order with later_partitions=reset (stories rebuilt exactly)."""
    from newsdedup_dagster.definitions import HOURLY_JOB_NAME, defs

    job = defs.resolve_job_def(HOURLY_JOB_NAME)
    results = []
    for hour in range(HOURS):
        results.append(job.execute_in_process(
            partition_key=f"{SAMPLE_DAY}-{hour:02d}:00", instance=instance, raise_on_error=True,
            run_config={**QUIET_RUN_CONFIG, **hourly_run_config(stories={"later_partitions": "reset"})}))
    return results


def materialization_metadata(results, asset: str) -> list[dict]:
    out = []
    for result in results:
        for event in result.get_asset_materialization_events():
            if event.asset_key.to_user_string() == asset:
                out.append({k: getattr(v, "value", v) for k, v in event.materialization.metadata.items()})
    return out


def table_state(conn) -> dict:
    return {
        "scores": conn.execute("SELECT story_id, significance, headline, summary FROM story_scores ORDER BY 1").fetchall(),
        "translations": conn.execute(
            "SELECT story_id, lang, status, headline FROM story_translations ORDER BY 1, 2").fetchall(),
        "narratives": conn.execute("SELECT id, narrative FROM events WHERE narrative IS NOT NULL ORDER BY 1").fetchall(),
    }


@pytest.mark.slow
def test_second_identical_run_makes_no_model_calls(clean_db, online_env):
    fake = online_env
    instance = DagsterInstance.ephemeral()
    first = run_hours(instance)
    paid_first = fake.count()
    with db.connection(clean_db) as conn:
        state_first = table_state(conn)
        stored = conn.execute("SELECT count(*) FROM llm_results").fetchone()[0]
    kinds = {"score": 0, "translate": 0, "narrative": 0}
    for req in fake.requests:
        if "target_languages" in req.user_text:
            kinds["translate"] += 1
        elif "significance" in req.system_text:
            kinds["score"] += 1
        else:
            kinds["narrative"] += 1
    assert kinds["score"] > 0 and kinds["translate"] > 0 and kinds["narrative"] > 0, kinds
    assert stored > 0 and state_first["scores"]
    assert sum(m["reused"] for m in materialization_metadata(first, "story_scores")) == 0

    second = run_hours(instance)
    assert fake.count() == paid_first, "the second identical run called the model"
    with db.connection(clean_db) as conn:
        assert table_state(conn) == state_first          # the same stories, scores, translations, narratives
        cached, paid, cost = conn.execute(
            "SELECT count(*) FILTER (WHERE cached), count(*) FILTER (WHERE NOT cached),"
            "       coalesce(sum(cost_usd) FILTER (WHERE cached), 0) FROM llm_calls").fetchone()
        assert paid == paid_first and cached >= kinds["score"] and cost == 0
    score_meta = materialization_metadata(second, "story_scores")
    assert sum(m["reused"] for m in score_meta) == sum(m["scored"] for m in score_meta) == kinds["score"]
    assert sum(m["llm_calls"] for m in score_meta) == 0 and all(m["cost_usd"] == 0 for m in score_meta)
    assert sum(m["cost_saved_usd"] for m in score_meta) > 0
    translate_meta = materialization_metadata(second, "story_translations")
    assert sum(m["batches_reused"] for m in translate_meta) == sum(m["batches_ok"] for m in translate_meta) > 0
    assert sum(m["llm_calls"] for m in translate_meta) == 0
    assert "| reused |" in score_meta[-1]["partition_llm_totals"]


@pytest.mark.slow
def test_reuse_can_be_turned_off(clean_db, online_env, monkeypatch, tmp_path):
    calibrate(monkeypatch, tmp_path, llm={"reuse": False})
    fake = online_env
    instance = DagsterInstance.ephemeral()
    run_hours(instance)
    paid_first = fake.count()
    run_hours(instance)
    assert fake.count() > paid_first                      # the model is asked again
    with db.connection(clean_db) as conn:
        assert conn.execute("SELECT count(*) FROM llm_results").fetchone()[0] == 0
