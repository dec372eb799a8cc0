"""A stop signal that lands while Dagster executes a run in-process is not forgotten.

Dagster's in-process execution captures SIGTERM: inside an op it fails the step, anywhere else in
the run (event log writes, between steps) it only sets a flag that the in-process executor never
reads and clears when the run ends. The demo's loop checks the signal wakeup descriptor between
runs. Real Dagster, real signals, each case in a child process.
"""

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    from dagster import job, op
    from dagster._utils.interrupts import capture_interrupts  # the mechanism the run executes under
    from newsdedup_dagster.commands.signals import StopSignalWatch

    where = sys.argv[1]

    @op
    def one():
        if where == "op":
            os.kill(os.getpid(), signal.SIGTERM)

    @job
    def one_op():
        one()

    def worker(started):
        import time
        started.set()
        time.sleep(60)

    with StopSignalWatch() as stop:
        result = one_op.execute_in_process(raise_on_error=False)
        if where == "forked child stopped":  # as the parse pool stops a worker
            import multiprocessing
            context = multiprocessing.get_context("fork")
            started = context.Event()
            child = context.Process(target=worker, args=(started,))
            child.start()
            started.wait(30)  # the child runs its own code, so fork's after-child hooks are done
            child.terminate()
            child.join()
        if where == "captured":
            with capture_interrupts():  # as between two steps of a run: the flag is set, then forgotten
                os.kill(os.getpid(), signal.SIGTERM)
        print("run finished", result.success, flush=True)
        stop.raise_if_signalled()
    print("not stopped", flush=True)
    """
)


def _run(where: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT, where], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("where", "run_succeeds"), [("op", False), ("captured", True)])
def test_sigterm_during_in_process_run_stops_the_loop_after_the_run(where, run_succeeds):
    proc = _run(where)
    assert f"run finished {run_succeeds}" in proc.stdout, proc.stderr[-2000:]
    assert "not stopped" not in proc.stdout
    assert proc.returncode == 128 + 15  # the shell's status for SIGTERM


@pytest.mark.parametrize("where", ["none", "forked child stopped"])
def test_no_signal_to_this_process_no_stop(where):
    proc = _run(where)
    assert "run finished True" in proc.stdout, proc.stderr[-2000:]
    assert "not stopped" in proc.stdout
    assert proc.returncode == 0
