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

`run_process_group` runs a command that starts processes of its own (`dagster dev`: webserver,
daemon, code servers, run workers) as the leader of a new process group, forwards a stop signal to
that whole group and returns only once every process of the group has ended, ending the
stragglers itself: a `kill` of the leader alone would orphan the rest, and a group started from a
process that ignores SIGINT would ignore the forwarded SIGINT too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

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


# ------------------------------------------------------------------ a command's process group
# The signals that stop `run_process_group`: Ctrl-C, kill/service managers, the terminal closing
# (the group has no terminal of its own, so a hangup reaches only this process).
GROUP_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
POLL_S = 0.2


def _group_running(pgid: int) -> bool:
    """True while a process of group `pgid` runs (zombies do not count: their parent or init reaps them)."""
    import psutil  # deferred on purpose: fast --help

    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # a member changed user: it still counts
    for proc in psutil.process_iter(["status"]):
        try:
            if os.getpgid(proc.pid) == pgid and proc.info["status"] != psutil.STATUS_ZOMBIE:
                return True
        except OSError:
            continue
    return False


def _wait_group(child: subprocess.Popen, seconds: float, stop_early=lambda: False) -> bool:
    """Wait until no process of the child's group runs; False at the deadline or when `stop_early()`."""
    deadline = time.monotonic() + seconds
    while True:
        child.poll()  # reap the leader as soon as it exits
        if not _group_running(child.pid):
            return True
        if time.monotonic() >= deadline or stop_early():
            return False
        time.sleep(POLL_S)


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def run_process_group(cmd: list[str], *, env: dict[str, str] | None = None, grace_s: float = 30.0,
                      kill_after_s: float = 10.0) -> int:
    """Run `cmd` as the leader of a new process group and return once no process of the group runs.

    A stop signal (GROUP_STOP_SIGNALS; one this process was started ignoring stays ignored) is
    forwarded to the whole group: SIGINT as SIGINT, what a terminal would have sent, the others as
    SIGTERM. What still runs `grace_s` later gets SIGTERM, and `kill_after_s` after that SIGKILL (a
    second stop signal cuts both waits short). When the leader ends by itself, what it left of its
    group gets the same SIGTERM, then SIGKILL. Returns the leader's exit status (128 + N when signal
    N ended it), or 128 + N when this process was stopped with signal N. Main thread only (it sets
    signal handlers)."""
    received: list[int] = []
    ignored = {sig for sig in GROUP_STOP_SIGNALS if signal.getsignal(sig) == signal.SIG_IGN}

    def _note(signum: int, frame) -> None:  # noqa: ARG001
        if signum not in ignored:
            received.append(signum)

    # Python-level handlers, not SIG_IGN: exec resets them to the default in the child, so the group
    # acts on the forwarded signals even when this process was started with SIGINT ignored (a
    # background job of a non-interactive shell).
    previous = {sig: signal.signal(sig, _note) for sig in GROUP_STOP_SIGNALS}
    try:
        child = subprocess.Popen(cmd, env=env, start_new_session=True)
        try:
            while not received:
                try:
                    child.wait(timeout=POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    pass
            if received:
                _signal_group(child.pid, signal.SIGINT if received[0] == signal.SIGINT else signal.SIGTERM)
                _wait_group(child, grace_s, stop_early=lambda: len(received) > 1)
        finally:
            # Whatever ended the wait (the leader, a signal, an exception), nothing of the group outlives it.
            if _group_running(child.pid):
                _signal_group(child.pid, signal.SIGTERM)
                if not _wait_group(child, kill_after_s, stop_early=lambda: len(received) > 1):
                    _signal_group(child.pid, signal.SIGKILL)
                    _wait_group(child, kill_after_s)
            status = child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received:
        return 128 + received[0]
    return 128 - status if status < 0 else status
