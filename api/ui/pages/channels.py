"""Channels: the list, the create form and the **Send test** button.

The same commands as ``/v1/channels`` (``core/channels/``); a test is
:func:`core.notifications.probe.send_test`, exactly what ``POST /v1/channels/{id}/test`` does,
and its outcome is shown on the list page. The form covers the URL kinds (webhook, Slack,
Discord); Telegram and email channels are created through the API and listed here.
"""

from __future__ import annotations

import uuid
from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath, FromQuery
from litestar.response import Template

from api.deps import NotifyDep, PoolDep
from api.pagination import decode_cursor, encode_cursor
from api.ui.auth import Viewer, ViewerDep, checked_form
from api.ui.flash import redirect_with
from api.ui.render import page
from core.channels.commands import create_channel
from core.channels.definition import MAX_NAME
from core.channels.queries import channel_view, get_channel, list_channels
from core.errors import InvalidInput
from core.notifications.probe import send_test

PAGE_SIZE = 50
FORM_KINDS = ("webhook", "slack", "discord")


async def _page(request: Request[Any, Any, Any], viewer: Viewer, cursor: str | None = None,
                *, status: int = 200, **extra: Any) -> Template:
    rows = await list_channels(request.app.state.pool, viewer.actor, limit=PAGE_SIZE + 1,
                               after=decode_cursor(cursor))
    more = len(rows) > PAGE_SIZE
    rows = [channel_view(r) for r in rows[:PAGE_SIZE]]
    next_cursor = encode_cursor(rows[-1]["created_at"], rows[-1]["id"]) if more else None
    context = {"values": {"kind": "webhook"}, "errors": {}, "detail": "", **extra}
    return page(request, viewer, "channels.html", "Channels", section="channels",
                status_code=status, channels=rows, next_cursor=next_cursor, cursor=cursor,
                kinds=FORM_KINDS, max_name=MAX_NAME, **context)


@get("/ui/channels", name="channels")
async def channels(request: Request[Any, Any, Any], viewer: ViewerDep,
                   cursor: FromQuery[str | None] = None) -> Template:
    return await _page(request, viewer, cursor)


@post("/ui/channels", name="channel_create")
async def channel_create(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                         notify: NotifyDep) -> Response[Any]:
    form = await checked_form(request, viewer)
    kind = form.get("kind") if form.get("kind") in FORM_KINDS else "webhook"
    fields = {"name": form.get("name", ""), "kind": kind, "url": form.get("url", "")}
    try:
        channel_id, generated = await create_channel(pool, notify.sealer, viewer.actor, fields,
                                                     request.app.state.clock.now())
    except InvalidInput as exc:
        errors = {e.field.split(".")[0]: e.message for e in exc.errors}
        return await _page(request, viewer, status=422, values=form, errors=errors,
                           detail=exc.detail)
    return redirect_with(request, viewer, "/ui/channels",
                         f"Channel “{fields['name']}” created.", secret=generated,
                         secret_label="Webhook signing secret")


@post("/ui/channels/{channel_id:uuid}/test", name="channel_test")
async def channel_test(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                       notify: NotifyDep, channel_id: FromPath[uuid.UUID]) -> Response[Any]:
    """Send a test message; the provider's answer is the next page's notice (a reload does
    not send another)."""
    await checked_form(request, viewer)
    tested = await get_channel(pool, viewer.actor, channel_id)
    outcome = await send_test(pool, notify.sealer, notify.secrets, notify.delivery,
                              viewer.actor, channel_id, request.app.state.clock.now())
    return redirect_with(request, viewer, "/ui/channels", outcome_line(tested["name"], outcome),
                         level="ok" if outcome["ok"] else "error")


def outcome_line(name: str, outcome: dict[str, Any]) -> str:
    """One line of a test send's outcome (:func:`core.notifications.probe.send_test`): delivered
    or failed, the provider's status, the time taken, the error and the start of the answer."""
    parts = [f"Test message to “{name}”: {'delivered' if outcome['ok'] else 'failed'}"]
    if outcome.get("status") is not None:
        parts.append(f"status {outcome['status']}")
    if outcome.get("duration_ms") is not None:
        parts.append(f"in {outcome['duration_ms']:.0f} ms")
    if outcome.get("error"):
        parts.append(f"{outcome.get('error_class') or 'error'}: {outcome['error']}")
    if outcome.get("answer"):
        answer = str(outcome["answer"])
        parts.append(f"answer: {answer[:300]}{'…' if len(answer) > 300 else ''}")
    return ", ".join(parts[:2]) + ("; " + "; ".join(parts[2:]) if parts[2:] else "") + "."


ROUTES = [channels, channel_create, channel_test]
