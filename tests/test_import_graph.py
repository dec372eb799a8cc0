"""The package's modules import each other without a cycle (module level, package __init__ files
included: importing a.b.c runs a/__init__.py and a/b/__init__.py first). A cycle hidden behind an
import inside a function or TYPE_CHECKING is what this keeps from coming back."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "newsdedup_dagster"


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """{module: the package modules it imports when it is imported}."""
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.parse(path.read_text(encoding="utf-8")).body:   # module level only
            targets = []
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                targets = [f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for target in targets:
                parts = target.split(".")
                for i in range(2, len(parts) + 1):   # the packages on the way are imported too
                    dep = ".".join(parts[:i])
                    if dep in modules and dep != name and not name.startswith(dep + "."):
                        graph[name].add(dep)
    return graph


def test_the_graph_sees_the_imports():
    graph = import_graph()
    assert "newsdedup_dagster.shared.models.settings" in graph["newsdedup_dagster.config"]
    assert "newsdedup_dagster.shared.deployment" in graph["newsdedup_dagster.shared.db.locations"]


def test_no_module_imports_itself_back():
    try:
        tuple(graphlib.TopologicalSorter(import_graph()).static_order())
    except graphlib.CycleError as exc:
        raise AssertionError(f"import cycle: {' -> '.join(exc.args[1])}") from None


def test_settings_and_deployment_import_no_stage():
    graph = import_graph()
    for module in ("newsdedup_dagster.shared.settings", "newsdedup_dagster.shared.deployment"):
        reached, todo = set(), [module]
        while todo:
            for dep in graph[todo.pop()] - reached:
                reached.add(dep)
                todo.append(dep)
        assert reached <= {"newsdedup_dagster", "newsdedup_dagster.shared.settings"}, (module, reached)


def test_every_import_inside_a_function_says_why_on_its_line():
    """Imports sit at the top of a module; one inside a function is a deliberate deferral (a heavy
    optional stack, a CLI handler kept out of `--help`) and says so in a comment on its own line."""
    silent = []
    for path in sorted((Path(__file__).resolve().parents[1] / "newsdedup_dagster").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for function in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                silent += [f"{path.name}:{node.lineno}" for node in ast.walk(function)
                           if isinstance(node, (ast.Import, ast.ImportFrom)) and "#" not in lines[node.lineno - 1]]
    assert not silent, f"imports inside functions without their reason: {silent}"
