"""evaluation.neardup_pairs.evaluate_pairs (core of `newsdedup neardup-eval`) and the derived second check."""

import json

import pytest

from newsdedup_dagster.evaluation.neardup_pairs import derive_pairs_from_articles, evaluate_pairs, main, parse_sweep
from newsdedup_dagster.stages.neardup import NearDupConfig

PAIRS = [
    {"id": "1", "a": "Liz Truss resigns as UK prime minister", "b": "UK Prime Minister Liz Truss resigns", "label": 1},
    {"id": "2", "a": "Quake kills 12 in northern Chile", "b": "Quake kills 12 in north Chile - AP", "label": 1},
    {"id": "3", "a": "Storm knocks out power in Florida", "b": "Central bank raises rates again", "label": 0},
    {"id": "4", "a": "Apple unveils new iPhone with faster chip", "b": "Apple shares fall after iPhone sales miss forecasts", "label": 0},
    {"id": "5", "a": "진천군, 온디바이스 AI 기반 스마트 돌봄 구축 본격 착수", "b": "진천군 온디바이스 AI기반 스마트돌봄 본격화",
     "label": 1, "lang": "ko"},
    {"id": "6", "a": "어드밴트, 온디바이스 AI 서비스 실증·확산 사업 참여", "b": "엠젠솔루션, 온디바이스 AI 서비스 실증·확산 사업 참여",
     "label": 0, "lang": "ko"},
]


def test_parse_sweep():
    assert parse_sweep("0.2:0.6:0.1") == [0.2, 0.3, 0.4, 0.5, 0.6]
    assert parse_sweep("0.3:0.3:0.05") == [0.3]
    for bad in ("0.2:0.6", "0.6:0.2:0.1", "0.2:0.6:0"):
        with pytest.raises(ValueError):
            parse_sweep(bad)


def test_evaluate_pairs_shape_and_figures():
    result = evaluate_pairs(PAIRS, NearDupConfig(), sweep="0.3:0.5:0.1")
    assert set(result) >= {"threshold", "precision", "recall", "f1", "pairs", "sweep", "by_lang"}
    assert result["pairs"] == 6 and result["positives"] == 3
    assert result["threshold"] == {"en": NearDupConfig().threshold, "ko": 0.30}  # mixed languages: per language
    assert result["by_lang"]["ko"]["precision"] == 1.0 and result["by_lang"]["ko"]["recall"] == 1.0
    assert [row["threshold"] for row in result["sweep"]] == [0.3, 0.4, 0.5]
    for row in result["sweep"]:
        assert set(row) == {"threshold", "precision", "recall", "f1"}
    # The gate keeps the Korean template pair out even at the lowest threshold.
    assert result["sweep"][0]["precision"] >= result["precision"] - 1e-9 or result["sweep"][0]["recall"] >= result["recall"]


def test_evaluate_pairs_single_language_threshold_is_a_number():
    result = evaluate_pairs(PAIRS[:4])
    assert result["threshold"] == NearDupConfig().threshold
    assert result["precision"] == 1.0 and result["recall"] == 1.0 and result["f1"] == 1.0
    assert result["sweep"] == []


def test_derive_pairs_from_articles():
    articles = [
        {"id": "a1", "title": "Liz Truss resigns as UK prime minister", "lang": "en", "cluster": "Q1"},
        {"id": "a2", "title": "Liz Truss (pictured) resigns as UK prime minister", "lang": "en", "cluster": "Q1"},  # same text
        {"id": "a3", "title": "Amid a crisis, Liz Truss announces her resignation", "lang": "en", "cluster": "Q1"},
        {"id": "b1", "title": "Kipchoge sets a new marathon world record in Berlin", "lang": "en", "cluster": "Q2"},
        {"id": "b2", "title": "Kipchoge sets marathon world record at Berlin Marathon", "lang": "en", "cluster": "Q2"},
        # Filed under two subjects: never a negative against either.
        {"id": "c1", "title": "Truss resigns; Sunak expected to follow", "lang": "en", "cluster": "Q1"},
        {"id": "c2", "title": "Truss resigns; Sunak expected to follow", "lang": "en", "cluster": "Q3"},
        {"id": "k1", "title": "리즈 트러스 총리 사임", "lang": "ko", "cluster": "Q1"},
    ]
    pairs = derive_pairs_from_articles(articles)
    positives = {(p["a"], p["b"]) for p in pairs if p["label"] == 1}
    negatives = [p for p in pairs if p["label"] == 0]
    assert all(p["lang"] == "en" for p in pairs)  # a lone ko text makes no pair
    assert len(positives) == 4  # Q1 has 3 distinct texts (a1=a2, c1=c2 merged): 3 pairs; Q2: 1
    for p in negatives:
        assert {"Kipchoge" in p["a"], "Kipchoge" in p["b"]} == {True, False}
    nearest = derive_pairs_from_articles(articles, positives="nearest")
    assert sum(p["label"] for p in nearest) <= len(positives)


def test_command_line(tmp_path, capsys):
    pairs_file = tmp_path / "pairs.jsonl"
    pairs_file.write_text("\n".join(json.dumps(p, ensure_ascii=False) for p in PAIRS[:4]) + "\n", encoding="utf-8")
    assert main(["eval", "--pairs", str(pairs_file), "--json", "--sweep", "0.3:0.4:0.1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pairs"] == 4 and len(out["sweep"]) == 2
    assert main(["eval", "--pairs", str(pairs_file), "--gate", "on", "--threshold", "0.3"]) == 0
    assert "precision" in capsys.readouterr().out
    articles = tmp_path / "articles.jsonl"
    articles.write_text("\n".join(json.dumps(a) for a in [
        {"id": "1", "title": "Kipchoge sets a new marathon world record", "lang": "en", "cluster": "A"},
        {"id": "2", "title": "Kipchoge sets marathon world record in Berlin", "lang": "en", "cluster": "A"},
        {"id": "3", "title": "Truss resigns as prime minister", "lang": "en", "cluster": "B"},
    ]) + "\n")
    out_file = tmp_path / "derived.jsonl"
    assert main(["derive", "--articles", str(articles), "--out", str(out_file)]) == 0
    assert len(out_file.read_text().splitlines()) >= 2
