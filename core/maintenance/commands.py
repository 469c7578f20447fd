"""Commands on maintenance windows: create, change, end early, and the monitor snooze.

Each appends to the window's ``maintenance`` stream (:mod:`core.maintenance`) and writes the
``maintenance_windows`` row in the same transaction, with the caller as actor, and wakes the
release service (``NOTIFY cronledger_maintenance``) so it sees a new closing instant.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from datetime import datetime, timedelta
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from core.actor import Actor
from core.db import team_row, transaction
from core.errors import ConcurrencyConflict, Conflict, FieldErrors
from core.events import append_events, stream_events, to_json
from core.maintenance.definition import FIELDS, normalize_window, snooze_seconds
from core.maintenance.state import WindowState
from core.queries import Q

NOTIFY_CHANNEL = "cronledger_maintenance"  # the channel of maintenance_notify
SNOOZE_COMMENT = "snooze"


async def _check_subjects(conn: psycopg.AsyncConnection, team_id: uuid.UUID,
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


async def _lock(conn: psycopg.AsyncConnection, actor: Actor,
                window_id: uuid.UUID) -> WindowState:
    return WindowState.from_row(await team_row(conn, Q["maintenance_lock"],
                                               "maintenance window", window_id, actor.team_id))


async def _write(conn: psycopg.AsyncConnection, actor: Actor, kind: str, data: dict[str, Any],
                 after: WindowState, now: datetime) -> None:
    """Append ``kind`` after ``after``'s version and write ``after`` at the next one."""
    await append_events(conn, stream_events("maintenance", after.id, actor.team_id,
                                            after.version, now, [(kind, data)],
                                            actor.metadata()))
    await conn.execute(Q["maintenance_upsert"], {**after.upsert_params(),
                                                 "version": after.version + 1,
                                                 "updated_at": now})
    await conn.execute(Q["maintenance_notify"])


def _event_data(definition: dict[str, Any]) -> dict[str, Any]:
    """A definition as an event carries it (JSON-ready: ids and instants as text)."""
    return json.loads(to_json(definition))


async def create_window(pool: AsyncConnectionPool, actor: Actor, fields: dict[str, Any],
                        now: datetime) -> uuid.UUID:
    """Create a window from ``fields`` (:mod:`core.maintenance.definition`); returns its id.

    Raises:
        InvalidInput: the definition is not acceptable, or names another team's (or an
            unknown, or a deleted) job or monitor.
    """
    definition = normalize_window(fields, anchor=now)
    window_id = uuid.uuid4()
    async with transaction(pool) as conn:
        await _check_subjects(conn, actor.team_id, definition)
        await _write(conn, actor, "maintenance.created", _event_data(definition),
                     WindowState.created(window_id, actor.team_id, definition, now), now)
    return window_id


async def update_window(pool: AsyncConnectionPool, actor: Actor, window_id: uuid.UUID,
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
        window = await _lock(conn, actor, window_id)
        if expected_version is not None and expected_version != window.version:
            raise ConcurrencyConflict(f"maintenance window {window_id} is at version "
                                      f"{window.version}, not {expected_version}")
        if window.ended_at is not None:
            raise Conflict(f"maintenance window {window_id} was ended; create a new one")
        before = window.definition()
        merged = {**before, **{k: v for k, v in fields.items() if k in FIELDS}}
        definition = normalize_window(merged, anchor=window.created_at)
        await _check_subjects(conn, actor.team_id, definition, held=before)
        changes = {k: v for k, v in definition.items() if v != before[k]}
        if not changes:
            return
        await _write(conn, actor, "maintenance.updated", {"changes": _event_data(changes)},
                     window.with_definition(definition), now)


async def end_window(pool: AsyncConnectionPool, actor: Actor, window_id: uuid.UUID,
                     now: datetime) -> None:
    """End the window now (``maintenance.ended``); it is kept, listed, and no longer in effect.

    Raises:
        NotFound: no such window for this team.
        Conflict: it was ended already.
    """
    async with transaction(pool) as conn:
        window = await _lock(conn, actor, window_id)
        if window.ended_at is not None:
            raise Conflict(f"maintenance window {window_id} was ended already")
        await _write(conn, actor, "maintenance.ended", {"ended_at": now.isoformat()},
                     dataclasses.replace(window, ended_at=now), now)


async def snooze_monitor(pool: AsyncConnectionPool, actor: Actor, monitor_id: uuid.UUID,
                         duration: Any, now: datetime) -> uuid.UUID:
    """A one-off ``alerts`` window on one monitor from ``now`` for ``duration`` (``"2h"`` …,
    :func:`core.maintenance.definition.snooze_seconds`); returns the window's id.

    Raises:
        InvalidInput: a bad duration. NotFound: no such monitor for this team.
    """
    seconds = snooze_seconds(duration)
    async with transaction(pool) as conn:
        await team_row(conn, Q["maintenance_monitor_exists"], "monitor", monitor_id,
                       actor.team_id)
    return await create_window(pool, actor, {
        "from": now, "to": now + timedelta(seconds=seconds), "monitors": [monitor_id],
        "comment": SNOOZE_COMMENT}, now)
