"""The ``/api/v3/`` routes (healthchecks' Management API v3, docs/healthchecks.md), also served
at ``/api/v1/`` and ``/api/v2/`` as healthchecks serves them (``status`` and URLs differ).

Authentication is healthchecks' (``hc/api/decorators.py``, :func:`_actor`): an ``X-Api-Key``
header holding a cronledger API key, or ``api_key`` in a POST's JSON body; the routes
healthchecks guards with ``authorize_read`` (list, read, flips, badges) take read keys, which
see ``unique_key`` instead of the ids and URLs; the others answer them 401 ``wrong api key``.
Errors are healthchecks': ``{"error": "<what is wrong>"}`` with its statuses (400 for invalid
input, 401, 403 for the monitor limit, 404 also for unknown paths, 405, 409), and every answer
carries its CORS headers (:func:`cors`).

Routes: ``GET/POST /api/v3/checks/`` (``?tag=``, ``?slug=`` filters; ``unique`` upsert: 200
with the existing check, else 201), ``GET/POST/DELETE /api/v3/checks/<uuid>`` (GET also by
``unique_key``), ``POST .../pause``, ``POST .../resume``, ``GET .../pings/``,
``GET .../pings/<n>/body``, ``GET .../flips/`` (also by ``unique_key``),
``GET /api/v3/channels/``, ``GET /api/v3/badges/``.
"""

from __future__ import annotations

import base64
import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from litestar import Request, Response, Router, delete, get, post, route
from litestar.exceptions import HTTPException
from litestar.params import FromPath

from api.controllers.monitors import base_url, ping_tokens
from api.hc import shapes
from api.pagination import MAX_EVENT_LIMIT, MAX_LIMIT
from core.actor import Actor
from core.apikeys import authenticate
from core.channels.queries import list_channels
from core.errors import Conflict, DomainError, Forbidden, InvalidInput, NotFound, Unauthorized
from core.metrics import unique_key
from core.monitors import commands
from core.monitors.queries import (
    get_monitor,
    list_monitors,
    list_pings,
    monitor_events,
    ping_counts,
)
from core.monitors.tokens import NO_KEY, kept
from core.teams import get_team

VERSIONS = (1, 2, 3)
STATUS = {InvalidInput: 400, Unauthorized: 401, Forbidden: 403, NotFound: 404, Conflict: 409}
UNIQUE_KEY = re.compile(r"^[0-9a-f]{40}$")
# healthchecks' ``cors`` decorator (hc/api/decorators.py): on every answer of these routes
CORS = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "X-Api-Key",
        "Access-Control-Max-Age": "600"}


def error_response(status: int, text: str,
                   headers: dict[str, str] | None = None) -> Response[dict[str, str]]:
    """healthchecks' error answer: ``{"error": text}`` with its CORS headers (also
    :mod:`api.errors`' answer to any error under ``/api/``)."""
    return Response({"error": text}, status_code=status, headers={**CORS, **(headers or {})})


def domain_error(_: Request[Any, Any, Any], exc: DomainError) -> Response[dict[str, str]]:
    """A domain error in healthchecks' style: ``{"error": ...}`` (a database outage is a
    driver error, answered by :func:`api.errors.database_error`: 503 with ``Retry-After``)."""
    status = next((code for kind, code in STATUS.items() if isinstance(exc, kind)), exc.status)
    return error_response(status, exc.detail)


def http_error(_: Request[Any, Any, Any], exc: HTTPException) -> Response[dict[str, str]]:
    """Litestar's own errors on these paths (a wrong method: 405, from
    :func:`api.errors.http_error`; ``HEAD`` too, as healthchecks' ``cors`` decorator answers
    it) as ``{"error": ...}``, with the CORS headers."""
    headers = dict(exc.headers or {})
    allow = next((v for k, v in headers.items() if k.lower() == "allow"), None)
    if allow is not None:  # healthchecks' cors decorator names them on its 405 too
        headers["Access-Control-Allow-Methods"] = allow
    return error_response(exc.status_code, str(exc.detail).lower(), headers)


def cors(response: Response[Any]) -> Response[Any]:
    """healthchecks' CORS headers on every answer (``after_request``): ``Allow-Methods`` is
    each route's (:func:`_methods`), or for the preflight ``OPTIONS`` (204) its ``Allow``."""
    response.headers.update(CORS)
    names = {k.lower(): v for k, v in response.headers.items()}
    if "access-control-allow-methods" not in names and "allow" in names:
        response.headers["Access-Control-Allow-Methods"] = names["allow"]
    return response


def api_version(request: Request[Any, Any, Any]) -> int:
    """The API version of the request's path: 1, 2 or 3. healthchecks serves the three at the
    same views (``hc/api/urls.py``); only ``status`` and the URLs differ (see
    :func:`api.hc.shapes.check_view`)."""
    return int(request.route_handler.opt["api_version"])


async def _actor(request: Request[Any, Any, Any], *, write: bool,
                 body: Any = None) -> Actor:
    """The caller, as healthchecks' ``authorize`` (``write``: a write key, its ``X-Api-Key``
    header or ``api_key`` in the JSON ``body`` of a POST) or ``authorize_read`` (the header;
    a read key too). 401 ``missing api key`` / ``wrong api key`` otherwise."""
    # Several headers (or one a proxy joined with commas: no key holds a comma): which one was
    # meant cannot be known, so refuse rather than pick one (as /v1 does with Authorization).
    given = [v for h in request.headers.getall("x-api-key", []) for v in h.split(",")]
    if len(given) > 1:
        raise InvalidInput(f"{len(given)} X-Api-Key headers: send one")
    key = given[0].strip() if given else ""
    if not key and write and isinstance(body, dict) and body.get("api_key") is not None:
        key = str(body["api_key"]).strip()
    if not key:
        raise Unauthorized("missing api key")
    actor = await authenticate(request.app.state.pool, key)
    if actor is None or (write and actor.scope != "write"):
        raise Unauthorized("wrong api key")
    return actor


async def _write_actor(request: Request[Any, Any, Any]) -> tuple[Actor, Any]:
    """A POST's write caller and parsed body (the key may be in the body)."""
    body = _body(await request.body())
    return await _actor(request, write=True, body=body), body


def _body(request_body: bytes) -> Any:
    """A POST's JSON body, as healthchecks' ``authorize`` reads it: no body is ``{}``; anything
    but a JSON object (``null``, a list, a number, a string, blank text, JSON nested too deeply
    to parse) is a 400."""
    if not request_body:
        return {}
    try:
        body = msgspec.json.decode(request_body)
    except (msgspec.DecodeError, RecursionError):
        raise InvalidInput("could not parse request body") from None
    if not isinstance(body, dict):
        raise InvalidInput("json validation error: value is not an object")
    return body


def _check_id(text: str) -> uuid.UUID:
    """A check's UUID from the path (anything else: 404, as healthchecks' URL patterns)."""
    try:
        return uuid.UUID(text)
    except ValueError:
        raise NotFound("not found") from None


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


async def _by_reference(request: Request[Any, Any, Any], actor: Actor,
                        reference: str) -> dict[str, Any]:
    """The monitor a path names: its UUID, or (healthchecks' ``get_check_by_unique_key``)
    its ``unique_key``, the name read keys see. 404 otherwise."""
    pool = request.app.state.pool
    if UNIQUE_KEY.match(reference):
        for monitor in await _all_monitors(pool, actor):
            if unique_key(monitor["id"]) == reference:
                return monitor
        raise NotFound("not found")
    return await get_monitor(pool, actor, _check_id(reference))


async def _views(request: Request[Any, Any, Any], actor: Actor,
                 monitors: list[dict[str, Any]], token: str | None = None
                 ) -> list[dict[str, Any]]:
    """The checks of ``monitors`` as ``actor`` sees them; a write key's check without a
    readable ping URL (``ping_url: ""``) carries ``ping_url_note``, the reason (an extra field,
    as ``/v1`` answers it; healthchecks' clients ignore fields they do not know)."""
    pool = request.app.state.pool
    ids = [m["id"] for m in monitors]
    counts = await ping_counts(pool, actor, ids) if monitors else {}
    tokens, note = await ping_tokens(request, actor, ids)
    if token is not None:
        tokens[ids[0]] = token
    base, version = base_url(request), api_version(request)
    read_only = actor.scope != "write"
    views = [shapes.check_view(m, counts.get(m["id"], 0), base, read_only=read_only,
                               token=tokens.get(m["id"]), version=version)
             for m in monitors]
    for view in views:
        if not read_only and not view["ping_url"]:
            view["ping_url_note"] = note
    return views


async def _one(request: Request[Any, Any, Any], actor: Actor, monitor_id: uuid.UUID,
               token: str | None = None) -> dict[str, Any]:
    monitor = await get_monitor(request.app.state.pool, actor, monitor_id)
    return (await _views(request, actor, [monitor], token))[0]


def _methods(*methods: str) -> dict[str, Any]:
    """A route's ``Access-Control-Allow-Methods`` (healthchecks' ``cors(*methods)``)."""
    return {"response_headers": {"Access-Control-Allow-Methods": ", ".join(
        (*methods, "OPTIONS"))}}


@get("/checks/", **_methods("GET", "POST"))
async def list_checks(request: Request[Any, Any, Any]) -> dict[str, Any]:
    actor = await _actor(request, write=False)
    monitors = await _all_monitors(request.app.state.pool, actor)
    tags = request.query_params.getall("tag", [])
    slug = request.query_params.get("slug")
    monitors = [m for m in monitors if all(t in (m.get("tags") or ()) for t in tags)
                and (slug is None or m.get("slug") == slug)]
    return {"checks": await _views(request, actor, monitors)}


@post("/checks/", status_code=201, **_methods("GET", "POST"))
async def create_check(request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
    actor, body = await _write_actor(request)
    pool, now = request.app.state.pool, request.app.state.clock.now()
    channels = [c["id"] for c in await _all_channels(pool, actor)]
    fields = shapes.definition_fields(body, channels, creating=True)
    unique = body.get("unique") or []
    if unique:
        for monitor in await _all_monitors(pool, actor):
            if shapes.matches(monitor, body, fields, unique):
                update = shapes.definition_fields(body, channels, creating=False)
                if update:
                    await commands.update_monitor(pool, actor, monitor["id"], update, now)
                return Response(await _one(request, actor, monitor["id"]), status_code=200)
    keyring = request.app.state.keyring
    monitor_id, token = await commands.create_monitor(pool, actor, fields, now, keyring)
    check = await _one(request, actor, monitor_id, token)
    if not kept(keyring):  # the URL is in this answer only: say so, as /v1 does
        check["ping_url_note"] = NO_KEY
    return Response(check, status_code=201)


@get("/checks/{check:str}", **_methods("POST", "DELETE", "GET"))
async def read_check(request: Request[Any, Any, Any], check: FromPath[str]) -> dict[str, Any]:
    actor = await _actor(request, write=False)
    return (await _views(request, actor, [await _by_reference(request, actor, check)]))[0]


@post("/checks/{check:str}", status_code=200, **_methods("POST", "DELETE", "GET"))
async def update_check(request: Request[Any, Any, Any], check: FromPath[str]) -> dict[str, Any]:
    actor, body = await _write_actor(request)
    check_id = _check_id(check)
    pool = request.app.state.pool
    await get_monitor(pool, actor, check_id)  # 404 before anything else
    channels = [c["id"] for c in await _all_channels(pool, actor)]
    fields = shapes.definition_fields(body, channels, creating=False)
    if fields:
        await commands.update_monitor(pool, actor, check_id, fields,
                                      request.app.state.clock.now())
    return await _one(request, actor, check_id)


@delete("/checks/{check:str}", status_code=200, **_methods("POST", "DELETE", "GET"))
async def delete_check(request: Request[Any, Any, Any], check: FromPath[str]) -> dict[str, Any]:
    actor = await _actor(request, write=True)
    check_id = _check_id(check)
    view = await _one(request, actor, check_id)
    await commands.delete_monitor(request.app.state.pool, actor, check_id,
                                  request.app.state.clock.now())
    return view


@post("/checks/{check:str}/pause", status_code=200, **_methods("POST"))
async def pause_check(request: Request[Any, Any, Any], check: FromPath[str]) -> dict[str, Any]:
    actor, _ = await _write_actor(request)
    check_id = _check_id(check)
    await commands.set_paused(request.app.state.pool, actor, check_id, True,
                              request.app.state.clock.now())
    return await _one(request, actor, check_id)


@post("/checks/{check:str}/resume", status_code=200, **_methods("POST"))
async def resume_check(request: Request[Any, Any, Any], check: FromPath[str]) -> dict[str, Any]:
    actor, _ = await _write_actor(request)
    check_id = _check_id(check)
    pool = request.app.state.pool
    if (await get_monitor(pool, actor, check_id))["status"] != "paused":
        raise Conflict("check is not paused")  # healthchecks' resume: 409
    await commands.set_paused(pool, actor, check_id, False, request.app.state.clock.now())
    return await _one(request, actor, check_id)


async def _pings(request: Request[Any, Any, Any], actor: Actor,
                 check_id: uuid.UUID) -> tuple[list[dict[str, Any]], int]:
    """The check's latest pings (at most :data:`MAX_LIMIT`, latest first) and its ping count
    (the first ping is number 1)."""
    pool = request.app.state.pool
    rows = await list_pings(pool, actor, check_id, limit=MAX_LIMIT, before_version=None)
    return rows, (await ping_counts(pool, actor, [check_id])).get(check_id, 0)


@get("/checks/{check:str}/pings/", **_methods("GET"))
async def check_pings(request: Request[Any, Any, Any], check: FromPath[str]) -> dict[str, Any]:
    actor = await _actor(request, write=True)  # healthchecks: pings need a write key
    check_id = _check_id(check)
    rows, total = await _pings(request, actor, check_id)
    url = f"{base_url(request)}/api/v{api_version(request)}/checks/{check_id}"
    return {"pings": [shapes.ping_view(row, total - n, url) for n, row in enumerate(rows)]}


@get("/checks/{check:str}/pings/{n:int}/body", media_type="text/plain", **_methods("GET"))
async def ping_body(request: Request[Any, Any, Any], check: FromPath[str],
                    n: FromPath[int]) -> Response[bytes]:
    """A ping's stored body as ``text/plain`` (healthchecks' ``ping_body``): 404 for a ping
    that is not among the latest :data:`MAX_LIMIT` or has no body."""
    actor = await _actor(request, write=True)
    rows, total = await _pings(request, actor, _check_id(check))
    index = total - n
    if not 0 <= index < len(rows) or rows[index]["body"] is None:
        raise NotFound("not found")
    row = rows[index]
    raw = base64.b64decode(row["body"]) if row["body_encoding"] == "base64" \
        else row["body"].encode()
    return Response(raw, media_type="text/plain")


# healthchecks' FlipsFiltersForm (hc/api/forms.py): ``start``/``end`` are Unix timestamps in
# 0..10,000,000,000 (its TimestampField), ``seconds`` an integer in 0..31,536,000.
MAX_TIMESTAMP = 10_000_000_000
MAX_FLIP_SECONDS = 31_536_000
DECIMAL_TAIL = re.compile(r"\.0*\s*$")  # Django's IntegerField reads "10.0" as 10


def _timestamp(name: str, text: str | None) -> datetime | None:
    """``?start=``/``?end=`` as healthchecks' TimestampField reads them: absent is no bound;
    anything Python's ``int`` cannot read (an empty value included) or outside
    0..:data:`MAX_TIMESTAMP` is :class:`InvalidInput` (400) naming the parameter."""
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise InvalidInput(f"{name}: must be an integer (a Unix timestamp in seconds)") from None
    if not 0 <= value <= MAX_TIMESTAMP:
        raise InvalidInput(f"{name}: must be between 0 and {MAX_TIMESTAMP}")
    return datetime.fromtimestamp(value, UTC)


def _seconds(text: str | None) -> int | None:
    """``?seconds=`` as healthchecks' ``IntegerField(min_value=0, max_value=31536000)``: absent
    or blank is no bound; otherwise an integer in range, else :class:`InvalidInput` (400)."""
    if text is None or not text.strip():
        return None
    try:
        value = int(DECIMAL_TAIL.sub("", text.strip()))
    except ValueError:
        raise InvalidInput("seconds: must be an integer") from None
    if not 0 <= value <= MAX_FLIP_SECONDS:
        raise InvalidInput(f"seconds: must be between 0 and {MAX_FLIP_SECONDS}")
    return value


@get("/checks/{check:str}/flips/", **_methods("GET"))
async def check_flips(request: Request[Any, Any, Any], check: FromPath[str]) -> dict[str, Any]:
    """The check's flips (``monitor.up``/``monitor.down``), newest first, as healthchecks'
    ``flips`` view: ``?start=`` (inclusive) and ``?end=`` (exclusive) Unix timestamps and
    ``?seconds=`` (the last N seconds by the injected clock) narrow them; a zero ``seconds`` is
    no bound, as there. A filter that cannot be read is 400 naming it."""
    actor = await _actor(request, write=False)
    monitor = await _by_reference(request, actor, check)
    query = request.query_params
    start, end = _timestamp("start", query.get("start")), _timestamp("end", query.get("end"))
    seconds = _seconds(query.get("seconds"))
    since = request.app.state.clock.now() - timedelta(seconds=seconds) if seconds else None
    pool = request.app.state.pool
    flips: list[dict[str, Any]] = []
    after = 0
    while True:
        rows = await monitor_events(pool, actor, monitor["id"], after_version=after,
                                    limit=MAX_EVENT_LIMIT)
        flips += [{"timestamp": row["occurred_at"].isoformat(timespec="seconds"),
                   "up": int(row["event_type"] == "monitor.up")}
                  for row in rows if row["event_type"] in ("monitor.up", "monitor.down")
                  and (start is None or row["occurred_at"] >= start)
                  and (end is None or row["occurred_at"] < end)
                  and (since is None or row["occurred_at"] >= since)]
        if len(rows) < MAX_EVENT_LIMIT:
            return {"flips": flips[::-1]}  # healthchecks: order_by("-id")
        after = rows[-1]["stream_version"]


@get("/channels/", **_methods("GET"))
async def channels(request: Request[Any, Any, Any]) -> dict[str, Any]:
    actor = await _actor(request, write=True)  # healthchecks: authorize, not authorize_read
    rows = await _all_channels(request.app.state.pool, actor)
    return {"channels": [{"id": str(r["id"]), "name": r["name"], "kind": r["kind"]}
                         for r in rows]}


@get("/badges/", **_methods("GET"))
async def badges(request: Request[Any, Any, Any]) -> dict[str, Any]:
    actor = await _actor(request, write=False)
    pool = request.app.state.pool
    key = (await get_team(pool, actor))["badge_key"]
    tags = sorted({t for m in await _all_monitors(pool, actor) for t in m.get("tags") or ()})
    root = f"{base_url(request)}/badge/{key}"
    return {"badges": {tag: {
        "svg": f"{root}/{tag}-2.svg", "svg3": f"{root}/{tag}.svg",
        "json": f"{root}/{tag}-2.json", "json3": f"{root}/{tag}.json",
        "shields": f"{root}/{tag}-2.shields", "shields3": f"{root}/{tag}.shields",
    } for tag in [*tags, "*"]}}


@route("/{rest:path}", http_method=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"],
       status_code=404)
async def unknown(request: Request[Any, Any, Any], rest: FromPath[str]) -> Response[Any]:
    """Any other path under ``/api/v<n>/``: 404 ``{"error": "not found"}``."""
    return error_response(404, "not found")


HANDLERS = [list_checks, create_check, read_check, update_check, delete_check, pause_check,
            resume_check, check_pings, ping_body, check_flips, channels, badges, unknown]
# One router per version, the same handlers (healthchecks: hc/api/urls.py); the version reaches
# the handlers through ``opt`` (api_version above). The name stays for api/app.py.
v3_router = Router(
    path="/api",
    route_handlers=[Router(path=f"/v{v}", route_handlers=HANDLERS, opt={"api_version": v})
                    for v in VERSIONS],
    exception_handlers={DomainError: domain_error, HTTPException: http_error},
    after_request=cors,
    include_in_schema=False,
)
