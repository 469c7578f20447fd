"""Incidents of a status page, read from the alerts the rules recorded (core/alerts/).

One rule, pure: for each job or monitor, in time order, an alert of a problem event
(:data:`core.notifications.dependencies.PROBLEM`: a job's ``failed`` / ``still_failing``, a
monitor's ``down`` / ``still_down``) opens an incident when none is open, and a recovery
(:data:`core.notifications.dependencies.RECOVERY`: ``recovered``, ``up``) resolves the open
one. The incident's note is the last one a person wrote on its problem alerts
(:func:`core.statuspages.commands.set_note`). Alerts are only recorded for jobs and monitors
with channels, so a component without any has no incidents.

A page reads the rule's result from ``status_page_incidents`` (core/sql/status_pages.sql), which
pairs the alerts in SQL and returns only the incidents shown;
tests/integration/test_status_page_incidents.py compares it with :func:`incidents` on random
alerts.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.notifications.dependencies import PROBLEM, RECOVERY

# Every alert event the rule reads, for the statement that fetches them.
EVENTS = sorted({e for events in (*PROBLEM.values(), *RECOVERY.values()) for e in events})
# The problems and recoveries as 'kind:event', for the statement that pairs them by this rule
# in SQL (core/sql/status_pages.sql: status_page_incidents; the page reads only its result).
PROBLEMS = sorted(f"{kind}:{e}" for kind, events in PROBLEM.items() for e in events)
RECOVERIES = sorted(f"{kind}:{e}" for kind, events in RECOVERY.items() for e in events)


@dataclass(frozen=True, slots=True)
class Incident:
    """One incident: the alert that opened it (``alert_id``, never shown to visitors), the
    component (``subject_type``, ``subject_id``), when it started and was resolved (UTC;
    ``None``: still open), and the note on it (``None``: none)."""

    alert_id: uuid.UUID
    subject_type: str
    subject_id: uuid.UUID
    started_at: datetime
    resolved_at: datetime | None
    note: str | None

    @property
    def open(self) -> bool:
        return self.resolved_at is None


def incidents(alerts: Iterable[Mapping[str, Any]]) -> list[Incident]:
    """The incidents of ``alerts`` (rows ``{"id", "subject_type", "subject_id", "event",
    "created_at", "note"}``, oldest first), newest first. A recovery with no open incident
    (its problem is older than the rows read) is ignored."""
    # per subject, the open incident as [alert id, kind, started_at, note]: a list, not an
    # Incident replaced at each alert (a page of 100 components reads ~900 alerts a render)
    current: dict[uuid.UUID, list[Any]] = {}
    done: list[Incident] = []
    for alert in alerts:
        kind, subject, event = alert["subject_type"], alert["subject_id"], alert["event"]
        if event in PROBLEM.get(kind, ()):
            found = current.get(subject)
            if found is None:
                current[subject] = [alert["id"], kind, alert["created_at"],
                                    alert["note"] or None]
            elif alert["note"]:
                found[3] = alert["note"]
        elif event in RECOVERY.get(kind, ()) and subject in current:
            alert_id, kind, started, note = current.pop(subject)
            done.append(Incident(alert_id, kind, subject, started, alert["created_at"], note))
    every = done + [Incident(a, k, subject, started, None, note)
                    for subject, (a, k, started, note) in current.items()]
    return sorted(every, key=lambda i: (i.started_at, i.alert_id.bytes), reverse=True)
