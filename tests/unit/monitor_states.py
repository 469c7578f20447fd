"""A monitor's typed state for the rules' unit tests: :class:`core.monitors.state.MonitorState`
with defaults (a new monitor of a 1 h period, 5 min grace, no keywords nor bounds)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from core.monitors.state import MonitorState

CREATED = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)


def monitor_state(**fields: Any) -> MonitorState:
    """A monitor's state: the defaults, then ``fields``."""
    defaults: dict[str, Any] = {
        "id": uuid.UUID(int=0), "team_id": uuid.UUID(int=0), "name": "backup",
        "schedule": "1h", "timezone": "UTC", "period_seconds": 3600.0, "grace_seconds": 300,
        "methods": "any", "manual_resume": False, "channels": [], "realert_every": None,
        "slug": None, "tags": [], "schedule_text": None, "min_duration": None,
        "max_duration": None, "start_keywords": [], "success_keywords": [],
        "failure_keywords": [], "alert_after_failures": 1, "recover_after_successes": 1,
        "depends_on": [], "ping_token_hash": None, "status": "new", "last_ping_at": None,
        "last_start_at": None, "last_start_rid": None, "last_duration_ms": None,
        "created_at": CREATED, "updated_at": CREATED, "broken_at": None,
        "broken_reason": None, "version": 1}
    return MonitorState(**{**defaults, **fields})
