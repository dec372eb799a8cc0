"""config.py builds every stage's settings from the environment, with one error style, and
`merged` is the one way resources and run config override them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import calibrate

from newsdedup_dagster import config
from newsdedup_dagster.shared.models.settings import BackoffPolicy
from newsdedup_dagster.shared.settings import load_settings, setting
from newsdedup_dagster.stages.digest.settings import DigestSettings
from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings
from newsdedup_dagster.stages.events.settings import GroupingSettings, NarrativeSettings

BUILDERS = {
    config.ingest_settings: config.IngestSettings, config.dedup_settings: config.DedupSettings,
    config.embedding_settings: EmbeddingSettings, config.llm_settings: config.LLMSettings,
    config.llm_backoff: BackoffPolicy, config.narrative_settings: NarrativeSettings,
    config.digest_settings: DigestSettings, config.publish_settings: config.PublishSettings,
    config.retention_settings: config.RetentionSettings,
}


@pytest.fixture
def clean_env(monkeypatch):
    import os

    for name in list(os.environ):
        if name.startswith("NEWSDEDUP_"):
            monkeypatch.delenv(name)


def test_unset_environment_builds_the_class_defaults(clean_env):
    for build, cls in BUILDERS.items():
        built, default = build(), cls()
        if cls is config.PublishSettings:  # its directory is under $NEWSDEDUP_HOME
            assert built.output_dir == config.home_dir() / "public"
            built = config.merged(built, output_dir=default.output_dir)
        assert built == default, build.__name__
    assert config.grouping_settings("e5:multilingual-e5-small-q4") == GroupingSettings()
    assert config.mail_settings() == config.merged(config.mail_settings())


@pytest.mark.parametrize("name, value, expected", [
    ("NEWSDEDUP_FETCH_CONCURRENCY", "many", "an integer"),
    ("NEWSDEDUP_FETCH_TIMEOUT", "soon", "a number"),
    ("NEWSDEDUP_ARTICLES_KEEP_HTML", "maybe", "true or false"),
    ("NEWSDEDUP_SMTP_SECURITY", "tls", "starttls or ssl or none"),
    ("NEWSDEDUP_FETCH_MODE", "sometimes", "live or replay or auto"),
])
def test_a_bad_value_names_the_variable_and_what_is_expected(clean_env, monkeypatch, name, value, expected):
    monkeypatch.setenv(name, value)
    builders = [config.ingest_settings, config.article_settings, config.embedding_settings, config.llm_settings,
                config.mail_settings, config.fetch_mode]
    with pytest.raises(ValueError) as err:
        for build in builders:
            build()
    assert str(err.value) == f"{name}={value!r}: expected {expected}"


def test_a_bad_clustering_value_names_the_file_and_key(clean_env, monkeypatch, tmp_path):
    path = calibrate(monkeypatch, tmp_path, clustering={"knn_k": "ten"})
    with pytest.raises(ValueError, match=f"^calibration file {re.escape(str(path))}: clustering.knn_k='ten': "):
        config.clustering_settings()


def test_merged_overrides_only_what_is_set_and_validates_again():
    base = config.LLMSettings(pivot_lang="en", timeout_s=60.0)
    out = config.merged(base, pivot_lang="fr", timeout_s=None, scoring_model=None)
    assert (out.pivot_lang, out.timeout_s, out.scoring_model) == ("fr", 60.0, base.scoring_model)
    assert config.merged(base) is base
    with pytest.raises(ValueError, match="max_url_chars"):
        config.merged(config.IngestSettings(), max_url_chars=5000)
    with pytest.raises(TypeError):
        config.merged(base, no_such_field=1)


# ------------------------------------------------------------------ the one loader
@dataclass(frozen=True)
class Example:
    """One field of each kind the loader reads."""

    count: int = setting(3, env="X_COUNT", doc="a count", bounds=(1, 10))
    ratio: float = setting(0.5, env="X_RATIO", doc="a ratio")
    flag: bool = setting(False, env="X_FLAG", doc="a flag")
    mode: str = setting("a", env="X_MODE", doc="a mode", choices=("a", "b"))
    langs: tuple[str, ...] = setting((), env="X_LANGS", doc="languages")
    where: Path | None = setting(None, env="X_WHERE", doc="a directory")
    port: int | None = setting(None, env="X_PORT", doc="a port", zero_is_default=True)
    plain: str = "not read"


def test_the_loader_parses_each_declared_type_and_says_what_it_expected(tmp_path):
    assert load_settings(Example, {}) == Example()
    assert load_settings(Example, {"X_COUNT": ""}) == Example()  # empty = unset
    built = load_settings(Example, {"X_COUNT": "7", "X_RATIO": "0.25", "X_FLAG": "yes", "X_MODE": " B ",
                                    "X_LANGS": "en, fr,,de", "X_WHERE": str(tmp_path / "d"), "X_PORT": "0",
                                    "plain": "ignored"})
    assert built == Example(count=7, ratio=0.25, flag=True, mode="b", langs=("en", "fr", "de"),
                            where=(tmp_path / "d").resolve(), port=None)
    assert load_settings(Example, {}, count=5).count == 5  # a derived default
    for env, raw, expected in [("X_COUNT", "11", "an integer from 1 to 10"), ("X_COUNT", "x", "an integer from 1 to 10"),
                               ("X_RATIO", "half", "a number"), ("X_FLAG", "maybe", "true or false"),
                               ("X_MODE", "c", "a or b")]:
        with pytest.raises(ValueError) as err:
            load_settings(Example, {env: raw})
        assert str(err.value) == f"{env}={raw!r}: expected {expected}"


def test_secrets_are_declared_without_a_repr():
    settings = config.merged(config.LLMSettings(), api_key="sk-not-shown")
    assert "sk-not-shown" not in repr(settings)
    assert "pw-not-shown" not in repr(config.merged(config.mail_settings(), password="pw-not-shown"))


@pytest.mark.parametrize("raw, parsed", [("40", 40), (" 40 ", 40), ("40.0", 40), ("2.5", None), ("1e400", None),
                                         ("nan", None), ("forty", None)])
def test_one_setting_reads_alike_from_the_calibration_file_and_from_eval_set(clean_env, monkeypatch, tmp_path, raw,
                                                                             parsed):
    """clustering.hnsw_m is read by two builders (the embedding stage's and the clustering's) and
    by `newsdedup eval --set hnsw_m=...`: one parser, so the same text gives the same value or the
    same refusal through each."""
    from newsdedup_dagster.stages.clustering.settings import settings_for

    path = calibrate(monkeypatch, tmp_path, clustering={"hnsw_m": raw, "hnsw_ef_construction": 200})
    outcomes = []
    for read in (lambda: config.embedding_settings().hnsw_m, lambda: config.clustering_settings().hnsw_m,
                 lambda: settings_for(None, {"hnsw_m": raw, "hnsw_ef_construction": "200"}).hnsw_m):
        try:
            outcomes.append(read())
        except ValueError as exc:
            outcomes.append(str(exc).replace(f"calibration file {path}: clustering.hnsw_m=", "hnsw_m="))
    assert outcomes == [parsed if parsed is not None else f"hnsw_m={raw!r}: expected an integer from 2 to 100"] * 3


def test_numbers_are_shown_one_way():
    from newsdedup_dagster.assets.stories import StoriesConfig
    from newsdedup_dagster.shared.settings import plain_number

    assert [plain_number(n) for n in (1e6, 0.001, 0.7, 2147483.0, 16)] == ["1000000", "0.001", "0.7", "2147483", "16"]
    assert plain_number(1_000_000, thousands=True) == "1,000,000"
    # a run option's range is its declaration's bound (narrowed), in the same number format
    assert StoriesConfig.accepts("knn_k") == "an integer in [1, 1000]"
    assert StoriesConfig.accepts("max_gap_hours") == "hours in (0, 720]"
    assert StoriesConfig.accepts("story_threshold") == "a cosine similarity in [-1, 1]"
