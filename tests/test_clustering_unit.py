"""Pure clustering logic: ids, edges, pass-2 components, settings."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from helpers import calibrate

from newsdedup_dagster import config
from newsdedup_dagster.evaluation.clustering import Row, frange, partitions_of
from newsdedup_dagster.stages.clustering.passes import disconnected, pass2_groups, story_id_for, undirected
from newsdedup_dagster.stages.clustering.settings import ClusterSettings, parse_assignments, settings_for


def pass2_stories(*args, **kwargs):
    """The stories pass 2 makes (pass2_groups without what explanations need)."""
    return pass2_groups(*args, **kwargs)[0]


def test_story_id_is_derived_from_founder_and_model():
    assert story_id_for("m", "a") == story_id_for("m", "a")
    assert story_id_for("m", "a") != story_id_for("m", "b")
    assert story_id_for("m1", "a") != story_id_for("m2", "a")


def test_undirected_keeps_best_similarity_once_per_pair():
    edges = undirected([("b", "a", 0.8), ("a", "b", 0.9), ("a", "a", 1.0), ("c", "a", 0.75)])
    assert edges == {("a", "b"): 0.9, ("a", "c"): 0.75}


def test_pass2_stories_need_an_item_of_the_hour_and_two_members():
    edges = undirected([("h1", "old1", 0.8), ("old2", "old3", 0.9), ("h2", "h3", 0.71)])
    order = {"h1": 3, "old1": 1, "old2": 0, "old3": 2, "h2": 5, "h3": 4}
    stories = pass2_stories("m", {"h1", "h2", "h3"}, edges, founder_key=lambda i: (order[i], i))
    members = sorted(s.members for s in stories)
    assert members == [["h1", "old1"], ["h2", "h3"]]   # old2-old3 has no item of H
    by_members = {tuple(s.members): s for s in stories}
    assert by_members[("h1", "old1")].founder == "old1"  # earliest published founds the story
    assert by_members[("h1", "old1")].story_id == story_id_for("m", "old1")
    assert by_members[("h2", "h3")].best["h2"] == (0.71, "h3")


def test_pass2_stories_are_independent_of_edge_order():
    raw = [("a", "b", 0.8), ("b", "c", 0.8), ("d", "e", 0.9), ("c", "a", 0.85)]
    key = lambda i: (0, i)  # noqa: E731
    one = pass2_stories("m", {"a", "d"}, undirected(raw), key)
    two = pass2_stories("m", {"a", "d"}, undirected(list(reversed(raw))), key)
    assert [(s.story_id, s.members, s.best) for s in one] == [(s.story_id, s.members, s.best) for s in two]


def test_pass2_drops_a_guard_group_without_in_component_edges():
    edges = undirected([("a", "b", 0.8)])
    glue = lambda nodes, e, p: [["a", "b", "z"]]  # noqa: E731  (a broken guard)
    assert pass2_stories("m", {"a"}, edges, lambda i: (0, i), components=glue) == []


def test_disconnected_finds_stories_not_connected_at_threshold():
    members = [("s1", "a"), ("s1", "b"), ("s1", "c"), ("s2", "x"), ("s2", "y")]
    pairs = [("s1", "a", "b"), ("s1", "b", "c"), ("s2", "x", "x2")]
    assert disconnected(members, pairs) == ["s2"]


def test_settings_defaults_calibration_file_and_overrides(monkeypatch, tmp_path):
    calibrate(monkeypatch, tmp_path, clustering={"knn_k": 12})
    s = config.clustering_settings("use:multilingual-v3", {"story_threshold": "0.65"})
    assert s.knn_k == 12 and s.story_threshold == 0.65 and s.batch_size == 2000
    # centred e5 (the default) is calibrated far below USE's raw-vector thresholds
    assert settings_for("e5:multilingual-e5-small-q4").item_threshold == pytest.approx(0.40)
    assert settings_for("use:multilingual-v3").item_threshold == pytest.approx(0.65)
    assert settings_for("e5:multilingual-e5-small-q4").knn_k == 5  # docs/calibration/clustering.md#clustering-thresholds
    assert settings_for("use:multilingual-v3").knn_k == 10
    with pytest.raises(ValueError, match="unknown clustering setting"):
        settings_for(None, {"nope": "1"})
    with pytest.raises(ValueError, match="^max_gap_hours='soon': expected a number from 0 to 1000000$"):
        settings_for(None, {"max_gap_hours": "soon"})
    assert parse_assignments(["a=1", "b = x"]) == {"a": "1", "b": "x"}
    assert isinstance(ClusterSettings().as_dict()["ef_search"], int)


def test_frange_includes_stop():
    assert frange("0.6:0.7:0.05") == [0.6, 0.65, 0.7]
    with pytest.raises(ValueError):
        frange("1:0:0.1")


def _row(i, ts):
    return Row(str(i), "t", "t", "en", ts, None, "c")


def test_partitions_skip_empty_hours_and_null_timestamps_share_one():
    a = datetime(2019, 1, 1, 10, 5, tzinfo=UTC)
    b = datetime(2022, 6, 1, 3, 59, tzinfo=UTC)
    hours = partitions_of([_row(1, a), _row(2, b), _row(3, a)])
    assert hours == [a.replace(minute=0), b.replace(minute=0)]
    assert len(partitions_of([_row(1, None), _row(2, None)])) == 1
