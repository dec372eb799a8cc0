"""The package's three floors, read from its import graph (every import, at module or function level):

- `newsdedup_dagster/shared/`: the ground floor (database, settings, text, HTTP, the model client,
  presentation). It imports only itself.
- `newsdedup_dagster/stages/<stage>/`: one package per pipeline stage. A stage imports the ground
  floor and itself, never another stage: stages talk through the database.
- everything else (the Dagster layer: assets, definitions, sensors, resources; the commands and
  evaluation) is on top and may import anything.

Neither lower floor imports Dagster (that a function-level import says why it is deferred is
tests/test_import_graph.py's)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "newsdedup_dagster"
STAGES = ("ingest", "neardup", "articles", "embeddings", "clustering", "llm", "briefings", "events",
          "publish", "digest", "retention")


def floor_of(module: str) -> tuple[str, str | None]:
    """("shared", None), ("stage", name) or ("top", None) of a dotted module name."""
    parts = module.split(".")
    if parts[0] != "newsdedup_dagster" or len(parts) == 1:
        return "top", None
    if parts[1] == "shared":
        return "shared", None
    if parts[1] == "stages":
        return "stage", parts[2] if len(parts) > 2 else None
    return "top", None


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(node: ast.AST, importer: str, is_package: bool) -> list[str]:
    """The modules an import statement loads (relative imports resolved; `from p import m` is p.m)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = importer.split(".") if is_package else importer.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    return [module] + [f"{module}.{alias.name}" for alias in node.names]


def crossing(floor: str, stage: str | None, target: str) -> str | None:
    """What is wrong with a module of (floor, stage) importing `target`, or None."""
    if target.split(".")[0] == "dagster" or target.startswith("dagster_"):
        return f"imports Dagster ({target})"
    if not target.startswith("newsdedup_dagster"):
        return None
    target_floor, target_stage = floor_of(target)
    if target == "newsdedup_dagster" or target_floor == "shared":
        return None
    if floor == "stage" and target_floor == "stage" and target_stage in (stage, None):
        return None                    # its own stage (`from newsdedup_dagster.stages import x` names x next)
    return f"imports {target}"


def import_problems(root: Path) -> list[str]:
    problems = []
    for path in sorted(root.rglob("*.py")):
        importer = module_name(path, root)
        floor, stage = floor_of(importer)
        if floor == "top":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            problem = next((p for p in (crossing(floor, stage, target)
                                        for target in imported_modules(node, importer, path.name == "__init__.py"))
                            if p), None)
            if problem:
                problems.append(f"{path.relative_to(root.parent)}:{node.lineno}: {importer} {problem}")
    return sorted(set(problems))


def test_stages_import_only_the_ground_floor_and_themselves():
    assert import_problems(PACKAGE) == []


def test_the_tree_shows_the_floors():
    assert sorted(p.name for p in (PACKAGE / "stages").iterdir() if (p / "__init__.py").exists()) == sorted(STAGES)
    assert {"db", "text", "http", "models", "presentation"} <= {p.name for p in (PACKAGE / "shared").iterdir() if p.is_dir()}


@pytest.mark.parametrize("source, problem", [
    ("from newsdedup_dagster.stages.clustering.store import x\n", "imports newsdedup_dagster.stages.clustering.store"),
    ("from ..clustering import store\n", "imports newsdedup_dagster.stages.clustering"),
    ("def f():\n    from newsdedup_dagster import config\n", "imports newsdedup_dagster.config"),
    ("import dagster\n", "imports Dagster"),
])
def test_the_rule_catches_a_stage_reaching_across(tmp_path, source, problem):
    package = tmp_path / "newsdedup_dagster"
    for sub in ("stages/events", "stages/clustering", "shared"):
        (package / sub).mkdir(parents=True)
        (package / sub / "__init__.py").write_text("")
    (package / "stages" / "events" / "store.py").write_text(source)
    (package / "stages" / "events" / "fine.py").write_text(
        "from newsdedup_dagster.shared import db\nfrom newsdedup_dagster.stages.events import store\nfrom . import store\n")
    found = import_problems(package)
    assert len(found) == 1 and problem in found[0], found
