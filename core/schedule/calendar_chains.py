"""systemd's own reading of one calendar event's parts: what it accepts and what each means.

A port of the parser, the normalisation and the validity rules of systemd's
``calendarspec.c`` (systemd 252; systemd.time(7), "Calendar Events"), so that a calendar
event is accepted exactly when ``systemd-analyze calendar`` accepts it, and each part means
the values systemd fires at (``tests/unit/test_oncalendar_systemd.py`` is the differential).
:mod:`core.schedule.oncalendar` hands the values to the ``oncalendar`` package's search.

Each part (year, month, day, hour, minute, second) is a *chain* of components separated by
``,``; a component is ``start``, ``start..stop`` or either with ``/repeat``. systemd then
normalises each chain (two-digit years; a range's stop shortened to a multiple of its repeat;
a range whose repeat cannot fire twice, or that starts and ends on one value, becomes its
start alone; components sorted) and refuses a chain that
(``chain_valid``):

* has a start or a stop outside the part's values (years 1970-2199, a ``~`` day at most 28
  from the end of the month - and, a quirk kept as systemd has it, each further ``~``
  component of the chain three days less: ``~20,27`` is refused, ``~07,25`` is not);
* has a repeat longer than the part (``*:00/60``, ``*-06/12-*``);
* has a repetition that never fires twice: ``start + repeat`` past the stop or the part's end
  (``*-06/7-*``), or for ``~`` days past the last day (``~01/1``);
* a range of seconds without repetition that starts and ends on one second (``*:*:5..5``).

What a component means (``find_matching_component``): ``a..b/r`` is a, a+r, ... up to b;
``a/r`` runs to the part's end; for the last days ``~a..b/r`` is the a-th last, the
(a+r)-th last, ... (counted from ``a``, as the plain form), and ``~a/r`` the a-th last, the
(a-r)-th last, ... down to the last day.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CalendarFields", "ChainError", "SHORTHANDS", "read_event"]

#: systemd's shorthands (case-insensitive), as full events.
SHORTHANDS = {
    "minutely": "*-*-* *:*:00", "hourly": "*-*-* *:00:00", "daily": "*-*-* 00:00:00",
    "monthly": "*-*-01 00:00:00", "weekly": "Mon *-*-* 00:00:00",
    "yearly": "*-01-01 00:00:00", "annually": "*-01-01 00:00:00",
    "anually": "*-01-01 00:00:00",  # systemd keeps this misspelling for compatibility
    "quarterly": "*-01,04,07,10-01 00:00:00", "semiannually": "*-01,07-01 00:00:00",
    "semi-annually": "*-01,07-01 00:00:00", "biannually": "*-01,07-01 00:00:00",
    "bi-annually": "*-01,07-01 00:00:00",
}
_DAY_NAMES = (("monday", 0), ("mon", 0), ("tuesday", 1), ("tue", 1), ("wednesday", 2),
              ("wed", 2), ("thursday", 3), ("thu", 3), ("friday", 4), ("fri", 4),
              ("saturday", 5), ("sat", 5), ("sunday", 6), ("sun", 6))
_MAX_COMPONENTS = 240
_INT_MAX = 2**31 - 1
_NUMBER = re.compile(r"\d+")


class ChainError(ValueError):
    """systemd refuses the event; the message names the part and says why."""


@dataclass(frozen=True)
class CalendarFields:
    """The values each part of an event fires at: weekdays 0 = Monday; ``days`` hold ``-k``
    for the k-th last day of the month (``~``); seconds whole."""

    weekdays: frozenset[int]
    years: frozenset[int]
    months: frozenset[int]
    days: frozenset[int]
    hours: frozenset[int]
    minutes: frozenset[int]
    seconds: frozenset[int]


@dataclass
class _Component:
    start: int
    stop: int = -1
    repeat: int = 0


@dataclass
class _Part:
    name: str
    text: str
    chain: list[_Component] | None  # None: '*'
    low: int
    high: int
    scale: int = 1  # seconds are read in microseconds, as systemd does
    last_days: bool = False  # the day part after '~'


def read_event(body: str) -> CalendarFields:
    """Read one calendar event (its time zone already taken off, parts separated by single
    spaces) as systemd does.

    Raises:
        ChainError: systemd refuses it; the message names the part.
    """
    text = SHORTHANDS.get(body.lower(), body)
    if not text:
        raise ChainError("the event is empty")
    alone = next((w for w in text.split() if w.lower() in SHORTHANDS), None)
    if alone is not None:
        raise ChainError(f"{alone!r} is a shorthand and stands alone: it takes no other "
                         "weekday, date or time")
    rest, weekdays = _weekdays(text)
    rest, date = _date(rest)
    parts = [*date, *_time(rest)]
    end_of_month = date[2].last_days and date[2].chain is not None
    for part in parts:
        _normalise(part)
        _check(part, end_of_month and part is date[2])
    year, month, day, hour, minute, second = (_values(p, p is date[2] and end_of_month)
                                              for p in parts)
    return CalendarFields(weekdays, year, month, day, hour, minute,
                          frozenset(s // 1_000_000 for s in second))


def _weekdays(text: str) -> tuple[str, frozenset[int]]:
    """``parse_weekdays``: names (any case), lists with ',' (a trailing one allowed), ranges
    with '..' or '-'. Returns the rest and the weekdays (all when none are given)."""
    bits: set[int] = set()
    p, low, first = 0, -1, True
    while True:
        name = next(((n, nr) for n, nr in _DAY_NAMES if text[p:p + len(n)].lower() == n),
                    None)
        if name is None:
            if first:
                return text, frozenset(range(7))
            raise ChainError(f"the weekday part {_word(text)!r} is not valid: after "
                             f"{text[:p]!r} a weekday name must follow (Mon … Sun, Monday … "
                             "Sunday)")
        word, nr = name
        p += len(word)
        if p < len(text) and text[p] not in "-., ":
            wrong = re.split(r"[ .,-]", text[p - len(word):])[0]
            raise ChainError(f"the weekday part {_word(text)!r} is not valid: {wrong!r} is "
                             "not a weekday name (Mon … Sun, Monday … Sunday)")
        bits.add(nr)
        if low >= 0:
            if low > nr:
                raise ChainError(f"the weekday part {_word(text)!r} is not valid: a range of "
                                 "weekdays must not run backwards (Mon..Fri, not Fri..Mon)")
            bits.update(range(low + 1, nr))
        if p == len(text):
            return "", _all_if_every(bits)
        if text[p] == " ":
            return text[p + 1:], _all_if_every(bits)
        if text[p] == ".":
            if low >= 0 or text[p + 1:p + 2] != ".":
                raise ChainError(f"the weekday part {_word(text)!r} is not valid: a range is "
                                 "written 'Mon..Fri', between two weekdays")
            low, p = nr, p + 2
        elif text[p] == "-":
            if low >= 0:
                raise ChainError(f"the weekday part {_word(text)!r} is not valid: a range is "
                                 "written 'Mon..Fri', between two weekdays")
            low, p = nr, p + 1
        else:
            low, p = -1, p + 1
        if p == len(text) or text[p] == " ":
            if low >= 0:
                raise ChainError(f"the weekday part {_word(text)!r} is not valid: the range "
                                 "has no end")
            return text[p + 1:], _all_if_every(bits)
        first = False


def _all_if_every(bits: set[int]) -> frozenset[int]:
    return frozenset(bits) if bits else frozenset(range(7))


def _date(text: str) -> tuple[str, list[_Part]]:
    """``parse_date``: ``[year-]month-day`` or ``[year-]month~day``; none when the part is a
    time (or there is nothing)."""
    year = _Part("year", "*", None, 1970, 2199)
    month = _Part("month", "*", None, 1, 12)
    day = _Part("day", "*", None, 1, 31)
    word = text.split(" ", 1)[0]
    if not word or word.startswith("@"):
        if word:
            raise ChainError("epoch times ('@1700000000') are not supported")
        return text, [year, month, day]
    first, sep, after = _chain_text(word)
    if sep in ("", ":"):
        return text, [year, month, day]
    if sep not in "-~":
        raise ChainError(f"the date part {word!r} is not valid: expected year-month-day "
                         "('*-*-01', '2025-01-01') or month-day")
    second, sep2, after2 = _chain_text(after)
    pieces = [first, second]
    if sep2 not in ("", "-", "~") or sep2 and sep == "~":
        raise ChainError(f"the date part {word!r} is not valid: expected year-month-day, "
                         "with '~' only before the day")
    if sep2:
        third, sep3, _ = _chain_text(after2)
        if sep3:
            raise ChainError(f"the date part {word!r} is not valid: a date has at most three "
                             "parts, year-month-day")
        pieces.append(third)
    last_days = (sep2 or sep) == "~"
    names = [year, month, day][-len(pieces):]
    for piece, part in zip(pieces, names, strict=True):
        part.text = piece
        part.chain = _chain(piece, part.name)
    if last_days:
        day.text, day.last_days = "~" + day.text, True
    return text[len(word) + 1:], [year, month, day]


def _time(text: str) -> list[_Part]:
    """``parse_calendar_time``: ``hour:minute[:second]``; none means 00:00:00."""
    hour = _Part("hour", "0", [_Component(0)], 0, 23)
    minute = _Part("minute", "0", [_Component(0)], 0, 59)
    second = _Part("second", "0", [_Component(0)], 0, 60 * 1_000_000 - 1, 1_000_000)
    if not text:
        return [hour, minute, second]
    word, _, extra = text.partition(" ")
    if extra:
        raise ChainError(f"{extra!r} after the time of day {word!r} is not understood: an "
                         "event is [weekday] [year-month-day] [hour:minute[:second]] "
                         "[time zone]")
    pieces = word.split(":")
    if len(pieces) not in (2, 3):
        raise ChainError(f"the time part {word!r} is not valid: expected hour:minute or "
                         "hour:minute:second")
    parts = [hour, minute, second][:len(pieces)]
    for piece, part in zip(pieces, parts, strict=False):
        part.text = piece
        part.chain = _chain(piece, part.name, part.scale)
    if len(pieces) == 2:
        second.chain = [_Component(0)]
    return [hour, minute, second]


def _chain_text(word: str) -> tuple[str, str, str]:
    """Split ``word`` at the first separator that ends a chain (``-``, ``~``, ``:``, or any
    other character a chain does not hold): ``(chain, separator, rest)``."""
    match = re.match(r"[\d.,/*]*", word)
    assert match is not None
    end = match.end()
    return word[:end], word[end:end + 1], word[end + 1:]


def _chain(text: str, name: str, scale: int = 1) -> list[_Component] | None:
    """``parse_chain``: ``*`` or components separated by ``,``."""
    if text.startswith("*"):
        if text != "*":
            raise ChainError(f"the {name} part {text!r} is not valid: '*' stands alone (no "
                             "list, range or repetition with it)")
        return None if scale == 1 else [_Component(0, -1, scale)]
    items = text.split(",")
    if len(items) > _MAX_COMPONENTS + 1:
        raise ChainError(f"the {name} part has more than {_MAX_COMPONENTS} items")
    return [_component(item, text, name, scale) for item in items]


def _component(item: str, text: str, name: str, scale: int) -> _Component:
    """``prepend_component``: ``start[..stop][/repeat]``."""
    match = re.fullmatch(r"(\d+)(?:\.\.(\d+))?(?:/(\d+))?", item)
    if match is None:
        raise ChainError(f"the {name} part {text!r} is not valid: {item!r} is not a value, "
                         "a range 'a..b' or a repetition 'a/r'" if item else
                         f"the {name} part {text!r} is not valid: an empty item in the list")
    start, stop, repeat = (None if g is None else int(g) * scale for g in match.groups())
    if any(v is not None and v > _INT_MAX for v in (start, stop, repeat)):
        raise ChainError(f"the {name} part {text!r} is not valid: {item!r} is too large")
    assert start is not None
    if repeat == 0:
        raise ChainError(f"the {name} part {text!r} is not valid: a repetition of 0 ({item!r})")
    if repeat is None:
        repeat = scale if stop is not None else 0
        if scale > 1 and stop is not None and start + repeat > stop:
            raise ChainError(f"the {name} part {text!r} is not valid: a range of seconds must "
                             f"span at least one second ({item!r})")
    return _Component(start, -1 if stop is None else stop, repeat)


def _normalise(part: _Part) -> None:
    """``calendar_spec_normalize``: two-digit years, ranges cut to a multiple of the repeat,
    ranges that cannot repeat as their start, sorted, without duplicates."""
    if part.chain is None:
        return
    for c in part.chain:
        if part.name == "year":
            c.start, c.stop = _full_year(c.start), _full_year(c.stop)
        if c.stop > c.start and c.repeat > 0:
            c.stop -= (c.stop - c.start) % c.repeat
        if c.stop > c.start and c.repeat > 0 and c.start + c.repeat > c.stop \
                or c.start == c.stop:
            c.stop, c.repeat = -1, 0
    unique = {(c.start, c.stop, c.repeat) for c in part.chain}
    part.chain = [_Component(*key) for key in sorted(unique)]


def _full_year(value: int) -> int:
    if 0 <= value < 70:
        return value + 2000
    if 70 <= value < 100:
        return value + 1900
    return value


def _check(part: _Part, last_days: bool) -> None:
    """``chain_valid``: the part's bounds, and repetitions that can fire."""
    if part.chain is None:
        return
    low, high = part.low, part.high
    for c in part.chain:
        if last_days:
            high -= 3  # systemd lowers the bound for each component of a '~' chain
        shown = f"the {part.name} part {part.text!r} is not valid"
        scale = part.scale
        if not low <= c.start <= high or c.stop >= 0 and not low <= c.stop <= high:
            if last_days:
                raise ChainError(f"{shown}: systemd reads a last day at most {high} days "
                                 "from the end of the month here ('~' days are 1-28, each "
                                 "further item of the list three less)")
            raise ChainError(f"{shown}: values are {low // scale}-{high // scale}")
        if c.repeat > high - low:
            raise ChainError(f"{shown}: the repetition /{c.repeat // scale} is longer than "
                             f"the {part.name} part ({low // scale}-{high // scale})")
        if c.stop >= 0 and c.start + c.repeat > c.stop:
            raise ChainError(f"{shown}: the range must not run backwards")
        if c.stop < 0 and last_days and c.start - c.repeat < low:
            raise ChainError(f"{shown}: '~{c.start}/{c.repeat}' never repeats (the last day "
                             "is ~1)")
        if c.stop < 0 and not last_days and c.repeat and c.start + c.repeat > high:
            raise ChainError(f"{shown}: '{c.start // scale}/{c.repeat // scale}' never "
                             f"repeats within {low // scale}-{high // scale}")


def _values(part: _Part, last_days: bool) -> frozenset[int]:
    """What the chain fires at (``find_matching_component``)."""
    if part.chain is None:
        return frozenset(range(part.low, part.high + 1))
    values: set[int] = set()
    step_unit = part.scale
    for c in part.chain:
        if c.stop >= 0:
            found = range(c.start, c.stop + 1, c.repeat)
        elif c.repeat:
            found = range(c.start, 0, -c.repeat) if last_days \
                else range(c.start, part.high + 1, c.repeat)
        else:
            found = range(c.start, c.start + 1)
        values.update(-v if last_days else v for v in found
                      if not part.scale > 1 or v % step_unit == 0)
    return frozenset(values)


def _word(text: str) -> str:
    return text.split(" ", 1)[0]
