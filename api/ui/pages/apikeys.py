"""API keys: the team's active keys, a form that creates one (the key is shown once, in the
form's answer) and a **Revoke** button per key, the commands of ``/v1/api-keys``
(:mod:`core.apikeys`). Revoking the key this session signed in with ends the session."""

from __future__ import annotations

import uuid
from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath, FromQuery
from litestar.response import Template

from api.deps import PoolDep
from api.pagination import decode_cursor, encode_cursor
from api.ui.auth import Viewer, ViewerDep, checked_form
from api.ui.flash import redirect_with
from api.ui.render import page
from core.apikeys import SCOPES, create_api_key, list_api_keys, revoke_api_key
from core.errors import InvalidInput

PAGE_SIZE = 50


async def _page(request: Request[Any, Any, Any], viewer: Viewer, cursor: str | None = None, *,
                status: int = 200, **extra: Any) -> Template:
    rows = await list_api_keys(request.app.state.pool, viewer.actor, limit=PAGE_SIZE + 1,
                               after=decode_cursor(cursor))
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    next_cursor = encode_cursor(rows[-1]["created_at"], rows[-1]["id"]) if more else None
    context = {"errors": {}, "detail": "", **extra}
    return page(request, viewer, "apikeys.html", "API keys", section="apikeys",
                status_code=status, keys=rows, scopes=SCOPES, next_cursor=next_cursor,
                cursor=cursor, **context)


@get("/ui/apikeys", name="apikeys")
async def apikeys(request: Request[Any, Any, Any], viewer: ViewerDep,
                  cursor: FromQuery[str | None] = None) -> Template:
    return await _page(request, viewer, cursor)


@post("/ui/apikeys", name="apikey_create")
async def apikey_create(request: Request[Any, Any, Any], viewer: ViewerDep,
                        pool: PoolDep) -> Response[Any]:
    form = await checked_form(request, viewer)
    try:
        key, record = await create_api_key(pool, viewer.actor.team_id,
                                           str(form.get("scope", "")),
                                           str(form.get("name", "")))
    except InvalidInput as exc:
        errors = {e.field.split(".")[0]: e.message for e in exc.errors}
        return await _page(request, viewer, status=422, errors=errors, detail=exc.detail)
    label = f" “{record['name']}”" if record.get("name") else ""
    return redirect_with(request, viewer, "/ui/apikeys",
                         f"New {record['scope']} key{label} created.", secret=key,
                         secret_label="API key")


@post("/ui/apikeys/{key_id:uuid}/revoke", name="apikey_revoke")
async def apikey_revoke(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                        key_id: FromPath[uuid.UUID]) -> Response[Any]:
    await checked_form(request, viewer)
    await revoke_api_key(pool, viewer.actor, key_id, request.app.state.clock.now())
    return redirect_with(request, viewer, "/ui/apikeys",
                         "Key revoked: programs that use it are refused from now on.")


ROUTES = [apikeys, apikey_create, apikey_revoke]
