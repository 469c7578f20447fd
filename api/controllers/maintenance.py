"""``/v1/maintenance`` (create, list, read, change, end) and ``POST /v1/monitors/{id}/snooze``
(docs/ledger.md)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypeVar

from litestar import Controller, delete, get, patch, post
from litestar.params import FromPath, JSONBody
from litestar.status_codes import HTTP_200_OK, HTTP_204_NO_CONTENT
from msgspec import UNSET, Struct, structs

from api.deps import ActorDep, ClockDep, KeysetCursor, Limit, PoolDep
from api.pagination import DEFAULT_LIMIT, check_limit, decode_cursor, keyset, paginate
from api.schemas.maintenance import (
    Maintenance,
    MaintenanceCreate,
    MaintenancePage,
    MaintenancePatch,
    Snooze,
)
from core.actor import Actor
from core.db import ConnectionPool
from core.errors import invalid
from core.maintenance import commands, queries
from core.maintenance.state import WindowState
from core.maintenance.windows import occurrence_at

V = TypeVar("V", bound=Struct)
_BODY = {"from_": "from"}  # Struct field -> body / core field


def window_view(row: dict[str, Any], now: datetime) -> Maintenance:
    occurrence = occurrence_at(WindowState.from_row(row), now)
    return Maintenance(
        id=row["id"], from_=row["starts_at"], to=row["ends_at"], schedule=row["schedule"],
        timezone=row["timezone"], duration_seconds=row["duration_seconds"],
        jobs=list(row["jobs"]), monitors=list(row["monitors"]), tags=list(row["tags"]),
        suppress=row["suppress"], comment=row["comment"], ended_at=row["ended_at"],
        in_effect_until=occurrence[1] if occurrence else None, version=row["version"],
        created_at=row["created_at"], updated_at=row["updated_at"])


def _fields(data: MaintenanceCreate | MaintenancePatch) -> dict[str, Any]:
    return {_BODY.get(name, name): getattr(data, name) for name in data.__struct_fields__
            if getattr(data, name) is not UNSET}


async def with_maintenance(pool: ConnectionPool, actor: Actor, subject_type: str,
                           views: Sequence[V], now: datetime) -> list[V]:
    """``views`` (job or monitor responses) with ``in_maintenance_until`` filled in: the end
    of the maintenance in effect for each at ``now`` (``None``: none)."""
    # v.id: V is a Job or Monitor response, both with an id (a bound Struct cannot say so)
    until = await queries.fetch_maintenance_until(pool, actor.team_id, subject_type,
                                                  [v.id for v in views], now)  # type: ignore[attr-defined]
    return [structs.replace(v, in_maintenance_until=until.get(v.id))  # type: ignore[attr-defined]
            for v in views]


class MaintenanceController(Controller):
    path = "/v1"
    tags = ["maintenance"]

    @post("/maintenance", summary="Create a maintenance window")
    async def create(self, data: JSONBody[MaintenanceCreate], actor: ActorDep, pool: PoolDep,
                     clock: ClockDep) -> Maintenance:
        now = clock.now()
        window_id = await commands.create_window(pool, actor, _fields(data), now)
        return window_view(await queries.get_window(pool, actor.team_id, window_id), now)

    @get("/maintenance", summary="List maintenance windows (ended ones included), oldest first")
    async def list(self, actor: ActorDep, pool: PoolDep, clock: ClockDep,
                   limit: Limit = DEFAULT_LIMIT,
                   cursor: KeysetCursor = None) -> MaintenancePage:
        rows = await queries.list_windows(pool, actor.team_id, limit=check_limit(limit),
                                          after=decode_cursor(cursor))
        now = clock.now()
        return paginate(MaintenancePage, rows, limit, keyset("created_at"),
                        lambda row: window_view(row, now))

    @get("/maintenance/{window_id:uuid}", summary="Read a maintenance window")
    async def read(self, window_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                   clock: ClockDep) -> Maintenance:
        return window_view(await queries.get_window(pool, actor.team_id, window_id),
                           clock.now())

    @patch("/maintenance/{window_id:uuid}", summary="Change a maintenance window (partial)")
    async def update(self, window_id: FromPath[uuid.UUID], data: JSONBody[MaintenancePatch],
                     actor: ActorDep, pool: PoolDep, clock: ClockDep) -> Maintenance:
        fields = _fields(data)
        version = fields.pop("version", None)
        if not fields:
            raise invalid("body", "give at least one field to change")
        now = clock.now()
        await commands.update_window(pool, actor, window_id, fields, now, version)
        return window_view(await queries.get_window(pool, actor.team_id, window_id), now)

    @post("/maintenance/{window_id:uuid}/end", status_code=HTTP_200_OK,
          summary="End a maintenance window now")
    async def end(self, window_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                  clock: ClockDep) -> Maintenance:
        now = clock.now()
        await commands.end_window(pool, actor, window_id, now)
        return window_view(await queries.get_window(pool, actor.team_id, window_id), now)

    @delete("/maintenance/{window_id:uuid}", status_code=HTTP_204_NO_CONTENT,
            summary="End a maintenance window now (it stays listed, ended)")
    async def remove(self, window_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                     clock: ClockDep) -> None:
        await commands.end_window(pool, actor, window_id, clock.now())

    @post("/monitors/{monitor_id:uuid}/snooze", status_code=HTTP_200_OK,
          summary="Snooze a monitor's alerts for a while (a one-off maintenance window)")
    async def snooze(self, monitor_id: FromPath[uuid.UUID], data: JSONBody[Snooze],
                     actor: ActorDep, pool: PoolDep, clock: ClockDep) -> Maintenance:
        now = clock.now()
        window_id = await commands.snooze_monitor(pool, actor, monitor_id, data.for_, now)
        return window_view(await queries.get_window(pool, actor.team_id, window_id), now)
