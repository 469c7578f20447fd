"""What a monitor command decides, without the database: from the monitor's state (its
locked ``monitors`` row or its fold) and the command (a frozen value: :class:`UpdateMonitor`,
:class:`PauseMonitor`, :class:`DeleteMonitor`, :class:`RotateToken`, :class:`CreateMonitor`),
the events to append.

Pure functions of their arguments (the instant ``now`` of a command is one, UTC), tested
without PostgreSQL (``tests/unit/test_monitor_decide.py``); :mod:`core.monitors.commands`
locks the row, asks here, checks the channels and keeps the token (the writes that are not
events), and appends what was decided (:mod:`core.streams`). Pings are not commands: their
rules are :mod:`core.monitors.rules`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.errors import Conflict
from core.monitors.definition import DEFINITION_FIELDS, cached_schedule, normalize_definition
from core.monitors.state import MonitorState
from core.stored import schedule_problem
from core.streams import Change, Decision


@dataclass(frozen=True, slots=True)
class CreateMonitor:
    """``POST /v1/monitors``: ``definition``, the body normalised
    (:func:`core.monitors.definition.normalize_definition`) with its slug (given, or derived
    from the name by the command: a database read), and ``digest``, the SHA-256 of its new
    ping token."""

    definition: Mapping[str, Any]
    digest: bytes


@dataclass(frozen=True, slots=True)
class UpdateMonitor:
    """``PATCH /v1/monitors/{id}``: ``fields``, the body (absent fields keep their value), at
    ``now`` (UTC)."""

    fields: Mapping[str, Any]
    now: datetime


@dataclass(frozen=True, slots=True)
class PauseMonitor:
    """Pause (``paused``) or resume the monitor."""

    paused: bool


@dataclass(frozen=True, slots=True)
class DeleteMonitor:
    """Delete the monitor (its dependents are checked by the command, in the database)."""


@dataclass(frozen=True, slots=True)
class RotateToken:
    """Replace the ping token by one whose SHA-256 is ``digest`` (:mod:`core.monitors.tokens`:
    the token itself is never in an event)."""

    digest: bytes


@dataclass(frozen=True, kw_only=True)
class Update(Decision):
    """A monitor PATCH's decision (:class:`core.streams.Decision`): ``definition``, the whole
    definition after it (normalised; the command checks its ``channels`` against the team's),
    ``events``: ``monitor.updated`` (with ``changes``), ``monitor.repaired``, in that order,
    empty when nothing changes; and ``changes``, the fields that change with their new values
    (the command reschedules re-alerts and releases held alerts by them).
    """

    changes: dict[str, Any] = field(default_factory=dict)


def decide_update(before: MonitorState, command: UpdateMonitor) -> Update:
    """A partial update: fields absent from ``fields`` keep their value; a schedule given
    anew drops the words it was written in; a broken monitor whose patched definition is
    valid is repaired.

    Raises:
        InvalidInput: the resulting definition is not acceptable.
    """
    fields = command.fields
    current = before.definition()
    merged = {**current, **{k: v for k, v in fields.items() if k in DEFINITION_FIELDS}}
    if "schedule" in fields:  # a schedule given anew brings its own words, or none
        merged["schedule_text"] = None
    definition = normalize_definition(merged, now=command.now)
    changes = {k: v for k, v in definition.items() if v != getattr(before, k)}
    events: list[Change] = []
    if changes:
        events.append(("monitor.updated", {"changes": changes}))
    if before.broken_at is not None:  # the merged definition was just validated
        events.append(("monitor.repaired", {"previous_reason": before.broken_reason}))
    return Update(definition, events, changes=changes)


def decide_pause(before: MonitorState, command: PauseMonitor) -> list[Change] | None:
    """Pause or resume: the events, or ``None`` when the monitor is already so (nothing to
    do). Resuming a broken monitor whose schedule evaluates again repairs it.

    Raises:
        Conflict: resuming a broken monitor whose schedule still does not evaluate.
    """
    paused = command.paused
    broken = before.broken_at is not None
    if (before.status == "paused") == paused and (paused or not broken):
        return None
    events: list[Change] = []
    if (before.status == "paused") != paused:
        events.append(("monitor.paused" if paused else "monitor.resumed", {}))
    if broken and not paused:
        _, problem = schedule_problem(cached_schedule, before.schedule, before.timezone,
                                      before.created_at)
        if problem is not None:
            raise Conflict(f"monitor {before.id} is broken ({before.broken_reason}); "
                           "fix its definition with PATCH first")
        events.append(("monitor.repaired", {"previous_reason": before.broken_reason}))
    return events


def decide_create(command: CreateMonitor) -> list[Change]:
    """A new monitor: ``monitor.created``, ``new`` (it never alerts before its first ping),
    with its token's hash (hex), never the token."""
    return [("monitor.created", {**command.definition, "status": "new",
                                 "ping_token_hash": command.digest.hex()})]


def decide_delete(before: MonitorState, command: DeleteMonitor) -> list[Change]:
    """Delete: ``monitor.deleted`` (a deleted monitor is not locked, so ``before`` is live)."""
    return [("monitor.deleted", {})]


def decide_rotate(before: MonitorState, command: RotateToken) -> list[Change]:
    """A new ping token: ``monitor.token_rotated`` with its hash (hex)."""
    return [("monitor.token_rotated", {"ping_token_hash": command.digest.hex()})]
