"""The monitor checker: notices monitors that stopped pinging (docs/heartbeats.md).

Shape of River's maintenance services, like :class:`core.runs.worker.Worker`:
:meth:`Checker.run_once` claims monitors whose ``alert_at`` has come, ``FOR UPDATE SKIP LOCKED``,
decides their status at ``now`` (:mod:`core.monitors.rules`) and writes the transitions with a
compare-and-set on the stream version, appending ``monitor.late`` / ``monitor.down`` /
``monitor.up`` in the same transaction, until a batch comes back short; the base's ``run``
(:mod:`core.services.base`) repeats it and sleeps until :meth:`Checker.next_deadline` (the earliest
``alert_at``), woken early by ``NOTIFY cronledger_monitors``.

Alerts: a ``monitor.down`` of a monitor with channels queues a ``down`` alert in the same
transaction (:func:`core.notifications.outbox.enqueue_monitor_alert`); each run also sends the
due re-alerts (``still_down``, every ``realert_every`` while down) and counts the slots down
monitors missed (the failure tolerance, :mod:`core.monitors.tolerance`), and the sleep wakes
for the next one.

Why a ping always wins: a ping that committed before the claim moved ``alert_at`` (the row is
not claimed); a ping in flight holds the row lock (the claim skips the row); a ping arriving
after the claim waits for the checker's commit and is then applied to the new status. And since
the update only applies where the version read is still current, a stale decision (another
checker, a ping) changes nothing.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Generic, Protocol, TypeVar

from core.clock import Clock, Instant, read_now, rfc3339
from core.db import Connection, ConnectionPool, transaction
from core.events import Head, append_at
from core.maintenance.queries import held_alerts
from core.monitors.definition import cached_schedule
from core.monitors.rules import (
    ACTIVE,
    Timed,
    alert_for,
    expected_after,
    next_alert,
    status_at,
    time_transition,
)
from core.monitors.tolerance import count, count_misses, next_miss_at
from core.notifications.outbox import (
    DEFAULT_MAX_ATTEMPTS,
    claim_monitor_realerts,
    enqueue_monitor_alert,
    forget_monitor_alert,
    next_monitor_realert_at,
    reschedule_monitor_realert,
)
from core.notifications.released import RELEASE_POLL, any_held, release_held
from core.queries import Q
from core.reasons import MAX_REASON, reason_of
from core.rows import field_values
from core.services.base import Service
from core.stored import schedule_problem

log = logging.getLogger("cronledger.checker")

CHANNEL = "cronledger_monitors"
LOCKED_RETRY = 0.1  # seconds: a due monitor was skipped because a ping or checker holds it
BATCH = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimedMonitor:
    """A row of ``monitor_claim_due`` (core/sql/monitors.sql): what the checker reads of a
    monitor whose ``alert_at`` has come. Instants UTC; ``grace_seconds``, ``max_duration``,
    ``realert_every`` and ``period_seconds`` in seconds."""

    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    schedule: str
    timezone: str
    period_seconds: float | None
    grace_seconds: int
    status: str
    last_ping_at: datetime | None
    last_start_at: datetime | None
    next_expected_at: datetime | None
    alert_at: datetime | None
    channels: list[uuid.UUID]
    realert_every: int | None
    version: int
    created_at: datetime
    broken_at: datetime | None
    max_duration: int | None
    alert_after_failures: int
    recover_after_successes: int

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ClaimedMonitor:
        return cls(**field_values(cls, row))


class Checked(Timed, Protocol):
    """What :func:`decide` reads of a monitor: the rules' :class:`~core.monitors.rules.Timed`,
    its schedule (``schedule``, ``timezone``, ``created_at``) and the stored
    ``next_expected_at``. A :class:`ClaimedMonitor` or a
    :class:`~core.monitors.state.MonitorState` (the replay's)."""

    @property
    def next_expected_at(self) -> datetime | None: ...
    @property
    def schedule(self) -> str: ...
    @property
    def timezone(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...


M = TypeVar("M", bound=Checked)


@dataclass(frozen=True)
class Decision(Generic[M]):
    """What the checker writes for one claimed monitor."""

    monitor: M
    status: str
    next_expected_at: datetime | None
    alert_at: datetime | None
    event: tuple[str, dict[str, Any]] | None


@dataclass
class CheckCounts:
    """What one :meth:`Checker.run_once` did: monitors claimed, transitions by new status."""

    claimed: int = 0
    transitions: dict[str, int] = field(default_factory=dict)

    @property
    def changed(self) -> int:
        return sum(self.transitions.values())


class BrokenMonitor(Exception):
    """A monitor whose stored schedule no longer evaluates (the message is the reason)."""


def decide(monitor: M, now: datetime) -> Decision[M]:
    """The status of a claimed monitor at ``now``, its next alert, and the event to append.

    Args:
        monitor: a row of ``monitor_claim_due`` (or, in a replay, the replayed state).
        now: the checker's instant (UTC).

    Raises:
        BrokenMonitor: its stored schedule no longer evaluates.
    """
    expected = monitor.next_expected_at
    if monitor.status in ACTIVE and expected is None:
        # A cron monitor just pinged: the ping statement left the expected instant to us.
        # Stored schedules were validated; a tzdata or engine change may still break one:
        # the caller marks it broken (docs/operations.md, "Poison items").
        schedule, problem = schedule_problem(cached_schedule, monitor.schedule,
                                             monitor.timezone, monitor.created_at)
        if schedule is None:
            raise BrokenMonitor(problem or "its schedule does not evaluate")
        expected = expected_after(schedule, monitor.last_ping_at)
    status = status_at(monitor, expected, now)
    kept_expected = expected if status in ACTIVE else None
    event = None
    if status != monitor.status:
        event = time_transition(monitor, status, expected)
    return Decision(monitor, status, kept_expected, next_alert(monitor, kept_expected, status),
                    event)


async def check_due(pool: ConnectionPool, now: Instant, *, limit: int,
                    checker_id: str = "checker",
                    max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> CheckCounts:
    """Claim up to ``limit`` monitors with a decision due at ``now`` (UTC, or the clock read
    once the connection is obtained: see :func:`core.clock.read_now`) and apply the decisions
    (queueing a ``down`` alert, with ``max_attempts`` delivery attempts, for each monitor with
    channels that goes down).

    Returns:
        How many were claimed and how many changed status (by new status).
    """
    counts = CheckCounts()
    async with transaction(pool) as conn:
        now = read_now(now)  # after the connection: a wait for the pool must not age it
        cur = await conn.execute(Q["monitor_claim_due"], {"now": now, "limit": limit})
        rows = [ClaimedMonitor.from_row(row) for row in await cur.fetchall()]
        counts.claimed = len(rows)
        if not rows:
            return counts
        decisions: list[Decision[ClaimedMonitor]] = []
        broken: list[tuple[ClaimedMonitor, str]] = []
        for row in rows:
            if row.broken_at is not None:  # pinged since it broke: leave it parked
                decisions.append(Decision(row, row.status, None, None, None))
                continue
            try:
                decisions.append(decide(row, now))
            except Exception as exc:  # noqa: BLE001 - one monitor must not stop the others
                broken.append((row, str(exc) if isinstance(exc, BrokenMonitor)
                               else f"deciding its status failed: {reason_of(exc)}"))
        await mark_monitors_broken(conn, broken, now, checker_id)
        applied = await apply_decisions(conn, decisions, now, checker_id, max_attempts)
        for decision in decisions:
            if decision.event and decision.monitor.id in applied:
                counts.transitions[decision.status] = counts.transitions.get(decision.status,
                                                                             0) + 1
    return counts


async def mark_monitors_broken(conn: Connection,
                               broken: list[tuple[ClaimedMonitor, str]], now: datetime,
                               checker_id: str) -> list[Any]:
    """Mark claimed monitors broken in the caller's transaction: ``monitor.broken``
    ``{"reason"}`` (actor ``checker:<id>``), ``broken_at``/``broken_reason`` on the row and no
    ``alert_at`` (never claimed again until a PATCH or resume repairs it). Logged once each.

    Returns:
        The ids of the monitors marked (one pinged since it was read is left to the next claim).
    """
    if not broken:
        return []
    heads = [(Head("monitor", m.id, m.team_id, m.version),
              [("monitor.broken", {"reason": reason[:MAX_REASON]})]) for m, reason in broken]
    cur = await conn.execute(Q["monitor_mark_broken_many"], {
        "ids": [head.stream_id for head, _ in heads],
        "read_versions": [head.version for head, _ in heads],
        "versions": [head.after(changes) for head, changes in heads],
        "reasons": [changes[0][1]["reason"] for _, changes in heads], "now": now})
    rows = await cur.fetchall()
    marked = {row["id"] for row in rows}
    await append_at(conn, [(head, changes) for head, changes in heads
                           if head.stream_id in marked], now, {"actor": f"checker:{checker_id}"})
    for row in rows:
        log.error("monitor %s marked broken: %s", row["id"], row["broken_reason"])
    return [row["id"] for row in rows]


def _last_ping(last_ping_at: datetime | None, last_start_at: datetime | None
               ) -> dict[str, Any] | None:
    """What the alert says of the last ping (a monitor's ``last_ping_at`` and
    ``last_start_at``): the checker only takes an up or late monitor down, so its last
    finished ping was a success (a failure would have taken it down already)."""
    if last_ping_at is None:
        return None
    ping: dict[str, Any] = {"at": rfc3339(last_ping_at), "kind": "success"}
    if last_start_at is not None:
        ping["started_at"] = rfc3339(last_start_at)
    return ping


async def apply_decisions(conn: Connection,
                          decisions: list[Decision[ClaimedMonitor]],
                          now: datetime, checker_id: str,
                          max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> set[Any]:
    """Write ``decisions`` where the monitor is still at the version they were made from, and
    append their events, and count the failures of monitors with channels that went down
    (:func:`core.monitors.tolerance.count`, which queues the ``down`` alert when the failure
    tolerance says so), in the caller's transaction.

    Returns:
        The ids of the monitors written (a stale decision is skipped, with no event).
    """
    heads = [(Head("monitor", d.monitor.id, d.monitor.team_id, d.monitor.version),
              [d.event] if d.event else []) for d in decisions]
    versions = [head.after(changes) for head, changes in heads]
    cur = await conn.execute(Q["monitor_decide_many"], {
        "ids": [d.monitor.id for d in decisions],
        "read_versions": [d.monitor.version for d in decisions],
        "statuses": [d.status for d in decisions],
        "next_expected_at": [d.next_expected_at for d in decisions],
        "alert_at": [d.alert_at for d in decisions],
        "versions": versions,
        "now": now,
    })
    applied = {row["id"] for row in await cur.fetchall()}
    await append_at(conn, [(head, changes) for head, changes in heads
                           if changes and head.stream_id in applied],
                    now, {"actor": f"checker:{checker_id}"})
    for d in decisions:
        m = d.monitor
        # time only ever takes a monitor down, never back up from down (status_at): a failure
        if alert_for(m.status, d.status) and m.id in applied and m.channels:
            reason = d.event[1] if d.event else {}
            await count(conn, m, "failure", now, status_before=m.status,
                        slot_at=reason.get("expected_at") or now, reason=reason,
                        last_ping=_last_ping(m.last_ping_at, m.last_start_at),
                        max_attempts=max_attempts)
    return applied


async def send_realerts(pool: ConnectionPool, now: Instant, *, limit: int = BATCH,
                        max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> int:
    """Queue the ``still_down`` re-alerts due at ``now`` (UTC, or the clock read once the
    connection is obtained), one transaction.

    Each due alert state is claimed ``SKIP LOCKED``; its monitor is locked ``SKIP LOCKED`` too
    (pings and commands lock the monitor before its alert state, so waiting here could
    deadlock; a busy monitor is simply looked at next time). Still down with
    ``realert_every`` set: re-alert (which schedules the next one); no longer down: the state
    is dropped; re-alerts turned off: nothing more is scheduled.

    Returns:
        How many alert states were handled (claimed, minus those whose monitor was busy).
    """
    async with transaction(pool) as conn:
        now = read_now(now)
        handled = 0
        for due in await claim_monitor_realerts(conn, now, limit):
            cur = await conn.execute(Q["monitor_lock_for_realert"], {"id": due.monitor_id})
            m = await cur.fetchone()
            if m is None:
                continue  # a ping or command holds it: next time
            handled += 1
            if m["status"] != "down":
                await forget_monitor_alert(conn, m["id"])
            elif m["realert_every"] is None:
                await reschedule_monitor_realert(conn, m["id"], None)
            else:
                await enqueue_monitor_alert(
                    conn, team_id=m["team_id"], monitor_id=m["id"], monitor_name=m["name"],
                    channel_ids=m["channels"], event="still_down", since=due.down_since,
                    last_ping=_last_ping(m["last_ping_at"], m["last_start_at"]), now=now,
                    realert_every=m["realert_every"],
                    max_attempts=max_attempts, hold=held_alerts)
        return handled


async def send_misses(pool: ConnectionPool, now: Instant, *, limit: int = BATCH,
                      max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> int:
    """Count the slots that down monitors with a failure tolerance missed up to ``now`` (UTC,
    or the clock read once the connection is obtained), one transaction
    (:func:`core.monitors.tolerance.count_misses`).

    Returns:
        How many alert states were handled.
    """
    async with transaction(pool) as conn:
        return await count_misses(conn, read_now(now), limit=limit, max_attempts=max_attempts)


async def send_releases(pool: ConnectionPool, now: Instant, *, limit: int = BATCH,
                        max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> int:
    """Release the alerts of dependents whose parents are no longer down (UTC ``now``, or the
    clock read once the connection is obtained), one transaction
    (:func:`core.notifications.released.release_held`): those the transaction that ended the
    hold did not take (it skips a hold another transaction has locked).

    Returns:
        How many held alerts were claimed.
    """
    async with transaction(pool) as conn:
        return await release_held(conn, read_now(now), limit=limit, hold=held_alerts,
                                  max_attempts=max_attempts)


class Checker(Service):
    """Runs the monitor checker for one process (part of ``serve`` and ``worker``); a
    :class:`core.services.base.Service` (loop, wake-up, stop and error policy in the base).

    Args:
        pool: database pool (one connection at a time).
        dsn: used for the dedicated LISTEN connection.
        clock: the injected clock.
        checker_id: recorded in the metadata of the events it appends.
        batch: monitors claimed per transaction.
        notify_max_attempts: delivery attempts of the alerts it queues.
    """

    name = "checker"
    channel = CHANNEL

    def __init__(self, pool: ConnectionPool, dsn: str, clock: Clock, *,
                 checker_id: str = "checker", batch: int = BATCH,
                 notify_max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> None:
        super().__init__(clock, dsn)
        self.pool = pool
        self.checker_id, self.batch = checker_id, batch
        self.max_attempts = notify_max_attempts
        self._claimed = 0  # monitors claimed by the last pass (see next_deadline)

    async def run_once(self, now: datetime | None = None) -> CheckCounts:
        """Claim and decide until a batch comes back short.

        Args:
            now: the instant to decide at (default: the clock's, read once per batch).

        Returns:
            The totals over all batches.
        """
        total = CheckCounts()
        while not self.stopping.is_set():
            counts = await check_due(self.pool, now or self.clock, limit=self.batch,
                                     checker_id=self.checker_id, max_attempts=self.max_attempts)
            total.claimed += counts.claimed
            for status, n in counts.transitions.items():
                total.transitions[status] = total.transitions.get(status, 0) + n
            if counts.claimed < self.batch:
                break
        while not self.stopping.is_set():
            if await send_misses(self.pool, now or self.clock, limit=self.batch,
                                 max_attempts=self.max_attempts) < self.batch:
                break
        while not self.stopping.is_set():
            if await send_realerts(self.pool, now or self.clock, limit=self.batch,
                                   max_attempts=self.max_attempts) < self.batch:
                break
        while not self.stopping.is_set():
            if await send_releases(self.pool, now or self.clock, limit=self.batch,
                                   max_attempts=self.max_attempts) < self.batch:
                break
        self._claimed = total.claimed
        if total.changed:
            log.info("monitors changed status: %s", total.transitions)
        return total

    async def next_deadline(self) -> datetime | None:
        """The earliest ``alert_at`` or due re-alert; when one is due yet the last pass could
        claim nothing (the rows are locked by pings or another checker), :data:`LOCKED_RETRY`
        seconds from now rather than a spin. While a dependency holds an alert, at most
        :data:`core.notifications.released.RELEASE_POLL` seconds away (the recovery's own
        transaction releases what it can; a hold it skipped, locked then, is left to this)."""
        now = self.clock.now()
        async with self.pool.connection() as conn:
            cur = await conn.execute(Q["monitor_next_alert"])
            row = await cur.fetchone()
            realert_at = await next_monitor_realert_at(conn)
            miss_at = await next_miss_at(conn)
            release_at = now + timedelta(seconds=RELEASE_POLL) if await any_held(conn) \
                else None
        deadlines = [at for at in (row["alert_at"] if row else None, realert_at, miss_at,
                                   release_at) if at is not None]
        if not deadlines:
            return None
        deadline = min(deadlines)
        if deadline <= now and self._claimed == 0:
            return now + timedelta(seconds=LOCKED_RETRY)
        return deadline
