"""The evaluation tooling is one package that the pipeline never imports: stages, assets and the
Dagster definitions stay free of labelled-data code and its dependencies. Only the commands that
run evaluations (and the demo's gold line) and the benchmarks reach it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "newsdedup_dagster"
EVALUATION = "newsdedup_dagster.evaluation"
ALLOWED = ("evaluation/", "commands/")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Absolute names of every module `path` imports, relative imports resolved."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            base = base[:len(base) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_the_resolver_sees_relative_and_absolute_imports(tmp_path):
    stage = PACKAGE / "stages" / "clustering" / "store.py"
    found = imported_modules(stage)
    assert "newsdedup_dagster.shared.db" in found            # `from newsdedup_dagster.shared import db`
    assert "psycopg" in found


def test_no_pipeline_module_imports_the_evaluation_package():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(ALLOWED):
            continue
        reached = {m for m in imported_modules(path) if m == EVALUATION or m.startswith(EVALUATION + ".")}
        if reached:
            offenders.append(f"{relative}: {sorted(reached)}")
    assert not offenders, "pipeline modules importing the evaluation tooling:\n" + "\n".join(offenders)


def test_the_old_evaluation_modules_are_gone():
    for old in ("evaluation.py", "metrics.py", "neardup/pairs_eval.py", "events/calibrate.py"):
        assert not (PACKAGE / old).exists(), old
