"""Fixed instants for the unit tests (never the wall clock)."""

from __future__ import annotations

from datetime import UTC, datetime


def utc(text: str) -> datetime:
    """``"2026-12-01T10:00:00Z"`` (fractional seconds allowed) as an aware UTC datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
