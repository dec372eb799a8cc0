"""The event stages' settings: grouping stories into events (stages/events/grouping.py, built by
config.grouping_settings()) with the calibrated threshold of each embedding model, and writing
their narratives (stages/events/narrative.py, built by config.narrative_settings())."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from newsdedup_dagster.shared.settings import setting

# Event thresholds are model-specific (EVENT_THRESHOLDS below) and sit below the item threshold:
# events compare story centroids across days where the wording drifts. USE: F1 0.777 (P 0.806) at
# 0.45 on itn_multilingual_dev.jsonl, 16 USE languages (calibrated on this file);
# docs/calibration/events.md#event-grouping
USE_EVENT_THRESHOLD = 0.45
# e5, centred vectors: F1 0.719 (P 0.798) at 0.40 on itn_multilingual_dev.jsonl, all languages
# (calibrated on this file); docs/calibration/events.md#event-grouping
E5_EVENT_THRESHOLD = 0.40
EVENT_THRESHOLDS: dict[str, float] = {
    "use:multilingual-v3": USE_EVENT_THRESHOLD,
    "e5:multilingual-e5-small-q4": E5_EVENT_THRESHOLD,
}


# The same table as the declaration's `per_model` ({model: {field: value}}).
MODEL_DEFAULTS: dict[str, dict[str, float]] = {model: {"threshold": value} for model, value in EVENT_THRESHOLDS.items()}
# The default provider's calibrated value: what a model outside the table gets (with a warning,
# config.grouping_settings), as the clustering thresholds fall back to their declared defaults.
DEFAULT_THRESHOLD = E5_EVENT_THRESHOLD


def event_threshold_for(model: str | None) -> float:
    """The calibrated event threshold of an embedding model id (an uncalibrated model falls back to
    the default provider's value)."""
    return EVENT_THRESHOLDS.get(model or "", DEFAULT_THRESHOLD)


# Events close after 3 quiet days: 93 % of consecutive same-subject postings (16 languages)
# in itn_multilingual_dev.jsonl are within 72 h (calibrated on this file); docs/calibration/events.md#event-grouping
DEFAULT_QUIET_HOURS = 72.0
DEFAULT_JOIN_GAP_HOURS = 72.0
# A cap so a permanent topic ("war in X") becomes a sequence of events, each with a readable
# narrative, instead of one event that never ends.
DEFAULT_MAX_SPAN_DAYS = 14.0
# Offline scores come from a heuristic; a story needs this significance (0-10) to found an
# event, so one-source trivia does not spawn events. Joining has no significance floor.
DEFAULT_MIN_SIGNIFICANCE = 3.0
# ITN dev, e5, with the anchor check: docs/calibration/events.md#event-grouping-across-languages
DEFAULT_CROSS_LANGUAGE_MARGIN = 0.07


@dataclass(frozen=True)
class GroupingSettings:
    CALIBRATION: ClassVar[str] = "events"  # its section in the calibration file

    # config.grouping_settings() puts the calibrated threshold of the vectors' model here.
    threshold: float = setting(DEFAULT_THRESHOLD, calibrated=True, was="NEWSDEDUP_EVENT_THRESHOLD", bounds=(-1.0, 1.0),
                               per_model=MODEL_DEFAULTS, doc="story-to-event centroid cosine")
    join_gap_hours: float = setting(DEFAULT_JOIN_GAP_HOURS, calibrated=True, was="NEWSDEDUP_EVENT_JOIN_GAP_HOURS",
                                    doc="a story joins an event across at most this gap, hours (<= quiet hours)")
    quiet_hours: float = setting(DEFAULT_QUIET_HOURS, calibrated=True, was="NEWSDEDUP_EVENT_QUIET_HOURS",
                                 doc="an event with no story for this long closes, hours")
    max_span_days: float = setting(DEFAULT_MAX_SPAN_DAYS, calibrated=True, was="NEWSDEDUP_EVENT_MAX_SPAN_DAYS",
                                   doc="an event spans at most this many days")
    min_significance: float = setting(DEFAULT_MIN_SIGNIFICANCE, calibrated=True, was="NEWSDEDUP_EVENT_MIN_SIGNIFICANCE",
                                      doc="stories below this significance open no event")
    # One event told in two languages sits further apart than in one; the anchor check guards the
    # lower bar. ITN dev with the anchor check (calibrated on this file):
    # docs/calibration/events.md#event-grouping-across-languages
    cross_language_margin: float = setting(DEFAULT_CROSS_LANGUAGE_MARGIN, calibrated=True, was="NEWSDEDUP_EVENT_CROSS_LANGUAGE_MARGIN",
                                           doc="a story that shares no language with an event joins it at the "
                                               "threshold minus this")
    anchor_check: bool = setting(True, calibrated=True, was="NEWSDEDUP_EVENT_ANCHOR_CHECK",
                                 doc="a story does not join an event whose anchors (years, places, magnitudes, "
                                     "scores, names across languages) conflict with its own")

    def __post_init__(self) -> None:
        if not -1.0 <= self.threshold <= 1.0:
            raise ValueError(f"event threshold {self.threshold} is not a cosine similarity in [-1, 1]")
        if not 0.0 <= self.cross_language_margin <= 1.0:
            raise ValueError(f"event cross_language_margin {self.cross_language_margin} is not in [0, 1]")
        if self.quiet_hours <= 0 or self.join_gap_hours < 0 or self.max_span_days <= 0:
            raise ValueError("event quiet_hours and max_span_days must be > 0, join_gap_hours >= 0")
        if self.join_gap_hours > self.quiet_hours:
            # A join across a longer gap than the quiet period would break the invariant
            # "no event spans a gap longer than its quiet period".
            raise ValueError(
                f"events.join_gap_hours ({self.join_gap_hours}) must not exceed "
                f"events.quiet_hours ({self.quiet_hours})"
            )


@dataclass(frozen=True)
class NarrativeSettings:
    CALIBRATION: ClassVar[str] = "narrative"  # its section in the calibration file

    # 6 h: a fast-moving event gets at most 4 rewrites a day (4 calls x ~2k tokens), and the
    # daily digest still sees a narrative at most 6 h behind the last story.
    interval_hours: float = setting(6.0, calibrated=True, was="NEWSDEDUP_NARRATIVE_INTERVAL_HOURS",
                                    doc="an event's narrative is rewritten at most once in this many hours")
    max_per_run: int = setting(50, calibrated=True, was="NEWSDEDUP_NARRATIVE_MAX_PER_RUN", doc="narratives written per run")
    # Events whose narratives get translated per run (each = len(langs)/2 calls).
    translate_max_events: int = setting(50, calibrated=True, was="NEWSDEDUP_NARRATIVE_TRANSLATE_MAX_EVENTS",
                                        doc="events whose narratives are translated per run")
