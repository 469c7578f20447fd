"""Maintenance windows in a replay: which windows apply to the replayed subject, and the
questions the replay asks them, answered by the rules of :mod:`core.maintenance.windows` (no
second copy): is an alert at an instant held (:func:`~core.maintenance.windows.
in_maintenance_until`, as the outbox asks it), when do the windows close
(:func:`~core.maintenance.windows.closings`, as the release service asks it), is a job's slot
skipped.

The windows are the recorded ones (the team's ``maintenance_windows`` rows as they are now,
their early end included; one holds nothing before it was created) unless the proposal replaces
them (docs/ledger.md, *What-if replay*). A proposed window covers the subject only and is
anchored at the replay's ``from``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.db import Connection
from core.maintenance.queries import subject_tags
from core.maintenance.state import WindowState
from core.maintenance.windows import closings, covers, in_maintenance_until
from core.queries import Q
from core.replay.proposal import Proposal


@dataclass(frozen=True)
class Maintenance:
    """The windows that apply to one subject (``subject_type`` ``job`` | ``monitor``)."""

    subject_type: str
    subject_id: uuid.UUID
    tags: tuple[str, ...]
    windows: tuple[WindowState, ...]

    def _in_effect(self, at: datetime, suppress: str) -> bool:
        existing = [w for w in self.windows if w.created_at <= at]
        return in_maintenance_until(existing, self.subject_type, self.subject_id, at,
                                    suppress=suppress, tags=self.tags) is not None

    def holds(self, at: datetime) -> bool:
        """Whether an alert of the subject at ``at`` is held (written ``suppressed``)."""
        return self._in_effect(at, "alerts")

    def skips(self, scheduled_for: datetime) -> bool:
        """Whether a job slot at ``scheduled_for`` is skipped (a ``suppress: runs`` window)."""
        return self._in_effect(scheduled_for, "runs")

    def closings(self, start: datetime, end: datetime) -> list[datetime]:
        """The instants in ``(start, end]`` at which an ``alerts`` window covering the subject
        closes, ascending (the instants the release service acts at)."""
        found = {at for w in self.windows if w.suppress == "alerts"
                 and covers(w, self.subject_type, self.subject_id, self.tags)
                 for at in closings(w, max(start, w.created_at), end)}
        return sorted(found)


def proposed(window: dict[str, Any], subject_type: str, subject_id: uuid.UUID,
             team_id: uuid.UUID, start: datetime, index: int) -> WindowState:
    """A proposed window (canonical, :func:`core.replay.proposal.proposed_windows`) as the
    rules need it: covering the subject only, existing from ``start``."""
    return WindowState.created(uuid.UUID(int=index), team_id, {
        **window, "comment": window.get("comment"), "tags": [],
        "jobs": [subject_id] if subject_type == "job" else [],
        "monitors": [subject_id] if subject_type == "monitor" else []}, start)


async def recorded_and_proposed(conn: Connection, subject_type: str,
                                subject_id: uuid.UUID, team_id: uuid.UUID, proposal: Proposal,
                                start: datetime, end: datetime
                                ) -> tuple[Maintenance, Maintenance]:
    """``(recorded, simulated)``: the windows recorded over ``[start, end]`` (what happened)
    and those the proposal replays with (the recorded ones unless it replaces them, plus the
    proposed ones)."""
    cur = await conn.execute(Q["ledger_maintenance_windows"], {
        "team_id": team_id, "from": start, "to": end})
    rows = [WindowState.from_row(row) for row in await cur.fetchall()]
    tags = (await subject_tags(conn, subject_type, [subject_id])).get(subject_id, ())
    recorded = Maintenance(subject_type, subject_id, tuple(tags), tuple(rows))
    mine = [proposed(w, subject_type, subject_id, team_id, start, i + 1)
            for i, w in enumerate(proposal.windows)]
    kept = recorded.windows if proposal.keeps_recorded_maintenance else ()
    return recorded, Maintenance(subject_type, subject_id, tuple(tags), (*kept, *mine))
