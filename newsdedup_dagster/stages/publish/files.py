"""The publish directory as the hours of one run see it, and which hour of a ranged run writes it.

An hourly run writes every file of its hour at once. A run over several hours (a backfill) writes
the directory only at the last hour of each UTC day in its range (the archive keeps each day's
front page as that hour leaves it) and at the range's last hour; the hours between are computed
as an hourly run computes them (stories, stamps, page hashes: every row publishing writes), but
their files are held as renderers, one per path, the newest replacing the older, and written by
the next hour that writes the directory. A file that hour writes itself replaces what was held;
what it does not write (the page of a story, event or country that left the feed meanwhile) is
rendered from what the hour that last wrote it held, as that hour would have written it. Whether
a file "exists" counts the held ones, so each hour decides as it would have after the hourly runs
before it: the directory a ranged run leaves is the hourly runs'.

    files = SiteFiles(deferring=True)
    publish_hour(conn, hour, settings, langs, now=now, files=files)   # rows written, files held
    files.deferring = False
    publish_hour(conn, next_hour, settings, langs, now=now, files=files)  # writes its files and what was held

Plain Python: no database, no Dagster.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from newsdedup_dagster.shared.presentation.write import atomic_write

__all__ = ["SiteFiles", "writing_hours"]

Render = Callable[[], "str | bytes"]


@dataclass
class SiteFiles:
    """Files to write, by path, each as its renderer; written at the end of an hour unless
    `deferring` (see the module's docstring)."""

    deferring: bool = False
    held: dict[Path, Render] = field(default_factory=dict)

    def exists(self, path: Path) -> bool:
        return path in self.held or path.exists()

    def write(self, path: Path, render: Render) -> None:
        """Hold `render` for `path` in place of an earlier one. `render` must not read anything a
        later hour changes: it is called with the values the hour gave it, maybe hours later."""
        # Re-inserted: files are written in the order of their last write, so what an earlier hour
        # held (pages a story, event or country left behind) comes before this hour's pages, and
        # the feeds last, as an hourly run writes them (a feed never links to a missing page).
        self.held.pop(path, None)
        self.held[path] = render

    def write_held(self) -> list[Path]:
        """Write every held file in order; the paths whose bytes changed on disk."""
        changed = []
        for path, render in self.held.items():
            if atomic_write(path, render()):
                changed.append(path)
        self.held.clear()
        return changed


def writing_hours(hours: Sequence[datetime]) -> dict[datetime, datetime]:
    """Each hour of a run (in time order) -> the hour that writes its files: itself when it is the
    last hour of its UTC day or the run's last hour, else the next such hour of the run."""
    out: dict[datetime, datetime] = {}
    pending: list[datetime] = []
    for n, hour in enumerate(hours):
        pending.append(hour)
        if n == len(hours) - 1 or (hour + timedelta(hours=1)).date() != hour.date():
            out.update((h, hour) for h in pending)
            pending = []
    return out
