"""Each source's health, and the alerts it raises.

From the fetch record (`feed_fetches`) and the items each source brought (`item_sources`), as of a
moment (`sources_health` in sql/queries/sources.sql): the last success, the current error streak and its last
reason, items over the last seven days, the last item, and the usual interval between the hours
that brought new items (over the 14 days up to the last item). `classify` names the state:

- `disabled`: `enabled: false` in the sources file;
- `new`: never fetched;
- `failing`: no success for `failing_after` (a day) since the first failure of the streak;
- `erroring`: failing, for less time than that;
- `quiet`: fetched fine, but no new item for `quiet_factor` times its usual interval (and at
  least `min_quiet`), once enough history says what usual is;
- `ok`: the rest.

Alerts (`alert_changes`): a source that becomes failing or quiet raises one alert, recorded in
`source_alerts`, and one more when it is `ok` again; a disabled or removed source's alert is closed
without a message. All the changes of one check go out in one message through the operator alert
channel (alerts.py). The policy is passed in; nothing here reads the environment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from newsdedup_dagster.shared.db import load_sql

PROBLEM_STATES = ("failing", "quiet")


@dataclass(frozen=True)
class HealthPolicy:
    """When a source counts as failing or quiet. Engineering choices, not calibrated on data: a
    feed that answers nothing for a day is broken, not slow; news feeds publish hourly or daily, so
    five of their usual gaps (at least six hours) without an item means the feed went stale."""

    failing_after: timedelta = timedelta(hours=24)
    quiet_factor: float = 5.0
    min_quiet: timedelta = timedelta(hours=6)
    min_gaps: int = 5   # gaps between hours with new items needed before "usual" means anything


@dataclass(frozen=True)
class SourceHealth:
    source_id: str
    enabled: bool
    state: str
    last_success: datetime | None = None
    failures: int = 0
    failing_since: datetime | None = None
    last_error: str | None = None
    items_week: int = 0
    last_item: datetime | None = None
    usual_gap_hours: float | None = None

    @property
    def items_per_day(self) -> float:
        return self.items_week / 7.0

    @property
    def problem(self) -> bool:
        return self.state in PROBLEM_STATES

    def detail(self, as_of: datetime) -> str:
        """One line on what is wrong (or right)."""
        if self.state in ("failing", "erroring"):
            since = f"since {self.failing_since:%Y-%m-%d %H:%M} UTC" if self.failing_since else ""
            return f"{self.failures} failed fetches {since}: {self.last_error or 'no reason recorded'}"
        if self.state == "quiet" and self.last_item is not None:
            hours = (as_of - self.last_item).total_seconds() / 3600
            return (f"no new item for {hours:.0f} h (usually one every {self.usual_gap_hours:.1f} h)"
                    if self.usual_gap_hours else f"no new item for {hours:.0f} h")
        return self.state


def classify(*, enabled: bool, ever_fetched: bool, last_success: datetime | None, failures: int,
             failing_since: datetime | None, last_item: datetime | None, usual_gap_hours: float | None,
             gaps: int, as_of: datetime, policy: HealthPolicy) -> str:
    if not enabled:
        return "disabled"
    if not ever_fetched:
        return "new"
    if failures and failing_since is not None:
        return "failing" if as_of - failing_since >= policy.failing_after else "erroring"
    if last_item is not None and usual_gap_hours is not None and gaps >= policy.min_gaps:
        allowed = max(policy.min_quiet, timedelta(hours=policy.quiet_factor * max(usual_gap_hours, 1.0)))
        if as_of - last_item > allowed:
            return "quiet"
    return "ok"


def source_health(conn, sources: Sequence, as_of: datetime, policy: HealthPolicy = HealthPolicy()
                  ) -> list[SourceHealth]:
    """The health of `sources` (ingest.sources.Source) as of `as_of`, in the sources' order."""
    if not sources:
        return []
    rows = {row[0]: row for row in conn.execute(load_sql("sources_health"),
                                                 {"ids": [s.id for s in sources], "as_of": as_of}).fetchall()}
    result = []
    for source in sources:
        (_id, last_success, failures, failing_since, last_error, _last_failure, items_week, last_item,
         usual_gap_hours, gaps) = rows[source.id]
        state = classify(enabled=source.enabled, ever_fetched=last_success is not None or failures > 0,
                         last_success=last_success, failures=failures, failing_since=failing_since,
                         last_item=last_item, usual_gap_hours=usual_gap_hours, gaps=gaps, as_of=as_of,
                         policy=policy)
        result.append(SourceHealth(source.id, source.enabled, state, last_success, failures, failing_since,
                                   last_error, items_week, last_item,
                                   float(usual_gap_hours) if usual_gap_hours is not None else None))
    return result


def state_counts(healths: Iterable[SourceHealth]) -> dict[str, int]:
    counts = {"failing": 0, "quiet": 0, "erroring": 0, "disabled": 0, "new": 0, "ok": 0}
    for health in healths:
        counts[health.state] += 1
    return counts


@dataclass(frozen=True)
class AlertChange:
    source_id: str
    kind: str          # raised | recovered | closed
    state: str         # failing | quiet (what was raised, or what ended)
    detail: str


def alert_changes(healths: Iterable[SourceHealth], open_alerts: dict[str, str], as_of: datetime
                  ) -> list[AlertChange]:
    """What to raise and what recovered, given the alerts open now ({source_id: state}). A source
    no longer configured, or disabled, has its alert closed without a message."""
    changes = []
    seen = set()
    for health in healths:
        seen.add(health.source_id)
        was = open_alerts.get(health.source_id)
        if health.problem and was != health.state:
            changes.append(AlertChange(health.source_id, "raised", health.state, health.detail(as_of)))
        elif was and health.state == "ok":
            changes.append(AlertChange(health.source_id, "recovered", was, "fetched and publishing again"))
        elif was and health.state == "disabled":
            changes.append(AlertChange(health.source_id, "closed", was, "disabled"))
    changes += [AlertChange(source_id, "closed", state, "no longer in the sources file")
                for source_id, state in sorted(open_alerts.items()) if source_id not in seen]
    return changes


def compose_alert(changes: Sequence[AlertChange]) -> tuple[str, str] | None:
    """(subject, body) of the one message for these changes; None when there is nothing to say."""
    told = [c for c in changes if c.kind in ("raised", "recovered")]
    if not told:
        return None
    raised = [c for c in told if c.kind == "raised"]
    recovered = [c for c in told if c.kind == "recovered"]
    parts = []
    for state in PROBLEM_STATES:
        count = sum(1 for c in raised if c.state == state)
        if count:
            parts.append(f"{count} {state}")
    if recovered:
        parts.append(f"{len(recovered)} recovered")
    subject = "[newsdedup] sources: " + ", ".join(parts)
    lines = [f"{c.source_id}: {c.state if c.kind == 'raised' else 'recovered from ' + c.state}: {c.detail}"
             for c in told]
    lines.append("")
    lines.append("newsdedup sources list shows every source; newsdedup sources check ID fetches one now.")
    return subject, "\n".join(lines) + "\n"


def record_alerts(conn, healths: Sequence[SourceHealth], as_of: datetime,
                  send: Callable[[str, str], str] | None) -> tuple[list[AlertChange], str | None]:
    """Compare with the open alerts, send one message for what changed (`send(subject, body)` returns
    where it went) and record the alerts open now. Returns the changes and where the message went."""
    open_alerts = {row[0]: row[1] for row in conn.execute(load_sql("sources_alerts_open")).fetchall()}
    changes = alert_changes(healths, open_alerts, as_of)
    by_id = {h.source_id: h for h in healths}
    message = compose_alert(changes)
    where = send(*message) if message and send is not None else None
    for change in changes:
        if change.kind == "raised":
            health = by_id[change.source_id]
            since = health.failing_since if change.state == "failing" else health.last_item
            conn.execute(load_sql("sources_alert_raise"), {"source_id": change.source_id, "state": change.state,
                                                           "since": since, "detail": change.detail, "raised_at": as_of})
        else:
            conn.execute(load_sql("sources_alert_close"), {"source_id": change.source_id})
    conn.commit()
    return changes, where
