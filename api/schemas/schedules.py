"""Body of ``GET /v1/schedules/preview``."""

from __future__ import annotations

from datetime import datetime

from msgspec import Struct


class PreviewFire(Struct):
    at: datetime
    local: str
    dst: str | None


class Preview(Struct):
    schedule: str
    timezone: str
    description: str
    fires: list[PreviewFire]
