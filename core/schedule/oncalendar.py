"""systemd calendar events (``OnCalendar=``, systemd.time(7), "Calendar Events").

``Mon..Fri 09:00``, ``*-*-* 02:00:00``, ``Mon *-*-1..7 09:00``, ``*-*~01 05:00``, ``quarterly``,
``*:0/15``, ``09:00 Europe/Paris``. A schedule may hold several events, one per line (systemd's
several ``OnCalendar=`` lines of one timer, healthchecks' ``oncalendar`` kind): it fires at the
union of their times.

The parts are read as systemd reads them - what it refuses is refused, naming the part, and
each part fires at the values systemd fires at (:mod:`core.schedule.calendar_chains`, a port of
systemd's ``calendarspec.c``) - and searched by the ``oncalendar`` package's iterator (the
evaluator healthchecks uses, by its author), as croniter does for cron. What this module adds,
each found by the differential against ``systemd-analyze calendar``
(``tests/unit/test_oncalendar_systemd.py``; docs/schedules.md, *OnCalendar*):

1. **DST as systemd does it** (``calendar_spec_next_usec``: a wall-clock search forward from the
   base's local time, then ``mktime`` of the slot). A slot inside a spring-forward gap does not
   exist and is skipped. A slot inside a fall-back fold fires once, at the first occurrence -
   unless the search starts inside the fold's second pass, where the slots left in the fold
   fire in that pass (the package returns the first pass there, an instant *before* ``after``).
2. **The trailing time zone** is taken only when it is ``UTC`` (any case, as systemd) or an IANA
   name this engine knows; a name that is also an abbreviation of the schedule's own zone
   (``EST`` in America/New_York) is refused: systemd reads those as "standard (or daylight)
   time only", a third meaning we do not guess between.
3. **Refused, though systemd accepts them**: fractional seconds (``*:*:0.5``; the package has no
   sub-second search), epoch times (``@1700000000``: ``@`` is this grammar's keyword prefix),
   and events that never fire after the schedule is set (``*-02-30``, a date in the past;
   systemd accepts them and answers "never").

Whitespace between the parts may be any run of spaces or tabs (systemd wants one space); that
changes no meaning. Years are 1970-2199 as in systemd; the search ends there.
"""

from __future__ import annotations

import copy
import functools
import heapq
import re
import zoneinfo
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from oncalendar import BaseIterator

from core.schedule.calendar_chains import SHORTHANDS, ChainError, read_event
from core.schedule.model import Fire, InvalidSchedule
from core.schedule.spans import spans
from core.schedule.zones import _known_zones, load_zone, make_fire, transition_at

__all__ = ["CalendarError", "CalendarEvent", "OnCalendarSpec", "calendar_fires",
           "parse_oncalendar"]

#: Most events (lines) in one schedule.
MAX_EVENTS = 10
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_ZONE_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+)*")
_SEARCH_END = datetime(2199, 12, 31, 23, 59, 59)


class CalendarError(InvalidSchedule):
    """A string the calendar grammar does not read.

    Attributes:
        structural: True when its parts are not a calendar event's at all (too many, or of
            the wrong shape); False when they are, and one of them is wrong (a value out of
            range, a time zone): then the string was meant as a calendar event.
    """

    def __init__(self, message: str, structural: bool = False) -> None:
        super().__init__(message)
        self.structural = structural


@dataclass(frozen=True)
class CalendarEvent:
    """One parsed calendar event (one line).

    Attributes:
        text: the line as given, whitespace collapsed.
        zone: the trailing time zone's name, or None (the schedule's zone).
        weekdays, years, months, days, hours, minutes, seconds: the values each field
            allows; weekdays 0 = Monday (systemd's order); ``days`` holds ``-k`` for the
            k-th last day of the month (the ``~`` form).
    """

    text: str
    zone: str | None
    weekdays: frozenset[int]
    years: frozenset[int]
    months: frozenset[int]
    days: frozenset[int]
    hours: frozenset[int]
    minutes: frozenset[int]
    seconds: frozenset[int]
    _template: BaseIterator = field(repr=False, compare=False, hash=False)

    def slots(self, wall: datetime) -> Iterator[datetime]:
        """Naive wall-clock slots strictly after naive ``wall``, ascending, up to 2199."""
        iterator = copy.copy(self._template)
        iterator.dt = wall.replace(microsecond=0)
        return iterator


@dataclass(frozen=True)
class OnCalendarSpec:
    """A parsed OnCalendar schedule: its text (lines joined by ``\\n``) and its events."""

    text: str
    events: tuple[CalendarEvent, ...]


def parse_oncalendar(text: str, zone: zoneinfo.ZoneInfo) -> OnCalendarSpec:
    """Parse one or more calendar events, one per line.

    Args:
        text: the schedule, already stripped; lines are separated by ``\\n``.
        zone: the schedule's zone, to refuse a trailing abbreviation of it.

    Raises:
        InvalidSchedule: a line that systemd.time(7) does not define, or one of the forms
            refused above; the message names the line and the part.
    """
    lines = [" ".join(line.split()) for line in text.split("\n")]
    lines = [line for line in lines if line]
    if not lines:
        raise CalendarError("schedule is empty", structural=True)
    if len(lines) > MAX_EVENTS:
        raise CalendarError(f"at most {MAX_EVENTS} calendar events, one per line; got "
                              f"{len(lines)}")
    return OnCalendarSpec("\n".join(lines), tuple(_parse_line(line, zone) for line in lines))


def _parse_line(line: str, zone: zoneinfo.ZoneInfo) -> CalendarEvent:
    body, zone_name = _split_zone(line, zone)
    if "." in body.replace("..", ""):
        raise CalendarError(f"calendar event {line!r}: '.' is only read in ranges ('..'); "
                            "fractional seconds are not supported", structural=not _shaped(body))
    try:
        fields = read_event(body)
    except ChainError as exc:
        raise CalendarError(f"calendar event {line!r} is not valid: {exc} (systemd.time(7), "
                            "'Calendar Events')", structural=not _shaped(body)) from None
    # systemd's values (core/schedule/calendar_chains.py) searched by the package's iterator
    template = BaseIterator("*-*-* 00:00:00", datetime(2000, 1, 1))
    template.weekdays, template.years = set(fields.weekdays), set(fields.years)
    template.months, template.days = set(fields.months), set(fields.days)
    template.hours, template.minutes = set(fields.hours), set(fields.minutes)
    template.seconds = set(fields.seconds)
    template.any_reverse_day = any(d < 0 for d in fields.days)
    return CalendarEvent(
        text=line, zone=zone_name, weekdays=fields.weekdays, years=fields.years,
        months=fields.months, days=fields.days, hours=fields.hours, minutes=fields.minutes,
        seconds=fields.seconds, _template=template)


def _split_zone(line: str, zone: zoneinfo.ZoneInfo) -> tuple[str, str | None]:
    """``(body, zone name or None)``: the trailing time zone of systemd.time(7), if any."""
    head, _, last = line.rpartition(" ")
    if not head:
        return line, None
    if last.upper() == "UTC":
        return head, "UTC"
    if last.upper() in _abbreviations(zone.key):
        raise CalendarError(
            f"calendar event {line!r}: {last!r} is an abbreviation of {zone.key}, which "
            "systemd reads as standard or daylight time only; give an IANA zone such as "
            "Europe/Paris, or none")
    if last in _known_zones():
        return head, last
    if _ZONE_LIKE.fullmatch(last) and last.lower() not in SHORTHANDS \
            and not _is_weekday_list(last):
        raise CalendarError(f"calendar event {line!r}: unknown time zone {last[:64]!r}",
                            structural=not _is_calendar_body(head))
    return line, None


_DATE_PART = re.compile(r"[\d*.,/~-]*[-~][\d*.,/~-]*")
_TIME_PART = re.compile(r"[\d*.,/]*:[\d*.,/:]*")


def _shaped(body: str) -> bool:
    """Whether every word of ``body`` has the shape of a calendar event's part - a weekday
    or a list of them, even misspelt (``Tues``, ``Mon,,Tue``), a date, a time, a shorthand:
    then the string is a calendar event, and a refusal is about a part of it, never a reason
    to read it in another grammar (docs/schedules.md, *Which grammar reads a string*)."""
    parts = body.split()
    return bool(parts) and all(
        _weekday_like(p) or _DATE_PART.fullmatch(p) or _TIME_PART.fullmatch(p)
        or p.lower() in SHORTHANDS for p in parts)


def _weekday_like(token: str) -> bool:
    """``Mon``, ``monday``, ``Tues``, ``Thurs``, ``mondays``, ``Mon,,Tue``, ``Mon..Fri``:
    weekday names, their prefixes of three letters or more, plurals, with separators."""
    names = [p.lower() for p in re.split(r"[.,-]+", token) if p]
    return bool(names) and len("".join(names)) + token.count(".") + token.count(",") \
        + token.count("-") == len(token) and all(
            n.isalpha() and len(n) >= 3 and any(
                full.lower().startswith(n) or n == full.lower() + "s" for full in _WEEKDAYS)
            for n in names)


def _is_calendar_body(head: str) -> bool:
    """Whether ``head`` reads as a calendar event (then a bad last word is a bad zone)."""
    try:
        read_event(head)
    except ChainError:
        return False
    return True


def _is_weekday_list(token: str) -> bool:
    names = {d[:3].lower() for d in _WEEKDAYS} | {d.lower() for d in _WEEKDAYS}
    return all(p.lower() in names for p in re.split(r"\.\.|-|,", token) if p)


@functools.lru_cache(maxsize=512)
def _abbreviations(zone_name: str) -> frozenset[str]:
    """The abbreviations ``zone_name`` uses between 1970 and 2040 (``CET``, ``CEST``), upper
    case, less ``UTC`` (which systemd takes as UTC before it looks at abbreviations)."""
    zone = zoneinfo.ZoneInfo(zone_name)
    names = {datetime(year, month, 1, 12, tzinfo=zone).tzname() or ""
             for year in range(1970, 2041) for month in (1, 4, 7, 10)}
    return frozenset(n.upper() for n in names if n and n[0] not in "+-") - {"UTC"}


def calendar_fires(spec: OnCalendarSpec, zone: zoneinfo.ZoneInfo,
                   after: datetime) -> Iterator[Fire]:
    """Fires of ``spec`` strictly after UTC ``after``, ascending, without duplicates; local
    times in ``zone``. Ends in 2199 (systemd's last year)."""
    streams = [_event_fires(event, zone, after) for event in spec.events]
    last = None
    for fire in heapq.merge(*streams, key=lambda f: f.at):
        if fire.at != last:
            last = fire.at
            yield fire


def _event_fires(event: CalendarEvent, zone: zoneinfo.ZoneInfo,
                 after: datetime) -> Iterator[Fire]:
    event_zone = zone if event.zone is None else load_zone(event.zone)
    local = after.astimezone(event_zone)
    start = local.replace(tzinfo=None, fold=0)
    # The search starts in the fold's second pass: its slots left in the fold fire there.
    second_pass = local.fold == 1 and transition_at(event_zone, start) is not None
    for slot in event.slots(start):
        if slot > _SEARCH_END:
            return
        transition = transition_at(event_zone, slot)
        if transition is None:
            yield make_fire(slot.replace(tzinfo=event_zone).astimezone(UTC), zone)
        elif not transition.is_gap:
            fold = 1 if second_pass and transition.wall_start <= start < transition.wall_end \
                else 0
            at = slot.replace(tzinfo=event_zone, fold=fold).astimezone(UTC)
            yield make_fire(at, zone, "fold")


def describe_oncalendar(spec: OnCalendarSpec, zone_name: str) -> str:
    """``"At 09:00, Monday through Friday"``; several events joined by ``"; "``. An event's
    own zone is named when it is not ``zone_name`` (the schedule's)."""
    return "; ".join(_describe_event(event, zone_name) for event in spec.events)


def _describe_event(event: CalendarEvent, zone_name: str) -> str:
    parts = [_describe_time(event)]
    restricted_days = event.days != frozenset(range(1, 32))
    if len(event.weekdays) < 7:
        weekdays = _join_runs(sorted(event.weekdays), lambda d: _WEEKDAYS[d])
        parts.append(weekdays if not restricted_days else "")
    if restricted_days:
        days = _describe_days(event.days)
        if len(event.weekdays) < 7:  # systemd ANDs the weekday and the date
            days += f" that are a {weekdays.replace(' and ', ' or ')}"
        parts.append(days)
    if event.months != frozenset(range(1, 13)):
        parts.append("in " + _join_runs(sorted(event.months), lambda m: _MONTHS[m - 1]))
    if event.years != frozenset(range(1970, 2200)):
        parts.append("in " + _join_runs(sorted(event.years), str))
    text = ", ".join(p for p in parts if p)
    if event.zone is not None and event.zone != zone_name:
        text += f" ({event.zone} time)"
    return text[:1].upper() + text[1:]


def _describe_time(event: CalendarEvent) -> str:
    hours, minutes, seconds = (sorted(event.hours), sorted(event.minutes),
                               sorted(event.seconds))
    if len(hours) * len(minutes) * len(seconds) <= 4:
        with_seconds = seconds != [0]
        times = [f"{h:02d}:{m:02d}" + (f":{s:02d}" if with_seconds else "")
                 for h in hours for m in minutes for s in seconds]
        return "at " + _join(times)
    if seconds == [0] and minutes == [0]:
        text = "every hour, on the hour"
    elif seconds == [0]:
        text = _every(minutes, 60, "minute")
    else:
        text = _every(seconds, 60, "second")
        if len(minutes) < 60:
            text += ", " + _every(minutes, 60, "minute")
    if len(hours) < 24:
        text += ", " + _every(hours, 24, "hour")
    return text


def _every(values: list[int], size: int, unit: str) -> str:
    """How a time field reads: ``"every 15 minutes"``, ``"at minute 0 and 30"``,
    ``"during hours 09 through 17"``."""
    if len(values) == size:
        return f"every {unit}"
    step = values[1] - values[0] if len(values) > 1 else 0
    if unit != "hour" and step and values[0] < step and size % step == 0 \
            and values == list(range(values[0], size, step)):  # that far apart all round
        start = f" from {unit} {values[0]}" if values[0] else ""
        return f"every {step} {unit}s{start}"
    if unit == "hour":
        return "during hour" + ("s " if len(values) > 1 else " ") + \
            _join_runs(values, lambda h: f"{h:02d}")
    return f"at {unit} " + _join_runs(values, str)


def _describe_days(days: frozenset[int]) -> str:
    forward = sorted(d for d in days if d > 0)
    backward = sorted(-d for d in days if d < 0)
    parts = []
    if forward:
        parts.append("on day" + ("s " if len(forward) > 1 else " ")
                     + _join_runs(forward, str) + " of the month")
    if backward:
        def nth_last(k: int) -> str:
            return "the last day" if k == 1 else f"the {_ordinal(k)}-last day"
        parts.append("on " + _join_runs(backward, nth_last) + " of the month")
    return " and ".join(parts)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _join_runs(values: list[int], name: Callable[[int], str]) -> str:
    """Consecutive runs of three or more as ``"A through B"``, the rest listed."""
    return _join(spans(values, 3, lambda a, b: f"{name(a)} through {name(b)}", name))


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def never_fires_message(spec: OnCalendarSpec, start: datetime) -> str:
    """The refusal of a schedule with no fire after ``start`` (systemd answers "never")."""
    return (f"calendar event {spec.text!r} never fires after "
            f"{start.astimezone(UTC).isoformat().replace('+00:00', 'Z')}: systemd would "
            "answer 'Next elapse: never'")

