"""``/v1/monitors``: create, list, read, update, delete, pause, resume, rotate-token, pings,
events. The unauthenticated ping routes are in :mod:`api.ping`."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from litestar import Controller, Request, delete, get, patch, post
from litestar.params import FromPath, JSONBody
from litestar.status_codes import HTTP_204_NO_CONTENT
from msgspec import structs

from api.controllers.maintenance import with_maintenance
from api.deps import (
    ActorDep,
    AsOf,
    ClockDep,
    EventLimit,
    KeysetCursor,
    Limit,
    PoolDep,
    VersionCursor,
    parse_instant,
)
from api.pagination import (
    DEFAULT_EVENT_LIMIT,
    DEFAULT_LIMIT,
    by_position,
    check_limit,
    decode_cursor,
    decode_position_cursor,
    keyset,
    paginate,
)
from api.schemas.common import Event, EventPage, from_row, given_fields
from api.schemas.monitors import (
    Monitor,
    MonitorCreate,
    MonitorPage,
    MonitorPatch,
    PingPage,
    PingRecord,
)
from core.actor import Actor
from core.config import Settings
from core.db import ConnectionPool
from core.errors import invalid
from core.history.as_of import monitor_as_of
from core.monitors import commands
from core.monitors.queries import (
    broken_reason,
    describe,
    get_monitor,
    list_monitors,
    list_pings,
    monitor_events,
)
from core.monitors.tokens import kept, read_tokens, unreadable_reason

READ_KEY_NOTE = "read keys do not see ping URLs (a ping URL is a credential): use a write key"


def monitor_view(row: dict[str, Any], base_url: str | None = None,
                 token: str | None = None, note: str | None = None) -> Monitor:
    """The API shape of a monitor row, with its ping URL when ``token`` is given (or the
    reason it is not, ``note``)."""
    ping_url = f"{base_url}/ping/{token}" if token and base_url else None
    return from_row(Monitor, {**row, "schedule_description": describe(row),
                              "broken_reason": broken_reason(row),
                              "ping_token": token, "ping_url": ping_url,
                              "ping_url_note": note})


def base_url(request: Request[Any, Any, Any]) -> str:
    """``CRONLEDGER_PUBLIC_URL`` when set, else the URL the client used to reach us."""
    settings: Settings = request.app.state.settings
    if settings.public_url:
        return settings.base_url
    return str(request.base_url).rstrip("/")


async def ping_tokens(request: Request[Any, Any, Any], actor: Actor,
                      monitor_ids: list[uuid.UUID]) -> tuple[dict[uuid.UUID, str], str]:
    """The readable ping tokens of ``monitor_ids`` for ``actor`` (none for a read key) and the
    note of the monitors without one (docs/heartbeats.md, *The ping URL*)."""
    if actor.scope != "write":
        return {}, READ_KEY_NOTE
    keyring = request.app.state.keyring
    tokens = await read_tokens(request.app.state.pool, keyring, actor.team_id, monitor_ids)
    return tokens, unreadable_reason(keyring)


async def _views(request: Request[Any, Any, Any], actor: Actor,
                 rows: list[dict[str, Any]], minted: str | None = None) -> list[Monitor]:
    """The monitors of ``rows`` with their ping URLs; ``minted``: the token a create or
    rotation of the one row just minted (shown even when the server cannot keep it)."""
    tokens, note = await ping_tokens(request, actor, [r["id"] for r in rows])
    if minted is not None:
        tokens[rows[0]["id"]] = minted
    base = base_url(request)
    keyring = request.app.state.keyring
    return [monitor_view(r, base, tokens.get(r["id"]),
                         None if r["id"] in tokens and (minted is None or kept(keyring))
                         else note)
            for r in rows]


async def _monitor(pool: ConnectionPool, actor: Actor, monitor_id: uuid.UUID,
                   now: datetime, request: Request[Any, Any, Any],
                   token: str | None = None) -> Monitor:
    row = await get_monitor(pool, actor, monitor_id)
    views = await _views(request, actor, [row], token)
    [view] = await with_maintenance(pool, actor, "monitor", views, now)
    return view


class MonitorController(Controller):
    path = "/v1/monitors"
    tags = ["monitors"]

    @post("/", summary="Create a monitor (its ping URL: docs/heartbeats.md, The ping URL)")
    async def create(self, request: Request[Any, Any, Any], data: JSONBody[MonitorCreate],
                     actor: ActorDep, pool: PoolDep, clock: ClockDep) -> Monitor:
        monitor_id, token = await commands.create_monitor(pool, actor, structs.asdict(data),
                                                          clock.now(), request.app.state.keyring)
        return await _monitor(pool, actor, monitor_id, clock.now(), request, token)

    @get("/", summary="List monitors")
    async def list(self, request: Request[Any, Any, Any], actor: ActorDep, pool: PoolDep,
                   clock: ClockDep, limit: Limit = DEFAULT_LIMIT,
                   cursor: KeysetCursor = None) -> MonitorPage:
        rows = await list_monitors(pool, actor, limit=check_limit(limit),
                                   after=decode_cursor(cursor))
        page = paginate(MonitorPage, rows, limit, keyset("created_at"), lambda r: r)
        page.items = await with_maintenance(
            pool, actor, "monitor", await _views(request, actor, page.items), clock.now())
        return page

    @get("/{monitor_id:uuid}",
         summary="Read a monitor (as it was at ?as_of=, from its event stream)")
    async def read(self, request: Request[Any, Any, Any], monitor_id: FromPath[uuid.UUID],
                   actor: ActorDep, pool: PoolDep, clock: ClockDep,
                   as_of: AsOf = None) -> Monitor:
        instant = parse_instant("as_of", as_of)
        if instant is not None:
            return monitor_view(await monitor_as_of(pool, actor, monitor_id, instant))
        return await _monitor(pool, actor, monitor_id, clock.now(), request)

    @patch("/{monitor_id:uuid}", summary="Update a monitor (partial)")
    async def update(self, request: Request[Any, Any, Any], monitor_id: FromPath[uuid.UUID],
                     data: JSONBody[MonitorPatch],
                     actor: ActorDep, pool: PoolDep, clock: ClockDep) -> Monitor:
        fields = given_fields(data)
        version = fields.pop("version", None)
        if not fields:
            raise invalid("body", "give at least one field to change")
        await commands.update_monitor(pool, actor, monitor_id, fields, clock.now(), version)
        return await _monitor(pool, actor, monitor_id, clock.now(), request)

    @delete("/{monitor_id:uuid}", status_code=HTTP_204_NO_CONTENT, summary="Delete a monitor")
    async def remove(self, monitor_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                     clock: ClockDep) -> None:
        await commands.delete_monitor(pool, actor, monitor_id, clock.now())

    @post("/{monitor_id:uuid}/pause", status_code=200, summary="Pause a monitor")
    async def pause(self, request: Request[Any, Any, Any], monitor_id: FromPath[uuid.UUID],
                    actor: ActorDep, pool: PoolDep, clock: ClockDep) -> Monitor:
        await commands.set_paused(pool, actor, monitor_id, True, clock.now())
        return await _monitor(pool, actor, monitor_id, clock.now(), request)

    @post("/{monitor_id:uuid}/resume", status_code=200,
          summary="Resume a monitor (it is new again until its next ping)")
    async def resume(self, request: Request[Any, Any, Any], monitor_id: FromPath[uuid.UUID],
                     actor: ActorDep, pool: PoolDep, clock: ClockDep) -> Monitor:
        await commands.set_paused(pool, actor, monitor_id, False, clock.now())
        return await _monitor(pool, actor, monitor_id, clock.now(), request)

    @post("/{monitor_id:uuid}/rotate-token", status_code=200,
          summary="Replace the ping token (the old one stops working at once)")
    async def rotate_token(self, request: Request[Any, Any, Any],
                           monitor_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                           clock: ClockDep) -> Monitor:
        token = await commands.rotate_token(pool, actor, monitor_id, clock.now(),
                                            request.app.state.keyring)
        return await _monitor(pool, actor, monitor_id, clock.now(), request, token)

    @get("/{monitor_id:uuid}/pings", summary="Received pings, latest first, with their bodies")
    async def pings(self, monitor_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                    limit: Limit = DEFAULT_LIMIT, cursor: VersionCursor = None) -> PingPage:
        rows = await list_pings(pool, actor, monitor_id, limit=check_limit(limit),
                                before_version=decode_position_cursor(cursor))
        return paginate(PingPage, rows, limit, by_position("version"),
                        lambda r: from_row(PingRecord, r))

    @get("/{monitor_id:uuid}/events", summary="The monitor's event stream (audit trail)")
    async def events(self, monitor_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                     limit: EventLimit = DEFAULT_EVENT_LIMIT,
                     cursor: VersionCursor = None) -> EventPage:
        after = decode_position_cursor(cursor) or 0
        rows = await monitor_events(pool, actor, monitor_id, after_version=after, limit=limit)
        return paginate(EventPage, rows, limit, by_position("stream_version"),
                        lambda r: from_row(Event, r))
