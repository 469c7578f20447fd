"""The transactional outbox: alerts become ``notifications`` rows in the caller's transaction.

Whatever causes an alert (a run's final failure, a monitor going down) calls these functions
with the connection of the transaction that appends its own event, so the alert exists exactly
when the event does: a crash can lose neither one without the other. The notifier
(:mod:`core.notifications.notifier`) delivers the rows afterwards.

Each row is its own ``notification`` stream: ``notification.queued`` here, then one
``notification.sent`` or ``notification.failed`` per delivery attempt, or
``notification.cancelled`` when its channel is deleted first (:mod:`core.channels.commands`).
An alert a maintenance window holds is written ``suppressed`` instead
(``notification.suppressed``, never delivered): the caller hands in a :data:`Hold` that says
which (:func:`core.maintenance.queries.held_alerts`), so the outbox knows nothing of maintenance.

Monitors (see :func:`enqueue_monitor_alert` and the re-alert helpers below) keep their alert
state in ``alert_states`` (``subject_type = 'monitor'``), like jobs do.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core.db import Connection
from core.events import Change, Head, append_at, to_json
from core.notifications import dependencies
from core.notifications.messages import MONITOR_EVENTS, monitor_message
from core.queries import Q
from core.rows import field_values

DEFAULT_MAX_ATTEMPTS = 8
RECORDED = ("job", "monitor")  # the subjects whose alerts are records (migration 0028)
NOTIFY_CHANNEL = "cronledger_notifications"


@dataclass(frozen=True)
class Alert:
    """One alert to deliver to some channels.

    Attributes:
        team_id: the owner; channels of other teams are ignored.
        subject_type: ``job`` | ``monitor`` | ``channel``.
        subject_id: the job, monitor or channel the alert is about.
        event: ``failed`` | ``still_failing`` | ``recovered`` | ``down`` | ``up`` |
            ``still_down`` | ``test``.
        channel_ids: where to send it (duplicates, deleted and foreign channels skipped).
        message: see :mod:`core.notifications.messages`.
        rule: what the rule said, kept on the alert's record for its explanation (a
            monitor's ``monitor.down`` data, a job's streak and threshold); ``None``: nothing.
    """

    team_id: uuid.UUID
    subject_type: str
    subject_id: uuid.UUID
    event: str
    channel_ids: Sequence[uuid.UUID]
    message: dict[str, Any]
    rule: dict[str, Any] | None = None

    @property
    def recorded(self) -> bool:
        """Whether the alert gets a record of its own (``alerts``): one about a job or a
        monitor, addressed to at least one channel."""
        return self.subject_type in RECORDED and bool(self.channel_ids)


# Which job and monitor subjects of the alerts a maintenance window holds at ``now``, with the
# end of their maintenance: :func:`core.maintenance.queries.held_alerts`.
Hold = Callable[[Connection, Sequence[Alert], datetime],
                Awaitable[Mapping[uuid.UUID, datetime]]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Written:
    """A row of ``notification_enqueue`` (core/sql/notifications.sql): an outbox row as it was
    written, read once where the statement returns it (:meth:`from_row`). ``alert_id``: its
    alert's record (``None``: the alert is not recorded, :attr:`Alert.recorded`)."""

    id: uuid.UUID
    team_id: uuid.UUID
    channel_id: uuid.UUID
    subject_type: str
    subject_id: uuid.UUID
    event: str
    alert_id: uuid.UUID | None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Written:
        """The outbox row in one ``notification_enqueue`` row."""
        return cls(**field_values(cls, row))


async def enqueue(
    conn: Connection, alerts: Sequence[Alert], now: datetime,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS, *, hold: Hold,
) -> list[uuid.UUID]:
    """Write outbox rows for ``alerts`` in the caller's transaction and wake the notifiers.

    Args:
        conn: a connection inside the transaction of the event that causes the alerts.
        now: the alert instant (UTC); rows are deliverable from then on.
        max_attempts: delivery attempts before a row is kept as ``failed``.
        hold: says which alerts a maintenance window holds (their rows are ``suppressed``).

    Each alert about a job or monitor with channels is also recorded (``alerts``, with its
    ``alert.raised`` event; :attr:`Alert.recorded`), and its messages link to its
    explanation (``links.explain``, ``GET /v1/alerts/{id}/explain``). Such an alert of a
    dependent whose parent is down is held (rows ``suppressed``, ``alerts.held_by``), and a
    parent's names the dependents it holds (:mod:`core.notifications.dependencies`).

    Returns:
        The ids of the rows written (one per live channel of the team).
    """
    ids = {n: uuid.uuid4() for n, alert in enumerate(alerts) if alert.recorded}
    alerts, waiting = await _held_by_parents(conn, alerts, ids, now)
    rows = _rows(alerts, ids)
    if not rows["ids"]:
        return []
    held = await hold(conn, alerts, now)
    await _record(conn, [(ids[n], alerts[n]) for n in sorted(ids)], held, waiting, now)
    await dependencies.close_held_recoveries(conn, [
        (ids[n], alerts[n].subject_type, alerts[n].event) for n in sorted(ids)
        if alerts[n].subject_id in waiting], now)
    cur = await conn.execute(Q["notification_enqueue"], {
        **rows, "now": now, "max_attempts": max_attempts})
    written = [Written.from_row(row) for row in await cur.fetchall()]
    suppressed = [w.id for w in written if w.subject_id in held or w.subject_id in waiting]
    if suppressed:
        await conn.execute(Q["notification_suppress"], {"ids": suppressed, "now": now})
    titles = {a.subject_id: a.message.get("title") for a in alerts}
    await append_at(conn, _queued_events(written, set(suppressed), titles, held, waiting),
                    now, {"actor": "system"})
    if len(written) > len(suppressed):
        await conn.execute(Q["notification_notify"])
    return [w.id for w in written]


async def _held_by_parents(
    conn: Connection, alerts: Sequence[Alert], ids: Mapping[int, uuid.UUID],
    now: datetime,
) -> tuple[Sequence[Alert], dict[uuid.UUID, list[uuid.UUID]]]:
    """The recorded alerts (``ids``: their positions) as :mod:`core.notifications.dependencies`
    annotates them, and which subjects their down parents hold (subject -> the parents); the
    recoveries of held subjects close their holds."""
    waiting: dict[uuid.UUID, list[uuid.UUID]] = {}
    if not ids:
        return alerts, waiting
    considered = await dependencies.consider(conn, [alerts[n] for n in ids])
    annotated = list(alerts)
    for n in ids:
        annotated[n], parents = dependencies.annotate(alerts[n], considered)
        if parents:
            waiting[alerts[n].subject_id] = parents
    await dependencies.close_recovered(conn, considered, [
        annotated[n].subject_id for n in ids if annotated[n].subject_id in waiting
        and annotated[n].event in dependencies.RECOVERY.get(annotated[n].subject_type, ())],
        now)
    return annotated, waiting


def _rows(alerts: Sequence[Alert], ids: Mapping[int, uuid.UUID]) -> dict[str, list[Any]]:
    """The parameters of ``notification_enqueue``: a row per alert and live channel it names
    (each channel once), its message linked to its record (:func:`_linked`)."""
    rows: dict[str, list[Any]] = {k: [] for k in (
        "ids", "team_ids", "channel_ids", "subject_types", "subject_ids", "events", "messages",
        "alert_ids")}
    for n, alert in enumerate(alerts):
        message = to_json(_linked(alert.message, ids.get(n)))
        for channel_id in dict.fromkeys(alert.channel_ids):
            for key, value in zip(rows, (uuid.uuid4(), alert.team_id, channel_id,
                                         alert.subject_type, alert.subject_id, alert.event,
                                         message, ids.get(n)), strict=True):
                rows[key].append(value)
    return rows


def _queued_events(
    written: Sequence[Written], quiet: set[uuid.UUID],
    titles: Mapping[uuid.UUID, Any], held: Mapping[uuid.UUID, datetime],
    waiting: Mapping[uuid.UUID, list[uuid.UUID]],
) -> list[tuple[Head, list[Change]]]:
    """Each written row's first event: ``notification.suppressed`` (``quiet``: held by a
    window, ``until``, or by parents, ``held_by``) or ``notification.queued``."""
    return [
        (Head("notification", w.id, w.team_id, 0), [(
            "notification.suppressed" if w.id in quiet else "notification.queued",
            {"channel_id": w.channel_id, "subject_type": w.subject_type,
             "subject_id": w.subject_id, "event": w.event,
             "title": titles.get(w.subject_id),
             **({"alert_id": w.alert_id} if w.alert_id else {}),
             **({"until": held[w.subject_id]} if w.subject_id in held else {}),
             **({"held_by": waiting[w.subject_id]} if w.subject_id in waiting else {})},
        )])
        for w in written
    ]


def _linked(message: dict[str, Any], alert_id: uuid.UUID | None) -> dict[str, Any]:
    """The message with the link to its alert's explanation (``links.explain``)."""
    if alert_id is None:
        return message
    return {**message, "alert_id": str(alert_id),
            "links": {**(message.get("links") or {}),
                      "explain": f"/v1/alerts/{alert_id}/explain"}}


async def _record(conn: Connection, alerts: Sequence[tuple[uuid.UUID, Alert]],
                  held: Mapping[uuid.UUID, datetime],
                  waiting: Mapping[uuid.UUID, list[uuid.UUID]], now: datetime) -> None:
    """Write each alert's record (``alerts``) and its ``alert.raised`` event ``{"subject_type",
    "subject_id", "event", "title", "rule", "held_until", "held_by"}`` (stream ``alert``,
    version 1; ``held_by``: the parents holding it, ``None`` when none does)."""
    if not alerts:
        return
    await conn.execute(Q["alert_record_many"], {
        "ids": [i for i, _ in alerts], "team_ids": [a.team_id for _, a in alerts],
        "subject_types": [a.subject_type for _, a in alerts],
        "subject_ids": [a.subject_id for _, a in alerts],
        "events": [a.event for _, a in alerts],
        "titles": [a.message.get("title") for _, a in alerts],
        "rules": [to_json(a.rule or {}) for _, a in alerts],
        "held_until": [held.get(a.subject_id) for _, a in alerts],
        "held_by": [to_json(waiting.get(a.subject_id)) for _, a in alerts], "now": now})
    await append_at(conn, [
        (Head("alert", alert_id, a.team_id, 0), [(
            "alert.raised", {"subject_type": a.subject_type, "subject_id": a.subject_id,
                             "event": a.event, "title": a.message.get("title"),
                             "rule": a.rule or {}, "held_until": held.get(a.subject_id),
                             "held_by": waiting.get(a.subject_id)})])
        for alert_id, a in alerts], now, {"actor": "system"})


# -- monitors -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class DueRealert:
    """A row of ``alert_state_monitor_claim_realerts`` (core/sql/notifications.sql): a down
    monitor's alert state whose re-alert is due, read once where it is claimed. Instants UTC:
    ``down_since`` (the outage's start), ``last_alert_at``, ``next_realert_at``."""

    monitor_id: uuid.UUID
    team_id: uuid.UUID
    down_since: datetime
    last_alert_at: datetime | None
    next_realert_at: datetime

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> DueRealert:
        """The due re-alert in one ``alert_state_monitor_claim_realerts`` row."""
        return cls(**field_values(cls, row))


async def enqueue_monitor_alert(
    conn: Connection, *, team_id: uuid.UUID, monitor_id: uuid.UUID,
    monitor_name: str, channel_ids: Sequence[uuid.UUID], event: str, since: datetime,
    last_ping: dict[str, Any] | None, now: datetime, realert_every: int | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS, hold: Hold,
    reason: dict[str, Any] | None = None,
) -> list[uuid.UUID]:
    """Queue a monitor alert in the caller's transaction (the one appending ``monitor.down``
    or ``monitor.up``), and keep the monitor's alert state for re-alerts.

    Args:
        conn: the connection of the monitor's own transaction.
        event: ``down`` (it just went down), ``up`` (it came back) or ``still_down`` (a
            re-alert, see :func:`claim_monitor_realerts`).
        since: when the monitor went down (UTC); for ``up``, when the outage began.
        last_ping: ``{"at", "kind", "body", ...}`` of the last ping, ``None`` if none.
        realert_every: seconds between re-alerts while down (``None``: never); ignored for
            ``up``.
        hold: which alerts a maintenance window holds (:data:`Hold`).
        reason: the data of the ``monitor.down`` event of a ``down`` alert (its ``reason``
            and details), which the message explains (:func:`core.notifications.messages.
            down_reason`); ``None``: not known.

    Returns:
        The outbox row ids written.

    Raises:
        ValueError: an unknown ``event``.
    """
    if event not in MONITOR_EVENTS:
        raise ValueError(f"unknown monitor event {event!r}")
    if event == "up":
        await conn.execute(Q["alert_state_monitor_clear"], {"monitor_id": monitor_id})
    else:
        await conn.execute(Q["alert_state_monitor_set"], {
            "monitor_id": monitor_id, "team_id": team_id, "since": since, "now": now,
            "reset": event == "down",
            "next_realert_at": now + timedelta(seconds=realert_every) if realert_every
            else None})
    message = monitor_message(event, monitor_id=monitor_id, monitor_name=monitor_name,
                              since=since, last_ping=last_ping, now=now, reason=reason)
    rule = {**(reason or {}), "since": since} if event == "down" else {
        "reason": "ping" if event == "up" else "realert_every", "since": since,
        **({"realert_every": realert_every} if event == "still_down" else {})}
    return await enqueue(conn, [Alert(team_id, "monitor", monitor_id, event, channel_ids,
                                      message, rule)], now, max_attempts, hold=hold)


async def claim_monitor_realerts(
    conn: Connection, now: datetime, limit: int = 100
) -> list[DueRealert]:
    """Down monitors whose re-alert is due, locked (``SKIP LOCKED``) for the caller's
    transaction (:class:`DueRealert`, in due order).

    For each, the checker reads the monitor: still down and ``realert_every`` set ->
    :func:`enqueue_monitor_alert` with ``event="still_down"`` and ``since=down_since`` (which
    moves the next re-alert on); otherwise :func:`forget_monitor_alert` (not down) or
    :func:`reschedule_monitor_realert` with ``None`` (re-alerts turned off).
    """
    cur = await conn.execute(Q["alert_state_monitor_claim_realerts"], {
        "now": now, "limit": limit})
    return [DueRealert.from_row(row) for row in await cur.fetchall()]


async def next_monitor_realert_at(conn: Connection) -> datetime | None:
    """The earliest pending monitor re-alert (UTC), for the checker's sleep."""
    cur = await conn.execute(Q["alert_state_monitor_next_realert"])
    row = await cur.fetchone()
    return row["at"] if row else None


async def reschedule_monitor_realert(
    conn: Connection, monitor_id: uuid.UUID, realert_every: int | None
) -> None:
    """After a monitor's ``realert_every`` changed: the next re-alert is the last alert plus
    the new period (``None`` stops re-alerts)."""
    await conn.execute(Q["alert_state_monitor_reschedule"], {
        "monitor_id": monitor_id, "realert_every": realert_every})


async def forget_monitor_alert(conn: Connection, monitor_id: uuid.UUID) -> None:
    """Drop a monitor's alert state without notifying (it was paused or deleted while down)."""
    await conn.execute(Q["alert_state_monitor_clear"], {"monitor_id": monitor_id})
