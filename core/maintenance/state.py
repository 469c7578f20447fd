"""A maintenance window's state: the frozen :class:`WindowState`, its ``maintenance_windows``
row.

The row is what the window's ``maintenance`` stream left (:mod:`core.maintenance`); the
commands (:mod:`core.maintenance.commands`) read it locked, decide and write it back with the
event. ``released_until`` is the release service's (:mod:`core.maintenance.release`).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any


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
        return cls(**{f: row[f] for f in _FIELDS})

    @classmethod
    def created(cls, window_id: uuid.UUID, team_id: uuid.UUID, definition: Mapping[str, Any],
                now: datetime) -> WindowState:
        """A new window of ``definition`` (:func:`core.maintenance.definition.normalize_window`),
        created at ``now``, before its first event (version 0)."""
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


_FIELDS = tuple(f.name for f in dataclasses.fields(WindowState))


def _columns(definition: Mapping[str, Any]) -> dict[str, Any]:
    return {"starts_at": definition["from"], "ends_at": definition["to"],
            "schedule": definition["schedule"], "timezone": definition["timezone"],
            "duration_seconds": definition["duration_seconds"],
            "jobs": list(definition["jobs"]), "monitors": list(definition["monitors"]),
            "tags": list(definition["tags"]), "suppress": definition["suppress"],
            "comment": definition["comment"]}
