"""Bodies of the history routes (docs/ledger.md): ``POST /v1/{jobs,monitors}/{id}/simulate``
(the what-if replay) and ``GET /v1/{jobs,monitors}/{id}/history`` (definition changes)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from api.schemas.common import (
    DependsOn,
    RepeatingSchedule,
    RunBound,
    Schedule,
    Zone,
    page_of,
)
from api.schemas.jobs import JobRulesPatch
from api.schemas.maintenance import Comment, Seconds, Suppress, WindowFrom, WindowTo
from api.schemas.monitors import Grace, Keywords, PingMethods, Threshold
from core.alerting import MAX_ALERT_AFTER
from core.replay.proposal import MAX_PROPOSED_WINDOWS, RECORDED
from core.replay.window import MAX_WINDOW

# The window's rules that JSON Schema cannot state (core/replay/window.py), in words for a
# generated client's author.
ReplayFrom = Annotated[str, Meta(
    description="the window's start (default: 30 days before `to`): before `to` (an empty "
                f"window is refused) and at most {MAX_WINDOW.days} days before it (422 naming "
                "`from` otherwise); an RFC 3339 instant with an offset, e.g. "
                "2026-11-30T00:00:00Z",
    extra_json_schema={"format": "date-time"})]
ReplayTo = Annotated[str, Meta(
    description="the window's end (default: now): not in the future, a replay covers recorded "
                "history (422 naming `to` otherwise); an RFC 3339 instant with an offset, e.g. "
                "2026-11-30T00:00:00Z",
    extra_json_schema={"format": "date-time"})]
AlertAfter = Annotated[int, Meta(ge=1, le=MAX_ALERT_AFTER)]
Recorded = Literal[RECORDED]  # type: ignore[valid-type]  # Literal of a runtime tuple


class ProposedWindow(Struct, forbid_unknown_fields=True):
    """A proposed maintenance window: a ``POST /v1/maintenance`` body without ``jobs``,
    ``monitors`` and ``tags`` (it covers the simulated job or monitor), validated by the same
    rules: one-off (``from``, ``to``) or recurring (``schedule``, ``duration_seconds``,
    ``timezone``); ``suppress`` ``alerts`` (the default) or ``runs``."""

    from_: WindowFrom | None = msgspec.field(default=None, name="from")
    to: WindowTo | None = None
    schedule: Schedule | None = None
    timezone: Zone | None = None
    duration_seconds: Seconds | None = None
    suppress: Suppress = "alerts"
    comment: Comment | None = None


ProposedWindows = Annotated[list[ProposedWindow], Meta(
    max_length=MAX_PROPOSED_WINDOWS,
    description="Proposed maintenance windows; given, they replace the recorded ones unless "
                "`recorded_maintenance` is `keep`")]
RecordedMaintenance = Annotated[Recorded, Meta(
    description="`keep` or `ignore` the maintenance windows recorded in the period (default: "
                "`keep`, or `ignore` when `maintenance` is given)")]


class MonitorChanges(Struct, forbid_unknown_fields=True):
    """A proposed monitor definition: the fields given replace the recorded ones."""

    schedule: RepeatingSchedule | UnsetType = UNSET
    timezone: Zone | UnsetType = UNSET
    grace_seconds: Grace | UnsetType = UNSET
    methods: PingMethods | UnsetType = UNSET
    min_duration: RunBound | UnsetType = UNSET
    max_duration: RunBound | UnsetType = UNSET
    start_keywords: Keywords | UnsetType = UNSET
    success_keywords: Keywords | UnsetType = UNSET
    failure_keywords: Keywords | UnsetType = UNSET
    alert_after_failures: Threshold | UnsetType = UNSET
    recover_after_successes: Threshold | UnsetType = UNSET
    depends_on: DependsOn | UnsetType = UNSET
    maintenance: ProposedWindows | UnsetType = UNSET
    recorded_maintenance: RecordedMaintenance | UnsetType = UNSET


class JobChanges(JobRulesPatch, forbid_unknown_fields=True):
    """Proposed job alert rules: the fields given replace the recorded ones (``min_duration``
    / ``max_duration``: docs/notifications.md, *Run-time bounds of jobs*)."""

    maintenance: ProposedWindows | UnsetType = UNSET
    recorded_maintenance: RecordedMaintenance | UnsetType = UNSET


class MonitorSimulate(Struct, forbid_unknown_fields=True, rename={"from_": "from"}):
    """Body of ``POST /v1/monitors/{id}/simulate``: ``changes`` (``{}``: the recorded
    definition), the window ``[from, to]`` (default: the 30 days before now; at most 31 days,
    ``to`` not in the future)."""

    changes: MonitorChanges = msgspec.field(default_factory=MonitorChanges)
    from_: ReplayFrom | None = None
    to: ReplayTo | None = None


class JobSimulate(Struct, forbid_unknown_fields=True, rename={"from_": "from"}):
    """Body of ``POST /v1/jobs/{id}/simulate``: as for monitors, with the job's alert rules."""

    changes: JobChanges = msgspec.field(default_factory=JobChanges)
    from_: ReplayFrom | None = None
    to: ReplayTo | None = None


class Transition(Struct):
    """A status flip: ``monitor.up`` / ``monitor.late`` / ``monitor.down`` with its reason
    (``ping``, ``on_time``, ``fail``, ``too_short``, ``overdue``, ``start_timeout``,
    ``too_long``; none for late)."""

    at: datetime
    event_type: str
    previous_status: str
    status: str
    reason: str | None


class MonitorAlert(Struct):
    """An alert: ``down`` or ``up`` (after down), with the reason of its flip;
    ``maintenance``: ``suppressed`` (held by a window, not sent) or ``released`` (the one
    ``down`` alert sent at a window's close), null otherwise; ``dependency``: ``held`` (a
    parent in ``depends_on`` was down: ``held_by``) or ``released`` (sent when the parents
    came back), null otherwise."""

    at: datetime
    event: str
    reason: str | None
    maintenance: str | None = None
    dependency: Literal["held", "released"] | None = None
    held_by: list[uuid.UUID] | None = None


class MonitorReplaySide(Struct):
    """What one side went through; ``truncated``: more than 1000 transitions or alerts (the
    summary still counts them all)."""

    transitions: list[Transition]
    alerts: list[MonitorAlert]
    truncated: bool


class ReplaySummary(Struct):
    """Incidents (``down`` / ``failed`` alerts) the proposal opens and that were opened, and
    recorded ones the proposal would not have had: resolved on their own
    (``false_alarms_avoided``) or real (``outages_missed``): docs/ledger.md."""

    would_alert: int
    did_alert: int
    false_alarms_avoided: int
    outages_missed: int


class MonitorSimulation(Struct, rename={"from_": "from"}):
    """The replay: ``simulated`` (under ``changes``, canonical) next to ``actual``."""

    changes: dict[str, Any]
    from_: datetime
    to: datetime
    simulated: MonitorReplaySide
    actual: MonitorReplaySide
    summary: ReplaySummary


class JobAlert(Struct):
    """An alert of a job: ``failed``, ``still_failing``, ``recovered``, ``too_long``
    (``max_duration``), ``skipped``, ``missed`` or ``held`` (``alert_on``); ``maintenance``:
    ``suppressed`` when a window held it; ``dependency``: ``held`` or ``released`` as a
    monitor's."""

    at: datetime
    event: str
    maintenance: str | None = None
    dependency: Literal["held", "released"] | None = None
    held_by: list[uuid.UUID] | None = None


class JobReplaySide(Struct):
    alerts: list[JobAlert]
    truncated: bool


class RunOutcomes(Struct):
    """Final run outcomes recorded in the window; ``would_skip``: those whose slot a proposed
    ``suppress: runs`` window skips (left out of the replay)."""

    succeeded: int
    failed: int
    would_skip: int = 0


class JobSimulation(Struct, rename={"from_": "from"}):
    """The replay of a job's alert rules: ``simulated`` next to the alerts queued."""

    changes: dict[str, Any]
    from_: datetime
    to: datetime
    simulated: JobReplaySide
    actual: JobReplaySide
    outcomes: RunOutcomes
    summary: ReplaySummary


class FieldChange(Struct):
    """One field of a definition change (``before`` null on creation)."""

    field: str
    before: Any
    after: Any


class DefinitionChange(Struct):
    """A creation, edit or lifecycle event (``version``: its stream version) with its actor
    (``api_key:<id>``, ``worker:<id>``, ``checker:<id>``, ``system``) and field-level diff."""

    version: int
    event_type: str
    occurred_at: datetime
    actor: str | None
    changes: list[FieldChange]


DefinitionChangePage = page_of(DefinitionChange)
