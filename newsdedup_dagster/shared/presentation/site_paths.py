"""Where the site keeps its files, for the stages that write or remove them (publish, retention)."""

from __future__ import annotations

from datetime import date

ARCHIVE_DIR = "archive"


def day_page(day: date) -> str:
    """A day's archived front page under the language directory."""
    return f"{ARCHIVE_DIR}/{day.isoformat()}.html"
