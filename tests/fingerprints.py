"""Every application table's rows as text, for tests that compare two databases."""

from __future__ import annotations

import psycopg

# Columns that hold when a row was written, not what it says.
WRITE_TIME_COLUMNS = frozenset({"narrative_generated_at", "sent_at"})


def table_rows(url: str, ignore_columns=WRITE_TIME_COLUMNS) -> dict[str, list[str]]:
    out = {}
    with psycopg.connect(url) as conn:
        serial = {(t, c) for t, c in conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND column_default LIKE 'nextval%%'")}
        referring = {(t, c) for t, c, rt, rc in conn.execute(
            "SELECT k.conrelid::regclass::text, a.attname, k.confrelid::regclass::text, ra.attname"
            "  FROM pg_constraint k"
            "  JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]"
            "  JOIN pg_attribute ra ON ra.attrelid = k.confrelid AND ra.attnum = k.confkey[1]"
            " WHERE k.contype = 'f'") if (rt, rc) in serial}
        columns: dict[str, list[str]] = {}
        for table, column, default in conn.execute(
                "SELECT c.table_name, c.column_name, c.column_default FROM information_schema.columns c"
                "  JOIN information_schema.tables t USING (table_schema, table_name)"
                " WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'"
                " ORDER BY c.table_name, c.ordinal_position"):
            written_at = default is not None and ("now()" in default or "clock_timestamp" in default)
            if (table, column) in serial or (table, column) in referring or written_at or column in ignore_columns:
                continue
            columns.setdefault(table, []).append(column)
        for table, cols in columns.items():
            if table in ("llm_calls", "schema_migrations"):
                continue  # the call log holds durations (the crash suite compares it by paid_twice()); migrations are the same files
            select = ", ".join(f'"{c}"::text' for c in cols)
            out[table] = sorted(repr(r) for r in conn.execute(f'SELECT {select} FROM "{table}"'))
    return out
