"""Reading one job or monitor stream as it stood at an instant (``ledger_stream_until``).

The folds are the inline projections' own (:func:`core.jobs.state.evolve`,
:func:`core.monitors.state.evolve`): there is no second copy of what an event does.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.db import Connection, ConnectionPool
from core.events import stream_kinds
from core.jobs import definition as job_definition
from core.jobs import state as job_state
from core.monitors import definition as monitor_definition
from core.monitors import state as monitor_state
from core.queries import Q

# What pings and the checker append: no definition field changes with them.
NOT_DEFINITION = ("monitor.pinged", "monitor.up", "monitor.late", "monitor.down")


@dataclass(frozen=True)
class Kind:
    """A stream type that history can fold: its name and the fold step of its projection."""

    name: str  # the stream type, ``job`` | ``monitor``
    evolve: Callable[[Any, dict[str, Any]], Any]  # the stream's typed state, folded
    definition_fields: tuple[str, ...]  # what a user edits (``job.updated`` / ``monitor.updated``)
    row: Callable[[Any], dict[str, Any]]  # the state as its projection row's columns


JOB = Kind("job", job_state.evolve, job_definition.DEFINITION_FIELDS,
           job_state.JobState.as_row)
MONITOR = Kind("monitor", monitor_state.evolve, monitor_definition.DEFINITION_FIELDS,
               monitor_state.MonitorState.as_row)


async def events_until(conn: Connection, kind: Kind, stream_id: uuid.UUID,
                       team_id: uuid.UUID, until: datetime) -> list[dict[str, Any]]:
    """The events of one ``kind`` stream of the team, in version order, up to the last one that
    occurred at or before ``until`` (UTC); ``[]`` when none had (not yet created, unknown, or
    another team's)."""
    cur = await conn.execute(Q["ledger_stream_until"], {
        "stream_id": stream_id, "team_id": team_id, "stream_type": kind.name, "until": until,
        "kinds": list(stream_kinds(kind.name)), "bodies": False})
    return await cur.fetchall()


async def stream_until(conn: Connection, kind: Kind, stream_id: uuid.UUID,
                       team_id: uuid.UUID, until: datetime) -> AsyncIterator[dict[str, Any]]:
    """:func:`events_until`, streamed row by row (a monitor's stream holds every ping), each
    ``monitor.pinged`` with its stored ``body`` (``None``: none)."""
    cursor = conn.cursor()
    async for row in cursor.stream(Q["ledger_stream_until"], {
            "stream_id": stream_id, "team_id": team_id, "stream_type": kind.name,
            "until": until, "kinds": list(stream_kinds(kind.name)), "bodies": True}):
        yield row


async def definition_events(pool: ConnectionPool, actor: Actor, kind: Kind,
                            stream_id: uuid.UUID) -> list[dict[str, Any]]:
    """The stream's events but those of pings and status flips (:data:`NOT_DEFINITION`), in
    version order: folded, they give every definition field (pings and flips change none);
    ``[]`` for an unknown id or another team's."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["ledger_definition_events"], {
            "stream_id": stream_id, "team_id": actor.team_id, "stream_type": kind.name,
            "skip": list(NOT_DEFINITION)})
        return await cur.fetchall()


async def definition_until(pool: ConnectionPool, actor: Actor, kind: Kind,
                           stream_id: uuid.UUID, until: datetime) -> list[dict[str, Any]]:
    """:func:`definition_events` up to the last one that occurred at or before ``until``
    (UTC): folded, the definition fields as they were then, read without the pings' daily
    leaves; ``[]`` when the stream did not exist yet (or is unknown, or another team's)."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["ledger_definition_until"], {
            "stream_id": stream_id, "team_id": actor.team_id, "stream_type": kind.name,
            "skip": list(NOT_DEFINITION), "until": until})
        return await cur.fetchall()
