"""Commands hand settings to assets through run config and resources, never through os.environ:
only the two process-control writes below may change the environment of the process."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "newsdedup_dagster"
# DAGSTER_HOME: Dagster's own commands and instance read it from the environment only;
# OMP_NUM_THREADS: the e5 runtime reads it once when it loads, restored right after.
ALLOWED = {("instance.py", "DAGSTER_HOME"), ("stages/embeddings/providers.py", "OMP_NUM_THREADS"),
           ("shared/text/item_text.py", "OMP_NUM_THREADS")}


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" and \
        isinstance(node.value, ast.Name) and node.value.id == "os"


def environment_writes(root: Path = PACKAGE) -> set[tuple[str, str]]:
    """(module, variable) for every `os.environ[...] = `, `setdefault`, `update`, `pop` and `putenv`."""
    found: set[tuple[str, str]] = set()
    for path in root.rglob("*.py"):
        module = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Subscript) and _is_environ(target.value):
                        key = target.slice
                        found.add((module, key.value if isinstance(key, ast.Constant) else ast.unparse(key)))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner, name = node.func.value, node.func.attr
                if (_is_environ(owner) and name in {"setdefault", "update", "pop", "clear"}) or \
                        (isinstance(owner, ast.Name) and owner.id == "os" and name in {"putenv", "unsetenv"}):
                    arg = node.args[0] if node.args else None
                    found.add((module, arg.value if isinstance(arg, ast.Constant) else name))
    return found


def test_only_process_control_writes_the_environment():
    assert environment_writes() - ALLOWED == set()


def test_the_scan_sees_each_kind_of_write(tmp_path):
    (tmp_path / "commands").mkdir()
    (tmp_path / "commands" / "demo.py").write_text(
        'import os\nos.environ.setdefault("NEWSDEDUP_SOURCES", "x")\nos.environ["NEWSDEDUP_FETCH_MODE"] = "replay"\n'
        'os.putenv("NEWSDEDUP_HOME", "y")\n', encoding="utf-8")
    assert environment_writes(tmp_path) == {("commands/demo.py", "NEWSDEDUP_SOURCES"),
                                            ("commands/demo.py", "NEWSDEDUP_FETCH_MODE"),
                                            ("commands/demo.py", "NEWSDEDUP_HOME")}
