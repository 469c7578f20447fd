"""Read models of the monitor streams: status, pings per day, downtime periods.

Built from the ``monitor`` stream events alone, so they do not depend on the ``monitors``
inline projection:
    ``monitor.created``   ``{"name", "status"?}`` -> status ``new`` (or the given status)
    ``monitor.updated``   ``{"changes": {"name"?}}`` -> renamed
    ``monitor.pinged``    ``{"kind": "success"|"start"|"fail"|"log", …}`` -> last ping, count
    ``monitor.up`` / ``monitor.late`` / ``monitor.down`` / ``monitor.paused`` -> that status
    ``monitor.resumed``   ``{"status"?}`` -> ``new`` (or the given status)
    ``monitor.deleted``   -> ``deleted``
A downtime period opens at ``monitor.down`` (its ``occurred_at``) and closes at the next
``monitor.up``, ``monitor.paused`` or ``monitor.deleted`` (``end_reason`` says which). Other
event types of the stream are ignored. Ping days are UTC days of the ping's ``occurred_at``.

Tables: ``monitor_state``, ``monitor_pings_daily``, ``monitor_downtime``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

from core.db import Connection
from core.events import to_json
from core.projections.common import fetch_all
from core.queries import Q

TABLES = ("monitor_state", "monitor_pings_daily", "monitor_downtime")
PING_KINDS = ("success", "start", "fail", "log")
STATUS_AFTER = {"monitor.up": "up", "monitor.late": "late", "monitor.down": "down",
                "monitor.paused": "paused", "monitor.deleted": "deleted"}
CLOSES_DOWNTIME = {"monitor.up": "up", "monitor.paused": "paused", "monitor.deleted": "deleted"}


class _Batch:
    """Monitor rows, ping counts and touched downtime periods of one batch."""

    def __init__(self, rows: dict[uuid.UUID, dict[str, Any]]) -> None:
        self.rows = rows
        self.changed: set[uuid.UUID] = set()
        self.pings: dict[tuple[uuid.UUID, date], dict[str, Any]] = {}
        self.periods: dict[tuple[uuid.UUID, datetime], dict[str, Any]] = {}

    def _row(self, event: dict[str, Any]) -> dict[str, Any]:
        monitor_id, at = event["stream_id"], event["occurred_at"]
        row = self.rows.get(monitor_id)
        if row is None or event["event_type"] == "monitor.created":
            data = event["data"]
            row = self.rows[monitor_id] = {
                "monitor_id": monitor_id, "team_id": event["team_id"],
                "name": data.get("name") or "", "status": data.get("status") or "new",
                "last_ping_at": None, "down_since": None, "created_at": at,
                "deleted_at": None, "updated_at": at}
        self.changed.add(monitor_id)
        row["updated_at"] = at
        return row

    def apply(self, event: dict[str, Any]) -> None:
        kind, data, at = event["event_type"], event["data"], event["occurred_at"]
        row = self._row(event)
        if kind == "monitor.updated":
            row["name"] = (data.get("changes") or {}).get("name", row["name"])
        elif kind == "monitor.pinged":
            row["last_ping_at"] = at
            self._count_ping(row, data.get("kind"), at)
        elif kind == "monitor.resumed":
            row["status"] = data.get("status") or "new"
        elif kind in STATUS_AFTER:
            row["status"] = STATUS_AFTER[kind]
        if kind == "monitor.deleted":
            row["deleted_at"] = at
        if kind == "monitor.down" and row["down_since"] is None:
            row["down_since"] = at
            self._period(row, at, None, None)
        elif kind in CLOSES_DOWNTIME and row["down_since"] is not None:
            self._period(row, row["down_since"], at, CLOSES_DOWNTIME[kind])
            row["down_since"] = None

    def _count_ping(self, row: dict[str, Any], kind: str | None, at: datetime) -> None:
        key = (row["monitor_id"], at.astimezone(UTC).date())
        counts = self.pings.get(key)
        if counts is None:
            counts = self.pings[key] = {"team_id": row["team_id"], "pings": 0,
                                        **dict.fromkeys(PING_KINDS, 0)}
        counts["pings"] += 1
        if kind in PING_KINDS:
            counts[kind] += 1

    def _period(self, row: dict[str, Any], started: datetime, ended: datetime | None,
                reason: str | None) -> None:
        self.periods[(row["monitor_id"], started)] = {
            "team_id": row["team_id"], "ended_at": ended, "end_reason": reason}

    async def write(self, conn: Connection) -> None:
        if self.changed:
            await conn.execute(Q["monitor_state_upsert"],
                               {"rows": to_json([self.rows[m] for m in self.changed])})
        if self.pings:
            await conn.execute(Q["monitor_pings_daily_add"], {"rows": to_json([
                {"monitor_id": monitor_id, "day": day, **counts}
                for (monitor_id, day), counts in self.pings.items()])})
        if self.periods:
            await conn.execute(Q["monitor_downtime_upsert"], {"rows": to_json([
                {"monitor_id": monitor_id, "started_at": started, **period}
                for (monitor_id, started), period in self.periods.items()])})

async def apply(conn: Connection, events: Sequence[dict[str, Any]]) -> None:
    """Fold the monitor events among ``events`` into the monitor read models."""
    relevant = [e for e in events if e["stream_type"] == "monitor"]
    if not relevant:
        return
    keys = [{"id": monitor_id} for monitor_id in {e["stream_id"] for e in relevant}]
    loaded = await fetch_all(conn, Q["monitor_state_load"], {"keys": to_json(keys)})
    batch = _Batch({r["monitor_id"]: r for r in loaded})
    for event in relevant:
        batch.apply(event)
    await batch.write(conn)
