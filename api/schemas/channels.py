"""Bodies of ``/v1/channels`` and ``/v1/notifications``."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from api.schemas.common import URL_DOC, URL_FORMAT, page_of
from core import secrets
from core.channels import definition as chandef
from core.durations import NOT_BLANK_PATTERN

ChannelName = Annotated[str, Meta(min_length=1, max_length=chandef.MAX_NAME,
                                  extra_json_schema={"pattern": NOT_BLANK_PATTERN})]
Kind = Literal[chandef.KINDS]  # type: ignore[valid-type]  # Literal of a runtime tuple
ChannelUrl = Annotated[str, Meta(min_length=1, max_length=chandef.MAX_URL,
                                 examples=["https://example.com/hook"], description=URL_DOC,
                                 extra_json_schema={"format": URL_FORMAT})]
WebhookSecret = Annotated[str, Meta(min_length=chandef.MIN_WEBHOOK_SECRET,
                                    max_length=chandef.MAX_WEBHOOK_SECRET)]
ChatId = Annotated[str, Meta(pattern=f"^({chandef.CHAT_ID_PATTERN})$")]
ChatNumber = Annotated[int, Meta(ge=chandef.MIN_CHAT_ID, le=chandef.MAX_CHAT_ID)]
SecretName = Annotated[str, Meta(pattern=f"^{secrets.NAME_PATTERN}$",
                                 description="the name of a team secret")]
Email = Annotated[str, Meta(description="an e-mail address",
                            extra_json_schema={"pattern": chandef.EMAIL_PATTERN})]
Recipients = Annotated[list[Email], Meta(min_length=1, max_length=chandef.MAX_RECIPIENTS)]


def _or_null(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


# The server's own reading of ``smtp`` (core.channels.definition, _normalize_smtp), stated for
# the document; the body is decoded as an object and checked there, every problem reported.
Smtp = Annotated[dict[str, Any], Meta(
    description="the SMTP server to send through (absent: the server's own settings); "
                "security \"\" or null means starttls, port null its default port",
    extra_json_schema={
        "required": ["host"], "additionalProperties": False,
        "properties": {
            "host": {"type": "string", "pattern": chandef.HOST_PATTERN},
            "port": _or_null({"type": "integer", "minimum": 1, "maximum": 65535}),
            "security": _or_null({"enum": [*chandef.SMTP_SECURITIES, ""]}),
            "username": _or_null({"type": "string", "minLength": 1,
                                  "maxLength": chandef.MAX_SMTP_USERNAME}),
            "password_secret": _or_null({"type": "string",
                                         "pattern": f"^{secrets.NAME_PATTERN}$"}),
            "from": _or_null({"type": "string", "pattern": chandef.EMAIL_PATTERN}),
        }})]


class ChannelCreate(Struct, forbid_unknown_fields=True):
    """Body of ``POST /v1/channels``: ``name``, ``kind`` and the kind's own fields
    (checked by :func:`core.channels.definition.normalize_channel`)."""

    name: ChannelName
    kind: Kind
    url: ChannelUrl | None = None
    signing_secret: WebhookSecret | None = None
    chat_id: ChatNumber | ChatId | None = None
    token_secret: SecretName | None = None
    to: Recipients | Email | None = None
    smtp: Smtp | None = None


class ChannelPatch(Struct, forbid_unknown_fields=True):
    """Body of ``PATCH /v1/channels/{id}``: given fields replace the stored ones."""

    name: ChannelName | UnsetType = UNSET
    kind: Kind | UnsetType = UNSET
    url: ChannelUrl | UnsetType = UNSET
    signing_secret: WebhookSecret | UnsetType = UNSET
    chat_id: ChatNumber | ChatId | UnsetType = UNSET
    token_secret: SecretName | UnsetType = UNSET
    to: Recipients | Email | UnsetType = UNSET
    smtp: Smtp | None | UnsetType = UNSET
    version: int | UnsetType = UNSET


class Channel(Struct, omit_defaults=True):
    """A channel as shown: URLs redacted to scheme and host, secrets never shown (except a
    generated webhook ``signing_secret``, once, in the create response)."""

    id: uuid.UUID
    name: str
    kind: str
    version: int
    created_at: datetime
    updated_at: datetime
    url: str | None = None
    signing_secret: str | None = None
    chat_id: str | None = None
    token_secret: str | None = None
    to: list[str] | None = None
    smtp: dict[str, Any] | None = None


class ChannelTestResult(Struct):
    """What the provider answered to the test message."""

    ok: bool
    status: int | None
    answer: str | None
    error_class: str | None
    error: str | None
    duration_ms: int


class Notification(Struct):
    """One outbox row: an alert for one channel and its delivery state."""

    id: uuid.UUID
    channel_id: uuid.UUID
    subject_type: str
    subject_id: uuid.UUID
    event: str
    status: str
    attempt: int
    max_attempts: int
    available_at: datetime | None
    last_error_class: str | None
    last_error: str | None
    last_response_status: int | None
    last_response_body: str | None
    created_at: datetime
    sent_at: datetime | None
    finished_at: datetime | None
    message: dict[str, Any]


ChannelPage = page_of(Channel)
NotificationPage = page_of(Notification)
