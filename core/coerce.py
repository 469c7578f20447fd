"""Values read back from event fields and rows: UTC instants and uuids.

A leaf module (imports nothing of cronledger): the folds of every stream and the read models
decode event payloads with it, so that neither has to import the other.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, overload


@overload
def instant(value: str | datetime) -> datetime: ...
@overload
def instant(value: None) -> None: ...
@overload
def instant(value: Any) -> datetime | None: ...


def instant(value: Any) -> datetime | None:
    """A UTC datetime from an event field (RFC 3339 text in ``data``, or already a datetime);
    ``None`` for ``None``. A naive value is read as UTC, an aware one converted to UTC."""
    if value is None:
        return None
    t = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    if t.tzinfo is None:
        return t.replace(tzinfo=UTC)  # the log only holds UTC instants
    return t.astimezone(UTC) if t.utcoffset() else t


def uuid_of(value: Any) -> uuid.UUID | None:
    """A uuid from an event field (text in ``data``)."""
    if value is None or isinstance(value, uuid.UUID):
        return value
    return uuid.UUID(value)
