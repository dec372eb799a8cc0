"""Test-only crash points: named places inside the pipeline's steps where the crash suite
(tests/test_crash_suite.py) stops the running process, to prove that a re-run loses nothing.

    from crashpoints import crash_point
    crash_point("stories.after_pass1")      # a no-op unless the test environment names this point

TEST ONLY. The environment variable ``NEWSDEDUP_TEST_CRASH_AT`` is read once, when this module is
imported, and is never set in production (it is not a setting and is not in the
configuration table, docs/CONFIGURATION.md). Its value is ``<point>`` (the process SIGKILLs itself when it reaches that
point) or ``<point>:pause`` (the process writes ``<point>.reached`` into the directory named by
``NEWSDEDUP_TEST_CRASH_DIR`` and waits, at most 120 s, for ``<point>.continue`` there: the test
uses the pause to stop the database in immediate mode under the running step, then lets it go on).
Unset, a crash point costs one comparison.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

# Read once (test-only; see the module docstring). Not part of config.py on purpose: nothing
# an operator configures.
_TARGET = os.environ.get("NEWSDEDUP_TEST_CRASH_AT", "")
_POINT, _, _ACTION = _TARGET.partition(":")
_PAUSE_DIR = os.environ.get("NEWSDEDUP_TEST_CRASH_DIR", "")
PAUSE_LIMIT_S = 120.0


def crash_point(name: str) -> None:
    """Stop here if the test environment names this point (SIGKILL, or pause for the test)."""
    if not _POINT or name != _POINT:
        return
    if _ACTION == "pause":
        folder = Path(_PAUSE_DIR or ".")
        (folder / f"{name}.reached").write_text(str(os.getpid()))
        deadline = time.monotonic() + PAUSE_LIMIT_S
        while not (folder / f"{name}.continue").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return
    os.kill(os.getpid(), signal.SIGKILL)
