"""When a monitor is expected, when it is late, when it is down: pure decision functions.

The rules are healthchecks.io's (``hc/api/models.py``: ``get_grace_start``, ``going_down_after``,
``get_status``), with its ``grace`` state named ``late`` and stored:

* expected instant: ``last_ping_at + period`` for a period schedule; for cron, the first fire of
  the schedule strictly after ``last_ping_at``, evaluated in the monitor's zone with the same
  engine and DST rules as jobs;
* ``late`` from the expected instant (inclusive), ``down`` from ``expected + grace``
  (inclusive): a ping at 11:04:59 with a 1 h period and 5 min grace is expected at 12:04:59, late
  then, down at 12:09:59;
* a ``/start`` must be followed by a success or a failure within the grace period, whatever the
  status (``new`` and ``paused`` included), or the monitor is ``down`` at ``start + grace``;
* ``new``, ``paused`` and ``down`` never change with time, except through a pending start.

``alert_at`` is the next instant at which the stored status may change by the passing of time;
the checker claims a monitor when it is reached. The ping statement (``monitor_ping`` in
``core/sql/monitors.sql``) applies the same rules in SQL for period schedules, but only ever
moves ``alert_at`` earlier: a ping that pushes the deadline out leaves the indexed column alone
(a HOT update), and the checker, claiming the monitor at the old instant, finds it on time and
sets the exact instant. So ``alert_at`` is never later than the next change, possibly earlier.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from core.schedule import Schedule

ACTIVE = ("up", "late")


def expected_after(schedule: Schedule, last_ping_at: datetime | None) -> datetime | None:
    """The instant the next ping is due after a success or failure at ``last_ping_at`` (UTC).

    Returns:
        ``None`` before the first ping, or for a cron schedule without a further fire.
    """
    if last_ping_at is None:
        return None
    if schedule.interval_seconds is not None:
        return last_ping_at + timedelta(seconds=schedule.interval_seconds)
    return schedule.next_fire(last_ping_at)


def _grace(state: dict[str, Any]) -> timedelta:
    return timedelta(seconds=state["grace_seconds"])


def _start_deadline(state: dict[str, Any]) -> datetime | None:
    start = state.get("last_start_at")
    return None if start is None else start + _grace(state)


def status_at(state: dict[str, Any], expected: datetime | None, now: datetime) -> str:
    """The status the monitor has at ``now`` given its stored status (healthchecks' get_status).

    Args:
        state: needs ``status``, ``grace_seconds`` and ``last_start_at``.
        expected: the expected instant (see :func:`expected_after`), ``None`` if unknown.
        now: the instant to evaluate (UTC).
    """
    status = state["status"]
    if status in ("down", "deleted"):
        return status
    start_deadline = _start_deadline(state)
    if start_deadline is not None and now >= start_deadline:
        return "down"
    if status not in ACTIVE or expected is None:
        return status
    if now >= expected + _grace(state):
        return "down"
    return "late" if now >= expected else "up"


def next_alert(state: dict[str, Any], expected: datetime | None) -> datetime | None:
    """The next instant at which the stored status may change by time alone, if any.

    A result at or before the current instant means the checker has a decision to make now.
    """
    status = state["status"]
    if status in ("down", "deleted"):
        return None
    candidates = [_start_deadline(state)]
    if status == "up" and expected is not None:
        candidates.append(expected)
    elif status == "late" and expected is not None:
        candidates.append(expected + _grace(state))
    present = [c for c in candidates if c is not None]
    return min(present) if present else None


def timing(state: dict[str, Any], schedule: Schedule, now: datetime
           ) -> tuple[datetime | None, datetime | None]:
    """``(next_expected_at, alert_at)`` for the projection row of ``state`` at ``now``.

    When the stored status no longer matches the time (a schedule or grace change made the
    monitor late, down or on time again), ``alert_at`` is ``now`` so the checker decides the
    transition and appends its event at once.
    """
    expected = expected_after(schedule, state.get("last_ping_at")) \
        if state["status"] in ACTIVE else None
    if status_at(state, expected, now) != state["status"]:
        return expected, now
    return expected, next_alert(state, expected)
