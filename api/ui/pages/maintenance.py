"""Maintenance windows: the list (when, what they cover by name, what they hold back), a form
that makes one (one-off or recurring), a window's edit form and **End** (the API's ``DELETE``:
a window is ended, never erased; docs/ledger.md, *Maintenance windows*).

The same commands as ``/v1/maintenance`` (:mod:`core.maintenance.commands`); jobs and monitors
are picked by name: the first :data:`CHOICES` of each are listed, a team with more gets a
**More jobs, by name** (**More monitors, by name**) field, a name per line, and a window's own
jobs and monitors are always listed, ticked, so that saving its form keeps them. Instants in
the form are UTC (``datetime-local`` fields, or RFC 3339 with an offset).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath, FromQuery
from litestar.response import Template

from api.deps import PoolDep, is_digits
from api.pagination import decode_cursor, encode_cursor
from api.ui.auth import Viewer, ViewerDep, checked_form, form_version, writable
from api.ui.flash import redirect_with
from api.ui.formerrors import field_errors
from api.ui.render import page
from api.ui.tagfield import parse_tags, tags_text
from core.dependencies import parent_names, parents_by_name
from core.errors import ConcurrencyConflict, Conflict, FieldError, InvalidInput
from core.jobs.queries import job_choices
from core.maintenance.commands import create_window, end_window, update_window
from core.maintenance.definition import MAX_COMMENT, SUPPRESS
from core.maintenance.queries import get_window, list_windows
from core.monitors.queries import monitor_choices

PAGE_SIZE = 50
CHOICES = 200  # jobs and monitors listed by name (others: named in a field, or by tag)
KINDS = ("job", "monitor")  # what a window names: its form's fields "jobs" and "monitors"


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
                       "duration_seconds": int(duration) if is_digits(duration) else duration,
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
    texts: dict[str, Any] = {k: str(form.get(k) or "") for k in (
        "from", "to", "schedule", "timezone", "duration_seconds", "tags", "suppress",
        "comment", "version")}
    texts.update({"jobs": _ids(form.get("jobs")), "monitors": _ids(form.get("monitors")),
                  "more_jobs": str(form.get("more_jobs") or ""),
                  "more_monitors": str(form.get("more_monitors") or "")})
    return texts


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Choices:
    """What a window form's job (or monitor) picker offers: ``items`` (``{"id", "name"}``;
    ``name`` ``None``: deleted or unknown) and whether the team has more than it lists
    (``more``: the form then takes others by name, :func:`more_named`)."""

    items: list[dict[str, Any]]
    more: bool


async def _choices(pool: Any, viewer: Viewer, values: dict[str, Any]) -> dict[str, Choices]:
    """``{"job_choices", "monitor_choices"}``: the team's first :data:`CHOICES` live jobs and
    monitors (creation order) and, after them, each id of ``values["jobs"]`` /
    ``values["monitors"]`` that is not among them, named (deleted ones too)."""
    rows = {"job": await job_choices(pool, viewer.actor, limit=CHOICES + 1),
            "monitor": await monitor_choices(pool, viewer.actor, limit=CHOICES + 1)}
    listed = {kind: [{"id": str(r["id"]), "name": r["name"]} for r in rows[kind][:CHOICES]]
              for kind in KINDS}
    rest = {kind: [i for i in dict.fromkeys(values.get(kind + "s") or [])
                   if i not in {c["id"] for c in listed[kind]}] for kind in KINDS}
    named = await parent_names(pool, viewer.actor.team_id,
                               [uuid.UUID(i) for kind in KINDS for i in rest[kind]
                                if _is_uuid(i)])
    out = {}
    for kind in KINDS:
        for i in rest[kind]:
            row = named.get(uuid.UUID(i)) if _is_uuid(i) else None
            listed[kind].append({"id": i, "name": row["name"] if row is not None
                                 and row["kind"] == kind else None})
        out[f"{kind}_choices"] = Choices(listed[kind], len(rows[kind]) > CHOICES)
    return out


async def more_named(pool: Any, viewer: Viewer, form: dict[str, Any]
                     ) -> tuple[dict[str, list[str]], list[FieldError]]:
    """The jobs and monitors a form names beyond the :data:`CHOICES` it lists (the fields
    ``more_jobs`` and ``more_monitors``: names, one per line): ``{"jobs": [id], "monitors":
    [id]}``, and a problem (at ``jobs`` or ``monitors``) for each name that is no live job
    (monitor) of the team."""
    names = {kind: [n.strip() for n in str(form.get(f"more_{kind}s") or "").splitlines()
                    if n.strip()] for kind in KINDS}
    rows = await parents_by_name(pool, viewer.actor.team_id,
                                 [n for kind in KINDS for n in names[kind]])
    found = {(r["kind"], r["name"]): str(r["id"]) for r in rows}
    ids = {f"{kind}s": [found[kind, n] for n in names[kind] if (kind, n) in found]
           for kind in KINDS}
    problems = [FieldError(f"{kind}s", f"no {kind} named {n!r} in this team")
                for kind in KINDS for n in names[kind] if (kind, n) not in found]
    return ids, problems


async def _parse(pool: Any, viewer: Viewer, form: dict[str, Any]) -> dict[str, Any]:
    """:func:`parse` with the jobs and monitors named beyond the lists (:func:`more_named`).

    Raises:
        InvalidInput: a name that is no live job or monitor of the team (at the field).
    """
    fields = parse(form)
    named, problems = await more_named(pool, viewer, form)
    if problems:
        raise InvalidInput(f"{problems[0].field}: {problems[0].message}", problems)
    for field, ids in named.items():
        fields[field] = list(dict.fromkeys([*fields[field], *ids]))
    return fields


async def _page(request: Request[Any, Any, Any], viewer: Viewer, cursor: str | None = None, *,
                status: int = 200, values: dict[str, Any] | None = None,
                errors: dict[str, str] | None = None, detail: str = "") -> Template:
    pool = request.app.state.pool
    rows = await list_windows(pool, viewer.actor.team_id, limit=PAGE_SIZE + 1,
                              after=decode_cursor(cursor))
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    next_cursor = encode_cursor(rows[-1]["created_at"], rows[-1]["id"]) if more else None
    values = values or {"suppress": "alerts", "jobs": [], "monitors": []}
    choices = await _choices(pool, viewer, values)
    covered = await parent_names(pool, viewer.actor.team_id,
                                 [i for w in rows for i in [*w["jobs"], *w["monitors"]]])
    names = {str(i): row["name"] for i, row in covered.items()}
    return page(request, viewer, "maintenance.html", "Maintenance", section="maintenance",
                status_code=status, windows=rows, next_cursor=next_cursor, cursor=cursor,
                names=names, values=values,
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
        await create_window(pool, viewer.actor, await _parse(pool, viewer, form),
                            request.app.state.clock.now())
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
                **await _choices(request.app.state.pool, viewer, values))


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
    try:
        await update_window(pool, viewer.actor, window_id, await _parse(pool, viewer, form),
                            request.app.state.clock.now(),
                            form_version(form))
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
