"""What a maintenance window command decides, without the database: from the window's state
(its locked ``maintenance_windows`` row) and the command (:class:`CreateWindow`,
:class:`UpdateWindow`, :class:`EndWindow`), the events to append.

Pure functions of their arguments (a command's ``now`` is one, UTC), tested without
PostgreSQL (``tests/unit/test_maintenance_decide.py``); :mod:`core.maintenance.commands`
locks the row, asks here, checks the jobs and monitors named against the team's (in the
database) and appends what was decided (:mod:`core.streams`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.errors import Conflict
from core.maintenance.definition import FIELDS, normalize_window
from core.maintenance.state import WindowState
from core.streams import Change, Decision, event_data


@dataclass(frozen=True, slots=True)
class CreateWindow:
    """``POST /v1/maintenance``: ``fields``, the definition (:mod:`core.maintenance.definition`),
    at ``now`` (UTC; interval schedules are anchored to it)."""

    fields: Mapping[str, Any]
    now: datetime


@dataclass(frozen=True, slots=True)
class UpdateWindow:
    """``PATCH /v1/maintenance/{id}``: the fields given replace the stored ones (``None``
    clears an optional one)."""

    fields: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class EndWindow:
    """End the window at ``now`` (UTC)."""

    now: datetime


def decide_create(command: CreateWindow) -> Decision:
    """A new window: ``maintenance.created`` with its definition.

    Raises:
        InvalidInput: the definition is not acceptable.
    """
    definition = normalize_window(dict(command.fields), anchor=command.now)
    return Decision(definition, [("maintenance.created", event_data(definition))])


def decide_update(before: WindowState, command: UpdateWindow) -> Decision:
    """Change the fields given; a one-off window may be turned recurring by giving
    ``schedule`` and ``from: null, to: null``, and back. Interval schedules stay anchored at
    the window's creation.

    Raises:
        Conflict: the window was ended.
        InvalidInput: the resulting definition is not acceptable.
    """
    if before.ended_at is not None:
        raise Conflict(f"maintenance window {before.id} was ended; create a new one")
    current = before.definition()
    merged = {**current, **{k: v for k, v in command.fields.items() if k in FIELDS}}
    definition = normalize_window(merged, anchor=before.created_at)
    changes = {k: v for k, v in definition.items() if v != current[k]}
    return Decision(definition, [("maintenance.updated", {"changes": event_data(changes)})]
                    if changes else [])


def decide_end(before: WindowState, command: EndWindow) -> list[Change]:
    """End early: ``maintenance.ended`` at ``now``.

    Raises:
        Conflict: it was ended already.
    """
    if before.ended_at is not None:
        raise Conflict(f"maintenance window {before.id} was ended already")
    return [("maintenance.ended", {"ended_at": command.now.isoformat()})]
