"""Bodies of ``/v1/api-keys``: the key itself only in the create response."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from msgspec import Meta, Struct

from api.schemas.common import page_of
from core import apikeys

Scope = Literal[apikeys.SCOPES]  # type: ignore[valid-type]  # Literal of a runtime tuple
KeyName = Annotated[str, Meta(max_length=apikeys.MAX_KEY_NAME)]


class ApiKeyCreate(Struct, forbid_unknown_fields=True):
    scope: Scope = apikeys.DEFAULT_SCOPE
    name: KeyName = ""


class ApiKey(Struct):
    id: uuid.UUID
    name: str
    prefix: str
    scope: str
    created_at: datetime
    key: str | None = None


ApiKeyList = page_of(ApiKey, "ApiKeyList")
