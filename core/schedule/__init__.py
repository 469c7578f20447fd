"""Schedule engine: parse a schedule string once, then answer "when does it fire next?".

Public API: :func:`parse_schedule` (and its cache :func:`cached_schedule`), :class:`Schedule`,
:class:`Fire`, :class:`InvalidSchedule`. :func:`parse_schedule` also reads schedules written in
English or French words (:mod:`core.schedule.words`), once, into the canonical grammar.
All instants in and out are tz-aware UTC; naive datetimes raise ``ValueError``. Every operation
is bounded by construction: input is capped at 200 characters, validation scans a fixed 28-year
window, a search stops after 50 years and lists stop at 1000 fires. Grammar and DST rules are
documented in docs/schedules.md.

croniter 7.0.0 is wrapped, not patched. It only searches naive local wall-clock slots of a
canonical expression we generate (:mod:`core.schedule.cron`). What the wrapper corrects:

1. Seconds position: croniter reads a 6th field as *trailing* seconds by default
   (``*/30 * * * * *`` fires every second); we always pass ``second_at_beginning=True``.
2. Fall-back double fire: tz-aware croniter fires a fixed-time job (``30 1 * * *``, New York,
   2024-11-03) at both 01:30 EDT and 01:30 EST; we fire at the first occurrence only.
3. Spring-forward gap for wildcard jobs: croniter moves ``*/15 2 * * *`` to 03:00 on the gap
   day; Vixie skips wildcard slots that do not exist. Fixed-time slots in one gap
   (``15,45 2 * * *``) are collapsed into one fire at the gap end, which we guarantee ourselves.
4. ``*/2`` day-of-month: croniter ORs day-of-month and day-of-week whenever both are not full
   (``0 0 */2 * 1`` fires every odd day plus Mondays); Vixie/cronie AND them when either field
   starts with ``*`` (odd days that are Mondays).
5. OR semantics with ``W`` or ``#``: ``0 0 15W * 1`` ignores the Mondays and ``0 0 15 * 1#2``
   raises "failed to find next date"; we split the day rule into separate croniter streams.
6. Equal ranges: croniter widens ``5-5`` or ``MON-MON`` to the whole field (every minute, every
   day); we hand croniter explicit values only.
7. ``NW`` past the month's end: croniter clamps ``31W`` to the last day (fires 30 April); like a
   plain ``31``, we do not fire in months without that day.
8. ``5L`` (last Friday, Quartz spelling) is rejected by croniter, which wants ``L5``; we accept
   ``5L`` and translate.
9. Impossible dates (``0 0 30 2 *``) are accepted by croniter and only fail while searching; we
   reject them at parse time with a message, by a bounded scan.
10. Unbounded work: croniter's DST code can step minute by minute through a gap and each search
    may scan 50 years; it never sees a time zone here, its horizon is set explicitly, answers
    failing our own field check are skipped at most 1000 times in a row, and a rejected day is
    skipped whole.
11. Sub-second starts: croniter goes through float timestamps; we floor the start to the field
    resolution before asking (a precaution - no wrong answer was observed - so that "strictly
    after 10:00:00.5" never depends on float rounding).
12. Extensions we refuse rather than inherit: wrapping ranges (``FRI-MON``), hashed ``H``/``R``
    fields, a 7th (year) field.
"""

from __future__ import annotations

import calendar
import dataclasses
import functools
import itertools
import re
import zoneinfo
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from cron_descriptor import ExpressionDescriptor, Options

from core.schedule.cron import Slots, cron_fires
from core.schedule.days import (
    DayPeriod,
    day_period_fires,
    describe_day_period,
    first_day,
    is_day_period,
    parse_day_period,
)
from core.schedule.fields import CronSpec, check_occurs, compress, parse_cron
from core.schedule.grammar import (
    format_utc,
    normalise_spaces,
    parse_at,
    parse_interval,
    recognise,
    split_form,
)
from core.schedule.model import (
    MAX_EXPRESSION_LENGTH,
    MAX_FIRES,
    SEARCH_YEARS,
    Fire,
    InvalidSchedule,
    require_utc,
)
from core.schedule.oncalendar import (
    OnCalendarSpec,
    calendar_fires,
    describe_oncalendar,
    never_fires_message,
)
from core.schedule.zones import load_zone, make_fire

__all__ = ["Fire", "InvalidSchedule", "Schedule", "cached_schedule", "parse_schedule",
           "canonical_form", "schedule_text"]

_NTH = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}
_DESCRIBE_OPTIONS = Options(locale_code="en_US", use_24hour_time_format=False)


@dataclass(frozen=True)
class Schedule:
    """A validated, immutable schedule. Build it with :func:`parse_schedule`.

    Attributes:
        expression: The canonical schedule string: as given, stripped, or what the words of
            ``text`` read as (``"0 9 * * 1-5"``).
        text: The phrase as given, stripped, when the schedule was written in words
            (``"every weekday at 9am"``), else None.
        timezone: IANA zone name the schedule is evaluated in.
        kind: ``"cron"`` (macros included), ``"oncalendar"`` (systemd calendar events),
            ``"interval"``, ``"days"`` (an anchored calendar period, ``@every 3d at 09:00``)
            or ``"at"``.
        interval_seconds: The period in seconds for intervals, else None.
    """

    expression: str
    timezone: str
    kind: str
    interval_seconds: float | None
    _zone: zoneinfo.ZoneInfo = field(repr=False, compare=False)
    _cron: CronSpec | None = field(default=None, repr=False)
    _calendar: OnCalendarSpec | None = field(default=None, repr=False)
    _days: DayPeriod | None = field(default=None, repr=False)
    _period: timedelta | None = field(default=None, repr=False)
    _anchor: datetime | None = field(default=None, repr=False)
    _at: datetime | None = field(default=None, repr=False)
    _label: str = field(default="", repr=False, compare=False)
    text: str | None = None

    def next_fire(self, after: datetime) -> datetime | None:
        """The smallest fire instant strictly after ``after``.

        Args:
            after: Tz-aware instant; sub-second precision is kept (with a per-minute cron,
                10:00:00.5 gives 10:01:00; an interval anchored at 10:00:00.25 with a 30 s period
                gives 10:00:30.25).

        Returns:
            Tz-aware UTC instant, or None when there is none: a one-shot already passed, or a
            cron with no slot within 50 years.

        Raises:
            ValueError: ``after`` is naive or outside 1900-2399.
        """
        fire = next(self._fires(require_utc(after, "after")), None)
        return None if fire is None else fire.at

    def fires(self, after: datetime, count: int) -> list[Fire]:
        """The first ``count`` fires strictly after ``after``, ascending, with local times.

        Raises:
            ValueError: ``after`` naive or out of range, or ``count`` not in 0-1000.
        """
        _check_limit(count, "count")
        return list(itertools.islice(self._fires(require_utc(after, "after")), count))

    def fires_between(self, since: datetime, until: datetime, limit: int) -> list[datetime]:
        """Fire instants in ``(since, until]``, ascending: the FIRST ``limit`` of them.

        Used for catch-up after downtime; callers wanting the most recent missed slot pass a
        ``since`` close to ``until`` or walk the list. Empty when ``until <= since``.

        Raises:
            ValueError: naive or out-of-range instants, or ``limit`` not in 0-1000.
        """
        _check_limit(limit, "limit")
        since, until = require_utc(since, "since"), require_utc(until, "until")
        result: list[datetime] = []
        if until <= since:
            return result
        for fire in self._fires(since):
            if fire.at > until or len(result) >= limit:
                break
            result.append(fire.at)
        return result

    def describe(self) -> str:
        """Human description, e.g. ``"At 02:30 AM (Europe/Paris)"``, ``"Every 90 seconds"``,
        ``"Once at 2026-12-01T09:00:00Z"``; the zone is appended unless it is UTC. Cron text
        comes from cron_descriptor (en_US), corrected for Vixie's AND rule on ``*``-fields."""
        suffix = "" if self.timezone == "UTC" else f" ({self.timezone})"
        return self._label + suffix

    def pinned(self) -> str:
        """The schedule string that fires as this one whatever anchor it is parsed with: an
        interval or a calendar period with its anchor named (``@every 90m from
        2026-03-01T10:00:00Z``, ``@every 14d on tue at 09:00 from 2026-03-03``), else
        :attr:`expression`. What an export writes, so that applying it elsewhere (another
        instant, another instance) fires at the same instants."""
        if self.kind == "interval" and self._anchor is not None \
                and " from " not in self.expression:
            every = "" if self.expression.startswith("@") else "@every "  # a bare "90s"
            return f"{every}{self.expression} from {format_utc(self._anchor)}"
        if self._days is not None and self._days.start is None:
            assert self._anchor is not None
            first = first_day(self._days, self._zone, self._anchor)
            return "@every " + dataclasses.replace(self._days, start=first).canonical
        return self.expression

    @property
    def is_fixed_time(self) -> bool:
        """True for a one-shot and for a Vixie fixed-time cron job (minute and hour fields not
        starting with ``*``), which follow the gap/fold rules; False for intervals and wildcard
        cron jobs, which follow real elapsed time."""
        if self._cron is not None:
            return self._cron.is_fixed_time
        return self.kind in ("at", "days")

    def _fires(self, after: datetime) -> Iterator[Fire]:
        if self._cron is not None:
            return cron_fires(self._cron, self._zone, after)
        if self._calendar is not None:
            return calendar_fires(self._calendar, self._zone, after)
        if self._days is not None:
            assert self._anchor is not None
            return day_period_fires(self._days, self._zone, self._anchor, after)
        if self._at is not None:
            return iter([make_fire(self._at, self._zone)] if self._at > after else [])
        return self._interval_fires(after)

    def _interval_fires(self, after: datetime) -> Iterator[Fire]:
        # Fires are anchor + k*period, k >= 1, computed from k (never by adding periods up) so
        # they cannot drift; timedelta arithmetic is exact to the microsecond.
        assert self._anchor is not None and self._period is not None
        k = max(1, (after - self._anchor) // self._period + 1)
        while (at := self._anchor + k * self._period).year < 2400 + SEARCH_YEARS:
            yield make_fire(at, self._zone)
            k += 1


def parse_schedule(
    expression: str, timezone: str = "UTC", *, anchor: datetime, now: datetime | None = None
) -> Schedule:
    """Parse and validate a schedule string.

    Args:
        expression: Cron (5 fields, or 6 with seconds first), a macro (``@daily``), an interval
            (``@every 1h30m``, ``30s``) or a one-shot (``@at 2026-12-01T09:00:00Z``); or a
            phrase in English or French words (``"every weekday at 9am"``, ``"tous les jours à
            9 h"``), read into one of those forms first (:mod:`core.schedule.words`). At most
            200 characters. Grammar: docs/schedules.md.
        timezone: IANA zone the cron fields (and a one-shot without offset) are read in.
        anchor: The job's creation instant (tz-aware): intervals fire at anchor + k*period,
            k >= 1, so they never drift.
        now: When given, a one-shot must be after it.

    Returns:
        The immutable :class:`Schedule`; for a phrase its ``expression`` is the canonical
        form and ``text`` the phrase.

    Raises:
        InvalidSchedule: the expression or zone is invalid; the message says what is wrong
            (for a phrase, :class:`core.schedule.words.PhraseError` names the word).
        ValueError: ``anchor`` or ``now`` is naive or out of range (a programming error).
    """
    zone_checked = False
    given = expression.strip() if isinstance(expression, str) else ""
    if isinstance(expression, str):
        expression = normalise_spaces(expression)
    if isinstance(expression, str) and 0 < len(expression.strip()) <= MAX_EXPRESSION_LENGTH:
        text = expression.strip()
        zone = load_zone(timezone)  # a bad zone is reported as such, not as a reading
        zone_checked = True
        form, found = recognise(text, zone)
        if isinstance(found, OnCalendarSpec):
            require_utc(anchor, "anchor")
            # kept exactly as given (a '\r' of its line breaks too), read with its spaces
            # normalised
            return _oncalendar_schedule(given, found, timezone, zone, now or anchor)
        if form == "words":
            assert isinstance(found, str)
            canonical = found
            try:
                parsed = parse_schedule(canonical, timezone, anchor=anchor, now=now)
            except InvalidSchedule as exc:
                raise InvalidSchedule(f"{text!r} reads as {canonical!r}, which is rejected: "
                                      f"{exc}") from None
            return dataclasses.replace(parsed, text=text)
    anchor = require_utc(anchor, "anchor")
    now = None if now is None else require_utc(now, "now")
    zone = load_zone(timezone) if not zone_checked else zoneinfo.ZoneInfo(timezone)
    kind, body = split_form(expression)
    expression = expression.strip()
    if kind == "interval" and is_day_period(body):
        period = parse_day_period(body)
        return Schedule(kind="days", interval_seconds=None, _days=period, _anchor=anchor,
                        _label=describe_day_period(period, zone, anchor),
                        expression=expression, timezone=timezone, _zone=zone)
    if kind == "interval":
        body, named = _named_anchor(body, zone)
        interval = parse_interval(body)
        return Schedule(
            kind="interval",
            interval_seconds=interval.period.total_seconds(),
            _period=interval.period,
            _anchor=named or anchor,
            _label=f"Every {interval.label}" + (f" from {format_utc(named)}" if named else ""),
            expression=expression, timezone=timezone, _zone=zone,
        )
    if kind == "at":
        at = parse_at(body, zone, now)
        label = f"Once at {format_utc(at)}"
        return Schedule(kind="at", interval_seconds=None, _at=at, _label=label,
                        expression=expression, timezone=timezone, _zone=zone)
    spec = parse_cron(body)
    start = now or anchor
    check_occurs(spec, start.astimezone(zone).date())
    schedule = Schedule(
        kind="cron", interval_seconds=None, _cron=spec, _label=_describe(spec),
        expression=expression, timezone=timezone, _zone=zone,
    )
    _check_fires(schedule, spec, start)
    return schedule


def _named_anchor(body: str, zone: zoneinfo.ZoneInfo) -> tuple[str, datetime | None]:
    """``("90m", instant)`` for ``"90m from 2026-03-01T10:00:00Z"``: an interval whose anchor
    is named fires the same whatever anchor it is parsed with (what an export writes)."""
    match = re.fullmatch(r"(\S+)\s+from\s+(\S+)", body.strip())
    if match is None:
        return body, None
    return match[1], parse_at(match[2], zone, None)


def _oncalendar_schedule(text: str, calendar: OnCalendarSpec, timezone: str,
                         zone: zoneinfo.ZoneInfo, start: datetime) -> Schedule:
    # kept as given (stripped), as cron is: /api/v3 answers the text it was given
    schedule = Schedule(expression=text, timezone=timezone, kind="oncalendar",
                        interval_seconds=None, _zone=zone, _calendar=calendar,
                        _label=describe_oncalendar(calendar, timezone))
    if schedule.next_fire(require_utc(start, "now")) is None:
        raise InvalidSchedule(never_fires_message(calendar, start))
    return schedule


def canonical_form(expression: object) -> object:
    """What ``expression`` is stored as when it is read: a phrase's canonical form (``"every
    day at noon"`` -> ``"0 12 * * *"``), a calendar event as given (stripped); else
    ``expression`` itself. Lets a caller compare a schedule given again with the stored
    one (the same schedule written again is no change of timing)."""
    found = _read_form(expression)
    return expression if found is None else found[1]


def schedule_text(parsed: Schedule, carried: object = None) -> str | None:
    """The words to keep beside a parsed schedule (the ``schedule_text`` of jobs and monitors).

    Args:
        parsed: the schedule just parsed from a definition.
        carried: the ``schedule_text`` of the stored definition, when the definition being
            normalised was merged from it (a PATCH).

    Returns:
        The phrase ``parsed`` was written in; else ``carried`` when it still reads as
        ``parsed``'s canonical form (a PATCH that left the schedule alone keeps its words,
        one that set another schedule drops them; the update commands carry nothing when
        the PATCH gives a schedule); else None.
    """
    if parsed.text is not None:
        return parsed.text
    found = _read_form(carried)
    unnamed = re.sub(r"\s+from\s+\S+$", "", parsed.expression)  # an export names the anchor
    if found is None or found[0] != "words" or found[1] not in (parsed.expression, unnamed):
        return None
    assert isinstance(carried, str)
    return carried.strip()


def _read_form(expression: object) -> tuple[str, str] | None:
    """``(form, stored string)`` of a phrase or a calendar event (:func:`recognise`, zone
    UTC: the form of a string does not depend on its zone), or None."""
    if not isinstance(expression, str) or not 0 < len(expression.strip()) <= \
            MAX_EXPRESSION_LENGTH:
        return None
    try:
        form, found = recognise(normalise_spaces(expression).strip(), zoneinfo.ZoneInfo("UTC"))
    except InvalidSchedule:
        return None
    if isinstance(found, OnCalendarSpec):
        return form, expression.strip()
    if isinstance(found, str):
        return form, found
    return None


@functools.lru_cache(maxsize=65536)
def cached_schedule(expression: str, timezone: str, anchor: datetime) -> Schedule:
    """Parse a stored (already validated) schedule once per (expression, zone, anchor)."""
    return parse_schedule(expression, timezone, anchor=anchor)


def _check_fires(schedule: Schedule, spec: CronSpec, start: datetime) -> None:
    try:
        Slots(spec)
    except ValueError as exc:  # croniter refused a canonical expression: report, don't crash
        raise InvalidSchedule(f"cron expression is not supported: {exc}") from None
    if schedule.next_fire(start) is None:
        raise InvalidSchedule(
            f"schedule never fires in {schedule.timezone}: every matching local time falls in a "
            "DST gap, and wildcard jobs skip those"
        )


def _describe(spec: CronSpec) -> str:
    # cron_descriptor guesses whether a 6-field string starts with seconds; 7 fields (seconds
    # first, year last) are unambiguous.
    text = _uneven_steps_listed(_describable(spec), spec.has_seconds)
    dow = spec.dow
    special = len(dow.nth) + len(dow.last)
    # cron_descriptor reads "0,3#2" as "the second Sunday and Wednesday" and "2#2,2#4" as
    # "the  Tuesday and Tuesday": several ordinals, or weekdays beside one, are described here
    mixed = bool(dow.nth or dow.last) and not dow.star and (bool(dow.days) or special > 1)
    if mixed:
        fields = text.split()
        fields[-1] = compress(dow.days, 0, 6) if dow.days else "*"
        text = " ".join(fields)
    text = f"{text} *" if spec.has_seconds else text
    try:
        label: str = ExpressionDescriptor(text, _DESCRIBE_OPTIONS).get_description()
    except Exception:  # cron_descriptor raises assorted errors on exotic but valid input
        return f"Cron '{spec.text}'"
    if mixed:
        nth = _nth_weekdays(dow.nth, dow.last)
        joint = ", and on " if dow.days else ", or on " if spec.day_or else ", on "
        label = label.replace(", only on ", ", on ") + joint + nth
    hours = _uneven_steps_listed(spec.text, spec.has_seconds).split()[-4]
    if hours.startswith("*/") and hours != "*/1":
        # a wildcard step of hours follows the clock's hours (a DST change shortens or
        # lengthens one gap); the words "every 2 hours" are elapsed time (docs/schedules.md)
        label = re.sub(r"(?i)\b(every \d+ hours)", r"\1 of the clock", label, count=1)
    if not spec.day_or:
        # cron_descriptor always reads two restricted day fields as OR; Vixie ANDs them when one
        # starts with '*' (e.g. */2).
        label = label.replace(", or on ", ", and only on ")
    return label


def _nth_weekdays(nth: frozenset[tuple[int, int]], last: frozenset[int]) -> str:
    """``"the second and fourth Tuesday of the month"``, ``"the first Monday and the last
    Friday of the month"``: weekdays with the same ordinals together, as the phrase reader
    reads them back (an ordinal applies to every weekday after it, docs/schedules.md)."""
    ordinals: dict[int, set[int]] = {}
    for d, k in nth:
        ordinals.setdefault(d % 7, set()).add(k)
    for d in last:
        ordinals.setdefault(d % 7, set()).add(6)  # after the fifth
    groups: dict[tuple[int, ...], list[int]] = {}
    for d in sorted(ordinals, key=lambda d: (d - 1) % 7):
        groups.setdefault(tuple(sorted(ordinals[d])), []).append(d)
    names = {**_NTH, 6: "last"}
    parts = [" and ".join(names[k] for k in ks) + " "
             + " and ".join(calendar.day_name[(d - 1) % 7] for d in days)
             for ks, days in groups.items()]
    return "the " + " and the ".join(parts) + " of the month"


#: cron fields as (first value, last value, values in one turn of the field or None when
#: the turn has no fixed length: months have 28 to 31 days)
_STEPPED = ((0, 59, 60), (0, 59, 60), (0, 23, 24), (1, 31, None), (1, 12, 12), (0, 6, 7))


def _uneven_steps_listed(text: str, has_seconds: bool) -> str:
    """``text`` with each step (``*/25``, ``10/20``) whose fires are not that far apart all
    round listed as its values (``0,25,50``: :50 to :00 is 10 minutes; ``*/10`` of days:
    the 31st to the 1st is one day), so that the description never says "every 25 minutes"
    or "every 10 days" of them (docs/schedules.md, *The description reads back*)."""
    fields = text.split()
    kinds = _STEPPED if has_seconds else _STEPPED[1:]
    for i, (first, last, turn) in enumerate(kinds):
        items = fields[i].split(",")
        for j, item in enumerate(items):
            m = re.fullmatch(r"(\*|\d+)/(\d+)", item)
            if not m:
                continue
            start = first if m[1] == "*" else int(m[1])
            step = int(m[2])
            even = step == 1 or turn is not None and turn % step == 0 and start - first < step
            if not even:
                items[j] = ",".join(str(v) for v in range(start, last + 1, step))
        fields[i] = ",".join(items)
    return " ".join(fields)


def _describable(spec: CronSpec) -> str:
    """``spec.text`` with a day-of-week that names 7 (Sunday, as 0) rewritten in 0-6:
    cron_descriptor reads ``0-7`` as "Sunday through Sunday"."""
    fields = spec.text.split()
    if not re.search(r"(?:^|[,-])7(?:$|[,/-])", spec.dow.text):
        return " ".join(fields)
    dow = spec.dow
    special = [f"{d}#{k}" for d, k in sorted(dow.nth)] + [f"{d}L" for d in sorted(dow.last)]
    if dow.days == frozenset(range(7)) and not special:
        fields[-1] = "*"
        if spec.day_or:  # every weekday ORed with the days of the month: every day
            fields[-3] = "*"
    else:
        fields[-1] = ",".join(([compress(dow.days, 0, 6)] if dow.days else []) + special)
    return " ".join(fields)


def _check_limit(value: int, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_FIRES:
        raise ValueError(f"{name} must be an integer between 0 and {MAX_FIRES}, got {value!r}")
