"""Commands on maintenance windows: create, change, end early, and the monitor snooze.

Each decides with :mod:`core.maintenance.decide`, appends to the window's ``maintenance``
stream (:mod:`core.maintenance`) and writes the ``maintenance_windows`` row in the same
transaction (:mod:`core.streams`, with :data:`WINDOW`), with the caller as actor, and wakes the
release service (``NOTIFY cronledger_maintenance``) so it sees a new closing instant.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from core.actor import Actor
from core.db import Connection, ConnectionPool, team_row, transaction
from core.errors import FieldErrors
from core.maintenance.decide import (
    CreateWindow,
    EndWindow,
    UpdateWindow,
    decide_create,
    decide_end,
    decide_update,
)
from core.maintenance.definition import snooze_seconds
from core.maintenance.state import WindowState, evolve
from core.queries import Q
from core.streams import StreamKind, append, execute, lock

NOTIFY_CHANNEL = "cronledger_maintenance"  # the channel of maintenance_notify
SNOOZE_COMMENT = "snooze"


async def _check_subjects(conn: Connection, team_id: uuid.UUID,
                          definition: dict[str, Any],
                          held: dict[str, Any] | None = None) -> None:
    """Refuse ids that are not live jobs / monitors of the team (422), except those the
    window ``held`` already: a job or monitor deleted since stays in its windows, and an
    edit of the window that keeps it is not refused for it."""
    if not definition["jobs"] and not definition["monitors"]:
        return
    cur = await conn.execute(Q["maintenance_subject_ids"], {
        "team_id": team_id, "jobs": definition["jobs"], "monitors": definition["monitors"]})
    known = {(row["kind"], row["id"]) for row in await cur.fetchall()}
    errors = FieldErrors()
    for field, kind in (("jobs", "job"), ("monitors", "monitor")):
        for i, subject in enumerate(definition[field]):
            if (kind, subject) not in known and subject not in (held or {}).get(field, ()):
                errors.add(f"{field}.{i}", f"no {kind} {subject} in this team")
    errors.raise_if_any()


async def _write(conn: Connection, before: WindowState | None,
                 window: WindowState, now: datetime) -> WindowState:
    """Write ``maintenance_windows`` and wake the release service (:data:`core.streams.Write`)."""
    await conn.execute(Q["maintenance_upsert"], window.upsert_params())
    await conn.execute(Q["maintenance_notify"])
    return window


WINDOW = StreamKind("maintenance", "maintenance window", Q["maintenance_lock"],
                    WindowState.from_row, evolve, _write)


async def create_window(pool: ConnectionPool, actor: Actor, fields: dict[str, Any],
                        now: datetime) -> uuid.UUID:
    """Create a window from ``fields`` (:mod:`core.maintenance.definition`); returns its id.

    Raises:
        InvalidInput: the definition is not acceptable, or names another team's (or an
            unknown, or a deleted) job or monitor.
    """
    decision = decide_create(CreateWindow(fields, now))
    window_id = uuid.uuid4()
    async with transaction(pool) as conn:
        await _check_subjects(conn, actor.team_id, decision.definition)
        await append(conn, WINDOW, actor, window_id, None, decision.events, now)
    return window_id


async def update_window(pool: ConnectionPool, actor: Actor, window_id: uuid.UUID,
                        fields: dict[str, Any], now: datetime,
                        expected_version: int | None = None) -> None:
    """Change the fields given (``None`` values clear optional fields); a one-off window may
    be turned recurring by giving ``schedule`` and ``from: null, to: null``, and back.

    Raises:
        NotFound: no such window for this team.
        Conflict: the window was ended.
        ConcurrencyConflict: ``expected_version`` is not the current version.
        InvalidInput: the resulting definition is not acceptable.
    """
    async with transaction(pool) as conn:
        window = await lock(conn, WINDOW, actor, window_id, expected_version)
        decision = decide_update(window, UpdateWindow(fields))
        await _check_subjects(conn, actor.team_id, decision.definition,
                              held=window.definition())
        if decision.events:
            await append(conn, WINDOW, actor, window_id, window, decision.events, now)


async def end_window(pool: ConnectionPool, actor: Actor, window_id: uuid.UUID,
                     now: datetime) -> None:
    """End the window now (``maintenance.ended``); it is kept, listed, and no longer in effect.

    Raises:
        NotFound: no such window for this team.
        Conflict: it was ended already.
    """
    async with transaction(pool) as conn:
        await execute(conn, WINDOW, actor, window_id, decide_end, EndWindow(now), now)


async def snooze_monitor(pool: ConnectionPool, actor: Actor, monitor_id: uuid.UUID,
                         duration: Any, now: datetime) -> uuid.UUID:
    """A one-off ``alerts`` window on one monitor from ``now`` for ``duration`` (``"2h"`` …,
    :func:`core.maintenance.definition.snooze_seconds`); returns the window's id.

    Raises:
        NotFound: no such monitor for this team (before the duration is read).
        InvalidInput: a bad duration.
    """
    async with transaction(pool) as conn:  # the id first, then the duration's rule
        await team_row(conn, Q["maintenance_monitor_exists"], "monitor", monitor_id,
                       actor.team_id)
    seconds = snooze_seconds(duration)
    return await create_window(pool, actor, {
        "from": now, "to": now + timedelta(seconds=seconds), "monitors": [monitor_id],
        "comment": SNOOZE_COMMENT}, now)
