"""Rebuild of the ``monitors`` inline projection from the log.

A ``monitors`` row is :func:`core.monitors.state.evolve` folded over the monitor's stream, with
``next_expected_at`` and ``alert_at`` computed from that state as of the rebuild instant
(:func:`core.monitors.timing.timing`), exactly as the commands and the checker compute them.
Ping bodies are not in the log; :mod:`core.projections.rebuild` carries them over.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import psycopg

from core.monitors.state import evolve
from core.monitors.timing import timing
from core.queries import Q
from core.scheduler import cached_schedule

TABLES = ("monitors",)


async def rebuild(conn: psycopg.AsyncConnection, now: datetime) -> int:
    """Replay every monitor stream into the (truncated) ``monitors`` table; returns the count."""
    states: dict[uuid.UUID, dict[str, Any]] = {}
    async with conn.cursor(name="rebuild_monitor_events") as cur:
        await cur.execute(Q["rebuild_monitor_events"])
        async for event in cur:
            states[event["stream_id"]] = evolve(states.get(event["stream_id"]), event)
    for state in states.values():
        schedule = cached_schedule(state["schedule"], state["timezone"], state["created_at"])
        state["next_expected_at"], state["alert_at"] = timing(state, schedule, now)
        await conn.execute(Q["monitor_upsert"], state)
    return len(states)
