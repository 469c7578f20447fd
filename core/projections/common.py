"""Helpers shared by the read models: fast reads, skipped events, UTC time buckets (event
fields are decoded by :mod:`core.coerce`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
from psycopg.types.json import set_json_loads

from core.db import Connection
from core.queries import Q

_decode_json = msgspec.json.Decoder().decode


async def fetch_all(conn: Connection, query: str,
                    params: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of ``query``, json/jsonb decoded by msgspec (several times faster than the
    standard library; same Python values). Only this cursor is affected, not the pooled
    connection."""
    async with conn.cursor(binary=True) as cur:  # binary uuids and times parse faster
        set_json_loads(_decode_json, cur)
        await cur.execute(query, params)
        return await cur.fetchall()


async def record_skipped(conn: Connection, name: str, position: int, reason: str,
                         now: datetime) -> None:
    """Record in ``projection_skipped`` that projection ``name`` skipped the event at
    ``position`` because of ``reason`` (docs/operations.md, "Poison items")."""
    await conn.execute(Q["projection_skip_record"], {
        "name": name, "position": position, "reason": reason, "now": now})


Skipped = list[tuple[int, str]]  # (global_position, reason) of events a rebuild skipped


def hour_start(t: datetime) -> datetime:
    """The UTC hour holding ``t``."""
    return t.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def day_start(t: datetime) -> datetime:
    """Midnight UTC of the day holding ``t``."""
    return t.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
