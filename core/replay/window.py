"""The interval a replay covers: ``[from, to]``, by default the 30 days before now, at most
:data:`MAX_WINDOW` long, never in the future (docs/ledger.md, *What-if replay*)."""

from __future__ import annotations

from datetime import datetime, timedelta

from core.errors import invalid

DEFAULT_WINDOW = timedelta(days=30)
MAX_WINDOW = timedelta(days=31)  # a replay reads every ping and run outcome of the window


def replay_window(start: datetime | None, end: datetime | None,
                  now: datetime) -> tuple[datetime, datetime]:
    """``(from, to)`` in UTC: ``to`` defaults to ``now``, ``from`` to ``to`` less 30 days.

    Raises:
        InvalidInput: ``to`` after ``now``, ``from`` not before ``to``, or a window longer
            than 31 days (on the field at fault). An empty window is refused, unlike an empty
            stats range: the replay's comparison of simulated and recorded alerts is not
            checked on one.
    """
    end = end or now
    start = start or end - DEFAULT_WINDOW
    if end > now:
        raise invalid("to", "must not be in the future: a replay covers recorded history")
    if start >= end:
        raise invalid("from", "must be before `to`")
    if end - start > MAX_WINDOW:
        raise invalid("from", f"the window may be at most {MAX_WINDOW.days} days long")
    return start, end
