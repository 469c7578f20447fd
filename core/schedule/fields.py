"""Cron field grammar: parse 5- and 6-field expressions into value sets and a day rule.

The parser is ours, not croniter's: it gives precise messages, refuses croniter's extensions
(``H``, ``R``, 7-field years, wrapping ranges) and produces a :class:`CronSpec` whose
:meth:`CronSpec.matches` is the definition of the schedule. croniter only searches; see
:mod:`core.schedule.cron` for how its answers are checked against this definition.

Grammar per field (comma-separated items): ``*``, ``N``, ``A-B`` (A <= B), ``*/S``, ``N/S``
(= ``N-max/S``), ``A-B/S``; month names JAN-DEC and day names SUN-SAT (any case); ``?`` as ``*``
in day-of-month and day-of-week. Day-of-month also takes ``L`` (last day) and ``NW`` (weekday
nearest day N, within the month; no fire in months shorter than N). Day-of-week takes 0-7 (0 and
7 are Sunday), ``D#K`` (K-th weekday D of the month, K 1-5) and ``DL`` (last weekday D).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime

from core.schedule.model import VALIDATION_YEARS, InvalidSchedule

SECOND, MINUTE, HOUR = "second", "minute", "hour"
DOM, MONTH, DOW = "day-of-month", "month", "day-of-week"

_BOUNDS = {
    SECOND: (0, 59),
    MINUTE: (0, 59),
    HOUR: (0, 23),
    DOM: (1, 31),
    MONTH: (1, 12),
    DOW: (0, 7),
}
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
_NAMES = {
    MONTH: {name: i + 1 for i, name in enumerate(_MONTHS)},
    DOW: {name: i for i, name in enumerate(_DAYS)},
}
MONTH_NAMES = tuple(calendar.month_name[1:])

_ITEM = re.compile(r"^(?P<base>\*|[A-Za-z0-9]+(?:-[A-Za-z0-9]+)?)(?:/(?P<step>[^/]*))?$")
_NEAREST = re.compile(r"^(\d+)W$", re.IGNORECASE)
_NTH = re.compile(r"^([A-Za-z0-9]+)#(\d+)$")
_LAST_DOW = re.compile(r"^([A-Za-z0-9]+)L$", re.IGNORECASE)
_MAX_NEAREST = 4


@dataclass(frozen=True)
class DaysOfMonth:
    """Parsed day-of-month field: plain days, ``L`` and ``NW`` entries."""

    text: str
    star: bool  # Vixie DOM_STAR: the field starts with '*' (or is '?')
    days: frozenset[int]
    last: bool = False
    nearest: tuple[int, ...] = ()

    def matches(self, day: date) -> bool:
        length = calendar.monthrange(day.year, day.month)[1]
        if day.day in self.days or (self.last and day.day == length):
            return True
        return any(nearest_weekday(day.year, day.month, n) == day.day for n in self.nearest)


@dataclass(frozen=True)
class DaysOfWeek:
    """Parsed day-of-week field (0 = Sunday): plain days, ``D#K`` and ``DL`` entries."""

    text: str
    star: bool
    days: frozenset[int]
    nth: frozenset[tuple[int, int]] = frozenset()
    last: frozenset[int] = frozenset()

    def matches(self, day: date) -> bool:
        weekday = (day.weekday() + 1) % 7
        if weekday in self.days or (weekday, (day.day - 1) // 7 + 1) in self.nth:
            return True
        return weekday in self.last and day.day + 7 > calendar.monthrange(day.year, day.month)[1]


@dataclass(frozen=True)
class CronSpec:
    """A validated cron expression: one value set per time field plus the day rule.

    Day rule (Vixie cron / cronie ``DOM_STAR``/``DOW_STAR``): when both day fields are restricted
    (neither starts with ``*``) a day matches if EITHER matches; otherwise both must match.
    """

    text: str
    has_seconds: bool
    seconds: frozenset[int]
    minutes: frozenset[int]
    hours: frozenset[int]
    months: frozenset[int]
    dom: DaysOfMonth
    dow: DaysOfWeek
    minute_star: bool
    hour_star: bool

    @property
    def day_or(self) -> bool:
        """True when day-of-month and day-of-week are ORed (both restricted)."""
        return not (self.dom.star or self.dow.star)

    @property
    def is_fixed_time(self) -> bool:
        """Vixie's fixed-time job: neither the minute nor the hour field starts with ``*``."""
        return not (self.minute_star or self.hour_star)

    def matches_day(self, day: date) -> bool:
        """Whether the local calendar date ``day`` is a firing day (month and day rule)."""
        if day.month not in self.months:
            return False
        if self.day_or:
            return self.dom.matches(day) or self.dow.matches(day)
        return self.dom.matches(day) and self.dow.matches(day)

    def matches(self, wall: datetime) -> bool:
        """Whether the naive local wall-clock time ``wall`` is a slot of this expression."""
        second_ok = wall.second in self.seconds if self.has_seconds else wall.second == 0
        return (
            second_ok
            and wall.microsecond == 0
            and wall.minute in self.minutes
            and wall.hour in self.hours
            and self.matches_day(wall.date())
        )

    def croniter_expressions(self) -> tuple[str, ...]:
        """Canonical croniter expressions whose union is this schedule.

        Fields are written as explicit numbers and proper ranges (never ``A-A``, which croniter
        widens to the whole field). The day rule is split so croniter never has to OR anything
        itself: OR mode yields ``(dom-part, *)`` and ``(*, dow-part)`` streams, AND mode yields
        ``(dom-part, dow-part)`` pairs. Each expression is for ``second_at_beginning=True`` when
        :attr:`has_seconds`.
        """
        head = [compress(self.minutes, 0, 59), compress(self.hours, 0, 23)]
        if self.has_seconds:
            head.insert(0, compress(self.seconds, 0, 59))
        month = compress(self.months, 1, 12)
        dom_parts, dow_parts = _dom_parts(self.dom), _dow_parts(self.dow)
        if self.day_or:
            pairs = [(d, "*") for d in dom_parts] + [("*", w) for w in dow_parts]
        else:
            pairs = [(d, w) for d in dom_parts for w in dow_parts]
        return tuple(dict.fromkeys(" ".join([*head, d, month, w]) for d, w in pairs))


def nearest_weekday(year: int, month: int, day: int) -> int | None:
    """Day of month of the weekday nearest ``day`` without leaving the month (Quartz ``W``).

    Returns None when the month has no day ``day`` (``31W`` in April never fires).
    """
    length = calendar.monthrange(year, month)[1]
    if day > length:
        return None
    weekday = calendar.weekday(year, month, day)  # 0 = Monday
    if weekday == 5:
        return day - 1 if day > 1 else day + 2
    if weekday == 6:
        return day + 1 if day < length else day - 2
    return day


def compress(values: frozenset[int], low: int, high: int) -> str:
    """Write a value set as croniter text: ``*`` when full, else singles and ``A-B`` runs."""
    if values == frozenset(range(low, high + 1)):
        return "*"
    items, ordered = [], sorted(values)
    start = prev = ordered[0]
    for value in [*ordered[1:], None]:
        if value is not None and value == prev + 1:
            prev = value
            continue
        items.append(str(start) if start == prev else f"{start}-{prev}")
        if value is not None:
            start = prev = value
    return ",".join(items)


def _dom_parts(dom: DaysOfMonth) -> list[str]:
    plain = compress(dom.days, 1, 31) if dom.days else ""
    if dom.last:
        plain = "L" if not plain else f"{plain},L"
    return ([plain] if plain else []) + [f"{n}W" for n in dom.nearest]


def _dow_parts(dow: DaysOfWeek) -> list[str]:
    special = [f"{d}#{k}" for d, k in sorted(dow.nth)] + [f"L{d}" for d in sorted(dow.last)]
    plain = [compress(dow.days, 0, 6)] if dow.days else []
    return plain + ([",".join(special)] if special else [])


def parse_cron(text: str) -> CronSpec:
    """Parse a 5-field (``m h dom mon dow``) or 6-field (``s m h dom mon dow``) expression.

    Args:
        text: The expression; fields separated by ASCII spaces or tabs.

    Returns:
        The :class:`CronSpec`. Whether its day rule ever matches is NOT checked here.

    Raises:
        InvalidSchedule: wrong number of fields, or a malformed or out-of-range field.
    """
    fields = text.split()
    if len(fields) not in (5, 6):
        raise InvalidSchedule(
            f"expected 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds "
            f"first, got {len(fields)}"
        )
    has_seconds = len(fields) == 6
    seconds_text = fields.pop(0) if has_seconds else "0"
    minute, hour, dom, month, dow = fields
    return CronSpec(
        text=" ".join(([seconds_text] if has_seconds else []) + fields),
        has_seconds=has_seconds,
        seconds=_plain_field(seconds_text, SECOND),
        minutes=_plain_field(minute, MINUTE),
        hours=_plain_field(hour, HOUR),
        months=_plain_field(month, MONTH),
        dom=_parse_dom(dom),
        dow=_parse_dow(dow),
        minute_star=minute.startswith("*"),
        hour_star=hour.startswith("*"),
    )


def _plain_field(text: str, field: str) -> frozenset[int]:
    values: set[int] = set()
    for item in _items(text, field):
        values |= _parse_item(item, field)
    return frozenset(values)


def _items(text: str, field: str) -> list[str]:
    items = text.split(",")
    if any(not item for item in items):
        raise InvalidSchedule(f"{field}: empty item in list '{text}'")
    if "?" in text and (field not in (DOM, DOW) or text != "?"):
        raise InvalidSchedule(f"{field}: '?' is only allowed alone, in day-of-month or day-of-week")
    return items


def _parse_item(item: str, field: str) -> set[int]:
    """Expand one list item (``*``, ``N``, ``A-B``, with an optional ``/S``) to its values."""
    low, high = _BOUNDS[field]
    if field == DOW:
        high = 6 if item.startswith(("*", "?")) else 7
    if item == "?":
        return set(range(low, high + 1))
    match = _ITEM.match(item)
    if not match:
        raise InvalidSchedule(f"{field}: '{item}' is not a number, name, range or step")
    base, step_text = match["base"], match["step"]
    if base == "*":
        start, end = low, high
    elif "-" in base:
        start, end = (_value(part, field) for part in base.split("-"))
        if start > end:
            raise InvalidSchedule(
                f"{field}: range '{base}' runs backwards; write it as a list, e.g. "
                f"'{base.split('-')[0]}-{_BOUNDS[field][1]},{_BOUNDS[field][0]}-{base.split('-')[1]}'"
            )
    else:
        start = _value(base, field)
        end = high if step_text is not None else start
    step = 1 if step_text is None else _step(step_text, field, low, high)
    values = set(range(start, end + 1, step))
    return {0 if v == 7 else v for v in values} if field == DOW else values


def _value(text: str, field: str) -> int:
    low, high = _BOUNDS[field]
    if text.isdigit():
        value = int(text)
    elif text.upper() in _NAMES.get(field, {}):
        return _NAMES[field][text.upper()]
    else:
        raise InvalidSchedule(f"{field}: '{text}' is not a valid value")
    if not low <= value <= high:
        extra = ", 0 and 7 are Sunday" if field == DOW else ""
        raise InvalidSchedule(f"{field} {value} is out of range ({low}-{high}{extra})")
    return value


def _step(text: str, field: str, low: int, high: int) -> int:
    if not text.isdigit():
        raise InvalidSchedule(f"{field}: step '{text}' must be a positive whole number")
    step = int(text)
    if not 1 <= step <= high - low + 1:
        raise InvalidSchedule(f"{field}: step {step} must be between 1 and {high - low + 1}")
    return step


def _parse_dom(text: str) -> DaysOfMonth:
    days: set[int] = set()
    last, nearest = False, []
    for item in _items(text, DOM):
        upper = item.upper()
        if upper == "L":
            last = True
        elif upper == "LW" or upper.startswith("L-"):
            raise InvalidSchedule(f"day-of-month: '{item}' is not supported (use L or NW)")
        elif match := _NEAREST.match(item):
            day = int(match[1])
            if not 1 <= day <= 31:
                raise InvalidSchedule(f"day-of-month {day}W is out of range (1-31)")
            nearest.append(day)
        else:
            days |= _parse_item(item, DOM)
    if len(nearest) > _MAX_NEAREST:
        raise InvalidSchedule(f"day-of-month: at most {_MAX_NEAREST} 'W' entries are allowed")
    star = text.startswith("*") or text == "?"
    return DaysOfMonth(text, star, frozenset(days), last, tuple(sorted(set(nearest))))


def _parse_dow(text: str) -> DaysOfWeek:
    days: set[int] = set()
    nth: set[tuple[int, int]] = set()
    last: set[int] = set()
    for item in _items(text, DOW):
        if match := _NTH.match(item):
            occurrence = int(match[2])
            if not 1 <= occurrence <= 5:
                raise InvalidSchedule(f"day-of-week '{item}': the number after # must be 1-5")
            nth.add((_value(match[1], DOW) % 7, occurrence))
        elif item.upper() == "L":
            raise InvalidSchedule("day-of-week: 'L' needs a day before it, e.g. 5L (last Friday)")
        elif match := _LAST_DOW.match(item):
            last.add(_value(match[1], DOW) % 7)
        else:
            days |= _parse_item(item, DOW)
    star = text.startswith("*") or text == "?"
    return DaysOfWeek(text, star, frozenset(days), frozenset(nth), frozenset(last))


def check_occurs(spec: CronSpec, start: date) -> None:
    """Prove that the month and day rule of ``spec`` match at least one date.

    Scans :data:`VALIDATION_YEARS` years of calendar from ``start`` (at most ~10,000 dates), which
    covers every leap-year/weekday combination, so the check is exact and bounded. croniter
    itself only notices an impossible date while searching, after scanning 50 years.

    Raises:
        InvalidSchedule: no date matches, e.g. ``"day-of-month 30 never occurs in February"``.
    """
    for offset in range(VALIDATION_YEARS * 12):
        year, month0 = divmod(start.year * 12 + start.month - 1 + offset, 12)
        month = month0 + 1
        if month not in spec.months:
            continue
        for day in range(1, calendar.monthrange(year, month)[1] + 1):
            if spec.matches_day(date(year, month, day)):
                return
    raise InvalidSchedule(_never_message(spec))


def _never_message(spec: CronSpec) -> str:
    names = [MONTH_NAMES[m - 1] for m in sorted(spec.months)]
    where = "any month" if len(names) == 12 else _join(names, "or")
    dom, dow = spec.dom.text, spec.dow.text
    if len(spec.dow.days) == 7:
        return f"day-of-month {dom} never occurs in {where}"
    if len(spec.dom.days) == 31:
        return f"day-of-week {dow} never occurs in {where}"
    if spec.day_or:
        return f"neither day-of-month {dom} nor day-of-week {dow} ever occurs in {where}"
    return f"day-of-month {dom} and day-of-week {dow} never fall on the same day in {where}"


def _join(words: list[str], last: str) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"
