"""The evaluation commands find labelled files by name in a data directory (`--data-dir`, else
$NEWSDEDUP_EVAL_DATA_DIR, else ./data) or take a path; `--data sample` stays the sample day."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from newsdedup_dagster.cli import main as newsdedup
from newsdedup_dagster.evaluation.data import (
    DATA_DIR_VARIABLE,
    SAMPLE_DATA,
    data_directory,
    resolve_data_argument,
    resolve_data_file,
)
from newsdedup_dagster.evaluation.events_calibrate import main as calibrate

PAIRS = [
    {"id": "1", "a": "Liz Truss resigns as UK prime minister", "b": "UK Prime Minister Liz Truss resigns", "label": 1},
    {"id": "2", "a": "Quake kills 12 in northern Chile", "b": "Quake kills 12 in north Chile - AP", "label": 1},
    {"id": "3", "a": "Storm knocks out power in Florida", "b": "Central bank raises rates again", "label": 0},
]


def _write_pairs(path, pairs=PAIRS):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    return path


def test_directory_comes_from_the_option_then_the_environment_then_data(tmp_path):
    assert data_directory(tmp_path / "given", str(tmp_path / "env")) == tmp_path / "given"
    assert data_directory(None, str(tmp_path / "env")) == tmp_path / "env"
    assert str(data_directory(None, None)) == "data"


def test_bare_names_are_found_in_the_data_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "store"
    _write_pairs(store / "pairs.jsonl")
    _write_pairs(tmp_path / "pairs.jsonl", PAIRS[:1])   # the same name in the working directory loses
    assert resolve_data_file("pairs.jsonl", store) == store / "pairs.jsonl"
    assert resolve_data_file("pairs", store) == store / "pairs.jsonl"      # .jsonl may be left out
    assert resolve_data_file("pairs.jsonl", tmp_path / "empty") == tmp_path.joinpath("pairs.jsonl").relative_to(tmp_path)
    elsewhere = tmp_path / "other" / "pairs.jsonl"
    assert resolve_data_file(str(elsewhere), store) == elsewhere            # a path is used as given
    assert resolve_data_file("./pairs.jsonl", store).resolve() == (tmp_path / "pairs.jsonl").resolve()
    with pytest.raises(FileNotFoundError, match="data directory .*empty"):
        resolve_data_file("missing.jsonl", tmp_path / "empty")


def test_sample_is_the_bundled_day_even_beside_a_file_of_that_name(tmp_path):
    (tmp_path / "sample").write_text("{}\n")
    assert resolve_data_argument(SAMPLE_DATA, tmp_path) == SAMPLE_DATA
    (tmp_path / "day.jsonl").write_text("{}\n")
    assert resolve_data_argument("day", tmp_path) == tmp_path / "day.jsonl"


def test_neardup_eval_reads_a_name_from_each_kind_of_data_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(DATA_DIR_VARIABLE, raising=False)
    _write_pairs(tmp_path / "data" / "default.jsonl")
    _write_pairs(tmp_path / "by-option" / "chosen.jsonl", PAIRS[:2])
    _write_pairs(tmp_path / "by-env" / "env.jsonl", PAIRS[1:])

    assert newsdedup(["neardup-eval", "--json", "--pairs", "default.jsonl"]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"] == 3
    assert newsdedup(["neardup-eval", "--json", "--pairs", "chosen", "--data-dir", str(tmp_path / "by-option")]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"] == 2
    monkeypatch.setenv(DATA_DIR_VARIABLE, str(tmp_path / "by-env"))
    assert newsdedup(["neardup-eval", "--json", "--pairs", "env.jsonl"]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"] == 2
    assert newsdedup(["neardup-eval", "--pairs", "default.jsonl"]) == 2      # not in the environment's directory
    assert "by-env" in capsys.readouterr().out


def test_eval_names_the_data_directory_when_a_file_is_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(DATA_DIR_VARIABLE, str(tmp_path / "labelled"))
    assert newsdedup(["eval", "--data", "gnews_titles.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "gnews_titles.jsonl" in err and str(tmp_path / "labelled") in err


def test_the_pairs_module_runs_at_its_path_with_a_data_directory(tmp_path):
    _write_pairs(tmp_path / "dir" / "p.jsonl")
    proc = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", "newsdedup_dagster.evaluation.neardup_pairs",
                           "eval", "--pairs", "p.jsonl", "--data-dir", str(tmp_path / "dir"), "--json"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["pairs"] == 3


def test_calibrate_resolves_its_file_in_the_data_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "labelled")):
        calibrate(["itn_multilingual_dev.jsonl", "--data-dir", str(tmp_path / "labelled")])
