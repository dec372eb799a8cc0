"""docs/CONFIGURATION.md and the calibrated constants' tables of docs/calibration/*.md are generated
from the settings' declarations, and the declarations are what the code reads: every variable named
in the package is declared (or retired, its value in the calibration file), every declared variable
and every calibration key changes what its builder returns (or is refused) when set."""

from __future__ import annotations

import os
import re
from dataclasses import asdict, is_dataclass
from pathlib import Path

import pytest
from helpers import calibrate

from newsdedup_dagster import config

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "newsdedup_dagster"
NAME = re.compile(r"NEWSDEDUP_[A-Z0-9_]+")


def test_the_committed_configuration_table_is_the_generated_one():
    committed = (REPO / "docs" / "CONFIGURATION.md").read_text(encoding="utf-8")
    assert committed == config.configuration_markdown(), \
        "docs/CONFIGURATION.md is stale: regenerate it with `newsdedup config --markdown > docs/CONFIGURATION.md`"


STAGE_FILES = sorted((REPO / "docs" / "calibration").glob("*.md"))


def test_the_committed_calibration_tables_are_the_generated_ones():
    """Each stage's file holds the generated tables of the sections its markers name; together they
    hold every section once, and the index (docs/CALIBRATION.md) none."""
    for path in STAGE_FILES:
        committed = path.read_text(encoding="utf-8")
        assert committed == config.with_calibration_markdown(committed), \
            f"{path.relative_to(REPO)} is stale: `newsdedup config --calibration-markdown docs/calibration/*.md` rewrites it"
    held = [name for path in STAGE_FILES for name in config.generated_sections(path.read_text(encoding="utf-8"))]
    assert sorted(held) == sorted(config.calibration_sections()), "a section's tables are in no stage file, or in two"
    assert not config.generated_sections((REPO / "docs" / "CALIBRATION.md").read_text(encoding="utf-8"))


def test_the_command_rewrites_a_stale_stage_file(tmp_path, capsys):
    from newsdedup_dagster.cli import main

    stale = config.calibration_markdown(["events", "narrative"]).replace("| `events.", "| `events.stale_", 1)
    path = tmp_path / "events.md"
    path.write_text(f"# Events\n\n{stale}\n## Evidence\n", encoding="utf-8")
    assert main(["config", "--calibration-markdown", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == \
        f"# Events\n\n{config.calibration_markdown(['events', 'narrative'])}\n## Evidence\n"
    assert "rewritten (events, narrative)" in capsys.readouterr().out
    assert main(["config", "--calibration-markdown"]) == 0
    assert capsys.readouterr().out == config.calibration_markdown()


def _without_generated_tables(text: str) -> str:
    while match := config.CALIBRATION_BEGIN.search(text):
        text = text[:match.start()] + text[text.index(config.CALIBRATION_END, match.end()) + len(config.CALIBRATION_END):]
    return text


def test_every_variable_named_in_the_code_is_declared():
    named: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        named |= set(NAME.findall(path.read_text(encoding="utf-8")))
    # a bare prefix in a message ("NEWSDEDUP_SMTP_*") is not a variable; test-only switches
    # (crashpoints.py) are documented where they are read
    named = {n for n in named if not n.endswith("_") and not config.TEST_ONLY.match(n)}
    # a retired variable is named only by its declaration (`was=`), to refuse it naming its key
    undeclared = sorted(named - config.declared_variables() - set(config.retired_variables()))
    assert not undeclared, f"read by the code but declared by no settings class: {undeclared}"
    assert not config.declared_variables() & set(config.retired_variables())


def test_no_retired_variable_is_named_outside_its_declaration():
    retired = set(config.retired_variables())
    for path in [*PACKAGE.rglob("*.py"), REPO / "README.md", *(REPO / "docs").rglob("*.md")]:
        # the generated tables' "former variable" column names them
        text = _without_generated_tables(path.read_text(encoding="utf-8"))
        named = {n for n in NAME.findall(text) if n in retired}
        kept = {n for n in named if f'was="{n}"' in text}
        assert not named - kept, f"{path.relative_to(REPO)} names retired variables: {sorted(named - kept)}"


def test_every_row_has_a_default_and_a_meaning():
    rows = config.configuration_rows()
    assert len({env for _, env, _, _, _ in rows}) == len(rows), "a variable is declared twice"
    for _, env, default, accepts, doc in rows:
        assert default and accepts and doc, env
    calibrated = config.calibration_rows()
    # every setting the environment held before the split is one of the two (165 then)
    assert len(rows) <= 60 and len(rows) + len(calibrated) >= 165
    assert len({key for _, key, *_ in calibrated}) == len(calibrated), "a calibration key is declared twice"
    for _, key, default, accepts, doc, _ in calibrated:
        assert default and accepts and doc, key


def _built() -> dict[str, object]:
    """Everything the builders return, flattened: {"builder.field": value}; a builder the
    environment makes invalid is left out."""
    builders = {
        "ingest": config.ingest_settings, "articles": config.article_settings, "dedup": config.dedup_settings, "embedding": config.embedding_settings,
        "clustering": lambda: config.clustering_settings(None).as_dict(), "llm": config.llm_settings,
        "backoff": config.llm_backoff, "grouping": config.grouping_settings, "narrative": config.narrative_settings,
        "digest": config.digest_settings, "mail": config.mail_settings, "publish": config.publish_settings,
        "retention": config.retention_settings,
        "deployment": lambda: {name: getattr(config, name)() for name in (
            "home_dir", "database_url", "embedded_shared_buffers", "dagster_database_url", "sql_dir", "dagster_home",
            "partitions_start", "eval_data_dir", "outbox_dir", "alert_recipients", "dagster_ui_url", "sources_file", "fetch_mode",
            "clustering_busy_retry", "step_retry_delay", "unsubscribe_url", "digest_send_age", "contact_url")},
    }
    out: dict[str, object] = {}
    for stage, build in builders.items():
        try:
            built = build()
        except ValueError:
            out[stage] = "refused"
            continue
        values = asdict(built) if is_dataclass(built) else built
        out.update({f"{stage}.{key}": value for key, value in values.items()})
    return out


@pytest.fixture
def clean_env(monkeypatch):
    for name in [n for n in os.environ if n.startswith("NEWSDEDUP_") or n == "DAGSTER_HOME"]:
        monkeypatch.delenv(name)


def _not_a_default(accepts: str, default: str):
    """A calibration file value the key does not have by default: refused (a number, flag or word
    given as an odd text) or taken as is (a text, a path)."""
    if accepts in ("text", "a path", "comma-separated list"):
        return "/not-a-default-value"
    return "not-a-default-value"


@pytest.mark.parametrize("row", config.calibration_rows(), ids=lambda row: row[1])
def test_every_calibration_key_is_read(clean_env, monkeypatch, tmp_path, row):
    """Setting the key in the calibration file to a value it does not have by default changes what
    a builder returns (or the builder refuses it, naming the file and key)."""
    section, key, default, accepts = row[0], row[1], row[2], row[3]
    before = _built()
    calibrate(monkeypatch, tmp_path, **{section: {key.split(".", 1)[1]: _not_a_default(accepts, default)}})
    after = _built()
    assert after != before, f"{key} is declared but no builder reads it"


@pytest.mark.parametrize("row", config.configuration_rows(), ids=lambda row: row[1])
def test_every_declared_variable_is_read(clean_env, monkeypatch, tmp_path, row):
    """Setting the variable to a value no setting accepts or has by default changes what a
    builder returns (a text or path is taken as is, a number, flag or word is refused)."""
    env = row[1]
    before = _built()
    monkeypatch.setenv(env, f"{tmp_path}/not-a-default-value")
    after = _built()
    assert after != before, f"{env} is declared but no builder reads it"


def test_the_command_prints_the_table(capsys):
    from newsdedup_dagster.cli import main

    assert main(["config", "--markdown"]) == 0
    assert capsys.readouterr().out == config.configuration_markdown()
    assert main(["config"]) == 0
    listing = capsys.readouterr().out
    assert all(env in listing for _, env, _, _, _ in config.configuration_rows())
