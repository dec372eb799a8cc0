"""Stop a loop of in-process Dagster runs when the process is asked to stop.

`JobDefinition.execute_in_process` replaces the SIGTERM/SIGINT handlers while a run executes
(`dagster._utils.interrupts.capture_interrupts`): the signal only sets a flag, the in-process
executor never checks it, and the flag is cleared when the run ends. A SIGTERM that lands during
an hour of the demo would otherwise be forgotten and the demo would run to the end. The C-level
signal handler writes every signal number to the wakeup file descriptor whichever Python handler
is installed (https://docs.python.org/3/library/signal.html#signal.set_wakeup_fd), so the loop
reads that descriptor between runs and exits with 128 + signal number, as the shell would.
"""

from __future__ import annotations

import os
import signal
import threading

_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopSignalWatch:
    """Context manager; `raise_if_signalled()` raises SystemExit(128 + signum) after a stop signal."""

    def __init__(self) -> None:
        self._read_fd: int | None = None
        self._write_fd: int | None = None
        self._previous_fd = -1

    def __enter__(self) -> StopSignalWatch:
        if threading.current_thread() is not threading.main_thread():
            return self  # signals are only delivered to the main thread; nothing to watch
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        os.set_blocking(self._write_fd, False)
        self._previous_fd = signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        return self

    def raise_if_signalled(self) -> None:
        if self._read_fd is None:
            return
        try:
            received = os.read(self._read_fd, 4096)
        except BlockingIOError:
            return
        for signum in received:
            if signum in _STOP_SIGNALS:
                raise SystemExit(128 + signum)

    def __exit__(self, *exc) -> None:
        if self._read_fd is None:
            return
        signal.set_wakeup_fd(self._previous_fd)
        os.close(self._read_fd)
        os.close(self._write_fd)
        self._read_fd = self._write_fd = None
