"""Every SQL statement is a named block of a file in sql/queries/, loaded by name (CONTRIBUTING.md):
the package's source holds no statement text, every file parses, every name is unique, used, and
every name loaded exists.

The scan reads the package's syntax tree: a string literal (or the literal start of an f-string)
that begins with an SQL command word in capitals is a statement. Docstrings are prose and are
skipped; so are fragments composed with psycopg.sql (identifiers, casts), which start with no
command word."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

from newsdedup_dagster import config
from newsdedup_dagster.shared import db
from newsdedup_dagster.shared.db import sql_files

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "newsdedup_dagster"
QUERIES = config.sql_dir() / "queries"

COMMAND = re.compile(
    r"\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|ALTER|DROP|TRUNCATE|SET|RESET|SHOW|BEGIN|COMMIT|"
    r"ROLLBACK|COPY|LOCK|VACUUM|ANALYZE|EXPLAIN|GRANT|REVOKE|NOTIFY|LISTEN|REINDEX|DISCARD)\s")

# Statements still inline in modules that are being reworked elsewhere; each count may only fall.
# Remove an entry once its module loads its statements by name.
NOT_YET_MOVED: dict[str, int] = {}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def inline_statements(source: str) -> list[tuple[int, str]]:
    """(line, first words) of every statement written as a literal in this Python source."""
    tree = ast.parse(source)
    skipped = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(part) for part in node.values)
            head = node.values[0] if node.values else None
            if isinstance(head, ast.Constant) and COMMAND.match(head.value):
                found.append((node.lineno, head.value.strip()[:60]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped:
            if COMMAND.match(node.value):
                found.append((node.lineno, node.value.strip()[:60]))
    return sorted(found)


def test_the_scan_finds_statements_in_every_form():
    source = '''
def f(conn, table):
    """SELECT in a docstring is prose."""
    conn.execute("SELECT 1 FROM t WHERE a = %s", (1,))
    conn.execute(
        "UPDATE t SET a = 1"
        " WHERE b = 2")
    conn.execute(f"DELETE FROM {table}")
    query = """
        WITH x AS (SELECT 1) SELECT * FROM x"""
    conn.execute(pgsql.SQL("SET LOCAL lock_timeout = {}").format(pgsql.Literal("1s")))
    fragment = pgsql.SQL("({}::{})")
    message = "select the file with --data"
'''
    assert [line for line, _ in inline_statements(source)] == [4, 6, 8, 9, 11]


def test_no_statement_is_written_inline():
    counts: Counter[str] = Counter()
    where: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        for line, text in inline_statements(path.read_text(encoding="utf-8")):
            counts[name] += 1
            where.setdefault(name, []).append(f"{name}:{line}: {text}")
    unexpected = [hit for name, hits in where.items() if counts[name] > NOT_YET_MOVED.get(name, 0) for hit in hits]
    assert not unexpected, "SQL statements belong in sql/queries/<package>.sql as `-- name:` blocks, loaded with db.load_sql:\n" + \
        "\n".join(unexpected)


def _string_constants() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.add(node.value)
    return found


def test_every_file_parses_and_every_name_is_unique():
    where: dict[str, list[str]] = {}
    for path in sorted(QUERIES.glob("*.sql")):
        for name in sql_files.parse_statements(path):
            where.setdefault(name, []).append(path.name)
    twice = {name: files for name, files in where.items() if len(files) > 1}
    assert not twice, f"statements named in more than one file: {twice}"
    assert set(sql_files.statements()) == set(where)


def test_every_named_statement_is_used():
    names = _string_constants()
    unused = sorted(name for name in sql_files.statements() if name not in names)
    assert not unused, f"named statements in sql/queries no module loads: {unused}"


def test_every_name_loaded_exists():
    """A literal name given to load_sql (in the package, the tests and the benchmarks) is a statement;
    this file's own loader tests load names of the files they write."""
    known = sql_files.statements()
    missing = []
    sources = [*PACKAGE.rglob("*.py"), *(REPO / "tests").rglob("*.py"), *(REPO / "bench").rglob("*.py")]
    for path in sorted(path for path in sources if path != Path(__file__).resolve()):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "load_sql"
                    and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value not in known):
                missing.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.args[0].value}")
    assert not missing, "load_sql names with no statement:\n" + "\n".join(missing)


def test_every_named_statement_is_a_statement():
    empty = [name for name, text in sql_files.statements().items()
             if not COMMAND.match(re.sub(r"--[^\n]*\n", "", text))]
    assert not empty, f"named statements that hold no statement: {empty}"


def _write(tmp_path: Path, **files: str) -> Path:
    (tmp_path / "queries").mkdir()
    for name, text in files.items():
        (tmp_path / "queries" / f"{name}.sql").write_text(text, encoding="utf-8")
    return tmp_path


def test_a_block_is_its_name_line_to_the_next(tmp_path, monkeypatch):
    _write(tmp_path, things="-- The things' statements.\n\n-- name: thing_get\n-- One thing.\nSELECT 1\n\n"
                            "-- name: thing_put\nINSERT INTO t VALUES (%s)\n")
    monkeypatch.setattr(sql_files, "SQL_DIR", tmp_path)
    sql_files.statements.cache_clear()
    try:
        assert sql_files.load_sql("thing_get") == "-- One thing.\nSELECT 1\n"
        assert sql_files.load_sql("thing_put") == "INSERT INTO t VALUES (%s)\n"
        with pytest.raises(KeyError, match="thing_gone"):
            sql_files.load_sql("thing_gone")
    finally:
        sql_files.statements.cache_clear()


@pytest.mark.parametrize(("files", "error"), [
    ({"a": "-- name: x\nSELECT 1\n", "b": "-- name: x\nSELECT 2\n"}, "'x' is named in both a.sql and b.sql"),
    ({"a": "-- name: x\nSELECT 1\n-- name: x\nSELECT 2\n"}, "a.sql:3: statement 'x' named twice"),
    ({"a": "SELECT 1\n-- name: x\nSELECT 2\n"}, "a.sql:1: SQL before the first"),
    ({"a": "-- name: x\n-- only a comment\n"}, "a.sql: named statements without SQL: x"),
    ({"a": "-- name: Bad-Name\nSELECT 1\n"}, "a.sql:1: not a statement name"),
])
def test_a_broken_file_is_an_error_when_loading(tmp_path, monkeypatch, files, error):
    monkeypatch.setattr(sql_files, "SQL_DIR", _write(tmp_path, **files))
    sql_files.statements.cache_clear()
    try:
        with pytest.raises(ValueError, match=re.escape(error)):
            sql_files.load_sql("x")
    finally:
        sql_files.statements.cache_clear()


def test_set_local_refuses_a_setting_off_its_list():
    with pytest.raises(ValueError, match="search_path"):
        db.set_local(None, search_path="evil")


def test_set_local_lasts_until_the_transaction_ends(conn):
    settings = "SELECT current_setting('enable_sort'), current_setting('hnsw.ef_search'), current_setting('lock_timeout')"
    db.set_local(conn, enable_sort="off", hnsw_ef_search=77, lock_timeout="1500ms")
    assert conn.execute(settings).fetchone() == ("off", "77", "1500ms")
    conn.rollback()
    assert conn.execute(settings).fetchone() != ("off", "77", "1500ms")
