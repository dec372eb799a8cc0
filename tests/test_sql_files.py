"""Every SQL statement is a file in sql/queries/, loaded by name (CONTRIBUTING.md): the package's
source holds no statement text, and every file there is used.

The scan reads the package's syntax tree: a string literal (or the literal start of an f-string)
that begins with an SQL command word in capitals is a statement. Docstrings are prose and are
skipped; so are fragments composed with psycopg.sql (identifiers, casts), which start with no
command word."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

from newsdedup_dagster import config
from newsdedup_dagster.shared import db

PACKAGE = Path(__file__).resolve().parents[1] / "newsdedup_dagster"
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
    assert not unexpected, "SQL statements belong in sql/queries/<name>.sql, loaded with db.load_sql:\n" + \
        "\n".join(unexpected)


def _string_constants() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.add(node.value)
    return found


def test_every_query_file_is_used():
    names = _string_constants()
    unused = sorted(path.stem for path in QUERIES.glob("*.sql") if path.stem not in names)
    assert not unused, f"sql/queries files no module loads by name: {unused}"


def test_every_query_file_is_a_statement():
    empty = [path.name for path in QUERIES.glob("*.sql")
             if not COMMAND.match(re.sub(r"--[^\n]*\n", "", db.load_sql(path.stem)))]
    assert not empty, f"sql/queries files that hold no statement: {empty}"
