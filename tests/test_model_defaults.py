"""A default that differs by embedding model is shown as it applies: the configuration table's
row is generated from the table the builders apply, and a model outside that table gets the
declared defaults with one warning that names the model and each setting."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import pytest
from helpers import calibrate

from newsdedup_dagster import config
from newsdedup_dagster.shared import settings as settings_module
from newsdedup_dagster.shared.settings import declared, default_of, plain_number
from newsdedup_dagster.stages.clustering.settings import MODEL_DEFAULTS, ClusterSettings
from newsdedup_dagster.stages.events.settings import MODEL_DEFAULTS as EVENT_MODEL_DEFAULTS, GroupingSettings

REPO = Path(__file__).resolve().parents[1]
OPENAI_MODEL = "openai:text-embedding-3-small@1536"


@pytest.fixture
def clean_env(monkeypatch):
    for name in [n for n in os.environ if n.startswith("NEWSDEDUP_")]:
        monkeypatch.delenv(name)
    # the warning is logged once per process: each test starts with none given
    monkeypatch.setattr(settings_module, "_warned", set())


def declared_default(cls: type, name: str):
    return next(default_of(f) for f, _ in declared(cls) if f.name == name)


def warnings_of(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and r.name == settings_module.log.name]


def test_an_unknown_openai_model_gets_the_declared_defaults_and_one_warning(clean_env, caplog):
    caplog.set_level(logging.WARNING)
    built = config.clustering_settings(OPENAI_MODEL)
    assert (built.story_threshold, built.item_threshold, built.knn_k) == (0.7, 0.7, 10)
    assert built.story_threshold == declared_default(ClusterSettings, "story_threshold")
    (message,) = warnings_of(caplog)
    assert repr(OPENAI_MODEL) in message
    for part in ("story_threshold 0.7 (clustering.story_threshold)", "item_threshold 0.7 (clustering.item_threshold)",
                 "knn_k 10 (clustering.knn_k)"):
        assert part in message, message
    config.clustering_settings(OPENAI_MODEL)  # the hourly run builds them again: no second warning
    assert len(warnings_of(caplog)) == 1


def test_the_calibration_file_takes_a_setting_out_of_the_warning(clean_env, monkeypatch, tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    calibrate(monkeypatch, tmp_path, clustering={"story_threshold": 0.5})
    assert config.clustering_settings(OPENAI_MODEL).story_threshold == 0.5
    (message,) = warnings_of(caplog)
    assert "story_threshold" not in message and "item_threshold 0.7" in message and "knn_k 10" in message
    caplog.clear()
    calibrate(monkeypatch, tmp_path, clustering={"item_threshold": 0.5, "knn_k": 8})
    assert config.clustering_settings("openai:another-model").knn_k == 8
    assert warnings_of(caplog) == []


def test_calibrated_models_and_no_model_build_without_a_warning(clean_env, caplog):
    caplog.set_level(logging.WARNING)
    for model, values in MODEL_DEFAULTS.items():
        built = config.clustering_settings(model)
        assert {key: getattr(built, key) for key in values} == pytest.approx(values)
    for model in EVENT_MODEL_DEFAULTS:
        config.grouping_settings(model)
    config.clustering_settings(None)
    assert warnings_of(caplog) == []


def test_an_unknown_model_gets_the_declared_event_threshold_with_a_warning(clean_env, monkeypatch, tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    assert config.grouping_settings(OPENAI_MODEL).threshold == declared_default(GroupingSettings, "threshold")
    (message,) = warnings_of(caplog)
    assert repr(OPENAI_MODEL) in message and "events.threshold" in message
    caplog.clear()
    calibrate(monkeypatch, tmp_path, events={"threshold": 0.6})
    assert config.grouping_settings("openai:another-model").threshold == 0.6
    assert warnings_of(caplog) == []


# What the builders give for a model, by calibration key: the row must say the same.
BUILT = {
    "clustering.story_threshold": lambda model: config.clustering_settings(model).story_threshold,
    "clustering.item_threshold": lambda model: config.clustering_settings(model).item_threshold,
    "clustering.knn_k": lambda model: config.clustering_settings(model).knn_k,
    "events.threshold": lambda model: config.grouping_settings(model).threshold,
}


def test_a_per_model_row_shows_what_each_model_gets(clean_env):
    rows = {key: default for _, key, default, _, _, _ in config.calibration_rows() if default.startswith("per model:")}
    assert set(rows) == set(BUILT), "a per-model default without a check here, or a check without one"
    for env, cell in rows.items():
        shown = dict(re.findall(r"`([^`]+)` ([-0-9.]+)", cell))
        other = re.fullmatch(r".*; other ([-0-9.]+)", cell).group(1)
        known = {**MODEL_DEFAULTS, **EVENT_MODEL_DEFAULTS}
        for model in known:
            assert shown.get(model, other) == plain_number(BUILT[env](model)), (env, model, cell)
        assert other == plain_number(BUILT[env](OPENAI_MODEL)), (env, cell)


def test_the_first_line_counts_the_variables_and_the_calibrated_constants():
    rows, calibrated = config.configuration_rows(), config.calibration_rows()
    first = f"# Configuration: {len(rows)} environment variables for operators; {len(calibrated)} calibrated " \
            "constants in docs/CALIBRATION.md (NEWSDEDUP_CALIBRATION_FILE)"
    assert config.configuration_markdown().splitlines()[0] == first
    assert len(rows) <= 60
    committed = (REPO / "docs" / "CONFIGURATION.md").read_text(encoding="utf-8")
    assert len(re.findall(r"^\| `[A-Z0-9_]+` \|", committed, flags=re.M)) == len(rows)
    calibration = "".join(path.read_text(encoding="utf-8") for path in (REPO / "docs" / "calibration").glob("*.md"))
    assert len(re.findall(r"^\| `[a-z]+\.[a-z0-9_]+` \|", calibration, flags=re.M)) == len(calibrated)
