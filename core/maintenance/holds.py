"""Which alerts a maintenance window holds (docs/ledger.md): the one place where an alert is held.

The outbox (:func:`core.notifications.outbox.enqueue`) is handed :func:`held_alerts` by the
command that queues an alert, so that notifications do not depend on maintenance; the rows of
held alerts are written ``suppressed`` (never sent, event ``notification.suppressed``), and
:mod:`core.maintenance.release` sends the one alert a closing window owes a monitor still down.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

import psycopg

from core.maintenance.queries import live_windows, subject_tags
from core.maintenance.windows import in_effect, until_among
from core.notifications.outbox import Alert


async def held_alerts(conn: psycopg.AsyncConnection, alerts: Sequence[Alert],
                      now: datetime) -> dict[uuid.UUID, datetime]:
    """The job and monitor subjects of ``alerts`` that a ``suppress: "alerts"`` maintenance
    window holds at ``now``, with the end of their maintenance (UTC). Reads the live windows
    and the subjects' tags in the caller's transaction."""
    subjects = [a for a in alerts if a.subject_type in ("job", "monitor")]
    if not subjects:
        return {}
    # Each window's occurrence at now once, not once per subject.
    current = in_effect(await live_windows(conn, [a.team_id for a in subjects], now, "alerts"),
                        now)
    if not current:
        return {}
    held: dict[uuid.UUID, datetime] = {}
    for kind in ("job", "monitor"):
        ids = [a.subject_id for a in subjects if a.subject_type == kind]
        tags = await subject_tags(conn, kind, ids) if ids else {}
        for a in subjects:
            if a.subject_type != kind:
                continue
            until = until_among([(w, end) for w, end in current if w.team_id == a.team_id],
                                kind, a.subject_id, tags.get(a.subject_id, ()))
            if until is not None:
                held[a.subject_id] = until
    return held
