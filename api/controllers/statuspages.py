"""``/v1/status-pages`` (create, list, read, change, delete) and ``PUT /v1/alerts/{id}/note``
for the owner (docs/status-pages.md); the public page itself is :mod:`api.ui.pages.status`."""

from __future__ import annotations

import uuid
from typing import Any

from litestar import Controller, Request, delete, get, patch, post, put
from litestar.params import FromPath, JSONBody
from litestar.status_codes import HTTP_201_CREATED, HTTP_204_NO_CONTENT
from msgspec import UNSET

from api.controllers.monitors import base_url
from api.deps import ActorDep, ClockDep, KeysetCursor, Limit, PoolDep
from api.pagination import DEFAULT_LIMIT, check_limit, decode_cursor, keyset, paginate
from api.schemas.statuspages import (
    IncidentNote,
    IncidentNoteView,
    StatusPage,
    StatusPageCreate,
    StatusPagePage,
    StatusPagePatch,
)
from core.errors import invalid
from core.statuspages import commands, queries
from core.statuspages.keys import NOT_READABLE, open_key

PUBLIC_PREFIX = "/status"  # the public pages' routes (api/ui/pages/status.py)


def public_url(base: str, key: str) -> str:
    """The public page of ``key`` (a minted key or a custom path) under ``base``."""
    return f"{base}{PUBLIC_PREFIX}/{key}"


def page_view(request: Request[Any, Any, Any], row: dict[str, Any],
              minted: str | None = None) -> StatusPage:
    """The owner's view of a ``status_pages`` row; ``minted``: the key a create or rotation
    just minted (shown even when the server cannot keep it)."""
    base = base_url(request)
    key = minted or open_key(request.app.state.keyring, row)
    url = public_url(base, key) if key else None
    return StatusPage(
        id=row["id"], title=row["title"], tags=list(row["tags"]),
        components=list(row["components"]), names=dict(row["names"]), path=row["path"],
        url=url, feed_url=f"{url}/feed.atom" if url else None,
        path_url=public_url(base, row["path"]) if row["path"] else None,
        url_note=None if key else NOT_READABLE, version=row["version"],
        created_at=row["created_at"], updated_at=row["updated_at"])


def _fields(data: StatusPageCreate | StatusPagePatch) -> dict[str, Any]:
    out = {name: getattr(data, name) for name in ("title", "tags", "components", "names",
                                                  "path")
           if getattr(data, name) is not UNSET}
    if isinstance(data, StatusPageCreate):
        out["tags"], out["components"] = data.tags or [], data.components or []
    return out


class StatusPageController(Controller):
    path = "/v1"
    tags = ["status pages"]

    @post("/status-pages", status_code=HTTP_201_CREATED, summary="Create a public status page")
    async def create(self, request: Request[Any, Any, Any], data: JSONBody[StatusPageCreate],
                     actor: ActorDep, pool: PoolDep, clock: ClockDep) -> StatusPage:
        minted = await commands.create_page(pool, request.app.state.keyring, actor,
                                            _fields(data), clock.now())
        row = await queries.get_page(pool, actor.team_id, minted.page_id)
        return page_view(request, row, minted.key)

    @get("/status-pages", summary="List the team's status pages, oldest first")
    async def list(self, request: Request[Any, Any, Any], actor: ActorDep, pool: PoolDep,
                   limit: Limit = DEFAULT_LIMIT, cursor: KeysetCursor = None
                   ) -> StatusPagePage:
        rows = await queries.list_pages(pool, actor.team_id, limit=check_limit(limit),
                                        after=decode_cursor(cursor))
        return paginate(StatusPagePage, rows, limit, keyset("created_at"),
                        lambda row: page_view(request, row))

    @get("/status-pages/{page_id:uuid}", summary="Read a status page")
    async def read(self, request: Request[Any, Any, Any], page_id: FromPath[uuid.UUID],
                   actor: ActorDep, pool: PoolDep) -> StatusPage:
        return page_view(request, await queries.get_page(pool, actor.team_id, page_id))

    @patch("/status-pages/{page_id:uuid}", summary="Change a status page (partial), or "
                                                   "rotate its public key")
    async def update(self, request: Request[Any, Any, Any], page_id: FromPath[uuid.UUID],
                     data: JSONBody[StatusPagePatch], actor: ActorDep, pool: PoolDep,
                     clock: ClockDep) -> StatusPage:
        fields = _fields(data)
        if not fields and not data.rotate_key:
            raise invalid("body", "give at least one field to change, or rotate_key: true")
        minted = await commands.update_page(
            pool, request.app.state.keyring, actor, page_id, fields, clock.now(),
            rotate_key=data.rotate_key,
            expected_version=None if data.version is UNSET else data.version)
        row = await queries.get_page(pool, actor.team_id, page_id)
        return page_view(request, row, minted.key if minted else None)

    @delete("/status-pages/{page_id:uuid}", status_code=HTTP_204_NO_CONTENT,
            summary="Delete a status page (its URL answers 404 at once)")
    async def remove(self, page_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                     clock: ClockDep) -> None:
        await commands.delete_page(pool, actor, page_id, clock.now())

    @put("/alerts/{alert_id:uuid}/note",
         summary="Write the note shown with the incident an alert opened on status pages")
    async def note(self, alert_id: FromPath[uuid.UUID], data: JSONBody[IncidentNote],
                   actor: ActorDep, pool: PoolDep, clock: ClockDep) -> IncidentNoteView:
        kept = await commands.set_note(pool, actor, alert_id, data.note, clock.now())
        return IncidentNoteView(alert_id=alert_id, note=kept)
