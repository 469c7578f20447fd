"""Bodies of ``/v1/secrets``: values are write-only, never shown."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from msgspec import Meta, Struct

from api.schemas.common import page_of
from core import secrets

SecretValue = Annotated[str, Meta(min_length=1, max_length=secrets.MAX_VALUE_BYTES,
                                  description=f"at most {secrets.MAX_VALUE_BYTES} bytes as UTF-8")]


class SecretPut(Struct, forbid_unknown_fields=True):
    """Body of ``PUT /v1/secrets/{name}``: the value, write-only."""

    value: SecretValue


class Secret(Struct):
    """A secret as listed: never its value."""

    name: str
    created_at: datetime
    updated_at: datetime


SecretPage = page_of(Secret)
