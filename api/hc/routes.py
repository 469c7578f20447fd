"""The ``/api/v3/`` routes (healthchecks' Management API v3, docs/healthchecks.md), also served
at ``/api/v1/`` and ``/api/v2/`` as healthchecks serves them (``status`` and URLs differ).

Authentication is healthchecks': an ``X-Api-Key`` header holding a cronledger API key; a read
key may only read (a write route answers it 401 ``wrong api key``, as healthchecks does for
its read-only keys) and sees ``unique_key`` instead of the ids and URLs. Errors are
healthchecks': ``{"error": "<what is wrong>"}`` with its statuses (400 for invalid input, 401,
403 for the monitor limit, 404, 409).

Routes: ``GET/POST /api/v3/checks/`` (``?tag=``, ``?slug=`` filters; ``unique`` upsert: 200
with the existing check, else 201), ``GET/POST/DELETE /api/v3/checks/<uuid>``,
``POST .../pause``, ``POST .../resume``, ``GET .../pings/``, ``GET .../flips/``,
``GET /api/v3/channels/``, ``GET /api/v3/badges/``.
"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec
from litestar import Request, Response, Router, delete, get, post
from litestar.params import FromPath

from api.controllers.monitors import base_url, ping_tokens
from api.hc import shapes
from api.pagination import MAX_EVENT_LIMIT, MAX_LIMIT
from core.actor import Actor
from core.apikeys import authenticate
from core.channels.queries import list_channels
from core.errors import Conflict, DomainError, Forbidden, InvalidInput, NotFound, Unauthorized
from core.monitors import commands
from core.monitors.queries import (
    get_monitor,
    list_monitors,
    list_pings,
    monitor_events,
    ping_counts,
)
from core.teams import get_team

READ_METHODS = ("GET", "HEAD")
VERSIONS = (1, 2, 3)
STATUS = {InvalidInput: 400, Unauthorized: 401, Forbidden: 403, NotFound: 404, Conflict: 409}


def _error(status: int, text: str) -> Response[dict[str, str]]:
    return Response({"error": text}, status_code=status)


def domain_error(_: Request[Any, Any, Any], exc: DomainError) -> Response[dict[str, str]]:
    """A domain error in healthchecks' style: ``{"error": ...}``."""
    status = next((code for kind, code in STATUS.items() if isinstance(exc, kind)), exc.status)
    return _error(status, exc.detail)


def api_version(request: Request[Any, Any, Any]) -> int:
    """The API version of the request's path: 1, 2 or 3. healthchecks serves the three at the
    same views (``hc/api/urls.py``); only ``status`` and the URLs differ (see
    :func:`api.hc.shapes.check_view`)."""
    return int(request.route_handler.opt["api_version"])


async def _actor(request: Request[Any, Any, Any]) -> Actor:
    key = request.headers.get("x-api-key", "").strip()
    if not key:
        raise Unauthorized("missing api key")
    actor = await authenticate(request.app.state.pool, key)
    if actor is None or (actor.scope != "write" and request.method not in READ_METHODS):
        raise Unauthorized("wrong api key")
    return actor


def _body(request_body: bytes) -> Any:
    if not request_body.strip():
        return {}
    try:
        return msgspec.json.decode(request_body)
    except msgspec.DecodeError:
        raise InvalidInput("could not parse request body") from None


async def _all(lister: Any, pool: Any, actor: Actor) -> list[dict[str, Any]]:
    """Every row of a keyset-paged team list (``list_monitors``, ``list_channels``): the v3 API
    answers whole lists."""
    rows: list[dict[str, Any]] = []
    after = None
    while True:
        page = await lister(pool, actor, limit=MAX_LIMIT, after=after)
        rows += page
        if len(page) < MAX_LIMIT:
            return rows
        after = (page[-1]["created_at"], page[-1]["id"])


async def _all_monitors(pool: Any, actor: Actor) -> list[dict[str, Any]]:
    return await _all(list_monitors, pool, actor)


async def _all_channels(pool: Any, actor: Actor) -> list[dict[str, Any]]:
    return await _all(list_channels, pool, actor)


async def _views(request: Request[Any, Any, Any], actor: Actor,
                 monitors: list[dict[str, Any]], token: str | None = None
                 ) -> list[dict[str, Any]]:
    pool = request.app.state.pool
    ids = [m["id"] for m in monitors]
    counts = await ping_counts(pool, actor, ids) if monitors else {}
    tokens, _ = await ping_tokens(request, actor, ids)
    if token is not None:
        tokens[ids[0]] = token
    base, version = base_url(request), api_version(request)
    return [shapes.check_view(m, counts.get(m["id"], 0), base, read_only=actor.scope != "write",
                              token=tokens.get(m["id"]), version=version)
            for m in monitors]


async def _one(request: Request[Any, Any, Any], actor: Actor, monitor_id: uuid.UUID,
               token: str | None = None) -> dict[str, Any]:
    monitor = await get_monitor(request.app.state.pool, actor, monitor_id)
    return (await _views(request, actor, [monitor], token))[0]


@get("/checks/")
async def list_checks(request: Request[Any, Any, Any]) -> dict[str, Any]:
    actor = await _actor(request)
    monitors = await _all_monitors(request.app.state.pool, actor)
    tags = request.query_params.getall("tag", [])
    slug = request.query_params.get("slug")
    monitors = [m for m in monitors if all(t in (m.get("tags") or ()) for t in tags)
                and (slug is None or m.get("slug") == slug)]
    return {"checks": await _views(request, actor, monitors)}


@post("/checks/", status_code=201)
async def create_check(request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
    actor = await _actor(request)
    pool, now = request.app.state.pool, request.app.state.clock.now()
    body = _body(await request.body())
    channels = [c["id"] for c in await _all_channels(pool, actor)]
    fields = shapes.definition_fields(body, channels, creating=True)
    unique = body.get("unique") or []
    if unique:
        for monitor in await _all_monitors(pool, actor):
            if shapes.matches(monitor, fields, unique):
                update = shapes.definition_fields(body, channels, creating=False)
                if update:
                    await commands.update_monitor(pool, actor, monitor["id"], update, now)
                return Response(await _one(request, actor, monitor["id"]), status_code=200)
    monitor_id, token = await commands.create_monitor(pool, actor, fields, now,
                                                      request.app.state.keyring)
    return Response(await _one(request, actor, monitor_id, token), status_code=201)


@get("/checks/{check_id:uuid}")
async def read_check(request: Request[Any, Any, Any],
                     check_id: FromPath[uuid.UUID]) -> dict[str, Any]:
    actor = await _actor(request)
    return await _one(request, actor, check_id)


@post("/checks/{check_id:uuid}", status_code=200)
async def update_check(request: Request[Any, Any, Any],
                       check_id: FromPath[uuid.UUID]) -> dict[str, Any]:
    actor = await _actor(request)
    pool = request.app.state.pool
    channels = [c["id"] for c in await _all_channels(pool, actor)]
    fields = shapes.definition_fields(_body(await request.body()), channels, creating=False)
    await get_monitor(pool, actor, check_id)  # 404 before anything else
    if fields:
        await commands.update_monitor(pool, actor, check_id, fields,
                                      request.app.state.clock.now())
    return await _one(request, actor, check_id)


@delete("/checks/{check_id:uuid}", status_code=200)
async def delete_check(request: Request[Any, Any, Any],
                       check_id: FromPath[uuid.UUID]) -> dict[str, Any]:
    actor = await _actor(request)
    check = await _one(request, actor, check_id)
    await commands.delete_monitor(request.app.state.pool, actor, check_id,
                                  request.app.state.clock.now())
    return check


@post("/checks/{check_id:uuid}/pause", status_code=200)
async def pause_check(request: Request[Any, Any, Any],
                      check_id: FromPath[uuid.UUID]) -> dict[str, Any]:
    actor = await _actor(request)
    await commands.set_paused(request.app.state.pool, actor, check_id, True,
                              request.app.state.clock.now())
    return await _one(request, actor, check_id)


@post("/checks/{check_id:uuid}/resume", status_code=200)
async def resume_check(request: Request[Any, Any, Any],
                       check_id: FromPath[uuid.UUID]) -> dict[str, Any]:
    actor = await _actor(request)
    await commands.set_paused(request.app.state.pool, actor, check_id, False,
                              request.app.state.clock.now())
    return await _one(request, actor, check_id)


@get("/checks/{check_id:uuid}/pings/")
async def check_pings(request: Request[Any, Any, Any],
                      check_id: FromPath[uuid.UUID]) -> dict[str, Any]:
    actor = await _actor(request)
    pool = request.app.state.pool
    rows = await list_pings(pool, actor, check_id, limit=MAX_LIMIT, before_version=None)
    total = (await ping_counts(pool, actor, [check_id])).get(check_id, 0)
    return {"pings": [shapes.ping_view(row, total - n) for n, row in enumerate(rows)]}


@get("/checks/{check_id:uuid}/flips/")
async def check_flips(request: Request[Any, Any, Any],
                      check_id: FromPath[uuid.UUID]) -> dict[str, Any]:
    actor = await _actor(request)
    pool = request.app.state.pool
    flips: list[dict[str, Any]] = []
    after = 0
    while True:
        rows = await monitor_events(pool, actor, check_id, after_version=after,
                                    limit=MAX_EVENT_LIMIT)
        flips += [{"timestamp": row["occurred_at"].isoformat(timespec="seconds"),
                   "up": int(row["event_type"] == "monitor.up")}
                  for row in rows if row["event_type"] in ("monitor.up", "monitor.down")]
        if len(rows) < MAX_EVENT_LIMIT:
            return {"flips": flips}
        after = rows[-1]["stream_version"]


@get("/channels/")
async def channels(request: Request[Any, Any, Any]) -> dict[str, Any]:
    actor = await _actor(request)
    rows = await _all_channels(request.app.state.pool, actor)
    return {"channels": [{"id": str(r["id"]), "name": r["name"], "kind": r["kind"]}
                         for r in rows]}


@get("/badges/")
async def badges(request: Request[Any, Any, Any]) -> dict[str, Any]:
    actor = await _actor(request)
    pool = request.app.state.pool
    key = (await get_team(pool, actor))["badge_key"]
    tags = sorted({t for m in await _all_monitors(pool, actor) for t in m.get("tags") or ()})
    root = f"{base_url(request)}/badge/{key}"
    return {"badges": {tag: {
        "svg": f"{root}/{tag}-2.svg", "svg3": f"{root}/{tag}.svg",
        "json": f"{root}/{tag}-2.json", "json3": f"{root}/{tag}.json",
        "shields": f"{root}/{tag}-2.shields", "shields3": f"{root}/{tag}.shields",
    } for tag in [*tags, "*"]}}


HANDLERS = [list_checks, create_check, read_check, update_check, delete_check, pause_check,
            resume_check, check_pings, check_flips, channels, badges]
# One router per version, the same handlers (healthchecks: hc/api/urls.py); the version reaches
# the handlers through ``opt`` (api_version above). The name stays for api/app.py.
v3_router = Router(
    path="/api",
    route_handlers=[Router(path=f"/v{v}", route_handlers=HANDLERS, opt={"api_version": v})
                    for v in VERSIONS],
    exception_handlers={DomainError: domain_error},  # type: ignore[dict-item]
    include_in_schema=False,
)
