"""Every clustering key has a type and bounds, whichever way it comes in: `newsdedup eval --set`
and `--sweep`, NEWSDEDUP_<KEY>, run config (config.merged) or code. A refused value fails with
one message in the environment's style, `NAME='value': expected ...`, before any work."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys

import pytest
from helpers import calibrate
from hypothesis import given, settings, strategies as st

from newsdedup_dagster import config
from newsdedup_dagster.stages.clustering.settings import BOUNDS, ClusterSettings, setting_keys, settings_for


@pytest.fixture
def clean_env(monkeypatch):
    for name in list(os.environ):
        if name.startswith("NEWSDEDUP_"):
            monkeypatch.delenv(name)


# The values a review found accepted, and what is said about each.
REFUSED = [
    ("story_threshold", "nan", "a number from -1 to 1"),
    ("item_threshold", "-inf", "a number from -1 to 1"),
    ("item_threshold", "1.5", "a number from -1 to 1"),
    ("batch_size", "-1", "an integer from 1 to 1000000"),
    ("batch_size", "0", "an integer from 1 to 1000000"),
    ("knn_k", "1e8", "an integer from 1 to 1000"),
    ("knn_k", "2.5", "an integer from 1 to 1000"),
    ("centroid_window", "0", "an integer from 1 to 100000"),
    ("ef_search", "1001", "an integer from 1 to 1000"),
    ("max_gap_hours", "inf", "a number from 0 to 1000000"),
    ("lock_timeout_s", "0", "a number from 0.001 to 2147483"),
    ("search", "anything", "hnsw or exact or auto"),
    ("guard", "'; DROP TABLE stories; --", "louvain or none"),
    ("guard_resolution", "0", "a number from 0.001 to 1000"),
    ("pass3", "maybe", "true or false"),
    ("later_partitions", "all", "keep or reset"),
    ("hnsw_m", "1", "an integer from 2 to 100"),
]


@pytest.mark.parametrize("key, raw, expected", REFUSED)
def test_a_refused_set_value_names_key_value_and_what_is_expected(key, raw, expected):
    with pytest.raises(ValueError) as err:
        settings_for(None, {key: raw})
    assert str(err.value) == f"{key}={raw!r}: expected {expected}"


@pytest.mark.parametrize("key, raw, expected", REFUSED)
def test_a_refused_calibration_value_names_the_file_and_key(clean_env, monkeypatch, tmp_path, key, raw, expected):
    path = calibrate(monkeypatch, tmp_path, clustering={key: raw})
    name = f"calibration file {path}: clustering.{key}"
    with pytest.raises(ValueError) as err:
        config.clustering_settings()
    assert str(err.value) == f"{name}={raw!r}: expected {expected}"


def test_run_config_values_are_checked_too():
    base = settings_for(None)
    with pytest.raises(ValueError, match=r"^knn_k=0: expected an integer from 1 to 1000$"):
        config.merged(base, knn_k=0)
    with pytest.raises(ValueError, match=r"^story_threshold=nan: expected a number from -1 to 1$"):
        config.merged(base, story_threshold=math.nan)
    with pytest.raises(ValueError, match=r"^pass3=1: expected true or false$"):
        ClusterSettings(pass3=1)
    assert config.merged(base, max_gap_hours=12).max_gap_hours == 12


def test_pgvector_build_rule_across_two_keys(clean_env, monkeypatch, tmp_path):
    with pytest.raises(ValueError, match=r"^hnsw_ef_construction=64: expected at least 2 \* hnsw_m \(80\)$"):
        settings_for(None, {"hnsw_m": "40"})
    # Both keys set: checked together, whatever order they are read in.
    calibrate(monkeypatch, tmp_path, clustering={"hnsw_m": 40, "hnsw_ef_construction": 200})
    assert (config.clustering_settings().hnsw_m, config.clustering_settings().hnsw_ef_construction) == (40, 200)


def test_accepted_values_keep_their_meaning():
    s = settings_for(None, {"knn_k": "7", "batch_size": "500.0", "story_threshold": " 0.55 ", "search": "EXACT",
                            "guard": "none", "pass3": "off", "max_gap_hours": "100000", "guard_resolution": "2"})
    assert (s.knn_k, s.batch_size, s.story_threshold, s.search) == (7, 500, 0.55, "exact")
    assert (s.guard["guard"], s.guard["guard_resolution"], s.pass3, s.max_gap_hours) == ("none", 2.0, False, 100000.0)
    assert isinstance(s.batch_size, int) and isinstance(s.max_gap_hours, float)


@settings(max_examples=400, deadline=None)
@given(key=st.sampled_from(setting_keys()),
       raw=st.one_of(st.text(max_size=20), st.floats().map(repr), st.integers().map(str),
                     st.sampled_from(["nan", "inf", "-inf", "1e400", "0x10", "1_000", " 5 ", "true", "hnsw", ""])))
def test_any_text_is_a_checked_value_or_one_clear_error(key, raw):
    try:
        s = settings_for(None, {key: raw})
    except ValueError as exc:
        assert re.fullmatch(rf"{key}={re.escape(repr(raw))}: expected .+", str(exc)) or \
            str(exc).startswith("hnsw_ef_construction="), str(exc)
        return
    value = s.guard[key] if key in s.guard else getattr(s, key)
    bound = BOUNDS[key]
    assert bound.accepts(value)
    if bound.kind in (int, float):
        assert math.isfinite(value) and bound.low <= value <= bound.high


@pytest.mark.parametrize("args, message", [
    (["--set", "story_threshold=nan"], "story_threshold='nan': expected a number from -1 to 1"),
    (["--set", "search=fast"], "search='fast': expected hnsw or exact or auto"),
    # the sweep's later values are checked before the first run, not when it reaches them
    (["--sweep", "knn_k=990:1010:10"], "knn_k='1010.0': expected an integer from 1 to 1000"),
])
def test_eval_refuses_before_any_work(clean_env, tmp_path, args, message):
    """The real console script; no data is read (the file does not exist), so nothing ran."""
    newsdedup = os.path.join(os.path.dirname(sys.executable), "newsdedup")
    proc = subprocess.run([newsdedup, "eval", "--data", str(tmp_path / "missing.jsonl"), *args],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert proc.returncode == 2
    assert proc.stderr.startswith("newsdedup eval: error: ") and message in proc.stderr, proc.stderr
