"""Failure tolerance of monitors, live: each failure, missed slot and good ping counted in the
monitor's alert state, and the ``down`` / ``up`` alerts queued when the rule says so.

The rule is :func:`core.alerting.tolerate` (shared with jobs); what counts as a failure or a
good ping is :func:`core.monitors.rules.ping_outcome` and :func:`core.monitors.rules.next_miss`
(docs/notifications.md, *Failure tolerance*). The count lives in ``alert_states`` (the row of
the monitor: ``consecutive_failures``, ``consecutive_successes``, ``last_alert_at`` for an open
alert, ``next_miss_at`` and ``miss_slot_at`` for the deadline and expected instant of the next
slot a down monitor may miss), written in the transaction
of the ping or the checker's decision that caused it, as the outbox rows are. Only monitors
with channels are counted: the ping statement leaves their failures, and their good pings
while an alert is open, to the alerting transaction (``deferred``, migration 0027); the
others have nobody to tell.

With ``alert_after_failures = recover_after_successes = 1`` (the default) the alerts are
exactly :func:`core.monitors.rules.alert_for`'s: ``down`` when it goes down, ``up`` when it
comes back.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from core.alerting import Streak, tolerate
from core.db import Connection
from core.maintenance.queries import held_alerts
from core.monitors.definition import cached_schedule
from core.monitors.rules import next_miss
from core.notifications.outbox import DEFAULT_MAX_ATTEMPTS, enqueue_monitor_alert
from core.queries import Q
from core.rows import field_values
from core.stored import schedule_problem


class Tolerant(Protocol):
    """What :func:`count` reads of a monitor: who to tell (``id``, ``team_id``, ``name``,
    ``channels``, ``realert_every`` in seconds), its schedule (``schedule``, ``timezone``,
    ``created_at``, ``grace_seconds`` in seconds: the next slot it may miss) and its
    thresholds. The checker's :class:`core.monitors.checker.ClaimedMonitor` is one; the rows
    of the ping's and the re-alert's locks are read as :class:`CountedMonitor`."""

    @property
    def id(self) -> uuid.UUID: ...
    @property
    def team_id(self) -> uuid.UUID: ...
    @property
    def name(self) -> str: ...
    @property
    def channels(self) -> Sequence[uuid.UUID]: ...
    @property
    def realert_every(self) -> int | None: ...
    @property
    def schedule(self) -> str: ...
    @property
    def timezone(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def grace_seconds(self) -> int: ...
    @property
    def alert_after_failures(self) -> int: ...
    @property
    def recover_after_successes(self) -> int: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class CountedMonitor:
    """A :class:`Tolerant` monitor read from a locked ``monitors`` row
    (``monitor_lock_for_ping_alerts``, ``monitor_lock_for_realert``, core/sql/monitors.sql)."""

    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    channels: list[uuid.UUID]
    realert_every: int | None
    schedule: str
    timezone: str
    created_at: datetime
    grace_seconds: int
    alert_after_failures: int
    recover_after_successes: int

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> CountedMonitor:
        """The value of a row holding at least these columns (more are ignored)."""
        return cls(**field_values(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class LockedMonitor(CountedMonitor):
    """A row of ``monitor_lock_for_ping_alerts`` (core/sql/monitors.sql), read once where the
    ping path locks it: the :class:`CountedMonitor` :func:`count` reads, and ``status``,
    ``ping_token_hash``, ``min_duration`` (seconds, ``None``: no bound) and ``down_since``
    (when its current outage began, UTC; ``None`` unless it is down)."""

    status: str
    ping_token_hash: bytes
    min_duration: int | None
    down_since: datetime | None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> LockedMonitor:
        """The monitor in one ``monitor_lock_for_ping_alerts`` row."""
        return cls(**field_values(cls, row))


@dataclass(frozen=True)
class Counted:
    """A monitor's streak as stored: the rule's :class:`core.alerting.Streak` and the row's
    instants (``None`` each when there is no row)."""

    streak: Streak
    failing_since: datetime | None
    next_realert_at: datetime | None
    miss_slot_at: datetime | None


def counted(row: dict[str, Any] | None, status_before: str) -> Counted:
    """The :class:`Counted` of an ``alert_states`` row. No row for a monitor that is down
    already (it went down before it had channels, or before migration 0027 kept counts) is an
    open alert, so that it says ``up`` when it comes back and not ``down`` twice
    (:func:`core.monitors.rules.alert_for`)."""
    if row is None:
        return Counted(Streak(1, 0, True) if status_before == "down" else Streak(),
                       None, None, None)
    return Counted(Streak(row["consecutive_failures"], row["consecutive_successes"],
                          row["last_alert_at"] is not None),
                   row["failing_since"], row["next_realert_at"], row["miss_slot_at"])


async def read_counted(conn: Connection, monitor_id: Any, status_before: str
                       ) -> Counted:
    """The monitor's stored streak, its row locked for the caller's transaction."""
    cur = await conn.execute(Q["alert_state_monitor_streak"], {"monitor_id": monitor_id})
    return counted(await cur.fetchone(), status_before)


def _miss_after(monitor: Tolerant, slot_at: datetime) -> tuple[datetime, datetime] | None:
    schedule, _ = schedule_problem(cached_schedule, monitor.schedule, monitor.timezone,
                                   monitor.created_at)
    return None if schedule is None else next_miss(schedule, monitor.grace_seconds, slot_at)


async def count(conn: Connection, monitor: Tolerant,
                outcome: Literal["failure", "success"], at: datetime, *, status_before: str,
                slot_at: datetime | None = None, reason: dict[str, Any] | None = None,
                last_ping: dict[str, Any] | None, down_since: datetime | None = None,
                max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> str | None:
    """Count one ``outcome`` of ``monitor`` at ``at`` and queue the alert it raises, in the
    caller's transaction (which holds the monitor's row lock).

    Args:
        monitor: what the count reads of it (:class:`Tolerant`).
        outcome: ``failure`` or ``success`` (:func:`core.monitors.rules.ping_outcome`).
        status_before: the monitor's status before the ping or decision.
        slot_at: for a failure, the slot it fills (the failed ping's instant, or the expected
            instant of a slot that came and went): the next missed slot is the one after it.
        reason: the ``monitor.down`` data the ``down`` alert explains (``failures`` added).
        last_ping: what the alert says of the last ping.
        down_since: when the current outage began, if known, for an outage with no stored
            streak (the alert's ``since``).

    Returns:
        ``down`` or ``up`` when an alert was queued, else ``None``.
    """
    state = await read_counted(conn, monitor.id, status_before)
    streak, alert = tolerate(state.streak, outcome,
                             alert_after=monitor.alert_after_failures,
                             recover_after=monitor.recover_after_successes)
    since = state.failing_since or down_since or at
    every = monitor.realert_every
    if alert == "recovery":
        await _queue(conn, monitor, "up", since, at, last_ping, None, max_attempts)
        return "up"
    if alert == "failure":
        reason = {**(reason or {}), "failures": streak.failures}
        await _queue(conn, monitor, "down", since, at, last_ping, reason, max_attempts)
        await _save(conn, monitor, streak, at, at + timedelta(seconds=every) if every else None,
                    None)
        return "down"
    if streak.idle:
        await conn.execute(Q["alert_state_monitor_clear"], {"monitor_id": monitor.id})
        return None
    slot: tuple[datetime | None, datetime | None] = (None, None)
    if not streak.alerted:  # failures short of the threshold: watch the next slot
        miss = _miss_after(monitor, slot_at or at)
        realert, slot = None, miss or (None, None)
    elif outcome == "success":  # recovering: no re-alert while good pings are counted
        realert = None
    else:  # a failure while recovering: the re-alerts go on
        realert = state.next_realert_at or (at + timedelta(seconds=every) if every else None)
    await _save(conn, monitor, streak, since, realert, slot)
    return None


async def _queue(conn: Connection, monitor: Tolerant, event: str,
                 since: datetime, at: datetime, last_ping: dict[str, Any] | None,
                 reason: dict[str, Any] | None, max_attempts: int) -> None:
    await enqueue_monitor_alert(
        conn, team_id=monitor.team_id, monitor_id=monitor.id,
        monitor_name=monitor.name, channel_ids=monitor.channels, event=event,
        since=since, last_ping=last_ping, now=at, realert_every=monitor.realert_every,
        max_attempts=max_attempts, hold=held_alerts, reason=reason)


async def _save(conn: Connection, monitor: Tolerant, streak: Streak,
                since: datetime, realert: datetime | None,
                slot: tuple[datetime | None, datetime | None] | None) -> None:
    slot_at, miss_at = slot or (None, None)
    await conn.execute(Q["alert_state_monitor_count"], {
        "monitor_id": monitor.id, "team_id": monitor.team_id, "since": since,
        "failures": streak.failures, "successes": streak.successes,
        "next_realert_at": realert, "next_miss_at": miss_at, "miss_slot_at": slot_at})


async def count_misses(conn: Connection, now: datetime, *, limit: int,
                       max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> int:
    """Count the slots down monitors missed up to ``now``, in the caller's transaction (the
    checker's pass, beside the re-alerts): each claimed row (``SKIP LOCKED``) whose monitor is
    free and still down counts a failure at each slot deadline passed, with ``monitor.down``
    data ``{"reason": "missed", "expected_at", "deadline"}`` for its alert; a monitor no
    longer down stops being watched.

    Returns:
        How many rows were handled (claimed, minus those whose monitor was busy).
    """
    cur = await conn.execute(Q["alert_state_monitor_claim_misses"], {"now": now,
                                                                     "limit": limit})
    handled = 0
    for row in await cur.fetchall():
        cur = await conn.execute(Q["monitor_lock_for_realert"], {"id": row["monitor_id"]})
        locked = await cur.fetchone()
        if locked is None:
            continue  # a ping or command holds it: next time
        handled += 1
        monitor = CountedMonitor.from_row(locked)
        if locked["status"] != "down":  # it came back without being counted: forget
            await conn.execute(Q["alert_state_monitor_clear"], {"monitor_id": monitor.id})
            continue
        miss_at, expected = row["next_miss_at"], row["miss_slot_at"]
        while miss_at is not None and miss_at <= now:
            alert = await count(conn, monitor, "failure", miss_at, status_before="down",
                                slot_at=expected, last_ping=None, max_attempts=max_attempts,
                                reason={"reason": "missed", "expected_at": expected,
                                        "deadline": miss_at})
            cur = await conn.execute(Q["alert_state_monitor_streak"],
                                     {"monitor_id": monitor.id})
            current = await cur.fetchone()
            following = None if alert or current is None else current["next_miss_at"]
            miss_at = following if following is not None and following > miss_at else None
            expected = None if current is None else current["miss_slot_at"]
    return handled


async def next_miss_at(conn: Connection) -> datetime | None:
    """The earliest slot deadline a down monitor may miss (UTC), for the checker's sleep."""
    cur = await conn.execute(Q["alert_state_monitor_next_miss"])
    row = await cur.fetchone()
    return row["at"] if row else None
