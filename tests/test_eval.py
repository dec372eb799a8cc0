"""`newsdedup eval` on a small labelled fixture (no dev data): real embeddings, real SQL."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from clustering_fixtures import EU_AI, H0, QUAKE_DAY1, QUAKE_DAY2, UNRELATED

pytestmark = pytest.mark.timeout(300)


@pytest.fixture()
def labelled(tmp_path, database_url):
    rows = []
    for group, cluster, start in ((EU_AI, "eu", H0), (QUAKE_DAY1, "q1", H0 + timedelta(hours=1)),
                                  (QUAKE_DAY2, "q2", H0 + timedelta(hours=25)), (UNRELATED, None, H0 + timedelta(days=400))):
        for n, (item_id, title, lang, source) in enumerate(group):
            rows.append({"id": item_id, "title": title, "text": title, "lang": lang, "source": source,
                         "published_at": (start + timedelta(minutes=n)).isoformat(), "cluster": cluster or item_id})
    path = tmp_path / "fixture.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_eval_json_has_exactly_the_documented_keys(labelled, capsys):
    from newsdedup_dagster.cli import main

    code = main(["eval", "--data", str(labelled), "--json"])  # the default model and its calibrated defaults
    assert code == 0
    out = json.loads(capsys.readouterr().out.strip())
    assert set(out) == {"bcubed_precision", "bcubed_recall", "bcubed_f1", "nmi", "ari", "clusters", "largest", "items", "seconds"}
    assert out["items"] == 12
    assert out["bcubed_precision"] == pytest.approx(1.0)  # the quakes a day apart stay apart
    assert out["bcubed_f1"] > 0.8


def test_eval_sweep_runs_once_per_value_on_one_database(labelled):
    from newsdedup_dagster.evaluation import evaluate

    results = evaluate(labelled, {}, ("item_threshold", [0.4, 0.99]))
    assert [r["sweep"]["item_threshold"] for r in results] == [0.4, 0.99]
    assert results[1]["clusters"] == 12  # nothing reaches 0.99: all singletons
    assert results[0]["timings"]["partitions"] == 4  # hours that hold items, not the 400 days between


def test_eval_rejects_unknown_settings(labelled, capsys):
    from newsdedup_dagster.cli import main

    assert main(["eval", "--data", str(labelled), "--set", "nope=1"]) == 2
    assert "unknown clustering setting" in capsys.readouterr().err


def test_eval_leaves_no_temporary_database(labelled, database_url):
    from newsdedup_dagster import db
    from newsdedup_dagster.evaluation import EVAL_CACHE_DB, evaluate

    evaluate(labelled)
    with db.connect(database_url) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_database WHERE datname LIKE 'newsdedup_eval_%%' AND datname <> %s", (EVAL_CACHE_DB,)
        ).fetchone()[0]
    assert left == 0


def test_eval_reuses_raw_vectors_across_runs(labelled):
    """The persistent eval cache: a second run embeds nothing (every vector comes from the cache)."""
    from newsdedup_dagster.evaluation import evaluate

    first = evaluate(labelled)[0]
    second = evaluate(labelled)[0]
    assert second["timings"]["cached_vectors"] >= 12
    assert second["bcubed_f1"] == first["bcubed_f1"]
    assert evaluate(labelled, use_cache=False)[0]["timings"]["cached_vectors"] == 0
