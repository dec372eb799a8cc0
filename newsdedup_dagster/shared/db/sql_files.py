"""Named SQL: each store's statements in one file of sql/queries/, as `-- name: <name>` blocks.

A block runs from its name line to the next one; the comment lines right after the name line say
what the statement does. A name appears once across all the files (a duplicate is an error when the
statements are loaded).

Not aiosql (whose file format this is): it runs statements itself with `:name` parameters; here psycopg runs the text.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from newsdedup_dagster.shared import (
    deployment as config,  # deployment values only: config imports the stages, which import db
)

SQL_DIR = config.sql_dir()

NAME_LINE = re.compile(r"^--\s*name:\s*(\S*)\s*$")
VALID_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def parse_statements(path: Path) -> dict[str, str]:
    """The named statements of one file, in file order. Text before the first name line may only be
    comments (the file's own); an invalid or repeated name, or a name with no statement, is an error."""
    statements: dict[str, list[str]] = {}
    current: list[str] | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = NAME_LINE.match(line)
        if match:
            name = match.group(1)
            if not VALID_NAME.match(name):
                raise ValueError(f"{path.name}:{number}: not a statement name: {name!r}")
            if name in statements:
                raise ValueError(f"{path.name}:{number}: statement {name!r} named twice")
            current = statements[name] = []
        elif current is not None:
            current.append(line)
        elif line.strip() and not line.lstrip().startswith("--"):
            raise ValueError(f"{path.name}:{number}: SQL before the first `-- name:` line")
    texts = {name: "\n".join(lines).strip() + "\n" for name, lines in statements.items()}
    empty = [name for name, text in texts.items()
             if not any(line.strip() and not line.lstrip().startswith("--") for line in text.splitlines())]
    if empty:
        raise ValueError(f"{path.name}: named statements without SQL: {', '.join(empty)}")
    return texts


@functools.cache
def statements() -> dict[str, str]:
    """Every named statement of sql/queries/*.sql."""
    found: dict[str, str] = {}
    where: dict[str, str] = {}
    for path in sorted((SQL_DIR / "queries").glob("*.sql")):
        for name, text in parse_statements(path).items():
            if name in found:
                raise ValueError(f"statement {name!r} is named in both {where[name]} and {path.name}")
            found[name], where[name] = text, path.name
    return found


def load_sql(name: str) -> str:
    """The statement named `name` (its comment lines included)."""
    try:
        return statements()[name]
    except KeyError:
        raise KeyError(f"no statement named {name!r} in {SQL_DIR / 'queries'}/*.sql") from None
