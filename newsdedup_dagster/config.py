"""Every setting the project reads from the environment or the calibration file, built here and nowhere else.

Each setting is declared once, on its stage's settings dataclass (`settings.setting`: default,
variable or calibration key, bounds, one line of meaning), and read by one loader
(`settings.load_settings`). One builder per stage below hands the stage its settings:

    ingest_settings()      IngestSettings        stages/ingest/settings.py
    dedup_settings()       DedupSettings         stages/neardup/settings.py
    embedding_settings()   EmbeddingSettings     stages/embeddings/settings.py
    clustering_settings()  ClusterSettings       stages/clustering/settings.py (its own chain: per-model defaults)
    llm_settings()         LLMSettings           shared/models/settings.py        llm_backoff() -> BackoffPolicy, same module
    grouping_settings()    GroupingSettings      stages/events/settings.py     narrative_settings() -> NarrativeSettings, same
    digest_settings()      DigestSettings        stages/digest/settings.py
    mail_settings()        SmtpSettings          stages/digest/settings.py
    publish_settings()     PublishSettings       stages/publish/settings.py
    retention_settings()   RetentionSettings     retention_settings.py
    (the deployment's directories, databases and addresses: deployment.py, re-exported here)

The classes hold plain defaults and never read the environment; the pure modules take an
instance as an argument. Dagster resources and run config override a built instance through
`merged()`. A bad value fails with one message style: "NAME='value': expected <what>". Every
variable is optional; the defaults run the whole pipeline offline on the embedded PostgreSQL under
``$NEWSDEDUP_HOME``. docs/CONFIGURATION.md is `configuration_markdown()` and the tables of
the stage files under docs/calibration/ `calibration_markdown()` (a test keeps them so).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from newsdedup_dagster.shared.deployment import (  # noqa: F401  (re-exported: config.home_dir() and the rest are the public names)
    EMBEDDED_SHARED_BUFFERS_MAX_MB,
    EMBEDDED_SHARED_BUFFERS_MIN_MB,
    PACKAGE_DIR,
    SAMPLE_DATA_DIR,
    STARTER_SOURCES,
    DeploymentSettings,
    alert_recipients,
    clustering_busy_retry,
    contact_url,
    dagster_database_url,
    dagster_home,
    dagster_home_variable,
    dagster_ui_url,
    database_url,
    delivery_crash_point,
    digest_send_age,
    embedded_shared_buffers,
    eval_data_dir,
    fetch_mode,
    home_dir,
    outbox_dir,
    partitions_start,
    sources_file,
    sql_dir,
    step_retry_delay,
    unsubscribe_url,
)
from newsdedup_dagster.shared.models.settings import BackoffPolicy, LLMSettings
from newsdedup_dagster.shared.redaction import secrets_of
from newsdedup_dagster.shared.settings import (
    CALIBRATION_FILE,
    LANGUAGE_CODE,
    MISSING,
    Bound,
    calibrated_value,
    calibration_key,
    declared,
    default_of,
    load_setting,
    load_settings,
    merged,
    model_defaults,
    plain_number,
    register_calibrated,
    unwrap_optional,
    warn_uncalibrated,
)
from newsdedup_dagster.stages.articles.settings import ArticleSettings
from newsdedup_dagster.stages.clustering.settings import ClusterSettings, GuardSettings, settings_for
from newsdedup_dagster.stages.digest.settings import DigestSettings, SmtpSettings
from newsdedup_dagster.stages.embeddings.settings import DEFAULT_PROVIDER, OFFLINE_MODEL_IDS, EmbeddingSettings
from newsdedup_dagster.stages.events.settings import (
    MODEL_DEFAULTS as EVENT_MODEL_DEFAULTS,
    GroupingSettings,
    NarrativeSettings,
    event_threshold_for,
)
from newsdedup_dagster.stages.ingest.settings import IngestSettings
from newsdedup_dagster.stages.neardup.settings import DedupSettings
from newsdedup_dagster.stages.publish.settings import PublishSettings
from newsdedup_dagster.stages.retention.settings import RetentionSettings

__all__ = [
    "ArticleSettings", "ClusterSettings", "DedupSettings", "DeploymentSettings", "DigestSettings", "EmbeddingSettings",
    "GroupingSettings", "IngestSettings", "LLMSettings", "NarrativeSettings", "PublishSettings",
    "RetentionSettings", "SmtpSettings", "BackoffPolicy", "merged", "configuration_markdown",
]


# ---------------------------------------------------------------- stage builders
def ingest_settings() -> IngestSettings:
    return load_settings(IngestSettings)


def article_settings() -> ArticleSettings:
    return load_settings(ArticleSettings)


def dedup_settings() -> DedupSettings:
    # later_partitions is the clustering key of the same name: one calibration key, declared there.
    return merged(load_settings(DedupSettings),
                  later_partitions=load_setting(ClusterSettings, "later_partitions", default=None))


def embedding_settings() -> EmbeddingSettings:
    # The item index's HNSW parameters are the clustering keys hnsw_m / hnsw_ef_construction /
    # index_build_memory_mb (clustering.* in the calibration file).
    return merged(load_settings(EmbeddingSettings),
                  hnsw_m=load_setting(ClusterSettings, "hnsw_m", default=None),
                  hnsw_ef_construction=load_setting(ClusterSettings, "hnsw_ef_construction", default=None),
                  index_build_memory_mb=load_setting(ClusterSettings, "index_build_memory_mb", default=None))


def clustering_calibration(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Every clustering key (stages/clustering/settings.py) the calibration file's [clustering] sets,
    parsed and checked: {key: value}."""
    found = {f.name: calibrated_value(cls, f, annotation, environ)
             for cls in (ClusterSettings, GuardSettings) for f, annotation in declared(cls)}
    return {key: value for key, value in found.items() if value is not MISSING}


def clustering_settings(model: str | None = None, overrides: Mapping[str, Any] | None = None) -> ClusterSettings:
    """Defaults -> per-model calibration -> the calibration file -> `overrides` (run config, --set)."""
    return settings_for(model, overrides, calibration=clustering_calibration())


def llm_settings() -> LLMSettings:
    return load_settings(LLMSettings)


def llm_backoff() -> BackoffPolicy:
    return load_settings(BackoffPolicy)


def grouping_settings(model: str | None = None) -> GroupingSettings:
    """`model`: the embedding model id the stories' centroids were made with; None = the configured
    provider's offline model. Its calibrated threshold applies unless the calibration file sets
    events.threshold; a model outside the table gets the declared default with a warning (as
    clustering_settings)."""
    if model is None:
        provider = embedding_settings().provider
        model = OFFLINE_MODEL_IDS.get(provider, OFFLINE_MODEL_IDS[DEFAULT_PROVIDER])
    settings = load_settings(GroupingSettings, threshold=event_threshold_for(model))
    if model not in EVENT_MODEL_DEFAULTS:
        threshold, annotation = next((f, a) for f, a in declared(GroupingSettings) if f.name == "threshold")
        if calibrated_value(GroupingSettings, threshold, annotation) is MISSING:
            warn_uncalibrated(model, [("event threshold", calibration_key(GroupingSettings, threshold),
                                       settings.threshold)])
    return settings


def narrative_settings() -> NarrativeSettings:
    return load_settings(NarrativeSettings)


def digest_settings() -> DigestSettings:
    return load_settings(DigestSettings)


def mail_settings() -> SmtpSettings:
    """SMTP from NEWSDEDUP_SMTP_*, NEWSDEDUP_OUTBOX_ONLY and the calibration file's [smtp]. The password is read here only; the
    Dagster mailer resource gets it by name (EnvVar) in the run worker."""
    return load_settings(SmtpSettings)


def publish_settings() -> PublishSettings:
    return load_settings(PublishSettings, output_dir=home_dir() / "public")


def retention_settings() -> RetentionSettings:
    return load_settings(RetentionSettings)


def configured_secrets() -> tuple[str, ...]:
    """The API keys and passwords the settings configure, for `redaction.redact` (no log line, alert
    or doctor finding shows one). A setting that does not load adds nothing: its stage reports it."""
    found: list[str] = []
    for load in (llm_settings, embedding_settings, mail_settings):
        try:
            found.extend(secrets_of(load()))
        except ValueError:
            pass
    return tuple(dict.fromkeys(found))


def published_languages() -> tuple[str, ...]:
    """Every language the deployment publishes in (pivot, translations, narratives, feeds,
    digests), from the environment: what a run's `langs` may choose from. Only code-shaped values."""
    langs = [load_setting(LLMSettings, "pivot_lang"), *load_setting(LLMSettings, "translation_langs"),
             *load_setting(LLMSettings, "narrative_langs"), *load_setting(PublishSettings, "langs"),
             *load_setting(DigestSettings, "langs")]
    return tuple(dict.fromkeys(lang for lang in langs if lang and LANGUAGE_CODE.match(lang)))


# ---------------------------------------------------------------- the configuration table
# (title, declaring classes) in the order docs/CONFIGURATION.md lists them.
SECTIONS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("Deployment", (DeploymentSettings,)),
    ("Ingestion", (IngestSettings,)),
    ("Article pages", (ArticleSettings,)),
    ("Near-duplicates", (DedupSettings,)),
    ("Embeddings", (EmbeddingSettings,)),
    ("Clustering", (ClusterSettings, GuardSettings)),
    ("LLM stages", (LLMSettings, BackoffPolicy)),
    ("Events", (GroupingSettings, NarrativeSettings)),
    ("Digest and mail", (DigestSettings, SmtpSettings)),
    ("Feeds and site", (PublishSettings,)),
    ("Retention (`newsdedup prune`, the daily `prune` asset; 0 = keep forever)", (RetentionSettings,)),
)
# Test-only switches: declared where they are read, not settings an operator sets.
TEST_ONLY = re.compile(r"^NEWSDEDUP_TEST_")


def _shown(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, tuple):
        return f"`{','.join(value)}`" if value else "empty"
    if isinstance(value, (int, float)):
        return plain_number(value, thousands=True)
    return f"`{value}`"


def _accepts(annotation: Any, metadata: Mapping[str, Any]) -> str:
    kind, optional = unwrap_optional(annotation)
    if metadata["choices"]:
        return ", ".join(f"`{c}`" for c in metadata["choices"])
    if kind in (bool, int, float):
        return Bound.of(annotation, metadata).expected()
    if kind is Path:
        return "a path"
    if getattr(kind, "__origin__", None) is tuple:
        return "comma-separated list"
    return "text"


def _table_fields():
    """(section, field, annotation) of every setting the table lists (a variable, not test-only)."""
    for title, classes in SECTIONS:
        for cls in classes:
            for f, annotation in declared(cls):
                env = f.metadata["env"]
                if env and not TEST_ONLY.match(env):
                    yield title, f, annotation


def calibrated_classes() -> tuple[type, ...]:
    """Every settings class, each declaring its calibration file section (CALIBRATION)."""
    return tuple(cls for _, classes in SECTIONS for cls in classes)


register_calibrated(calibrated_classes())


def _calibrated_fields():
    """(class, field, annotation) of every calibrated setting, by section in the order of SECTIONS."""
    fields_ = [(cls, f, annotation) for cls in calibrated_classes() for f, annotation in declared(cls)
               if f.metadata["calibrated"]]
    order = list(dict.fromkeys(cls.CALIBRATION for cls, _, _ in fields_))
    return sorted(fields_, key=lambda row: order.index(row[0].CALIBRATION))


def _default_cell(f) -> str:
    default = f.metadata["shown"] or _shown(default_of(f))
    per_model = model_defaults(f)
    if per_model:  # from the table the builder applies
        default = "per model: " + ", ".join(f"`{model}` {_shown(value)}"
                                            for model, value in per_model.items()) + f"; other {default}"
    return default


def configuration_rows() -> list[tuple[str, str, str, str, str]]:
    """(section, variable, default, accepts, meaning) of every declared setting, in table order."""
    return [(title, f.metadata["env"], _default_cell(f), _accepts(annotation, f.metadata), f.metadata["doc"])
            for title, f, annotation in _table_fields()]


def calibration_rows() -> list[tuple[str, str, str, str, str, str]]:
    """(section, key, default, accepts, meaning, former variable) of every calibrated setting."""
    return [(cls.CALIBRATION, calibration_key(cls, f), _default_cell(f), _accepts(annotation, f.metadata),
             f.metadata["doc"], f.metadata["was"] or "") for cls, f, annotation in _calibrated_fields()]


def retired_variables() -> dict[str, str]:
    """{former environment variable: its calibration key}: each is refused when set."""
    return {was: key for _, key, _, _, _, was in calibration_rows() if was}


def configuration_summary() -> str:
    """The counts, as docs/CONFIGURATION.md's first line and `newsdedup config` say them."""
    return (f"{len(list(_table_fields()))} environment variables for operators; {len(calibration_rows())} "
            f"calibrated constants in docs/CALIBRATION.md ({CALIBRATION_FILE})")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def configuration_markdown() -> str:
    """docs/CONFIGURATION.md: every environment variable, from the declarations."""
    lines = [
        f"# Configuration: {configuration_summary()}",
        "",
        "<!-- Generated by `newsdedup config --markdown` from the settings' declarations",
        "     (newsdedup_dagster/config.py: configuration_markdown); tests/test_config_documented.py",
        "     checks that this file is what it generates. Edit the declarations, then regenerate. -->",
        "",
        "The settings an operator sets to run the product are environment variables, each with a default",
        "that runs offline. The constants chosen on data or for the engineering (thresholds, weights,",
        "margins, gates, timeouts, caps) are not: they are keys of the calibration file, listed with",
        "their evidence in [docs/CALIBRATION.md](CALIBRATION.md#the-calibration-file); a deployment that",
        f"must change one names the file in `{CALIBRATION_FILE}`. Each setting is declared once, on its",
        "stage's settings class (`newsdedup_dagster/shared/settings.py: setting`), and read by one loader in the",
        "process that uses it; a bad value is refused as `NAME='value': expected <what>`. Secrets",
        "(`*_API_KEY`, `*_PASSWORD`) reach Dagster resources by name only (`dagster.EnvVar`, resolved in",
        "the run worker), never through run config.",
        "",
        "Run config may change only the bounded options each asset declares",
        "(`newsdedup_dagster/assets/run_options.py`; the table is in",
        "[docs/SECURITY.md](SECURITY.md#what-a-run-may-change)); `newsdedup eval --set` changes the",
        "clustering settings of an evaluation. Both are checked against the setting's declaration (its",
        "type and bounds, which a run option may narrow), by the parser the environment's and the",
        "calibration file's values go through.",
    ]
    section = None
    for title, env, default, accepts, doc in configuration_rows():
        if title != section:
            section = title
            lines += ["", f"## {title}", "", "| variable | default | accepts | meaning |", "|---|---|---|---|"]
        lines.append(f"| `{env}` | {_cell(default)} | {_cell(accepts)} | {_cell(doc)} |")
    counts: dict[str, int] = {}
    for section_name, *_ in calibration_rows():
        counts[section_name] = counts.get(section_name, 0) + 1
    lines += ["", "## Calibrated constants", "",
              f"Keys of the calibration file (`{CALIBRATION_FILE}`), by section; each with its default, bounds,",
              "meaning and former variable in [docs/CALIBRATION.md](CALIBRATION.md#calibrated-constants): "
              + ", ".join(f"`[{name}]` {count}" for name, count in counts.items()) + "."]
    return "\n".join(lines) + "\n"


# A generated block names the calibration file sections whose tables it holds: each stage's file under
# docs/calibration/ holds its own sections' tables beside the evidence for them.
CALIBRATION_BEGIN = re.compile(r"<!-- calibrated constants ((?:\[\w+\] ?)+): generated by `newsdedup config --calibration-markdown` -->\n")
CALIBRATION_END = "<!-- end of the generated calibrated constants -->\n"


def calibration_sections() -> list[str]:
    """The calibration file's sections, in table order."""
    return list(dict.fromkeys(section for section, *_ in calibration_rows()))


def calibration_markdown(sections: list[str] | None = None) -> str:
    """The calibrated constants' tables of `sections` (every section when None), between the two marker
    comments of a generated block (markers included), from the declarations."""
    sections = calibration_sections() if sections is None else sections
    unknown = sorted(set(sections) - set(calibration_sections()))
    if unknown:
        raise ValueError(f"no calibration file section {unknown}; known: {calibration_sections()}")
    names = " ".join(f"[{name}]" for name in sections)
    lines = [f"<!-- calibrated constants {names}: generated by `newsdedup config --calibration-markdown` -->"]
    for section in sections:
        lines += ["", f"### `[{section}]`", "", "| key | default | accepts | meaning | former variable |",
                  "|---|---|---|---|---|"]
        lines += [f"| `{key}` | {_cell(default)} | {_cell(accepts)} | {_cell(doc)} | {f'`{was}`' if was else ''} |"
                  for name, key, default, accepts, doc, was in calibration_rows() if name == section]
    return "\n".join([*lines, "", CALIBRATION_END])


def generated_sections(document: str) -> list[str]:
    """The sections whose tables the generated blocks of `document` hold, in their order."""
    return [name for match in CALIBRATION_BEGIN.finditer(document) for name in re.findall(r"\[(\w+)\]", match.group(1))]


def with_calibration_markdown(document: str) -> str:
    """`document` (a stage's file under docs/calibration/) with each generated block replaced by the
    tables of the sections its first marker names."""
    out, position = [], 0
    for match in CALIBRATION_BEGIN.finditer(document):
        end = document.index(CALIBRATION_END, match.end()) + len(CALIBRATION_END)
        out += [document[position:match.start()], calibration_markdown(re.findall(r"\[(\w+)\]", match.group(1)))]
        position = end
    return "".join(out) + document[position:]


def declared_variables() -> set[str]:
    """Every environment variable a setting declares (the test-only ones included)."""
    return {f.metadata["env"] for _, classes in SECTIONS for cls in classes for f, _ in declared(cls)
            if f.metadata["env"]}
