"""The event store: append to a stream with an expected version, read a stream, list a
team's events.

Streams are identified by ``stream_id`` (the aggregate's uuid) and typed by ``stream_type``
(``job``, ``run``, …). Appends use optimistic concurrency: the events of one append get versions
``expected_version + 1 …`` and the unique ``(stream_id, stream_version)`` constraint turns a
concurrent append into :class:`core.errors.ConcurrencyConflict` (HTTP 409).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec
import psycopg

from core.db import Connection, ConnectionPool, translate_errors
from core.queries import Q

log = logging.getLogger("cronledger.events")

_encode = msgspec.json.Encoder().encode

Change = tuple[str, dict[str, Any]]  # an event to be numbered: (event_type, data)

# The partitions of ``events`` (values of ``event_retention_kind``) a stream of a given type
# can have events in: ``monitor.pinged`` is only ever appended to monitor streams, run and
# notification streams are wholly in their kind. A read of one stream names them, so that it
# visits those partitions only instead of every daily leaf of the history
# (``event_read_stream``); tests/integration/test_rebuild.py checks it against the log.
STREAM_KINDS: dict[str, tuple[str, ...]] = {
    "monitor": ("keep", "pings"),
    "run": ("runs",),
    "notification": ("deliveries",),
}


def stream_kinds(stream_type: str) -> tuple[str, ...]:
    """The ``events`` partitions a stream of ``stream_type`` can be in (default: ``keep``)."""
    return STREAM_KINDS.get(stream_type, ("keep",))


def to_json(value: Any) -> str:
    """Encode ``value`` as compact JSON text (datetimes as RFC 3339, uuids as strings)."""
    return _encode(value).decode()


@dataclass(frozen=True)
class NewEvent:
    """An event to append at ``version`` of its stream.

    Attributes:
        stream_type: ``job``, ``run``, … .
        stream_id: the aggregate's id.
        version: the stream version this event takes (expected version + position).
        event_type: dotted name such as ``job.created``.
        team_id: owner of the stream.
        occurred_at: when it happened (UTC).
        data: the event payload (JSON-serializable; never secrets in plaintext).
        metadata: actor, request id, trigger.
    """

    stream_type: str
    stream_id: uuid.UUID
    version: int
    event_type: str
    team_id: uuid.UUID
    occurred_at: datetime
    data: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


async def append_events(conn: Connection, events: Sequence[NewEvent]) -> list[int]:
    """Append ``events`` (possibly to several streams) in the caller's transaction.

    Returns:
        The ``global_position`` of each event, in order.

    Raises:
        ConcurrencyConflict: when a stream already has an event at one of the versions.
    """
    if not events:
        return []
    with translate_errors():
        cur = await conn.execute(Q["event_append"], {"rows": event_rows(events)})
        return [row["global_position"] for row in await cur.fetchall()]


def event_rows(events: Sequence[NewEvent]) -> str:
    """The ``rows`` parameter of ``event_append`` (``core/sql/events.sql``): ``events`` as one
    JSON array of ``{stream_type, stream_id, stream_version, event_type, team_id, data,
    metadata, occurred_at}``, in order. :func:`append_events` sends it; a migration's
    synchronous connection runs the statement with it directly (``core/stored.py``)."""
    return to_json([
        {"stream_type": e.stream_type, "stream_id": e.stream_id, "stream_version": e.version,
         "event_type": e.event_type, "team_id": e.team_id, "data": e.data,
         "metadata": e.metadata, "occurred_at": e.occurred_at}
        for e in events
    ])


def stream_events(
    stream_type: str,
    stream_id: uuid.UUID,
    team_id: uuid.UUID,
    expected_version: int,
    occurred_at: datetime,
    changes: Sequence[Change],
    metadata: dict[str, Any] | None = None,
) -> list[NewEvent]:
    """Number ``changes`` (``(event_type, data)`` pairs) after ``expected_version``."""
    return [
        NewEvent(
            stream_type=stream_type,
            stream_id=stream_id,
            version=expected_version + i,
            event_type=event_type,
            team_id=team_id,
            occurred_at=occurred_at,
            data=data,
            metadata=metadata or {},
        )
        for i, (event_type, data) in enumerate(changes, start=1)
    ]


@dataclass(frozen=True, slots=True)
class Head:
    """Where one stream stands before an append, as the statement that locked or wrote its
    read row in the caller's transaction reads it.

    Attributes:
        stream_type: the events' ``stream_type`` (``notification``, ``alert`` …).
        stream_id: the stream's id (its read row's).
        team_id: the owner.
        version: the stream version of its last event (0: the stream has none yet).
    """

    stream_type: str
    stream_id: uuid.UUID
    team_id: uuid.UUID
    version: int

    @classmethod
    def written(cls, stream_type: str, stream_id: uuid.UUID, team_id: uuid.UUID, version: int,
                changes: Sequence[Change]) -> Head:
        """The head of a stream whose read row a batch statement has already moved to
        ``version`` for ``changes`` (the row's new version is its last event's): ``version``
        less one per change. For the statements that write many rows at once and return
        each row's new version (``job_complete_many``, ``notification_finish_many`` …)."""
        return cls(stream_type, stream_id, team_id, version - len(changes))

    def after(self, changes: Sequence[Change]) -> int:
        """The stream version once ``changes`` are appended: the read row's new version."""
        return self.version + len(changes)

    def events(self, changes: Sequence[Change], now: datetime,
               metadata: dict[str, Any]) -> list[NewEvent]:
        """``changes`` numbered after this head (:func:`stream_events`), for a caller that
        appends them with other events in one :func:`append_events`."""
        return stream_events(self.stream_type, self.stream_id, self.team_id, self.version, now,
                             changes, metadata)


async def append_at(conn: Connection,
                    appends: Iterable[tuple[Head, Sequence[Change]]], now: datetime,
                    metadata: dict[str, Any]) -> list[int]:
    """Append each stream's changes numbered after its head (:func:`stream_events`), dated
    ``now`` (UTC) with ``metadata`` (actor, request id), all in one statement, in the caller's
    transaction (nothing when there are none). The streams whose read row is written by its
    own statement append here (team keys, secrets, notifications, alerts); the folded ones
    through :func:`core.streams.append`.

    Returns:
        The events' ``global_position``, in order.

    Raises:
        ConcurrencyConflict: a stream already has an event at one of those versions (another
            writer appended first).
    """
    return await append_events(conn, [
        event for head, changes in appends for event in head.events(changes, now, metadata)])


async def read_stream(
    conn: Connection,
    stream_type: str,
    stream_id: uuid.UUID,
    team_id: uuid.UUID,
    *,
    after_version: int = 0,
    limit: int = 1000,
) -> list[dict[str, Any]]:
    """Read up to ``limit`` events of one stream after ``after_version``, in version order.

    ``stream_type`` names the partitions to read (:func:`stream_kinds`).
    """
    cur = await conn.execute(
        Q["event_read_stream"],
        {"stream_type": stream_type, "stream_id": stream_id,
         "kinds": list(stream_kinds(stream_type)), "team_id": team_id,
         "after_version": after_version, "limit": limit},
    )
    return await cur.fetchall()


async def notify_wakeup(conn: Connection, reason: str) -> None:
    """NOTIFY the schedulers (delivered when the caller's transaction commits)."""
    await conn.execute(Q["event_notify_wakeup"], {"reason": reason})


async def list_team_events(
    pool: ConnectionPool,
    team_id: uuid.UUID,
    *,
    limit: int = 50,
    before: int | None = None,
    stream_type: str | None = None,
    actor: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[dict[str, Any]]:
    """The team's events, newest first: at most ``limit`` rows with ``global_position`` below
    ``before`` (keyset), optionally only of ``stream_type``, of one ``actor`` (the metadata's
    ``actor``, e.g. ``api_key:<id>`` or ``system``) and occurred in ``[since, until)`` (UTC).
    Rows: ``global_position``, ``event_id``, ``stream_type``, ``stream_id``,
    ``stream_version``, ``event_type``, ``data``, ``metadata``, ``occurred_at``.
    Without a filter it is the function of migration 0035, with one that of migration 0039:
    each server process keeps their plans over the leaves of the log."""
    params: dict[str, Any] = {"team_id": team_id, "before": before, "limit": limit}
    query = Q["event_list_team"]  # no filter: the plan kept in the server process
    if stream_type is not None or actor is not None or since is not None or until is not None:
        query = Q["event_list_team_filtered"]
        params.update(stream_type=stream_type, actor=actor, since=since, until=until,
                      kinds=None if stream_type is None else list(stream_kinds(stream_type)))
    async with pool.connection() as conn:
        cur = await conn.execute(query, params)
        return await cur.fetchall()


async def warm_event_plans(conn: Connection) -> bool:
    """Have a new connection's server process plan ``event_list_team`` (migration 0035: a plan
    over every leaf of the log, made on a process's first call) before a request needs it, so
    the first overview or audit page each pooled connection serves does not pay it
    (docs/operations.md, "PgBouncer": the first two calls after start 85-163 ms -> 7-25 ms).
    For a pool's ``configure`` (api/app.py).

    Best effort and bounded: it reads the nil team's events (none) after
    ``event_plans_warm_limits`` (a lock waited for at most 100 ms, as when a leaf is being
    created or dropped; 2 s in all), then rolls back, so it holds no lock afterwards. Any error
    is logged and not raised, and the connection is left idle: one that could not warm serves
    as one that did not try (a dead one is then thrown away by :class:`core.db.Pool`).

    Returns:
        Whether the plan was made.
    """
    try:
        await conn.execute(Q["event_plans_warm_limits"])
        await conn.execute(Q["event_list_team"], {"team_id": uuid.UUID(int=0), "before": None,
                                                  "limit": 1})
        warmed = True
    except psycopg.Error as exc:
        log.debug("event_list_team not planned ahead: %s", exc)
        warmed = False
    try:
        await conn.rollback()
    except psycopg.Error as exc:  # a broken connection: the pool's check finds it
        log.debug("warm-up rollback failed: %s", exc)
    return warmed
