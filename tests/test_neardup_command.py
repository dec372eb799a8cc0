"""`newsdedup neardup-eval` on a small hand-written pair file (the same functions as the asset)."""

from __future__ import annotations

import json

from newsdedup_dagster.cli import main

PAIRS = [
    {"id": "1", "a": "Storm closes schools across northern England", "b": "Storm closes schools across northern England - BBC News", "label": 1},
    {"id": "2", "a": "Tesla recalls 120,000 cars over faulty seat belts", "b": "Tesla recalls 120,000 vehicles over seat belt fault", "label": 1},
    {"id": "3", "a": "Tesla recalls 120,000 cars over faulty seat belts", "b": "Ford recalls 80,000 trucks over brake problem", "label": 0},
    {"id": "4", "a": "Central bank holds interest rates at 4%", "b": "Local bakery wins national bread award", "label": 0},
]


def test_neardup_eval_json_and_sweep(tmp_path, capsys):
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(p) for p in PAIRS))
    assert main(["neardup-eval", "--pairs", str(path), "--json", "--sweep", "0.5:0.7:0.1"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(out) == {"threshold", "precision", "recall", "f1", "pairs", "sweep"}
    assert out["pairs"] == 4 and len(out["sweep"]) == 3
    assert out["precision"] == 1.0  # neither negative pair is called a duplicate
    assert out["recall"] >= 0.5  # the suffix-only copy is found


def test_neardup_eval_rejects_malformed_file(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "1", "a": "x"}))
    assert main(["neardup-eval", "--pairs", str(path)]) == 2
    assert "lacks one of a, b, label" in capsys.readouterr().out
