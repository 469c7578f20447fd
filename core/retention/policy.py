"""The kinds of history and how long each is kept (docs/operations.md, "Retention").

A kind is a set of partitioned tables pruned together, a whole daily leaf at a time, once the
leaf's day ended more than the kind's retention ago. Which events belong to which kind is the
partition key of ``events`` (``event_retention_kind``, migration 0013): ``monitor.pinged`` is
``pings``, run streams ``runs``, notification streams ``deliveries``, everything else (job,
monitor and channel definitions and their history, ``log.pruned``) is kept forever.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

from core.config import Settings

# Partitioned tables -> the column their daily leaves are ranged on.
PARTITION_COLUMN: dict[str, str] = {
    "events_pings": "occurred_at",
    "events_runs": "occurred_at",
    "events_deliveries": "occurred_at",
    "run_attempts": "started_at",
    "monitor_ping_bodies": "received_at",
}
# Pings of a monitor that stay readable whatever the retention (healthchecks keeps the last
# N pings of a check).
KEEP_PINGS = 100
# Runs of a job whose ``runs`` rows stay readable whatever the retention (the newest by slot):
# the prune deletes older finished rows once their events are past the runs horizon.
KEEP_RUNS = 100
# Finished notifications (delivered, given up, cancelled) are deleted in batches of this many
# rows, each its own short transaction, once finished before the deliveries horizon.
NOTIFICATIONS_BATCH = 5000


@dataclass(frozen=True)
class Kind:
    """One kind of history: its name, its partitioned tables and its retention in days."""

    name: str
    tables: tuple[str, ...]
    days: int


def kinds(settings: Settings) -> tuple[Kind, ...]:
    """The kinds with the retention of ``settings`` (``CRONLEDGER_RETENTION_*``)."""
    return (
        Kind("pings", ("events_pings", "monitor_ping_bodies"), settings.retention_pings_days),
        Kind("runs", ("events_runs",), settings.retention_runs_days),
        Kind("attempt_bodies", ("run_attempts",), settings.retention_attempt_bodies_days),
        Kind("deliveries", ("events_deliveries",), settings.retention_deliveries_days),
    )


def horizon(days: int, now: datetime) -> datetime:
    """UTC midnight starting the day ``days`` before ``now``: every daily leaf ending by then is
    past a horizon of ``days`` (:func:`core.retention.partitions.past_horizon`)."""
    day = (now - timedelta(days=days)).astimezone(UTC).date()
    return datetime.combine(day, time(), tzinfo=UTC)


def is_event_table(table: str) -> bool:
    """Whether ``table`` holds events (its leaves are part of the log)."""
    return table.startswith("events_")
