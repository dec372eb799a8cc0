"""What the bench scripts share. Importing it puts this checkout first on sys.path (its package,
then tests/ for the real servers, the Dagster deployment and the table fingerprints the tests use).

    from common import REPO, peak_rss_mb    # before any newsdedup_dagster or tests/ import
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"

sys.path[:0] = [str(REPO), str(TESTS)]  # this checkout's package first, not another one installed


def peak_rss_mb() -> float:
    """This process's peak resident set size (ru_maxrss is in KiB on Linux)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
