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
    from newsdedup_dagster.evaluation.clustering import evaluate

    results = evaluate(labelled, {}, ("item_threshold", [0.4, 0.99]))
    assert [r["sweep"]["item_threshold"] for r in results] == [0.4, 0.99]
    assert results[1]["clusters"] == 12  # nothing reaches 0.99: all singletons
    assert results[0]["timings"]["partitions"] == 4  # hours that hold items, not the 400 days between


def test_eval_rejects_unknown_settings(labelled, capsys):
    from newsdedup_dagster.cli import main

    assert main(["eval", "--data", str(labelled), "--set", "nope=1"]) == 2
    assert "unknown clustering setting" in capsys.readouterr().err


def test_eval_leaves_no_temporary_database(labelled, database_url):
    from newsdedup_dagster.evaluation.clustering import EVAL_CACHE_DB, evaluate
    from newsdedup_dagster.shared import db

    evaluate(labelled)
    with db.connect(database_url) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_database WHERE datname LIKE 'newsdedup_eval_%%' AND datname <> %s", (EVAL_CACHE_DB,)
        ).fetchone()[0]
    assert left == 0


def test_eval_reuses_raw_vectors_across_runs(labelled):
    """The persistent eval cache: a second run embeds nothing (every vector comes from the cache)."""
    from newsdedup_dagster.evaluation.clustering import evaluate

    first = evaluate(labelled)[0]
    second = evaluate(labelled)[0]
    assert second["timings"]["cached_vectors"] >= 12
    assert second["bcubed_f1"] == first["bcubed_f1"]
    assert evaluate(labelled, use_cache=False)[0]["timings"]["cached_vectors"] == 0


def test_resamples_report_mean_and_spread_over_subsets_of_stories(labelled, capsys):
    from newsdedup_dagster.cli import main
    from newsdedup_dagster.evaluation.clustering import load_rows, resample_stories

    rows = load_rows(labelled)
    subset = resample_stories(rows, 0.8, seed=3)
    stories = {r.cluster for r in rows}
    kept = {r.cluster for r in subset}
    assert len(kept) == round(0.8 * len(stories)) and kept < stories
    assert all(r in subset for r in rows if r.cluster in kept)  # whole stories, never parts of one
    assert resample_stories(rows, 0.8, seed=3) == subset and resample_stories(rows, 0.8, seed=4) != subset

    assert main(["eval", "--data", str(labelled), "--json", "--resamples", "3"]) == 0
    out = json.loads(capsys.readouterr().out.strip())
    res = out["resamples"]
    assert res["n"] == 3 and res["fraction"] == 0.8
    assert 0.0 < res["mean"]["bcubed_f1"] <= 1.0 and res["sd"]["bcubed_f1"] >= 0.0
    assert set(res["mean"]) == {"bcubed_precision", "bcubed_recall", "bcubed_f1", "nmi", "ari"}


def test_titles_from_splits_headline_and_snippet(tmp_path):
    from newsdedup_dagster.evaluation.clustering import load_data

    titles = tmp_path / "titles.jsonl"
    both = tmp_path / "snippets.jsonl"
    titles.write_text(json.dumps({"id": "gnT-1", "title": "quake hit chile", "text": "quake hit chile",
                                  "cluster": "c1"}) + "\n", encoding="utf-8")
    both.write_text(json.dumps({"id": "gnTS-1", "title": "quake hit chile magnitude struck iquique monday",
                                "text": "quake hit chile magnitude struck iquique monday", "cluster": "c1"}) + "\n",
                    encoding="utf-8")
    (row,) = load_data(both, titles)
    assert (row.title, row.text, row.cluster) == ("quake hit chile", "magnitude struck iquique monday", "c1")
    titles.write_text(json.dumps({"id": "gnT-1", "title": "other", "cluster": "c1"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no headline"):
        load_data(both, titles)


def test_sample_day_rows_are_the_parsed_feed_items_with_gold_stories():
    from newsdedup_dagster.evaluation.clustering import sample_day_rows

    rows = sample_day_rows()
    assert len(rows) > 200 and len({r.id for r in rows}) == len(rows)
    assert len({r.cluster for r in rows}) >= 70
    with_lead = [r for r in rows if r.text]
    assert len(with_lead) > len(rows) / 2  # most sample feeds give a lead
    gnews = [r for r in rows if r.source == "gnews-en"]
    assert gnews and all("<" not in r.text for r in gnews)  # the parser's plain text, as ingest stores it


def _rows(spec):
    from newsdedup_dagster.evaluation.clustering import Row

    return [Row(id=i, title=i, text="", lang=lang, published_at=None, source=source, cluster=gold)
            for i, lang, source, gold in spec]


def test_breakdown_by_language_and_source_agrees_with_bcubed():
    """Per-language B-cubed from the item table; the item-weighted mean of the groups is the run's
    B-cubed of evaluation/metrics.py (computed there without pandas)."""
    from newsdedup_dagster.evaluation import metrics
    from newsdedup_dagster.evaluation.clustering import breakdown, item_table

    rows = _rows([("e1", "en", "bbc", "quake"), ("e2", "en", "cnn", "quake"), ("f1", "fr", "lemonde", "quake"),
                  ("e3", "en", "bbc", "vote"), ("f2", "fr", "lemonde", "vote"), ("f3", "fr", "lemonde", "rain")])
    # One story holds the quake in English and French plus the French vote article; e3 and f3 unclustered.
    pred = {"e1": "s1", "e2": "s1", "f1": "s1", "f2": "s1"}
    items = item_table(rows, pred)
    by_language = breakdown(items, "language").set_index("value")
    # fr: f1 precision 3/4 (s1 holds 3 quake items of 4), recall 3/3; f2 1/4 and 1/2; f3 1 and 1.
    assert by_language.loc["fr", "bcubed_precision"] == pytest.approx((3 / 4 + 1 / 4 + 1) / 3)
    assert by_language.loc["fr", "bcubed_recall"] == pytest.approx((1 + 1 / 2 + 1) / 3)
    assert by_language.loc["en", "items"] == 3 and by_language.loc["fr", "stories"] == 3
    precision, recall, _f1 = metrics.bcubed(pred, {r.id: r.cluster for r in rows})
    for key in ("language", "source"):
        table = breakdown(items, key)
        weights = table["items"] / table["items"].sum()
        assert (table["bcubed_precision"] * weights).sum() == pytest.approx(precision)
        assert (table["bcubed_recall"] * weights).sum() == pytest.approx(recall)
    assert list(breakdown(items, "source")["value"])[0] == "lemonde"  # most items first


def test_eval_table_by_language_and_csv(labelled, tmp_path, capsys):
    import pandas as pd

    from newsdedup_dagster.cli import main

    out = tmp_path / "results.csv"
    assert main(["eval", "--data", str(labelled), "--by", "language", "--by", "source", "--csv", str(out),
                 "--sweep", "item_threshold=0.40:0.99:0.59"]) == 0
    printed = capsys.readouterr().out
    table = pd.read_csv(out)
    overall = table[table["breakdown"] == "all"]
    assert list(overall["item_threshold"]) == [0.40, 0.99] and list(overall["items"]) == [12, 12]
    assert overall["clusters"].iloc[1] == 12  # nothing reaches 0.99: all singletons
    languages = table[table["breakdown"] == "language"]
    rows = [json.loads(line) for line in labelled.read_text(encoding="utf-8").splitlines()]
    assert set(languages["value"]) == {r["lang"] for r in rows}
    for threshold, group in languages.groupby("item_threshold"):
        assert group["items"].sum() == 12
        whole = overall[overall["item_threshold"] == threshold].iloc[0]
        weighted = (group["bcubed_recall"] * group["items"]).sum() / 12
        assert weighted == pytest.approx(whole["bcubed_recall"])
    assert set(table[table["breakdown"] == "source"]["value"]) == {r["source"] for r in rows}
    for r in rows:
        assert r["lang"] in printed
    assert "F1" in printed and "bcubed_f1" not in printed


@pytest.fixture()
def labelled_events(tmp_path, database_url):
    """The fixture with event labels: the two quakes (a day apart) are two events; the EU story's
    rows name an event, the others leave it null (their story stands for it)."""
    rows = []
    for group, cluster, event, start in ((EU_AI, "eu", "eu-ai", H0), (QUAKE_DAY1, "q1", None, H0 + timedelta(hours=1)),
                                         (QUAKE_DAY2, "q2", None, H0 + timedelta(hours=25)),
                                         (UNRELATED, None, None, H0 + timedelta(days=400))):
        for n, (item_id, title, lang, source) in enumerate(group):
            rows.append({"id": item_id, "title": title, "text": title, "lang": lang, "source": source,
                         "published_at": (start + timedelta(minutes=n)).isoformat(), "cluster": cluster or item_id,
                         "event": event})
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_eval_level_events_scores_events_against_the_event_labels(labelled_events, capsys):
    from newsdedup_dagster.cli import main

    assert main(["eval", "--data", str(labelled_events), "--level", "events", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip())
    assert out["level"] == "events" and out["items"] == 12
    # the quakes' magnitudes differ (6.1 | 5.4): the events stage keeps them apart
    assert out["bcubed_precision"] == pytest.approx(1.0)
    assert 0.0 < out["bcubed_f1"] <= 1.0 and 0.0 <= out["nmi"] <= 1.0


def test_eval_level_events_runs_scores_then_events_hour_by_hour(labelled_events):
    from newsdedup_dagster.evaluation.clustering import evaluate

    [events] = evaluate(labelled_events, level="events")
    [stories] = evaluate(labelled_events)
    assert events["level"] == "events" and stories["level"] == "stories"
    assert events["timings"]["partitions"] == 4 and "event_seconds" in events["timings"]
    # items in no event keep their story: no event is smaller than its stories
    assert events["clusters"] <= stories["clusters"]


def test_eval_level_events_on_a_file_without_event_labels_says_so(labelled, capsys):
    from newsdedup_dagster.cli import main
    from newsdedup_dagster.evaluation.clustering import NoEventLabels, evaluate

    assert main(["eval", "--data", str(labelled), "--level", "events"]) == 2
    captured = capsys.readouterr()
    assert "no event labels" in captured.err and captured.out == ""
    with pytest.raises(NoEventLabels):
        evaluate(labelled, level="events")


def test_sample_day_rows_carry_the_gold_event_else_the_story():
    from newsdedup_dagster.evaluation.clustering import has_event_labels, sample_day_rows

    rows = sample_day_rows()
    assert has_event_labels(rows)
    by_event: dict[str, set[str]] = {}
    for r in rows:
        by_event.setdefault(r.event, set()).add(r.cluster)
    assert by_event["eu-ai-regulation"] == {"eu-ai-act-deal", "eu-ai-act-committee-vote"}
    quakes = {r.event for r in rows if r.cluster.startswith("quake-")}
    assert quakes == {"quake-ibaraki-m54", "quake-iwate-m61"}    # no event: each its own story
