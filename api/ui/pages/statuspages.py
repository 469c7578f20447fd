"""Status pages in the dashboard: the team's pages with their public URLs, a form that creates
one by tags (with a custom path), **Edit** (title, tags, path), **Rotate key** and **Delete**
per page, the commands of ``/v1/status-pages`` (:mod:`core.statuspages`; same field messages).
Components by id and display names are set through the API (docs/status-pages.md)."""

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
        return await _page(request, viewer, status=422, errors=_errors(exc), detail=exc.detail,
                           form=form)
    row = await get_page(pool, viewer.actor.team_id, minted.page_id)
    url = page_view(request, row, minted.key).url
    return redirect_with(request, viewer, "/ui/status-pages",
                         f"Status page “{fields['title']}” created: {url}")


def _errors(exc: InvalidInput) -> dict[str, str]:
    """The API's field messages by form field (a page by tags: ``components`` is the tags')."""
    errors = {e.field.split(".")[0].split("[")[0]: e.message for e in exc.errors}
    if "components" in errors:
        errors["tags"] = errors.pop("components")
    return errors


async def _edit_page(request: Request[Any, Any, Any], viewer: Viewer, page_id: uuid.UUID, *,
                     status: int = 200, **extra: Any) -> Template:
    row = await get_page(request.app.state.pool, viewer.actor.team_id, page_id)
    form = {"title": row["title"], "tags": " ".join(row["tags"]), "path": row["path"] or ""}
    context = {"errors": {}, "detail": "", "form": form, **extra}
    return page(request, viewer, "statuspage_form.html", f"Edit {row['title']}",
                section="statuspages", status_code=status, sp=page_view(request, row),
                **context)


@get("/ui/status-pages/{page_id:uuid}/edit", name="statuspage_edit")
async def statuspage_edit(request: Request[Any, Any, Any], viewer: ViewerDep,
                          page_id: FromPath[uuid.UUID]) -> Template:
    return await _edit_page(request, viewer, page_id)


@post("/ui/status-pages/{page_id:uuid}/edit", name="statuspage_save")
async def statuspage_save(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                          page_id: FromPath[uuid.UUID]) -> Response[Any]:
    form = await checked_form(request, viewer)
    fields: dict[str, Any] = {"title": str(form.get("title", "")),
                              "path": str(form.get("path", "")).strip() or None}
    tags = split_tags(str(form.get("tags", "")))
    row = await get_page(pool, viewer.actor.team_id, page_id)
    if tags or row["tags"]:  # a page by components keeps them while the field stays empty
        fields["tags"] = tags
    try:
        await update_page(pool, request.app.state.keyring, viewer.actor, page_id, fields,
                          request.app.state.clock.now())
    except InvalidInput as exc:
        return await _edit_page(request, viewer, page_id, status=422, errors=_errors(exc),
                                detail=exc.detail, form=form)
    return redirect_with(request, viewer, "/ui/status-pages", "Status page saved.")


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


ROUTES = [statuspages, statuspage_create, statuspage_edit, statuspage_save, statuspage_rotate,
          statuspage_delete]
