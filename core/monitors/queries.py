"""Monitor reads: one monitor, a page of monitors, a monitor's pings, event stream and status
changes."""

from __future__ import annotations

import base64
import uuid
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.db import Connection, ConnectionPool, fetch_team_page, fetch_team_row
from core.errors import NotFound
from core.events import read_stream
from core.monitors.definition import cached_schedule
from core.monitors.state import STATUS_AFTER
from core.queries import Q
from core.stored import describe_stored, schedule_problem

# A truncated body may end inside a UTF-8 sequence: at most 3 bytes of it.
_MAX_CUT_SEQUENCE = 3


def describe(monitor: dict[str, Any]) -> str:
    """Human description of the monitor's schedule (never raises: see :mod:`core.stored`)."""
    return describe_stored(cached_schedule, monitor["schedule"], monitor["timezone"],
                           monitor["created_at"])


def broken_reason(monitor: dict[str, Any]) -> str | None:
    """Why the monitor is not checked: its recorded ``broken_reason``, else (not yet seen by a
    checker) why its stored schedule no longer evaluates, else ``None``."""
    if monitor.get("broken_reason") is not None or monitor["status"] == "deleted":
        return monitor.get("broken_reason")
    return schedule_problem(cached_schedule, monitor["schedule"], monitor["timezone"],
                            monitor["created_at"])[1]


def body_view(body: bytes | None, size: int) -> dict[str, Any]:
    """A stored ping body for JSON: UTF-8 text when it is text, else base64.

    A body cut at the limit in the middle of a multi-byte character is still shown as text
    (without the partial character).
    """
    truncated = body is not None and len(body) < size
    if body is None:
        return {"body": None, "body_encoding": None, "body_truncated": False}
    raw = bytes(body)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if truncated and exc.start >= len(raw) - _MAX_CUT_SEQUENCE \
                and exc.reason == "unexpected end of data":
            text = raw[:exc.start].decode("utf-8")
        else:
            return {"body": base64.b64encode(raw).decode(), "body_encoding": "base64",
                    "body_truncated": truncated}
    return {"body": text, "body_encoding": "utf-8", "body_truncated": truncated}


async def _exists(conn: Connection, actor: Actor, monitor_id: uuid.UUID) -> None:
    cur = await conn.execute(Q["monitor_exists_any"], {"id": monitor_id,
                                                       "team_id": actor.team_id})
    if await cur.fetchone() is None:
        raise NotFound(f"monitor {monitor_id} not found")


async def get_monitor(pool: ConnectionPool, actor: Actor,
                      monitor_id: uuid.UUID) -> dict[str, Any]:
    """One monitor (not deleted).

    Raises:
        NotFound: no such monitor for this team, or it was deleted.
    """
    return await fetch_team_row(pool, Q["monitor_get"], "monitor", monitor_id, actor.team_id)


async def list_monitors(
    pool: ConnectionPool, actor: Actor, *, limit: int,
    after: tuple[datetime, uuid.UUID] | None,
) -> list[dict[str, Any]]:
    """A page of the team's monitors in creation order, after the keyset ``after``."""
    return await fetch_team_page(pool, Q["monitor_list"], actor.team_id, limit=limit, after=after)


async def monitor_choices(pool: ConnectionPool, actor: Actor, *, limit: int
                          ) -> list[dict[str, Any]]:
    """The team's first ``limit`` live monitors in creation order, ``{"id", "name"}`` only (a
    form's picker: not the whole rows of :func:`list_monitors`)."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["monitor_choices"], {"team_id": actor.team_id,
                                                        "limit": limit})
        return await cur.fetchall()


async def list_pings(
    pool: ConnectionPool, actor: Actor, monitor_id: uuid.UUID, *, limit: int,
    before_version: int | None,
) -> list[dict[str, Any]]:
    """The monitor's pings, latest first, with their bodies (deleted monitors included).

    Args:
        before_version: keyset: only pings recorded at a lower stream version.

    Raises:
        NotFound: no such monitor for this team.
    """
    async with pool.connection() as conn:
        await _exists(conn, actor, monitor_id)
        cur = await conn.execute(Q["monitor_ping_list"], {
            "monitor_id": monitor_id, "team_id": actor.team_id,
            "before_version": before_version, "limit": limit})
        rows = await cur.fetchall()
    return [{**row, **body_view(row["body"], row["body_size"])} for row in rows]


async def ping_marks(pool: ConnectionPool, actor: Actor, monitor_id: uuid.UUID, *,
                     since: datetime, limit: int) -> list[dict[str, Any]]:
    """The monitor's pings received at or after ``since`` (UTC), latest first, at most
    ``limit``, without bodies: ``{"received_at", "kind", "exit_status"}`` (the dashboard's
    timeline). An unknown monitor has none."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["monitor_ping_marks"], {
            "monitor_id": monitor_id, "team_id": actor.team_id, "since": since,
            "limit": limit})
        return await cur.fetchall()


async def monitor_events(
    pool: ConnectionPool, actor: Actor, monitor_id: uuid.UUID, *, after_version: int,
    limit: int,
) -> list[dict[str, Any]]:
    """The monitor's event stream (deleted monitors included), in version order.

    Raises:
        NotFound: no such monitor for this team.
    """
    async with pool.connection() as conn:
        await _exists(conn, actor, monitor_id)
        return await read_stream(conn, "monitor", monitor_id, actor.team_id,
                                 after_version=after_version, limit=limit)


async def ping_counts(pool: ConnectionPool, actor: Actor,
                      monitor_ids: list[uuid.UUID]) -> dict[uuid.UUID, int]:
    """The number of pings each monitor received (absent: none)."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["monitor_ping_counts"], {"ids": monitor_ids,
                                                            "team_id": actor.team_id})
        return {row["id"]: row["n_pings"] for row in await cur.fetchall()}


async def monitor_flips(
    pool: ConnectionPool, actor: Actor, monitor_id: uuid.UUID, *, limit: int,
) -> list[dict[str, Any]]:
    """The monitor's status changes, latest first: ``{"version", "event_type", "status"
    (the status it led to, :data:`core.monitors.state.STATUS_AFTER`), "data",
    "occurred_at"}`` (deleted monitors included).

    Raises:
        NotFound: no such monitor for this team.
    """
    async with pool.connection() as conn:
        await _exists(conn, actor, monitor_id)
        cur = await conn.execute(Q["monitor_flip_list"], {
            "monitor_id": monitor_id, "team_id": actor.team_id,
            "types": list(STATUS_AFTER), "limit": limit})
        rows = await cur.fetchall()
    return [{**row, "status": STATUS_AFTER[row["event_type"]]} for row in rows]
