"""The README's configuration table and the settings the code reads agree: every variable read is
documented (with a default column), and every documented variable is read."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "newsdedup_dagster"
NAME = re.compile(r"NEWSDEDUP_[A-Z0-9_]+")
# Test-only switches (documented where they are read, not settings an operator sets).
TEST_ONLY = re.compile(r"^NEWSDEDUP_TEST_")


def names_read_by_code() -> set[str]:
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        names |= set(NAME.findall(path.read_text(encoding="utf-8")))
    # clustering settings are read as NEWSDEDUP_<KEY> for every key (clustering/settings.py)
    from newsdedup_dagster.clustering.settings import ClusterSettings, guard_defaults

    keys = [f.name for f in fields(ClusterSettings) if f.name != "guard"] + list(guard_defaults())
    names |= {f"NEWSDEDUP_{key.upper()}" for key in keys}
    # a bare prefix in a message ("NEWSDEDUP_SMTP_*") is not a variable
    return {n for n in names if not TEST_ONLY.match(n) and not n.endswith("_")}


def configuration_table() -> list[tuple[list[str], str]]:
    """(first-cell names with `_SUFFIX` shorthands, default cell) per row of the table."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        rows.append((re.findall(r"`([A-Z_][A-Z0-9_]*)`", cells[0]), cells[1]))
    return rows


def expand(tokens: list[str], known: set[str]) -> set[str]:
    """`NEWSDEDUP_SMTP_PORT`, `_SECURITY` -> NEWSDEDUP_SMTP_PORT, NEWSDEDUP_SMTP_SECURITY: a
    shorthand takes the longest prefix of the row's first full name that names a variable."""
    out: set[str] = set()
    full = next((t for t in tokens if t.startswith("NEWSDEDUP_")), None)
    for token in tokens:
        if token.startswith("NEWSDEDUP_") or not token.startswith("_"):
            out.add(token)
            continue
        parts = full.split("_") if full else []
        candidates = ["_".join(parts[:i]) + token for i in range(len(parts) - 1, 0, -1)]
        out.add(next((c for c in candidates if c in known), candidates[-1] if candidates else token))
    return out


def test_every_variable_read_is_documented_with_a_default():
    read = names_read_by_code()
    rows = configuration_table()
    documented: set[str] = set()
    for tokens, default in rows:
        assert default, f"row {tokens} has no default"
        documented |= expand(tokens, read)
    missing = sorted(read - documented)
    assert not missing, f"read by the code but not in the README's configuration table: {missing}"


def test_every_documented_variable_is_read():
    read = names_read_by_code()
    documented: set[str] = set()
    for tokens, _default in configuration_table():
        documented |= {t for t in expand(tokens, read) if t.startswith("NEWSDEDUP_")}
    unread = sorted(documented - read)
    assert not unread, f"documented in the README but never read: {unread}"
