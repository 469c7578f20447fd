"""Status pages in the dashboard: the team's pages with their public URLs, a form that creates
one by tags (with a custom path), and **Rotate key** and **Delete** per page, the commands of
``/v1/status-pages`` (:mod:`core.statuspages`; same field messages). Pages by components and
display names are made and changed through the API (docs/status-pages.md)."""

from __future__ import annotations

import uuid
from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath, FromQuery
from litestar.response import Template

from api.controllers.statuspages import page_view
from api.deps import PoolDep
from api.pagination import decode_cursor, encode_cursor
from api.ui.auth import Viewer, ViewerDep, checked_form
from api.ui.flash import redirect_with
from api.ui.render import page
from core.errors import InvalidInput
from core.statuspages.commands import create_page, delete_page, update_page
from core.statuspages.queries import get_page, list_pages
from core.tags import split_tags

PAGE_SIZE = 50


async def _page(request: Request[Any, Any, Any], viewer: Viewer, cursor: str | None = None, *,
                status: int = 200, **extra: Any) -> Template:
    rows = await list_pages(request.app.state.pool, viewer.actor.team_id, limit=PAGE_SIZE + 1,
                            after=decode_cursor(cursor))
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    next_cursor = encode_cursor(rows[-1]["created_at"], rows[-1]["id"]) if more else None
    context = {"errors": {}, "detail": "", "form": {}, **extra}
    return page(request, viewer, "statuspages.html", "Status pages", section="statuspages",
                status_code=status, pages=[page_view(request, r) for r in rows],
                next_cursor=next_cursor, cursor=cursor, **context)


@get("/ui/status-pages", name="statuspages")
async def statuspages(request: Request[Any, Any, Any], viewer: ViewerDep,
                      cursor: FromQuery[str | None] = None) -> Template:
    return await _page(request, viewer, cursor)


@post("/ui/status-pages", name="statuspage_create")
async def statuspage_create(request: Request[Any, Any, Any], viewer: ViewerDep,
                            pool: PoolDep) -> Response[Any]:
    form = await checked_form(request, viewer)
    fields = {"title": str(form.get("title", "")),
              "tags": split_tags(str(form.get("tags", ""))),
              "path": str(form.get("path", "")).strip() or None}
    try:
        minted = await create_page(pool, request.app.state.keyring, viewer.actor, fields,
                                   request.app.state.clock.now())
    except InvalidInput as exc:
        errors = {e.field.split(".")[0].split("[")[0]: e.message for e in exc.errors}
        if "components" in errors:  # by tags here: the tags field is the one to fix
            errors["tags"] = errors.pop("components")
        return await _page(request, viewer, status=422, errors=errors, detail=exc.detail,
                           form=form)
    row = await get_page(pool, viewer.actor.team_id, minted.page_id)
    url = page_view(request, row, minted.key).url
    return redirect_with(request, viewer, "/ui/status-pages",
                         f"Status page “{fields['title']}” created: {url}")


@post("/ui/status-pages/{page_id:uuid}/rotate", name="statuspage_rotate")
async def statuspage_rotate(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                            page_id: FromPath[uuid.UUID]) -> Response[Any]:
    await checked_form(request, viewer)
    await update_page(pool, request.app.state.keyring, viewer.actor, page_id, {},
                      request.app.state.clock.now(), rotate_key=True)
    return redirect_with(request, viewer, "/ui/status-pages",
                         "New public URL minted: the old one answers 404 from now on.")


@post("/ui/status-pages/{page_id:uuid}/delete", name="statuspage_delete")
async def statuspage_delete(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                            page_id: FromPath[uuid.UUID]) -> Response[Any]:
    await checked_form(request, viewer)
    await delete_page(pool, viewer.actor, page_id, request.app.state.clock.now())
    return redirect_with(request, viewer, "/ui/status-pages", "Status page deleted.")


ROUTES = [statuspages, statuspage_create, statuspage_rotate, statuspage_delete]
