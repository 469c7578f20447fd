"""The rules of maintenance windows (docs/ledger.md), each in one place:

- what a window covers: :func:`covers` (the selector: ids, tags, or the whole team);
- when it is in effect: :func:`occurrence_at` (the occurrence holding an instant) and
  :func:`in_maintenance_until` (the end of maintenance for one subject);
- when it closes: :func:`closings` and :func:`next_closing` (for the release service).

A recurring window's occurrences start at its schedule's fires (the job grammar,
docs/schedules.md, anchored at the window's creation) and last ``duration_seconds``; an
occurrence is in effect over ``[fire, fire + duration)``. A window ended early
(``ended_at``) is in effect up to ``ended_at`` only. Instants are tz-aware UTC.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core.schedule import Schedule, cached_schedule

FIRES_LIMIT = 1000  # fires looked at per question (occurrences within one duration)


@dataclass(frozen=True)
class Window:
    """A ``maintenance_windows`` row, as the rules need it."""

    id: uuid.UUID
    team_id: uuid.UUID
    starts_at: datetime | None
    ends_at: datetime | None
    schedule: str | None
    timezone: str | None
    duration_seconds: int | None
    jobs: tuple[uuid.UUID, ...]
    monitors: tuple[uuid.UUID, ...]
    tags: tuple[str, ...]
    suppress: str
    ended_at: datetime | None
    created_at: datetime

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Window:
        return cls(row["id"], row["team_id"], row["starts_at"], row["ends_at"], row["schedule"],
                   row["timezone"], row["duration_seconds"], tuple(row["jobs"] or ()),
                   tuple(row["monitors"] or ()), tuple(row["tags"] or ()), row["suppress"],
                   row["ended_at"], row["created_at"])

    @property
    def whole_team(self) -> bool:
        return not (self.jobs or self.monitors or self.tags)

    def _schedule(self) -> Schedule:
        assert self.schedule is not None
        return cached_schedule(self.schedule, self.timezone or "UTC", self.created_at)

    @property
    def _duration(self) -> timedelta:
        return timedelta(seconds=self.duration_seconds or 0)


def covers(window: Window, subject_type: str, subject_id: uuid.UUID,
           tags: Iterable[str] = ()) -> bool:
    """Whether ``window`` applies to the job or monitor ``subject_id`` (``subject_type``
    ``job`` | ``monitor``) whose tags are ``tags``: named by id, sharing a tag, or the window
    names nothing (the whole team). The one place of this rule."""
    if window.whole_team:
        return True
    named = window.jobs if subject_type == "job" else window.monitors
    return subject_id in named or bool(set(window.tags) & set(tags))


def occurrence_at(window: Window, at: datetime) -> tuple[datetime, datetime] | None:
    """``(start, end)`` of the occurrence of ``window`` in effect at ``at``, or ``None``."""
    if window.ended_at is not None and window.ended_at <= at:
        return None
    if window.schedule is None:
        assert window.starts_at is not None and window.ends_at is not None
        found = (window.starts_at, window.ends_at) if window.starts_at <= at < window.ends_at \
            else None
    else:
        fires = window._schedule().fires_between(at - window._duration, at, FIRES_LIMIT)
        found = (fires[-1], fires[-1] + window._duration) if fires else None
    if found and window.ended_at is not None:
        found = (found[0], min(found[1], window.ended_at))
    return found


def in_maintenance_until(windows: Sequence[Window], subject_type: str, subject_id: uuid.UUID,
                         at: datetime, *, suppress: str | None = None,
                         tags: Iterable[str] = ()) -> datetime | None:
    """The latest end among the occurrences in effect at ``at`` of the ``windows`` covering the
    subject (only those suppressing ``suppress`` when given); ``None``: not in maintenance."""
    tags = tuple(tags)
    ends = [occurrence[1] for w in windows
            if (suppress is None or w.suppress == suppress)
            and covers(w, subject_type, subject_id, tags)
            and (occurrence := occurrence_at(w, at)) is not None]
    return max(ends, default=None)


def closings(window: Window, after: datetime, until: datetime) -> list[datetime]:
    """The instants in ``(after, until]`` at which an occurrence of ``window`` stopped being in
    effect (its end, or ``ended_at`` when it was ended early), ascending."""
    if until <= after:
        return []
    if window.schedule is None:
        assert window.ends_at is not None and window.starts_at is not None
        end = window.ends_at
        if window.ended_at is not None:
            if window.ended_at <= window.starts_at:
                return []
            end = min(end, window.ended_at)
        return [end] if after < end <= until else []
    d = window._duration
    stop = until if window.ended_at is None else min(until, window.ended_at)
    ends = [f + d for f in window._schedule().fires_between(after - d, stop - d, FIRES_LIMIT)]
    if window.ended_at is not None and after < window.ended_at <= until:
        cut = occurrence_at(window, window.ended_at - timedelta(microseconds=1))
        if cut is not None and cut[1] == window.ended_at and window.ended_at not in ends:
            ends.append(window.ended_at)
    return sorted(ends)


def next_closing(window: Window, after: datetime) -> datetime | None:
    """The first closing of ``window`` strictly after ``after`` (``None``: none to come)."""
    if window.ended_at is not None and window.ended_at <= after:
        return None
    if window.schedule is None:
        found = closings(window, after, window.ends_at or after)
        return found[0] if found else None
    d = window._duration
    fire = window._schedule().next_fire(after - d)
    if fire is None:
        return None
    end = fire + d
    if window.ended_at is not None:
        end = min(end, window.ended_at)
    return end
