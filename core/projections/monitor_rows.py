"""Rebuild of the ``monitors`` inline projection from the log.

A ``monitors`` row is :func:`core.monitors.state.evolve` folded over the monitor's stream, with
``next_expected_at`` and ``alert_at`` computed from that state as of the rebuild instant
(:func:`core.monitors.rules.timing`), exactly as the commands and the checker compute them.
Ping bodies are not in the log; :mod:`core.rebuild` carries them over.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from core.db import Connection
from core.monitors.definition import DEFAULTS, DEFINITION_FIELDS, KEYWORD_FIELDS
from core.monitors.rules import timing
from core.monitors.state import MonitorState, evolve
from core.projections.common import Skipped
from core.queries import Q
from core.reasons import reason_of
from core.schedule import cached_schedule
from core.stored import schedule_problem

TABLES = ("monitors",)


async def rebuild(conn: Connection, now: datetime,
                  skipped: Skipped | None = None,
                  base: dict[uuid.UUID, dict[str, Any]] | None = None,
                  snapshot: str | None = None) -> int:
    """Replay every monitor stream into the (truncated) ``monitors`` table; returns the count.

    An event that cannot be folded is left out and appended to ``skipped`` as
    ``(global_position, reason)``; a monitor whose schedule no longer evaluates gets no
    ``next_expected_at``/``alert_at`` (the checker leaves it alone). After a prune
    (``snapshot``: its ``pg_snapshot`` text) the states start from ``base`` (the rows of the
    prune snapshot, which are the folded states) and only the events after it are replayed.
    """
    states = {monitor_id: _from_snapshot(row) for monitor_id, row in (base or {}).items()}
    async with conn.cursor(name="rebuild_monitor_events") as cur:
        await cur.execute(Q["rebuild_monitor_events"], {"snapshot": snapshot})
        async for event in cur:
            try:
                states[event["stream_id"]] = evolve(states.get(event["stream_id"]), event)
            except Exception as exc:  # noqa: BLE001 - a poison event must not stop the rebuild
                if skipped is not None:
                    skipped.append((event["global_position"], reason_of(exc)))
    for state in states.values():
        schedule, _ = schedule_problem(cached_schedule, state.schedule, state.timezone,
                                       state.created_at)
        expected, alert_at = (timing(state, schedule, now)
                              if schedule is not None and state.broken_at is None
                              else (None, None))
        await conn.execute(Q["monitor_upsert"], {
            **state.as_row(), "next_expected_at": expected, "alert_at": alert_at})
    return len(states)


def _from_snapshot(row: dict[str, Any]) -> MonitorState:
    """A state from a row of the prune snapshot (a folded state): one copied before a
    definition field existed lacks it, and gets its default."""
    row = {**{key: DEFAULTS.get(key) for key in DEFINITION_FIELDS}, "broken_at": None,
           "broken_reason": None, **row}
    for key in KEYWORD_FIELDS:
        row[key] = list(row[key] or ())
    return MonitorState.from_row(row)
