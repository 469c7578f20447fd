"""Maintenance windows: the list (when, what they cover by name, what they hold back), a form
that makes one (one-off or recurring), a window's edit form and **End** (the API's ``DELETE``:
a window is ended, never erased; docs/ledger.md, *Maintenance windows*).

The same commands as ``/v1/maintenance`` (:mod:`core.maintenance.commands`); jobs and monitors
are picked by name. Instants in the form are UTC (``datetime-local`` fields, or RFC 3339 with
an offset).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath, FromQuery
from litestar.response import Template

from api.deps import PoolDep
from api.pagination import decode_cursor, encode_cursor
from api.ui.auth import Viewer, ViewerDep, checked_form, writable
from api.ui.flash import redirect_with
from api.ui.formerrors import field_errors
from api.ui.render import page
from api.ui.tagfield import parse_tags, tags_text
from core.errors import ConcurrencyConflict, Conflict, InvalidInput
from core.jobs.queries import list_jobs
from core.maintenance.commands import create_window, end_window, update_window
from core.maintenance.definition import MAX_COMMENT, SUPPRESS
from core.maintenance.queries import get_window, list_windows
from core.monitors.queries import list_monitors

PAGE_SIZE = 50
CHOICES = 200  # jobs and monitors offered by name (others: by tag)


def _instant(text: str) -> str | None:
    """A ``datetime-local`` value (no offset: UTC) as RFC 3339; blank: ``None``."""
    text = text.strip()
    if not text:
        return None
    if len(text) in (16, 19) and "T" in text:
        return text + "+00:00"
    return text


def _ids(value: Any) -> list[str]:
    values = value if isinstance(value, list) else [value] if value else []
    return [str(v) for v in values if str(v).strip()]


def parse(form: dict[str, Any]) -> dict[str, Any]:
    """The API fields of the form: recurring when a schedule is given, else one-off."""
    text = {k: str(form.get(k) or "").strip() for k in (
        "from", "to", "schedule", "timezone", "duration_seconds", "suppress", "comment")}
    fields: dict[str, Any] = {"jobs": _ids(form.get("jobs")),
                              "monitors": _ids(form.get("monitors")),
                              "tags": parse_tags(str(form.get("tags") or "")),
                              "suppress": text["suppress"] or "alerts",
                              "comment": text["comment"] or None}
    if text["schedule"]:
        duration = text["duration_seconds"]
        fields.update({"schedule": text["schedule"], "timezone": text["timezone"] or "UTC",
                       "duration_seconds": int(duration) if duration.isdigit() else duration,
                       "from": None, "to": None})
    else:
        fields.update({"from": _instant(text["from"]), "to": _instant(text["to"]),
                       "schedule": None, "timezone": None, "duration_seconds": None})
    return fields


def _local(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%dT%H:%M") if value else ""


def values_of(row: dict[str, Any]) -> dict[str, Any]:
    """The edit form's texts of a window row."""
    return {"from": _local(row["starts_at"]), "to": _local(row["ends_at"]),
            "schedule": row["schedule"] or "", "timezone": row["timezone"] or "",
            "duration_seconds": str(row["duration_seconds"] or ""),
            "jobs": [str(j) for j in row["jobs"]], "monitors": [str(m) for m in row["monitors"]],
            "tags": tags_text(row["tags"]), "suppress": row["suppress"],
            "comment": row["comment"] or "", "version": str(row["version"])}


def _texts(form: dict[str, Any]) -> dict[str, Any]:
    texts = {k: str(form.get(k) or "") for k in (
        "from", "to", "schedule", "timezone", "duration_seconds", "tags", "suppress",
        "comment", "version")}
    texts.update({"jobs": _ids(form.get("jobs")), "monitors": _ids(form.get("monitors"))})
    return texts


async def _choices(pool: Any, viewer: Viewer) -> dict[str, Any]:
    jobs = await list_jobs(pool, viewer.actor, limit=CHOICES, after=None)
    monitors = await list_monitors(pool, viewer.actor, limit=CHOICES, after=None)
    return {"job_choices": [{"id": str(j["id"]), "name": j["name"]} for j in jobs],
            "monitor_choices": [{"id": str(m["id"]), "name": m["name"]} for m in monitors]}


async def _page(request: Request[Any, Any, Any], viewer: Viewer, cursor: str | None = None, *,
                status: int = 200, values: dict[str, Any] | None = None,
                errors: dict[str, str] | None = None, detail: str = "") -> Template:
    pool = request.app.state.pool
    rows = await list_windows(pool, viewer.actor.team_id, limit=PAGE_SIZE + 1,
                              after=decode_cursor(cursor))
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    next_cursor = encode_cursor(rows[-1]["created_at"], rows[-1]["id"]) if more else None
    choices = await _choices(pool, viewer)
    names = {c["id"]: c["name"] for c in [*choices["job_choices"],
                                           *choices["monitor_choices"]]}
    return page(request, viewer, "maintenance.html", "Maintenance", section="maintenance",
                status_code=status, windows=rows, next_cursor=next_cursor, cursor=cursor,
                names=names, values=values or {"suppress": "alerts", "jobs": [],
                                               "monitors": []},
                errors=errors or {}, detail=detail, suppress=SUPPRESS,
                max_comment=MAX_COMMENT, window=None, **choices)


@get("/ui/maintenance", name="maintenance")
async def maintenance(request: Request[Any, Any, Any], viewer: ViewerDep,
                      cursor: FromQuery[str | None] = None) -> Template:
    return await _page(request, viewer, cursor)


@post("/ui/maintenance", name="maintenance_create")
async def maintenance_create(request: Request[Any, Any, Any], viewer: ViewerDep,
                             pool: PoolDep) -> Response[Any]:
    form = await checked_form(request, viewer)
    try:
        await create_window(pool, viewer.actor, parse(form), request.app.state.clock.now())
    except InvalidInput as exc:
        return await _page(request, viewer, status=422, values=_texts(form),
                           errors=field_errors(exc, parse_tags(str(form.get("tags") or ""))),
                           detail=exc.detail)
    return redirect_with(request, viewer, "/ui/maintenance", "Maintenance window created.")


async def _edit_page(request: Request[Any, Any, Any], viewer: Viewer, row: dict[str, Any],
                     values: dict[str, Any], *, errors: dict[str, str] | None = None,
                     detail: str = "", status: int = 200) -> Template:
    return page(request, viewer, "maintenance_form.html", "Edit maintenance window",
                section="maintenance", status_code=status, window=row, values=values,
                errors=errors or {}, detail=detail, suppress=SUPPRESS, max_comment=MAX_COMMENT,
                **await _choices(request.app.state.pool, viewer))


@get("/ui/maintenance/{window_id:uuid}/edit", name="maintenance_edit")
async def maintenance_edit(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                           window_id: FromPath[uuid.UUID]) -> Template:
    row = await get_window(pool, viewer.actor.team_id, window_id)
    writable(viewer)
    return await _edit_page(request, viewer, row, values_of(row))


@post("/ui/maintenance/{window_id:uuid}/edit", name="maintenance_save")
async def maintenance_save(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                           window_id: FromPath[uuid.UUID]) -> Response[Any]:
    """Save the edit form (``PATCH /v1/maintenance/{id}`` with the form's ``version``)."""
    form = await checked_form(request, viewer)
    row = await get_window(pool, viewer.actor.team_id, window_id)
    version = str(form.get("version") or "")
    try:
        await update_window(pool, viewer.actor, window_id, parse(form),
                            request.app.state.clock.now(),
                            int(version) if version.isdigit() else None)
    except InvalidInput as exc:
        return await _edit_page(request, viewer, row, _texts(form), status=422,
                                errors=field_errors(exc), detail=exc.detail)
    except ConcurrencyConflict as exc:
        fresh = await get_window(pool, viewer.actor.team_id, window_id)
        return await _edit_page(request, viewer, fresh, {
            **_texts(form), "version": str(fresh["version"])}, status=409, detail=(
                f"{exc.detail}: someone saved this window while you edited it. Your changes "
                "are below; saving again replaces theirs."))
    except Conflict as exc:
        return await _edit_page(request, viewer, row, _texts(form), status=409,
                                detail=exc.detail)
    return redirect_with(request, viewer, "/ui/maintenance", "Maintenance window saved.")


@post("/ui/maintenance/{window_id:uuid}/end", name="maintenance_end")
async def maintenance_end(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                          window_id: FromPath[uuid.UUID]) -> Response[Any]:
    """End the window now: it stays listed (and in the log), no longer in effect."""
    await checked_form(request, viewer)
    await end_window(pool, viewer.actor, window_id, request.app.state.clock.now())
    return redirect_with(request, viewer, "/ui/maintenance",
                         "Maintenance window ended: alerts and runs it held back go on.")


ROUTES = [maintenance, maintenance_create, maintenance_edit, maintenance_save, maintenance_end]
