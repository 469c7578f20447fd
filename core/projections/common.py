"""Helpers shared by the read models: event field decoding and UTC time buckets."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any


def instant(value: Any) -> datetime | None:
    """A UTC datetime from an event field (RFC 3339 text in ``data``, or already a datetime)."""
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


def hour_start(t: datetime) -> datetime:
    """The UTC hour holding ``t``."""
    return t.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def day_start(t: datetime) -> datetime:
    """Midnight UTC of the day holding ``t``."""
    return t.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
