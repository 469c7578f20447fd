"""Bodies of ``/v1/alerts``: an alert as recorded, a page of them, and an alert's
explanation (docs/notifications.md, *Alerts and why*)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from msgspec import Struct

from api.schemas.common import page_of


class AlertRecord(Struct):
    """An alert the rules raised for a job or monitor with channels: ``event`` (a monitor's
    ``down``, ``up``, ``still_down``; a job's ``failed``, ``still_failing``, ``recovered``,
    ``broken``), ``rule`` (what the rule said: its ``reason`` and details), ``held_until``
    (a maintenance window held it until then), ``notifications`` (outbox rows, one per
    channel); ``state``: ``sent``, ``suppressed`` (maintenance), ``held`` (a parent in
    ``depends_on`` is down: ``held_by`` names the parents) or ``released`` (the parents came
    back at ``released_at``; ``released_as`` is the alert sent then, ``null`` when the
    subject was back already; docs/notifications.md, *Dependencies*)."""

    id: uuid.UUID
    subject_type: str
    subject_id: uuid.UUID
    event: str
    title: str | None
    rule: dict[str, Any]
    held_until: datetime | None
    created_at: datetime
    notifications: int
    state: Literal["sent", "suppressed", "held", "released"] = "sent"
    held_by: list[uuid.UUID] | None = None
    released_at: datetime | None = None
    released_as: uuid.UUID | None = None


AlertRecordPage = page_of(AlertRecord)


class FiredRule(Struct):
    """The rule that fired: ``name`` (``monitor.down``, ``job.failed`` …), ``reason``
    (``overdue``, ``missed``, ``fail``, ``too_long``, ``alert_after_failures`` …), ``text``
    (why, in a sentence), ``data`` (what the rule recorded)."""

    name: str
    reason: str | None
    text: str
    data: dict[str, Any]


class ExpectedSlot(Struct):
    """The slot the alert is about: ``slot`` (UTC), ``local`` (the same instant in
    ``timezone``, the zone it was computed in), the grace applied and the deadline."""

    slot: datetime
    local: str | None
    timezone: str
    grace_seconds: int | None
    deadline: datetime | None


class Held(Struct):
    """Whether a maintenance window held the alert, and until when."""

    held: bool
    until: datetime | None


class Dependencies(Struct):
    """The parents the rules looked at, with their state at the alert (``considered``:
    ``{"id", "kind", "name", "status", "down"}``), the ones that held the alert
    (``held_by``), if any, and for an alert sent when its parents came back, the held alert
    it releases (``released_from``)."""

    considered: list[Any]
    held_by: Any | None
    released_from: uuid.UUID | None = None


class AlertExplanation(Struct):
    """``GET /v1/alerts/{id}/explain``: the alert, the rule that fired, the definition as it
    was then, the expected slot, the subject's events (a monitor's pings and flips) or runs (a
    job's) up to the alert, oldest first, and the maintenance and dependencies considered."""

    alert: AlertRecord
    rule: FiredRule
    definition: dict[str, Any] | None
    expected: ExpectedSlot | None
    around: list[dict[str, Any]]
    maintenance: Held
    dependencies: Dependencies
