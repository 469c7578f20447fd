"""Status pages in the dashboard: the team's pages with their public URLs, a form that creates
one, **Edit**, **Rotate key** and **Delete** per page, the commands of ``/v1/status-pages``
(:mod:`core.statuspages`; the same field messages, at their fields). A page shows the jobs and
monitors of some tags, or those ticked in the component picker (the page's components first,
in their order, then the team's others by name, at most :data:`PICKER_LIMIT`); each row takes
a display name (docs/status-pages.md, "In the dashboard")."""

from __future__ import annotations

import contextlib
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
from core.statuspages.queries import candidates, get_page, list_pages
from core.tags import split_tags

PAGE_SIZE = 50
PICKER_LIMIT = 500  # jobs and monitors the component picker offers


async def _page(request: Request[Any, Any, Any], viewer: Viewer, cursor: str | None = None, *,
                status: int = 200, **extra: Any) -> Template:
    rows = await list_pages(request.app.state.pool, viewer.actor.team_id, limit=PAGE_SIZE + 1,
                            after=decode_cursor(cursor))
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    next_cursor = encode_cursor(rows[-1]["created_at"], rows[-1]["id"]) if more else None
    context = {"errors": {}, "detail": "", "form": {}, **extra}
    if "picker" not in context:
        context["picker"] = await _picker(request, viewer, {})
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
    fields = _form_fields(form)
    try:
        minted = await create_page(pool, request.app.state.keyring, viewer.actor, fields,
                                   request.app.state.clock.now())
    except InvalidInput as exc:
        return await _page(request, viewer, status=422, errors=_errors(exc), detail=exc.detail,
                           form=form, picker=await _picker(request, viewer, fields))
    row = await get_page(pool, viewer.actor.team_id, minted.page_id)
    url = page_view(request, row, minted.key).url
    return redirect_with(request, viewer, "/ui/status-pages",
                         f"Status page “{fields['title']}” created: {url}")


def _form_fields(form: dict[str, Any]) -> dict[str, Any]:
    """The definition a form gives, in the API's terms: ``title``, ``path`` (empty: none),
    ``tags`` (space-separated), ``components`` (the ticked boxes' ids, in the picker's order)
    and ``names`` (every non-empty ``name-<id>`` field). Both ways are always given, so the
    form replaces the page's definition and the API's rules decide (one of tags or
    components; a display name only for a component shown)."""
    names = {key.removeprefix("name-"): str(value).strip() for key, value in form.items()
             if key.startswith("name-") and str(value).strip()}
    return {"title": str(form.get("title", "")),
            "tags": split_tags(str(form.get("tags", ""))),
            "components": [str(c) for c in form.get("components") or []],
            "names": names, "path": str(form.get("path", "")).strip() or None}


def _errors(exc: InvalidInput) -> dict[str, str]:
    """The API's field messages by form field: ``title``, ``tags``, ``path``, ``components``
    (``components.3`` too) and ``names.<id>`` (at that component's display name)."""
    errors: dict[str, str] = {}
    for e in exc.errors:
        key = e.field if e.field.startswith("names.") else e.field.split(".")[0].split("[")[0]
        errors.setdefault(key, e.message)
    return errors


async def _picker(request: Request[Any, Any, Any], viewer: Viewer,
                  fields: dict[str, Any]) -> list[dict[str, Any]]:
    """The component picker's rows ``{"kind", "id", "name", "checked", "display"}`` for a
    definition (``components`` ids as text, ``names`` by id): its components first."""
    chosen = [str(c) for c in fields.get("components") or []]
    ids = []
    for c in chosen:
        with contextlib.suppress(ValueError):
            ids.append(uuid.UUID(c))
    rows = await candidates(request.app.state.pool, viewer.actor.team_id, ids, PICKER_LIMIT)
    order = {c: n for n, c in enumerate(chosen)}
    names = fields.get("names") or {}
    picked = [{"kind": r["kind"], "id": str(r["id"]), "name": r["name"],
               "checked": str(r["id"]) in order, "display": names.get(str(r["id"]), "")}
              for r in rows]
    return sorted(picked, key=lambda p: order.get(p["id"], len(order)))  # stable: by name


async def _edit_page(request: Request[Any, Any, Any], viewer: Viewer, page_id: uuid.UUID, *,
                     status: int = 200, form: dict[str, Any] | None = None,
                     fields: dict[str, Any] | None = None, **extra: Any) -> Template:
    row = await get_page(request.app.state.pool, viewer.actor.team_id, page_id)
    if fields is None:
        fields = {"components": [str(c) for c in row["components"]],
                  "names": dict(row["names"])}
    if form is None:
        form = {"title": row["title"], "tags": " ".join(row["tags"]), "path": row["path"] or ""}
    context = {"errors": {}, "detail": "", **extra}
    return page(request, viewer, "statuspage_form.html", f"Edit {row['title']}",
                section="statuspages", status_code=status, sp=page_view(request, row),
                form=form, picker=await _picker(request, viewer, fields), **context)


@get("/ui/status-pages/{page_id:uuid}/edit", name="statuspage_edit")
async def statuspage_edit(request: Request[Any, Any, Any], viewer: ViewerDep,
                          page_id: FromPath[uuid.UUID]) -> Template:
    return await _edit_page(request, viewer, page_id)


@post("/ui/status-pages/{page_id:uuid}/edit", name="statuspage_save")
async def statuspage_save(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                          page_id: FromPath[uuid.UUID]) -> Response[Any]:
    form = await checked_form(request, viewer)
    fields = _form_fields(form)
    try:
        await update_page(pool, request.app.state.keyring, viewer.actor, page_id, fields,
                          request.app.state.clock.now())
    except InvalidInput as exc:
        return await _edit_page(request, viewer, page_id, status=422, errors=_errors(exc),
                                detail=exc.detail, form=form, fields=fields)
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
