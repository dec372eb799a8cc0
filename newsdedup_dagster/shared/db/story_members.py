"""Reads of stories that more than one stage makes (clustering checks a story's members, events
compare stories by them)."""

from __future__ import annotations

from newsdedup_dagster.shared import db


def story_member_texts(conn, story_ids, limit: int) -> dict[str, dict[str, tuple[str, str, str | None]]]:
    """{story_id: {item_id: (title, summary, lang)}} of each story's most recent `limit` members."""
    ids = sorted(set(story_ids))
    out: dict[str, dict[str, tuple[str, str, str | None]]] = {}
    if not ids:
        return out
    rows = conn.execute(db.load_sql("cluster_story_member_texts"), {"ids": ids, "limit": int(limit)}).fetchall()
    for story, item, title, summary, lang in rows:
        out.setdefault(story, {})[item] = (title or "", summary or "", lang)
    return out
