"""A maintenance window's state: the frozen :class:`WindowState`, its ``maintenance_windows``
row, and its fold (:func:`evolve`).

The row is what the window's ``maintenance`` stream left (:mod:`core.maintenance`); the
commands (:mod:`core.maintenance.commands`) read it locked, decide
(:mod:`core.maintenance.decide`) and write it back with the event. ``released_until`` is the
release service's (:mod:`core.maintenance.release`): no event sets it.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.coerce import instant
from core.rows import field_values


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowState:
    """A maintenance window as its row holds it.

    ``starts_at``/``ends_at`` (UTC) bound a one-off window (``from``/``to`` of its definition,
    ``None`` for a recurring one); a recurring one opens at each fire of ``schedule`` in
    ``timezone`` for ``duration_seconds`` seconds. ``ended_at``: ended early (``None``: not).
    """

    id: uuid.UUID
    team_id: uuid.UUID
    starts_at: datetime | None
    ends_at: datetime | None
    schedule: str | None
    timezone: str | None
    duration_seconds: int | None
    jobs: list[uuid.UUID]
    monitors: list[uuid.UUID]
    tags: list[str]
    suppress: str
    comment: str | None
    ended_at: datetime | None
    released_until: datetime | None
    version: int
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> WindowState:
        """The state in a ``maintenance_windows`` row (``maintenance_lock``)."""
        return cls(**field_values(cls, row))

    @classmethod
    def created(cls, window_id: uuid.UUID, team_id: uuid.UUID, definition: Mapping[str, Any],
                now: datetime) -> WindowState:
        """A window of ``definition`` (:func:`core.maintenance.definition.normalize_window`)
        that has no stream (a replay's proposed window), created at ``now`` (version 0)."""
        return cls(id=window_id, team_id=team_id, ended_at=None, released_until=None,
                   version=0, created_at=now, updated_at=now, **_columns(definition))

    def definition(self) -> dict[str, Any]:
        """The definition fields (``FIELDS`` of :mod:`core.maintenance.definition`)."""
        return {"from": self.starts_at, "to": self.ends_at, "schedule": self.schedule,
                "timezone": self.timezone, "duration_seconds": self.duration_seconds,
                "jobs": list(self.jobs), "monitors": list(self.monitors),
                "tags": list(self.tags), "suppress": self.suppress, "comment": self.comment}

    def with_definition(self, definition: Mapping[str, Any]) -> WindowState:
        """This window with the definition fields of ``definition``."""
        return dataclasses.replace(self, **_columns(definition))

    def upsert_params(self) -> dict[str, Any]:
        """The parameters of ``maintenance_upsert`` (core/sql/maintenance.sql)."""
        return {**self.definition(), "id": self.id, "team_id": self.team_id,
                "ended_at": self.ended_at, "released_until": self.released_until,
                "version": self.version, "created_at": self.created_at,
                "updated_at": self.updated_at}


def _columns(definition: Mapping[str, Any]) -> dict[str, Any]:
    return {"starts_at": definition["from"], "ends_at": definition["to"],
            "schedule": definition["schedule"], "timezone": definition["timezone"],
            "duration_seconds": definition["duration_seconds"],
            "jobs": list(definition["jobs"]), "monitors": list(definition["monitors"]),
            "tags": list(definition["tags"]), "suppress": definition["suppress"],
            "comment": definition["comment"]}


def _definition_of(data: Mapping[str, Any]) -> dict[str, Any]:
    """Definition fields as an event carries them (JSON: instants and ids as text) in the
    canonical form of :func:`core.maintenance.definition.normalize_window`."""
    out = dict(data)
    for key in ("from", "to"):
        if key in out:
            out[key] = instant(out[key])
    for key in ("jobs", "monitors"):
        if key in out:
            out[key] = [uuid.UUID(str(i)) for i in out[key]]
    return out


def evolve(state: WindowState | None, event: Mapping[str, Any]) -> WindowState:
    """Apply one event (a row of ``events`` or an equivalent dict) to ``state``.

    Raises:
        ValueError: a stream not starting with ``maintenance.created``, an unknown event type.
    """
    kind, data = event["event_type"], event["data"]
    at = instant(event["occurred_at"])
    version = event["stream_version"]
    if kind == "maintenance.created":
        if state is not None:
            raise ValueError("maintenance.created on an existing window")
        return WindowState(id=event["stream_id"], team_id=event["team_id"], ended_at=None,
                           released_until=None, version=version, created_at=at,
                           updated_at=at, **_columns(_definition_of(data)))
    if state is None:
        raise ValueError(f"{kind} before maintenance.created")
    if kind == "maintenance.updated":
        definition = {**state.definition(), **_definition_of(data["changes"])}
        return dataclasses.replace(state.with_definition(definition), version=version,
                                   updated_at=at)
    if kind == "maintenance.ended":
        return dataclasses.replace(state, ended_at=instant(data["ended_at"]), version=version,
                                   updated_at=at)
    raise ValueError(f"unknown maintenance event {kind!r}")
