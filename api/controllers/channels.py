"""``/v1/channels`` (CRUD and test) and ``/v1/notifications`` (the outbox, read-only)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from litestar import Controller, delete, get, patch, post
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter
from litestar.status_codes import HTTP_200_OK, HTTP_204_NO_CONTENT
from msgspec import structs

from api.deps import ActorDep, ClockDep, KeysetCursor, Limit, NotifyDep, PoolDep
from api.pagination import DEFAULT_LIMIT, check_limit, decode_cursor, keyset, paginate
from api.schemas.channels import (
    Channel,
    ChannelCreate,
    ChannelPage,
    ChannelPatch,
    ChannelTestResult,
    Notification,
    NotificationPage,
)
from api.schemas.common import from_row, given_fields
from core import channels
from core.errors import invalid
from core.notifications.probe import send_test
from core.notifications.queries import STATUSES, get_notification, list_notifications


def channel_view(row: dict[str, Any]) -> Channel:
    return from_row(Channel, channels.channel_view(row))


class ChannelController(Controller):
    path = "/v1/channels"
    tags = ["channels"]

    @post("/", summary="Create a channel (a generated webhook signing secret is shown once)")
    async def create(self, data: JSONBody[ChannelCreate], actor: ActorDep, pool: PoolDep,
                     clock: ClockDep, notify: NotifyDep) -> Channel:
        channel_id, generated = await channels.create_channel(
            pool, notify.sealer, actor, structs.asdict(data), clock.now())
        view = channel_view(await channels.get_channel(pool, actor, channel_id))
        return structs.replace(view, signing_secret=generated) if generated else view

    @get("/", summary="List channels")
    async def list(self, actor: ActorDep, pool: PoolDep, limit: Limit = DEFAULT_LIMIT,
                   cursor: KeysetCursor = None) -> ChannelPage:
        rows = await channels.list_channels(pool, actor, limit=check_limit(limit),
                                            after=decode_cursor(cursor))
        return paginate(ChannelPage, rows, limit, keyset("created_at"), channel_view)

    @get("/{channel_id:uuid}", summary="Read a channel")
    async def read(self, channel_id: FromPath[uuid.UUID], actor: ActorDep,
                   pool: PoolDep) -> Channel:
        return channel_view(await channels.get_channel(pool, actor, channel_id))

    @patch("/{channel_id:uuid}", summary="Update a channel (partial; kind cannot change)")
    async def update(self, channel_id: FromPath[uuid.UUID], data: JSONBody[ChannelPatch],
                     actor: ActorDep, pool: PoolDep, clock: ClockDep,
                     notify: NotifyDep) -> Channel:
        fields = given_fields(data)
        version = fields.pop("version", None)
        if not fields:
            raise invalid("body", "give at least one field to change")
        await channels.update_channel(pool, notify.sealer, actor, channel_id, fields,
                                      clock.now(), version)
        return channel_view(await channels.get_channel(pool, actor, channel_id))

    @delete("/{channel_id:uuid}", status_code=HTTP_204_NO_CONTENT,
            summary="Delete a channel (its pending notifications are cancelled)")
    async def remove(self, channel_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                     clock: ClockDep) -> None:
        await channels.delete_channel(pool, actor, channel_id, clock.now())

    @post("/{channel_id:uuid}/test", status_code=HTTP_200_OK,
          summary="Send a test message now and report the provider's answer")
    async def test(self, channel_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                   clock: ClockDep, notify: NotifyDep) -> ChannelTestResult:
        outcome = await send_test(pool, notify.sealer, notify.secrets, notify.delivery, actor,
                                  channel_id, clock.now())
        return ChannelTestResult(**outcome)


class NotificationController(Controller):
    path = "/v1/notifications"
    tags = ["notifications"]

    @get("/", summary="Notifications (outbox rows), newest first")
    async def list(self, actor: ActorDep, pool: PoolDep, limit: Limit = DEFAULT_LIMIT,
                   cursor: KeysetCursor = None,
                   status: Annotated[str | None, QueryParameter(enum=STATUSES)] = None,
                   channel_id: FromQuery[uuid.UUID | None] = None) -> NotificationPage:
        rows = await list_notifications(pool, actor, limit=check_limit(limit),
                                        before=decode_cursor(cursor), status=status,
                                        channel_id=channel_id)
        return paginate(NotificationPage, rows, limit, keyset("created_at"),
                        lambda r: from_row(Notification, r))

    @get("/{notification_id:uuid}", summary="Read a notification")
    async def read(self, notification_id: FromPath[uuid.UUID], actor: ActorDep,
                   pool: PoolDep) -> Notification:
        return from_row(Notification, await get_notification(pool, actor, notification_id))
