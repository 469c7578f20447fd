"""Helpers shared by the read models: fast reads, event field decoding, UTC time buckets."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import msgspec
import psycopg
from psycopg.types.json import set_json_loads

from core.queries import Q

_decode_json = msgspec.json.Decoder().decode


async def fetch_all(conn: psycopg.AsyncConnection, query: str,
                    params: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of ``query``, json/jsonb decoded by msgspec (several times faster than the
    standard library; same Python values). Only this cursor is affected, not the pooled
    connection."""
    async with conn.cursor(binary=True) as cur:  # binary uuids and times parse faster
        set_json_loads(_decode_json, cur)
        await cur.execute(query, params)
        return await cur.fetchall()


async def record_skipped(conn: psycopg.AsyncConnection, name: str, position: int, reason: str,
                         now: datetime) -> None:
    """Record in ``projection_skipped`` that projection ``name`` skipped the event at
    ``position`` because of ``reason`` (docs/operations.md, "Poison items")."""
    await conn.execute(Q["projection_skip_record"], {
        "name": name, "position": position, "reason": reason, "now": now})


Skipped = list[tuple[int, str]]  # (global_position, reason) of events a rebuild skipped


def instant(value: Any) -> datetime | None:
    """A UTC datetime from an event field (RFC 3339 text in ``data``, or already a datetime)."""
    if value is None:
        return None
    t = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    if t.tzinfo is None:
        return t.replace(tzinfo=UTC)  # the log only holds UTC instants
    return t.astimezone(UTC) if t.utcoffset() else t


def uuid_of(value: Any) -> uuid.UUID | None:
    """A uuid from an event field (text in ``data``)."""
    if value is None or isinstance(value, uuid.UUID):
        return value
    return uuid.UUID(value)


def hour_start(t: datetime) -> datetime:
    """The UTC hour holding ``t``."""
    return t.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def day_start(t: datetime) -> datetime:
    """Midnight UTC of the day holding ``t``."""
    return t.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
