"""Stop a loop of in-process Dagster runs when the process is asked to stop.

`JobDefinition.execute_in_process` replaces the SIGTERM/SIGINT handlers while a run executes
(`dagster._utils.interrupts.capture_interrupts`): inside user code the signal fails the run as
interrupted, elsewhere it only sets a flag that is cleared when the run ends. Either way the loop
would go on with its next run. The C-level signal handler writes every signal number to the wakeup
file descriptor whichever Python handler is installed
(https://docs.python.org/3/library/signal.html#signal.set_wakeup_fd), so the loop reads that
descriptor between runs and exits with 128 + signal number, as the shell would.

Dagster also gives SIGTERM whatever handler SIGINT has, at each run's start and end. A process
started with SIGINT ignored (any background job of a non-interactive shell, so most CI and service
managers) would then ignore SIGTERM from its first run on: no handler runs and nothing reaches the
descriptor. While the watch is open, an ignored SIGINT is replaced by a handler that still ignores
SIGINT but stops on SIGTERM, and the descriptor's SIGINT bytes are ignored too.

A forked child (the parse workers) inherits the descriptor and the wakeup setting; it drops both
at fork, else a worker stopped with SIGTERM would stop the demo (a signal that reaches a child
before its after-fork hooks ran would still be counted: pebble stops only workers that run).
"""

from __future__ import annotations

import os
import signal
import threading

_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_active: list[StopSignalWatch] = []


def _forget_in_child() -> None:
    """After fork: the child's signals are its own, not the watching process's."""
    while _active:
        watch = _active.pop()
        try:
            signal.set_wakeup_fd(-1)
        except ValueError:  # not the main thread of the child: nothing was set there
            pass
        if watch._sigint_was_ignored:
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            except ValueError:  # not the main thread of the child
                pass
        for fd in (watch._read_fd, watch._write_fd):
            if fd is not None:
                os.close(fd)
        watch._read_fd = watch._write_fd = None


os.register_at_fork(after_in_child=_forget_in_child)


def _ignore_sigint_stop_on_sigterm(signum: int, frame) -> None:  # noqa: ARG001
    """SIGINT's handler while it was ignored: Dagster copies it onto SIGTERM, which must still stop."""
    if signum == signal.SIGTERM:
        raise SystemExit(128 + signum)


class StopSignalWatch:
    """Context manager; `raise_if_signalled()` raises SystemExit(128 + signum) after a stop signal."""

    def __init__(self) -> None:
        self._read_fd: int | None = None
        self._write_fd: int | None = None
        self._previous_fd = -1
        self._sigint_was_ignored = False
        self._previous_sigterm = None

    def __enter__(self) -> StopSignalWatch:
        if threading.current_thread() is not threading.main_thread():
            return self  # signals are only delivered to the main thread; nothing to watch
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        os.set_blocking(self._write_fd, False)
        self._previous_fd = signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        self._sigint_was_ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        if self._sigint_was_ignored:
            self._previous_sigterm = signal.getsignal(signal.SIGTERM)
            signal.signal(signal.SIGINT, _ignore_sigint_stop_on_sigterm)
        _active.append(self)
        return self

    def raise_if_signalled(self) -> None:
        if self._read_fd is None:
            return
        try:
            received = os.read(self._read_fd, 4096)
        except BlockingIOError:
            return
        for signum in received:
            if signum == signal.SIGINT and self._sigint_was_ignored:
                continue
            if signum in _STOP_SIGNALS:
                raise SystemExit(128 + signum)

    def __exit__(self, *exc) -> None:
        if self._read_fd is None:
            return
        signal.set_wakeup_fd(self._previous_fd)
        if self._sigint_was_ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, self._previous_sigterm)
        if self in _active:
            _active.remove(self)
        os.close(self._read_fd)
        os.close(self._write_fd)
        self._read_fd = self._write_fd = None
