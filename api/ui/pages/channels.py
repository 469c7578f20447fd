"""Channels: the list, the create form for every kind (webhook, Slack, Discord, Telegram,
e-mail), a channel's edit form, **Delete** and **Send test**.

The same commands as ``/v1/channels`` (``core/channels/``); a test is
:func:`core.notifications.probe.send_test`, exactly what ``POST /v1/channels/{id}/test`` does,
and its outcome is the next page's notice. The form's shapes are :mod:`api.ui.channelform`'s.
"""

from __future__ import annotations

import uuid
from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath, FromQuery
from litestar.response import Template

from api.deps import NotifyDep, PoolDep
from api.pagination import decode_cursor, encode_cursor
from api.ui import channelform
from api.ui.auth import Viewer, ViewerDep, checked_form, form_version, writable
from api.ui.flash import redirect_with
from api.ui.formerrors import conflict_errors
from api.ui.render import page
from core.channels.commands import create_channel, delete_channel, update_channel
from core.channels.definition import KINDS, MAX_NAME, SMTP_DEFAULT_PORTS
from core.channels.queries import channel_view, get_channel, list_channels
from core.errors import ConcurrencyConflict, Conflict, InvalidInput
from core.notifications.probe import send_test
from core.secrets import list_secrets

PAGE_SIZE = 50
SECRET_NAMES = 200  # team secret names offered for a Telegram token or an SMTP password
KIND_LABELS = {"webhook": "Webhook", "slack": "Slack", "discord": "Discord",
               "telegram": "Telegram", "email": "E-mail"}


async def _secret_names(request: Request[Any, Any, Any], viewer: Viewer) -> list[str]:
    rows = await list_secrets(request.app.state.pool, viewer.actor, limit=SECRET_NAMES,
                              after=None)
    return [r["name"] for r in rows]


async def _form_context(request: Request[Any, Any, Any], viewer: Viewer,
                        values: dict[str, str], errors: dict[str, str],
                        detail: str) -> dict[str, Any]:
    return {"values": values, "errors": errors, "detail": detail, "kinds": KINDS,
            "kind_labels": KIND_LABELS, "max_name": MAX_NAME, "securities": SMTP_DEFAULT_PORTS,
            "secret_names": await _secret_names(request, viewer)}


async def _page(request: Request[Any, Any, Any], viewer: Viewer, cursor: str | None = None,
                *, status: int = 200, values: dict[str, str] | None = None,
                errors: dict[str, str] | None = None, detail: str = "") -> Template:
    rows = await list_channels(request.app.state.pool, viewer.actor, limit=PAGE_SIZE + 1,
                               after=decode_cursor(cursor))
    more = len(rows) > PAGE_SIZE
    rows = [channel_view(r) for r in rows[:PAGE_SIZE]]
    next_cursor = encode_cursor(rows[-1]["created_at"], rows[-1]["id"]) if more else None
    context = await _form_context(request, viewer, values or {"kind": "webhook"}, errors or {},
                                  detail)
    return page(request, viewer, "channels.html", "Channels", section="channels",
                status_code=status, channels=rows, next_cursor=next_cursor, cursor=cursor,
                **context)


@get("/ui/channels", name="channels")
async def channels(request: Request[Any, Any, Any], viewer: ViewerDep,
                   cursor: FromQuery[str | None] = None) -> Template:
    return await _page(request, viewer, cursor)


@post("/ui/channels", name="channel_create")
async def channel_create(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                         notify: NotifyDep) -> Response[Any]:
    """Create a channel of the form's kind; back to the list (a generated webhook signing
    secret shown once), or the form again with the API's messages next to the fields."""
    form = await checked_form(request, viewer)
    kind = str(form.get("kind") or "")
    fields = channelform.parse(form, kind, editing=False)
    try:
        _, generated = await create_channel(pool, notify.sealer, viewer.actor, fields,
                                            request.app.state.clock.now())
    except InvalidInput as exc:
        return await _page(request, viewer, status=422, values=channelform.form_texts(form),
                           errors=channelform.errors_by_field(exc.errors), detail=exc.detail)
    except Conflict as exc:
        return await _page(request, viewer, status=409, values=channelform.form_texts(form),
                           errors=conflict_errors(exc), detail=exc.detail)
    return redirect_with(request, viewer, "/ui/channels",
                         f"Channel “{fields['name']}” created.", secret=generated,
                         secret_label="Webhook signing secret")


async def _edit_page(request: Request[Any, Any, Any], viewer: Viewer, channel: dict[str, Any],
                     values: dict[str, str], *, errors: dict[str, str] | None = None,
                     detail: str = "", status: int = 200) -> Template:
    context = await _form_context(request, viewer, {**values, "kind": channel["kind"]},
                                  errors or {}, detail)
    return page(request, viewer, "channel_form.html", f"Edit {channel['name']}",
                section="channels", status_code=status, channel=channel,
                version=values.get("version") or channel["version"], **context)


@get("/ui/channels/{channel_id:uuid}/edit", name="channel_edit")
async def channel_edit(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                       channel_id: FromPath[uuid.UUID]) -> Template:
    channel = channel_view(await get_channel(pool, viewer.actor, channel_id))
    writable(viewer)
    return await _edit_page(request, viewer, channel, channelform.values_of(channel))


@post("/ui/channels/{channel_id:uuid}/edit", name="channel_save")
async def channel_save(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                       notify: NotifyDep, channel_id: FromPath[uuid.UUID]) -> Response[Any]:
    """Save the edit form (``PATCH /v1/channels/{id}`` with the form's ``version``; the kind
    cannot change): back to the list, or the form again with the messages (422, 409)."""
    form = await checked_form(request, viewer)
    channel = channel_view(await get_channel(pool, viewer.actor, channel_id))
    fields = channelform.parse(form, channel["kind"], editing=True)
    texts = channelform.form_texts(form)
    try:
        await update_channel(pool, notify.sealer, viewer.actor, channel_id, fields,
                             request.app.state.clock.now(),
                             form_version(form))
    except InvalidInput as exc:
        return await _edit_page(request, viewer, channel, texts, status=422, detail=exc.detail,
                                errors=channelform.errors_by_field(exc.errors))
    except ConcurrencyConflict as exc:
        fresh = channel_view(await get_channel(pool, viewer.actor, channel_id))
        return await _edit_page(request, viewer, fresh, {**texts,
                                                         "version": str(fresh["version"])},
                                status=409, detail=f"{exc.detail}: someone saved this channel "
                                "while you edited it. Your changes are below; saving again "
                                "replaces theirs.")
    except Conflict as exc:
        return await _edit_page(request, viewer, channel, texts, status=409, detail=exc.detail,
                                errors=conflict_errors(exc))
    return redirect_with(request, viewer, "/ui/channels",
                         f"Channel “{fields['name']}” saved.")


@post("/ui/channels/{channel_id:uuid}/delete", name="channel_delete")
async def channel_delete(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                         channel_id: FromPath[uuid.UUID]) -> Response[Any]:
    """Delete a channel: its pending notifications are cancelled; jobs and monitors that list
    it skip it."""
    await checked_form(request, viewer)
    channel = await get_channel(pool, viewer.actor, channel_id)
    cancelled = await delete_channel(pool, viewer.actor, channel_id,
                                     request.app.state.clock.now())
    pending = f" {cancelled} pending alert(s) to it cancelled." if cancelled else ""
    return redirect_with(request, viewer, "/ui/channels",
                         f"Channel “{channel['name']}” deleted.{pending}")


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


ROUTES = [channels, channel_create, channel_edit, channel_save, channel_delete, channel_test]
