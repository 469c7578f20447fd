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
from datetime import datetime, timedelta

from core.maintenance.state import WindowState
from core.schedule import Schedule, cached_schedule

FIRES_LIMIT = 1000  # fires looked at per question (occurrences within one duration)


def _whole_team(window: WindowState) -> bool:
    return not (window.jobs or window.monitors or window.tags)


def _schedule(window: WindowState) -> Schedule:
    assert window.schedule is not None
    return cached_schedule(window.schedule, window.timezone or "UTC", window.created_at)


def _duration(window: WindowState) -> timedelta:
    return timedelta(seconds=window.duration_seconds or 0)


def covers(window: WindowState, subject_type: str, subject_id: uuid.UUID,
           tags: Iterable[str] = ()) -> bool:
    """Whether ``window`` applies to the job or monitor ``subject_id`` (``subject_type``
    ``job`` | ``monitor``) whose tags are ``tags``: named by id, sharing a tag, or the window
    names nothing (the whole team). The one place of this rule."""
    if _whole_team(window):
        return True
    named = window.jobs if subject_type == "job" else window.monitors
    return subject_id in named or bool(set(window.tags) & set(tags))


def occurrence_at(window: WindowState, at: datetime) -> tuple[datetime, datetime] | None:
    """``(start, end)`` of the occurrence of ``window`` in effect at ``at``, or ``None``."""
    if window.ended_at is not None and window.ended_at <= at:
        return None
    if window.schedule is None:
        assert window.starts_at is not None and window.ends_at is not None
        found = (window.starts_at, window.ends_at) if window.starts_at <= at < window.ends_at \
            else None
    else:
        fires = _schedule(window).fires_between(at - _duration(window), at, FIRES_LIMIT)
        found = (fires[-1], fires[-1] + _duration(window)) if fires else None
    if found and window.ended_at is not None:
        found = (found[0], min(found[1], window.ended_at))
    return found


def in_maintenance_until(windows: Sequence[WindowState], subject_type: str, subject_id: uuid.UUID,
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


def in_effect(windows: Sequence[WindowState], at: datetime,
              suppress: str | None = None) -> list[tuple[WindowState, datetime]]:
    """The ``windows`` (suppressing ``suppress`` when given) with an occurrence in effect at
    ``at``, each with that occurrence's end: evaluated once for many subjects
    (:func:`until_among`)."""
    return [(w, occurrence[1]) for w in windows
            if (suppress is None or w.suppress == suppress)
            and (occurrence := occurrence_at(w, at)) is not None]


def until_among(current: Sequence[tuple[WindowState, datetime]], subject_type: str,
                subject_id: uuid.UUID, tags: Iterable[str] = ()) -> datetime | None:
    """:func:`in_maintenance_until` over windows already found in effect (:func:`in_effect`)."""
    tags = tuple(tags)
    return max((end for w, end in current if covers(w, subject_type, subject_id, tags)),
               default=None)


def closings(window: WindowState, after: datetime, until: datetime) -> list[datetime]:
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
    d = _duration(window)
    stop = until if window.ended_at is None else min(until, window.ended_at)
    ends = [f + d for f in _schedule(window).fires_between(after - d, stop - d, FIRES_LIMIT)]
    if window.ended_at is not None and after < window.ended_at <= until:
        cut = occurrence_at(window, window.ended_at - timedelta(microseconds=1))
        if cut is not None and cut[1] == window.ended_at and window.ended_at not in ends:
            ends.append(window.ended_at)
    return sorted(ends)


def next_closing(window: WindowState, after: datetime) -> datetime | None:
    """The first closing of ``window`` strictly after ``after`` (``None``: none to come)."""
    if window.ended_at is not None and window.ended_at <= after:
        return None
    if window.schedule is None:
        found = closings(window, after, window.ends_at or after)
        return found[0] if found else None
    d = _duration(window)
    fire = _schedule(window).next_fire(after - d)
    if fire is None:
        return None
    end = fire + d
    if window.ended_at is not None:
        end = min(end, window.ended_at)
    return end
