"""Time windows of phrases: ``every 15 minutes between 9am and 5pm``, both ends included.

A period inside a window fires at the period's clock-aligned times that fall inside the window,
``9:00 ≤ t ≤ 17:00``, nothing else (docs/schedules.md, *Time windows*). One cron expression
fires the same minutes (and seconds) in every hour it names, so a window is read only when the
times inside it are the same in each of its hours: ``every 15 minutes between 9am and 4:45pm``
is ``*/15 9-16``, ``every hour between 9am and 5pm`` is ``0 9-17``; ``every 15 minutes between
9am and 5pm`` (which would fire once in the 17 o'clock hour) is refused, and the refusal names
the end that would make it hold.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.schedule.spans import spans

Clock = tuple[int, int, int]  # (hour, minute, second)


@dataclass(frozen=True)
class WindowFields:
    """The cron fields of a period inside a window: ``seconds`` (None unless the period is
    in seconds), ``minutes``, ``hours``."""

    seconds: str | None
    minutes: str
    hours: str


class WindowError(ValueError):
    """The times inside the window differ from one hour to another.

    Attributes:
        end: the end that would make it hold (the last time of the last full hour), or None
            when the end is not the problem; ``start``: likewise, the first time of the first
            full hour.
    """

    def __init__(self, message: str, end: Clock | None = None,
                 start: Clock | None = None) -> None:
        super().__init__(message)
        self.end = end
        self.start = start


def window_fields(unit: str | None, n: int, minutes_past: list[int], start: Clock,
                  end: Clock) -> WindowFields:
    """The fields of ``every n <unit>`` (``unit`` second, minute or hour; None: only
    ``minutes_past``) inside ``[start, end]``.

    Raises:
        WindowError: no time of the period inside the window, or not the same times in each
            hour of it.
    """
    inside = {h: frozenset((m, s) for m, s in _period_times(unit, n, minutes_past, start, h)
                           if start <= (h, m, s) <= end)
              for h in range(start[0], end[0] + 1)}
    hours = [h for h, times in inside.items() if times]
    if not hours:
        raise WindowError(f"nothing of the period falls between {_show(start)} and "
                          f"{_show(end)}")
    full = max((inside[h] for h in hours), key=len)
    if any(inside[h] != full for h in hours):
        raise _uneven(inside, hours, full, start, end)
    seconds = sorted({s for _, s in full})
    minutes = sorted({m for m, _ in full})
    return WindowFields(
        seconds=_field(seconds, 60) if unit == "second" or seconds != [0] else None,
        minutes=_field(minutes, 60),
        hours=_hours(hours, n if unit == "hour" else 1))


def _period_times(unit: str | None, n: int, minutes_past: list[int], start: Clock,
                  hour: int) -> set[tuple[int, int]]:
    """``(minute, second)`` of the times of ``every n <unit>`` in ``hour`` of a window opening
    at ``start``, before the window's ends cut them."""
    if unit == "second":
        return {(m, s) for m in range(60) for s in range(0, 60, n)}
    if unit == "minute":
        return {(m, 0) for m in range(0, 60, n)}
    if unit == "hour" and (hour - start[0]) % n:
        return set()
    if unit == "hour" and not minutes_past:
        # every N hours from the window's start: 9:30, 11:30 … (not 11:00)
        return {(start[1], start[2])}
    return {(m, 0) for m in (minutes_past or [0])}


def _uneven(inside: dict[int, frozenset[tuple[int, int]]], hours: list[int],
            full: frozenset[tuple[int, int]], start: Clock, end: Clock) -> WindowError:
    """The refusal of a window whose first or last hour has fewer times than the others
    (``full``), naming the start or end that would make it hold."""
    full_hours = [h for h in hours if inside[h] == full]
    first, last = min(full), max(full)
    new_start = (full_hours[0], *first) if inside[hours[0]] != full else None
    new_end = (full_hours[-1], *last) if inside[hours[-1]] != full else None
    fixes = []
    if new_start is not None:
        fixes.append(f"start it at {_show(new_start)}")
    if new_end is not None:
        fixes.append(f"end it at {_show(new_end)} (the last time of the hour before) or at "
                     f"{_show((hours[-1], *last))}")
    return WindowError(
        f"one cron expression fires at the same minutes in every hour, and between "
        f"{_show(start)} and {_show(end)} the {'first' if new_start else 'last'} hour would "
        f"have fewer: {' and '.join(fixes)}", end=new_end, start=new_start)


def _field(values: list[int], size: int) -> str:
    if len(values) == size:
        return "*"
    step = values[1] - values[0] if len(values) > 1 else 0
    if values[0] == 0 and step > 1 and values == list(range(0, size, step)):
        return f"*/{step}"
    return _list(values)


def _hours(hours: list[int], step: int) -> str:
    if step > 1 and len(hours) > 1 and hours == list(range(hours[0], hours[-1] + 1, step)):
        return f"{hours[0]}-{hours[-1]}/{step}"
    return _list(hours, run=2)  # "22-23", as people write a window (and describe it)


def _list(values: list[int], run: int = 3) -> str:
    return ",".join(spans(values, run, lambda a, b: f"{a}-{b}", str))


def _show(clock: Clock) -> str:
    h, m, s = clock
    return f"{h:02d}:{m:02d}" + (f":{s:02d}" if s else "")
