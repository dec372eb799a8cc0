"""docs/CONFIGURATION.md's table and the settings the code reads agree: every variable read is
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
    section = (REPO / "docs" / "CONFIGURATION.md").read_text(encoding="utf-8")
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
    assert not missing, f"read by the code but not in docs/CONFIGURATION.md's table: {missing}"


def test_every_documented_variable_is_read():
    read = names_read_by_code()
    documented: set[str] = set()
    for tokens, _default in configuration_table():
        documented |= {t for t in expand(tokens, read) if t.startswith("NEWSDEDUP_")}
    unread = sorted(documented - read)
    assert not unread, f"documented in docs/CONFIGURATION.md but never read: {unread}"


# ------------------------------------------------------------------ defaults as documented
SENTINEL = 1777  # a value no setting has by default, and that every range check accepts for most


def _built() -> dict[str, object]:
    """Every setting config.py builds, flattened: {"builder.field": value}; a builder the
    environment makes invalid is left out."""
    from dataclasses import asdict, is_dataclass

    from newsdedup_dagster import config

    builders = {
        "ingest": config.ingest_settings, "dedup": config.dedup_settings, "embedding": config.embedding_settings,
        "clustering": lambda: config.clustering_settings(None).as_dict(), "llm": config.llm_settings,
        "backoff": config.llm_backoff, "grouping": config.grouping_settings, "narrative": config.narrative_settings,
        "digest": config.digest_settings, "mail": config.mail_settings, "publish": config.publish_settings,
        "retention": config.retention_settings, "busy": lambda: dict(enumerate(config.clustering_busy_retry())),
    }
    out: dict[str, object] = {}
    for stage, build in builders.items():
        try:
            built = build()
        except ValueError:
            continue
        values = asdict(built) if is_dataclass(built) else built
        out.update({f"{stage}.{key}": value for key, value in values.items()})
    return out


def _number(cell_part: str) -> float | None:
    match = re.match(r"^`?(-?\d[\d,]*(?:\.\d+)?)`?\s*(MiB)?", cell_part.strip())
    if not match:
        return None
    return float(match.group(1).replace(",", "")) * (1024 * 1024 if match.group(2) else 1)


def test_documented_numeric_defaults_are_the_code_defaults(monkeypatch):
    """Each numeric default in the table is what config.py builds when the variable is unset. The
    variable's setting is found by setting it to a sentinel and seeing which built value changes."""
    import os

    for name in [n for n in os.environ if n.startswith("NEWSDEDUP_")]:
        monkeypatch.delenv(name)
    read = names_read_by_code()
    defaults = _built()
    checked, wrong = [], []
    for tokens, cell in configuration_table():
        full = next((t for t in tokens if t.startswith("NEWSDEDUP_")), None)
        names = [t if not t.startswith("_") else next(iter(expand([full, t], read) - {full})) for t in tokens]
        parts = re.split(r",\s+|\s+/\s+", cell)
        if len(parts) != len(names):
            continue
        for name, part in zip(names, parts):
            documented = _number(part)
            if documented is None or not name.startswith("NEWSDEDUP_"):
                continue
            monkeypatch.setenv(name, str(SENTINEL))
            keys = [k for k, v in _built().items() if isinstance(v, (int, float)) and v == SENTINEL]
            monkeypatch.delenv(name)
            if not keys or not all(isinstance(defaults.get(k), (int, float)) for k in keys):
                continue  # a range check refused the sentinel, or no numeric setting (e.g. a port left to the mode)
            checked.append(name)
            for key in keys:  # one variable may set several stages' fields (NEWSDEDUP_HNSW_M)
                if float(defaults[key]) != documented:
                    wrong.append(f"{name}: documented {part!r}, code {defaults[key]!r} ({key})")
    assert not wrong, wrong
    assert len(checked) >= 40, checked  # the check reaches most of the table
