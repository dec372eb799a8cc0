"""Progress for long commands: a tqdm bar on a terminal, plain periodic lines otherwise.

Everything goes to stderr, so `--json` output on stdout stays parseable. No Dagster imports.

    for item in progress(items, "embedding", total=len(items)):
        ...
    with progress_bar("partitions", total=24) as bar:
        bar.update(1)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TextIO, TypeVar

from tqdm import tqdm

T = TypeVar("T")

# Not on a terminal (CI logs, cron mail): one line at most this often, and at the end.
PLAIN_INTERVAL_S = 10.0


class PlainProgress:
    """The subset of tqdm's interface the commands use, printing a line every few seconds."""

    def __init__(self, desc: str, total: int | None, stream: TextIO, interval_s: float = PLAIN_INTERVAL_S):
        self.desc, self.total, self.stream, self.interval_s = desc, total, stream, interval_s
        self.n = 0
        self.started = self._last = time.monotonic()

    def _line(self) -> str:
        elapsed = time.monotonic() - self.started
        done = f"{self.n}/{self.total}" if self.total else str(self.n)
        return f"{self.desc}: {done} ({elapsed:.0f} s)"

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.monotonic()
        if now - self._last >= self.interval_s:
            self._last = now
            print(self._line(), file=self.stream, flush=True)

    def set_description(self, desc: str) -> None:
        self.desc = desc

    def close(self) -> None:
        print(self._line(), file=self.stream, flush=True)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextmanager
def progress_bar(desc: str, total: int | None = None, *, stream: TextIO | None = None,
                 enabled: bool = True) -> Iterator[tqdm | PlainProgress]:
    """A bar (terminal) or periodic lines (pipe, file); `enabled=False` prints nothing."""
    stream = stream or sys.stderr
    if not enabled:
        bar: tqdm | PlainProgress = tqdm(total=total, disable=True)
    elif _is_terminal(stream):
        bar = tqdm(total=total, desc=desc, file=stream, dynamic_ncols=True, leave=False)
    else:
        bar = PlainProgress(desc, total, stream)
    try:
        yield bar
    finally:
        bar.close()


def progress(items: Iterable[T], desc: str, *, total: int | None = None, stream: TextIO | None = None,
             enabled: bool = True) -> Iterator[T]:
    """Iterate `items`, reporting progress on stderr."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with progress_bar(desc, total, stream=stream, enabled=enabled) as bar:
        for item in items:
            yield item
            bar.update(1)
