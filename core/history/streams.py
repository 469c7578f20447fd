"""Reading one job or monitor stream as it stood at an instant (``ledger_stream_until``).

The folds are the inline projections' own (:func:`core.jobs.state.evolve`,
:func:`core.monitors.state.evolve`): there is no second copy of what an event does.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from core.jobs import definition as job_definition
from core.jobs import state as job_state
from core.monitors import definition as monitor_definition
from core.monitors import state as monitor_state
from core.queries import Q


@dataclass(frozen=True)
class Kind:
    """A stream type that history can fold: its name and the fold step of its projection."""

    name: str  # the stream type, ``job`` | ``monitor``
    evolve: Callable[[dict[str, Any] | None, dict[str, Any]], dict[str, Any]]
    definition_fields: tuple[str, ...]  # what a user edits (``job.updated`` / ``monitor.updated``)


JOB = Kind("job", job_state.evolve, job_definition.DEFINITION_FIELDS)
MONITOR = Kind("monitor", monitor_state.evolve, monitor_definition.DEFINITION_FIELDS)


async def events_until(conn: psycopg.AsyncConnection, kind: Kind, stream_id: uuid.UUID,
                       team_id: uuid.UUID, until: datetime) -> list[dict[str, Any]]:
    """The events of one ``kind`` stream of the team, in version order, up to the last one that
    occurred at or before ``until`` (UTC); ``[]`` when none had (not yet created, unknown, or
    another team's)."""
    cur = await conn.execute(Q["ledger_stream_until"], {
        "stream_id": stream_id, "team_id": team_id, "stream_type": kind.name, "until": until})
    return await cur.fetchall()
