"""The calibration file (NEWSDEDUP_CALIBRATION_FILE): the calibrated constants a deployment changes
for good, read through the parser and bounds an environment value goes through, between the
declared (per-model) defaults and run config / `eval --set`."""

from __future__ import annotations

import os
import re

import pytest
from helpers import calibrate

from newsdedup_dagster import config
from newsdedup_dagster.stages.clustering.settings import MODEL_DEFAULTS, settings_for
from newsdedup_dagster.stages.events.settings import EVENT_THRESHOLDS

E5 = "e5:multilingual-e5-small-q4"


@pytest.fixture
def clean_env(monkeypatch):
    for name in [n for n in os.environ if n.startswith("NEWSDEDUP_")]:
        monkeypatch.delenv(name)


def test_values_from_the_file_apply(clean_env, monkeypatch, tmp_path):
    calibrate(monkeypatch, tmp_path, clustering={"story_threshold": 0.5, "guard": "none"},
              events={"threshold": 0.33, "anchor_check": False}, articles={"min_words": 40},
              llm={"base_s": 2},
              publish={"window_hours": 12}, deployment={"clustering_busy_retries": 2})
    built = config.clustering_settings(E5)
    assert built.story_threshold == 0.5 and built.guard["guard"] == "none"
    assert built.item_threshold == MODEL_DEFAULTS[E5]["item_threshold"]   # what the file leaves: the model's
    assert (config.grouping_settings(E5).threshold, config.grouping_settings(E5).anchor_check) == (0.33, False)
    assert config.article_settings().min_words == 40
    assert config.llm_backoff().base_s == 2.0 and isinstance(config.llm_backoff().base_s, float)
    assert config.publish_settings().window_hours == 12
    assert config.clustering_busy_retry()[0] == 2


def test_text_in_the_file_goes_through_the_environment_parser(clean_env, monkeypatch, tmp_path):
    calibrate(monkeypatch, tmp_path, clustering={"knn_k": "12", "pass3": "off", "search": "EXACT"},
              embeddings={"centre": "On"})
    built = config.clustering_settings(None)
    assert (built.knn_k, built.pass3, built.search) == (12, False, "exact")
    assert config.embedding_settings().centre == "on"


@pytest.mark.parametrize("section, key, value, expected", [
    ("clustering", "story_threshold", 2.0, "clustering.story_threshold=2.0: expected a number from -1 to 1"),
    ("clustering", "knn_k", 0, "clustering.knn_k=0: expected an integer from 1 to 1000"),
    ("clustering", "knn_k", 5.5, "clustering.knn_k=5.5: expected an integer from 1 to 1000"),
    ("clustering", "pass3", "maybe", "clustering.pass3='maybe': expected true or false"),
    ("clustering", "later_partitions", "all", "clustering.later_partitions='all': expected keep or reset"),
    ("events", "threshold", -1.5, "events.threshold=-1.5: expected a number from -1 to 1"),
    ("articles", "min_words", 0, "articles.min_words=0: expected an integer from 1 to 10000"),
    ("articles", "min_words", True, "articles.min_words=True: expected an integer from 1 to 10000"),
])
def test_a_bad_value_names_the_file_the_key_and_the_bound(clean_env, monkeypatch, tmp_path, section, key, value,
                                                          expected):
    path = calibrate(monkeypatch, tmp_path, **{section: {key: value}})
    builders = {"clustering": lambda: config.clustering_settings(None), "events": lambda: config.grouping_settings(E5),
                "articles": config.article_settings}
    with pytest.raises(ValueError) as err:
        builders[section]()
    assert str(err.value) == f"calibration file {path}: {expected}"


def test_an_unknown_section_or_key_is_refused_listing_the_known_ones(clean_env, monkeypatch, tmp_path):
    path = calibrate(monkeypatch, tmp_path, clustering={"story_treshold": 0.5})
    with pytest.raises(ValueError) as err:
        config.clustering_settings(None)
    message = str(err.value)
    assert message.startswith(f"calibration file {path}: unknown key clustering.story_treshold; known keys of "
                              "[clustering]: ")
    assert "story_threshold" in message and "guard_resolution" in message
    # an unknown key is refused whichever stage reads the file first
    with pytest.raises(ValueError, match="unknown key clustering.story_treshold"):
        config.article_settings()

    monkeypatch.delenv("NEWSDEDUP_CALIBRATION_FILE")
    path = calibrate(monkeypatch, tmp_path, clusters={"story_threshold": 0.5})
    with pytest.raises(ValueError) as err:
        config.ingest_settings()
    assert str(err.value).startswith(f"calibration file {path}: unknown section [clusters]; known sections: ")
    assert "clustering" in str(err.value) and "events" in str(err.value)


def test_an_operator_setting_is_not_a_calibration_key(clean_env, monkeypatch, tmp_path):
    calibrate(monkeypatch, tmp_path, smtp={"host": "mail.example.org"})
    with pytest.raises(ValueError, match=r"unknown key smtp.host; known keys of \[smtp\]: "):
        config.mail_settings()


def test_a_missing_or_broken_file_is_refused_naming_it(clean_env, monkeypatch, tmp_path):
    monkeypatch.setenv("NEWSDEDUP_CALIBRATION_FILE", str(tmp_path / "absent.toml"))
    with pytest.raises(ValueError, match=rf"^calibration file {re.escape(str(tmp_path))}/absent.toml: "):
        config.ingest_settings()
    broken = tmp_path / "broken.toml"
    broken.write_text("[clustering\nstory_threshold = 0.5\n", encoding="utf-8")
    monkeypatch.setenv("NEWSDEDUP_CALIBRATION_FILE", str(broken))
    with pytest.raises(ValueError, match=rf"^calibration file {re.escape(str(broken))}: "):
        config.ingest_settings()


def test_the_file_wins_over_the_per_model_default_and_run_config_and_set_win_over_the_file(
        clean_env, monkeypatch, tmp_path):
    use = "use:multilingual-v3"
    assert config.clustering_settings(use).story_threshold == MODEL_DEFAULTS[use]["story_threshold"]
    assert config.grouping_settings(use).threshold == EVENT_THRESHOLDS[use]
    calibrate(monkeypatch, tmp_path, clustering={"story_threshold": 0.61, "knn_k": 7}, events={"threshold": 0.52})
    assert config.clustering_settings(use).story_threshold == 0.61      # file over the model's value
    assert config.clustering_settings(E5).knn_k == 7                   # file over e5's k
    assert config.grouping_settings(use).threshold == 0.52
    # `newsdedup eval --set` (text) and run config (config.merged, values) over the file
    assert config.clustering_settings(use, {"story_threshold": "0.45"}).story_threshold == 0.45
    assert config.merged(config.clustering_settings(use), story_threshold=0.47).story_threshold == 0.47
    assert config.merged(config.grouping_settings(use), threshold=0.49).threshold == 0.49
    # and the evaluation hands the file's values to settings_for the same way
    assert settings_for(use, {"knn_k": "3"}, calibration=config.clustering_calibration()).knn_k == 3
    assert settings_for(use, {}, calibration=config.clustering_calibration()).knn_k == 7


def test_a_retired_variable_is_refused_naming_its_key(clean_env, monkeypatch, tmp_path):
    monkeypatch.setenv("NEWSDEDUP_STORY_THRESHOLD", "0.5")
    with pytest.raises(ValueError) as err:
        config.clustering_settings(None)
    assert str(err.value).startswith("NEWSDEDUP_STORY_THRESHOLD is no longer read: set clustering.story_threshold "
                                     "in the calibration file (NEWSDEDUP_CALIBRATION_FILE")
    monkeypatch.delenv("NEWSDEDUP_STORY_THRESHOLD")
    monkeypatch.setenv("NEWSDEDUP_ARTICLES_MIN_WORDS", "40")
    with pytest.raises(ValueError, match="^NEWSDEDUP_ARTICLES_MIN_WORDS is no longer read: set articles.min_words "):
        config.article_settings()
    # refused even when the file sets the key: one place for each value
    calibrate(monkeypatch, tmp_path, articles={"min_words": 40})
    with pytest.raises(ValueError, match="no longer read"):
        config.article_settings()


def test_every_retired_variable_has_a_key_and_none_is_still_read():
    retired = config.retired_variables()
    assert len(set(retired.values())) == len(retired) >= 106      # one key each; keys added later had no variable
    assert not set(retired) & config.declared_variables()
    known = {key for _, key, *_ in config.calibration_rows()}
    assert set(retired.values()) <= known


def test_unset_the_declared_defaults_apply(clean_env):
    assert config.article_settings() == config.ArticleSettings()
    assert config.clustering_calibration() == {}
