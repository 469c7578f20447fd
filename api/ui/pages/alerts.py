"""Alerts: the team's alerts, newest first (of one job or monitor with ``?job=`` /
``?monitor=``, linked from their pages), and one alert explained.

The list is :func:`core.alerts.queries.list_alerts` and the explanation
:func:`core.alerts.explain.explain_alert`, the reads behind ``GET /v1/alerts`` and
``GET /v1/alerts/{id}/explain`` (docs/notifications.md, *Alerts and why*); this module only
names what they are about and lays them out.
"""

from __future__ import annotations

import uuid
from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath, FromQuery
from litestar.response import Template

from api.deps import PoolDep
from api.pagination import decode_cursor, encode_cursor
from api.ui.auth import ViewerDep, checked_form
from api.ui.channelform import named_channels
from api.ui.flash import redirect_with
from api.ui.render import page
from core.alerts.explain import explain_alert
from core.alerts.queries import list_alerts, subject_names
from core.errors import InvalidInput, invalid
from core.notifications.dependencies import PROBLEM
from core.statuspages.commands import set_note
from core.statuspages.queries import get_note

PAGE_SIZE = 50  # alerts per page


def _uuid(field: str, value: str | None) -> uuid.UUID | None:
    """``?job=`` / ``?monitor=``: an id, ``None`` when blank; anything else is a 422 naming
    the parameter (as ``GET /v1/alerts`` answers)."""
    if not (value or "").strip():
        return None
    try:
        return uuid.UUID(str(value).strip())
    except ValueError:
        raise invalid(field, "must be the id of a job or monitor (a UUID)") from None


def _seconds(ms: Any) -> str:
    return f"{ms / 1000:.1f} s" if isinstance(ms, int | float) else ""


def around_line(item: dict[str, Any]) -> str:
    """One line of what happened up to an alert (an item of the explanation's ``around``): a
    ping and what the rules made of it, a status change and its reason, an edit and the
    fields it changed, or a job's run."""
    data: dict[str, Any] = item["data"] if isinstance(item.get("data"), dict) else {}
    kind = str(item.get("kind"))
    if kind == "run":
        parts = [str(item.get("status")), f"attempt {item.get('attempt')}"]
        if item.get("response_status") is not None:
            parts.append(f"HTTP {item['response_status']}")
        parts += [str(item[k]) for k in ("error_class", "reason") if item.get(k)]
        return ", ".join(parts)
    if kind == "monitor.pinged":
        text = f"ping: {data.get('kind')}"
        if data.get("requested") not in (None, data.get("kind")):
            text += f" (sent as {data['requested']})"
        if data.get("exit_status") is not None:
            text += f", exit status {data['exit_status']}"
        if data.get("duration_ms") is not None:
            text += f", ran {_seconds(data['duration_ms'])}"
        return text
    if kind in ("monitor.up", "monitor.late", "monitor.down"):
        text = f"{kind.split('.')[1]} (was {data.get('previous_status')})"
        return text + (f": {str(data['reason']).replace('_', ' ')}" if data.get("reason")
                       else "")
    if kind == "monitor.updated":
        return "edited: " + ", ".join(sorted((data.get("changes") or {}).keys()))
    return kind.split(".", 1)[-1].replace("_", " ")


@get("/ui/alerts", name="alerts")
async def alerts(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                 job: FromQuery[str | None] = None, monitor: FromQuery[str | None] = None,
                 cursor: FromQuery[str | None] = None) -> Template:
    """The team's alerts, newest first, :data:`PAGE_SIZE` a page, of one job or monitor."""
    job_id, monitor_id = _uuid("job", job), _uuid("monitor", monitor)
    rows = await list_alerts(pool, viewer.actor, limit=PAGE_SIZE + 1,
                             before=decode_cursor(cursor), monitor=monitor_id, job=job_id)
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    of: list[dict[str, Any]] = [{"subject_type": kind, "subject_id": sid}
          for kind, sid in (("job", job_id), ("monitor", monitor_id)) if sid is not None]
    names = await subject_names(pool, viewer.actor, [*rows, *of])
    filtered = [{"type": o["subject_type"], "id": o["subject_id"],
                 "subject": names.get((o["subject_type"], o["subject_id"]))} for o in of]
    query = "".join(f"&{f['type']}={f['id']}" for f in filtered)
    return page(request, viewer, "alerts.html", "Alerts", section="alerts", alerts=rows,
                names=names, filtered=filtered, query=query, paged=cursor is not None,
                next_cursor=encode_cursor(rows[-1]["created_at"], rows[-1]["id"])
                if more else None)


@get("/ui/alerts/{alert_id:uuid}", name="alert")
async def alert(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                alert_id: FromPath[uuid.UUID]) -> Template:
    """One alert and why it fired: the content of ``GET /v1/alerts/{id}/explain``."""
    why = await explain_alert(pool, viewer.actor, alert_id)
    record = why["alert"]
    names = await subject_names(pool, viewer.actor, [record])
    subject = names.get((record["subject_type"], record["subject_id"]))
    definition = why["definition"] or {}
    channels = await named_channels(pool, viewer.actor, definition.get("channels") or [])
    about = subject.name if subject else f"a {record['subject_type']} no longer known"
    title = record["title"] or f"{record['event']} of {about}"
    around = [{**item, "line": around_line(item)} for item in why["around"]]
    opens = record["event"] in PROBLEM.get(record["subject_type"], ())
    note = await get_note(pool, viewer.actor.team_id, alert_id) if opens else None
    return page(request, viewer, "alert.html", title, section="alerts", why=why,
                alert=record, subject=subject, channels=channels, around=around,
                opens_incident=opens, note=note)


@post("/ui/alerts/{alert_id:uuid}/note", name="alert_note")
async def alert_note(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                     alert_id: FromPath[uuid.UUID]) -> Response[Any]:
    """Write the note shown with the alert's incident on status pages (``PUT
    /v1/alerts/{id}/note``; a refused note comes back as the notice)."""
    form = await checked_form(request, viewer)
    try:
        await set_note(pool, viewer.actor, alert_id, str(form.get("note", "")),
                       request.app.state.clock.now())
    except InvalidInput as exc:
        return redirect_with(request, viewer, f"/ui/alerts/{alert_id}", exc.detail,
                             level="error")
    return redirect_with(request, viewer, f"/ui/alerts/{alert_id}",
                         "Note saved: status pages show it with this incident.")


ROUTES = [alerts, alert, alert_note]
