"""The near-duplicate stage's settings (built by config.dedup_settings())."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from newsdedup_dagster.shared.settings import setting


@dataclass(frozen=True)
class DedupSettings:
    CALIBRATION: ClassVar[str] = "neardup"  # its section in the calibration file

    # Canonical items of this many hours before H are compared with H's items: the stories stage's
    # 36 h story age, so a copy arriving late still finds its original.
    lookback_hours: int = setting(36, calibrated=True, was="NEWSDEDUP_NEARDUP_LOOKBACK_HOURS",
                                  doc="earlier canonical items a new item is compared with (and IDF window), hours")
    # window: every item of the look-back window read and shingled each hour (the reference);
    # bands: candidates by stored signatures, IDF from kept document frequencies (migration 121).
    # window stays the default: on bench/neardup.py's 100k set the bands path still fetches a third
    # of the window as candidates and decides at recall 0.995 / precision 0.998 of the window path
    # (docs/calibration/neardup.md#banded-candidates). The counts and bands are kept only by runs with bands.
    candidates: str = setting("window", calibrated=True, choices=("bands", "window"),
                              doc="how an hour finds its candidates: `bands` (stored signatures) or `window` (reads the window)")
    # Rare 3-grams stored per headline; candidates share three of them (bands.SHARED_RARE_GRAMS). Pair
    # recall vs the window path 1.000 on the sample day, 0.995 on 4 h of bench/neardup.py's 100k set
    # (two of them: a third more candidates; four: recall 0.892): docs/calibration/neardup.md#banded-candidates
    band_grams: int = setting(8, calibrated=True, bounds=(2, 64), doc="rare 3-grams stored per headline as bands")
    # keep | reset for item_duplicates (stages/neardup/store.py); None = decided per run (assets/neardup.py).
    # The same variable is the clustering setting `later_partitions`, where it is declared and documented.
    later_partitions: str | None = None
