"""Time travel: a job or monitor as it was at an instant, folded from its stream.

The fold is the inline projection's (:func:`core.history.streams.Kind.evolve`); what the
projection row derives from the fold is derived the same way the commands do, at the instant
asked about: a job's ``next_run_at`` is its schedule's next fire after it (``null`` unless
active, or past the schedule engine's range), a monitor's ``next_expected_at`` /
``alert_at`` are :func:`core.monitors.rules.timing`.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from core.actor import Actor
from core.clock import rfc3339, utc
from core.db import ConnectionPool
from core.errors import Gone, NotFound
from core.history.streams import JOB, MONITOR, Kind, definition_until, events_until
from core.monitors.definition import cached_schedule
from core.monitors.rules import timing
from core.monitors.state import MonitorState
from core.schedule import Schedule, parse_schedule
from core.schedule.spread import next_fire_time, offset_of
from core.stored import schedule_problem


async def fold_as_of(pool: ConnectionPool, actor: Actor, kind: Kind, stream_id: uuid.UUID,
                     as_of: datetime) -> dict[str, Any]:
    """The state of one stream at ``as_of`` (UTC): the fold of its events up to then, as its
    projection row's columns.

    Raises:
        NotFound: it did not exist yet at ``as_of`` (or never, or is another team's).
        Gone: it had been deleted by then (``deleted_at``: the instant of its deletion).
    """
    async with pool.connection() as conn:
        events = await events_until(conn, kind, stream_id, actor.team_id, as_of)
    return _fold(kind, stream_id, as_of, events)


def _fold(kind: Kind, stream_id: uuid.UUID, as_of: datetime,
          events: list[dict[str, Any]]) -> dict[str, Any]:
    state = None
    for event in events:
        state = kind.evolve(state, event)
    if state is None:
        raise NotFound(f"{kind.name} {stream_id} did not exist at {rfc3339(as_of)}")
    row = kind.row(state)
    if row["status"] == "deleted":
        deleted_at = rfc3339(utc(events[-1]["occurred_at"])) or ""
        raise Gone(f"{kind.name} {stream_id} was deleted at {deleted_at}", deleted_at)
    return row


async def definition_as_of(pool: ConnectionPool, actor: Actor, kind: Kind,
                           stream_id: uuid.UUID, as_of: datetime) -> dict[str, Any]:
    """:func:`fold_as_of` of the definition events only (:func:`core.history.streams.
    definition_until`): the row's definition fields and status as they were at ``as_of``
    (what pings and the checker change is left as at creation), without reading every ping
    of a monitor.

    Raises:
        NotFound, Gone: see :func:`fold_as_of`.
    """
    return _fold(kind, stream_id, as_of,
                 await definition_until(pool, actor, kind, stream_id, as_of))


async def job_as_of(pool: ConnectionPool, actor: Actor, job_id: uuid.UUID,
                    as_of: datetime) -> dict[str, Any]:
    """The job row as it was at ``as_of`` (the fields of ``job_get``).

    Raises:
        NotFound, Gone: see :func:`fold_as_of`.
    """
    job = await fold_as_of(pool, actor, JOB, job_id, as_of)
    job["next_run_at"] = None
    if job["status"] == "active" and job["broken_at"] is None:
        schedule, _ = schedule_problem(
            lambda expr, zone, anchor: parse_schedule(expr, zone, anchor=anchor),
            job["schedule"], job["timezone"], job["anchor_at"])
        offset = offset_of(job_id, job.get("spread"))
        job["next_run_at"] = _next_fire(schedule, as_of, offset) if schedule else None
    return job


def _next_fire(schedule: Schedule, after: datetime, offset: timedelta) -> datetime | None:
    """The schedule's next fire time after ``after`` (a slot plus ``offset``, the job's spread
    offset); ``None`` past the engine's range (2399)."""
    try:
        return next_fire_time(schedule, after, offset)
    except ValueError:  # "outside the supported range": an as_of far in the future
        return None


async def monitor_as_of(pool: ConnectionPool, actor: Actor, monitor_id: uuid.UUID,
                        as_of: datetime) -> dict[str, Any]:
    """The monitor row as it was at ``as_of`` (the fields of ``monitor_get``).

    Raises:
        NotFound, Gone: see :func:`fold_as_of`.
    """
    monitor = await fold_as_of(pool, actor, MONITOR, monitor_id, as_of)
    schedule, _ = schedule_problem(cached_schedule, monitor["schedule"], monitor["timezone"],
                                   monitor["created_at"])
    if schedule is None or monitor["broken_at"] is not None:
        monitor["next_expected_at"], monitor["alert_at"] = None, None
    else:
        monitor["next_expected_at"], monitor["alert_at"] = timing(
            MonitorState.from_row(monitor), schedule, as_of)
    return monitor
