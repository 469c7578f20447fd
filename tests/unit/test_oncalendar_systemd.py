"""OnCalendar against systemd itself: ``systemd-analyze calendar`` is the oracle.

A generated set of calendar events (``tests/oncalendar_gen.py``: every part of systemd.time(7),
plus mutations that may be invalid) is given to ``systemd-analyze calendar --base-time=…
--iterations=N`` in six zones, from base instants around both DST changes of each (and inside
the repeated hour's second pass). For every expression:

- systemd refuses it -> cronledger's calendar grammar refuses it;
- systemd accepts it -> cronledger reads it as a calendar event, and its next N fires equal
  systemd's elapses, instant for instant (none when systemd answers "never").

Two behaviours of systemd 252 are not followed (docs/schedules.md, *OnCalendar*), and the
comparison recognises them exactly rather than skipping expressions:

- **Repetitions that overflow** (``*-*-4/8`` after the 28th, ``01/7:36`` after 22:36): systemd
  adds the repetition past the field's end (day 36 of December), lets ``mktime`` carry it into
  the next month (5 January) and so skips that month's first matches (4 January). cronledger
  fires on every value systemd.time(7) defines. Accepted as systemd's miss only when systemd
  itself, asked from one microsecond before the slot it skipped, answers that very slot.
- **Which pass of a repeated hour**: systemd resolves a wall time inside a fall-back fold with
  ``mktime(tm_isdst=-1)``, whose answer depends on glibc's previous call; cronledger fires the
  first occurrence (the second when the search starts in the second pass). Where the two
  differ, the wall-clock times must be equal and the instants the two passes of one time.

Deliberate refusals (fractional seconds, "never", zone abbreviations) are tested by name
below. The larger run of the same comparison is
``tests/integration/test_oncalendar_differential.py``.
"""

from __future__ import annotations

import itertools
import zoneinfo
from datetime import UTC, datetime, timedelta
from functools import cache

import pytest

from core.schedule import InvalidSchedule, parse_schedule
from core.schedule.grammar import recognise
from core.schedule.oncalendar import CalendarError, calendar_fires, parse_oncalendar
from tests.oncalendar_gen import ZONES, calendar_expressions, dst_bases
from tests.systemd_calendar import FAILED, systemd_elapses

ITERATIONS = 5


def differential(seed: int, count: int, zones=ZONES) -> list[str]:
    """Problems found comparing ``count`` generated expressions with systemd (empty: none)."""
    expressions = calendar_expressions(seed, count)
    problems: list[str] = []
    for zone_name in zones:
        zone = zoneinfo.ZoneInfo(zone_name)
        for base in dst_bases(zone_name):
            expected = systemd_elapses(expressions, zone_name, base, ITERATIONS)
            for expression in expressions:
                problem = _compare(expression, zone, base, expected[expression])
                if problem:
                    problems.append(f"{zone_name} after {base.isoformat()}: {problem}")
    return problems


def _compare(expression: str, zone: zoneinfo.ZoneInfo, base: datetime,
             elapses: list[datetime] | str | None, iterations: int = ITERATIONS) -> str | None:
    if elapses == FAILED:  # systemd's own bug (tests/systemd_calendar.py): nothing to compare
        return None
    whole = _whole(expression, zone, base, elapses)
    if whole:
        return whole
    try:
        spec = parse_oncalendar(expression, zone)
    except CalendarError as exc:
        if elapses is None:
            return None
        return f"{expression!r}: systemd accepts it, cronledger refuses: {exc}"
    if elapses is None:
        return f"{expression!r}: systemd refuses it, cronledger accepts it"
    assert isinstance(elapses, list)
    if recognise(expression, zone)[0] != "oncalendar":
        return f"{expression!r}: not recognised as a calendar event"
    fires = [f.at for f in itertools.islice(calendar_fires(spec, zone, base), iterations)]
    if fires == elapses or _fold_choice(spec, zone, fires, elapses) \
            or _overflow_miss(expression, spec, zone, base, elapses):
        return None
    return (f"{expression!r}: cronledger {[f.isoformat() for f in fires]} != systemd "
            f"{[e.isoformat() for e in elapses]}")


def _whole(expression: str, zone: zoneinfo.ZoneInfo, base: datetime,
           elapses: list[datetime] | str | None) -> str | None:
    """The schedule as a whole (every grammar, as the API reads it): what systemd refuses is
    refused (a 422), whatever grammar tries it; what it accepts is read as a calendar event
    (unless it never fires again: "never", refused on purpose)."""
    try:
        schedule = parse_schedule(expression, zone.key, anchor=base)
    except InvalidSchedule as exc:
        if elapses is None or elapses == []:
            return None
        return f"{expression!r}: systemd accepts it, parse_schedule refuses: {exc}"
    if elapses is None:
        return (f"{expression!r}: systemd refuses it, parse_schedule accepts it as "
                f"{schedule.kind} {schedule.expression!r}")
    if schedule.kind != "oncalendar":
        return f"{expression!r}: read as {schedule.kind}, not as a calendar event"
    return None


def _event_zone(spec, zone: zoneinfo.ZoneInfo) -> zoneinfo.ZoneInfo:
    names = {event.zone for event in spec.events}
    return zone if names == {None} else zoneinfo.ZoneInfo(names.pop() or zone.key)


def _fold_choice(spec, zone, fires: list[datetime], elapses: list[datetime]) -> bool:
    """Same wall-clock times, and every differing instant is the other pass of its time."""
    local = _event_zone(spec, zone)
    if len(fires) != len(elapses):
        return False
    for ours, theirs in zip(fires, elapses, strict=True):
        wall_ours = ours.astimezone(local).replace(tzinfo=None, fold=0)
        wall_theirs = theirs.astimezone(local).replace(tzinfo=None, fold=0)
        if wall_ours != wall_theirs or ours != theirs and abs(ours - theirs) > timedelta(
                hours=1):
            return False
    return True


def _overflow_miss(expression, spec, zone, base, elapses: list[datetime]) -> bool:
    """systemd skipped slots after a repetition overflowed, and nothing else: every elapse of
    systemd is a fire of ours, and each fire of ours that systemd skipped is what systemd
    answers itself when asked from one microsecond before it (from a second before, the
    overflow can hit again: 23:59:59 + 11 minutes skips midnight)."""
    if "/" not in expression or not elapses:
        return False
    ours = [f.at for f in itertools.takewhile(lambda f: f.at <= elapses[-1],
                                              calendar_fires(spec, zone, base))]
    if not set(elapses) <= set(ours):
        return False
    for skipped in sorted(set(ours) - set(elapses))[:3]:
        again = systemd_elapses([expression], zone.key, skipped - timedelta(microseconds=1), 1)
        if again[expression] != [skipped]:
            return False
    return True


def test_generated_calendar_events_fire_as_systemd_says():
    # The first 30 of the 60 that tests/long/test_properties.py compares (same seed).
    problems = differential(seed=26, count=30)
    assert not problems, f"{len(problems)} differences, first ones:\n" + "\n".join(problems[:20])


@cache
def _systemd_all(expressions: tuple[str, ...], zone_name: str, base: datetime,
                 iterations: int) -> dict[str, list[datetime] | str | None]:
    """systemd's answers for every case of a parametrized test at once (one
    ``systemd-analyze`` per zone and base, not one per case: the subprocesses were most of the
    time), kept for the session; as :func:`systemd_elapses`."""
    return systemd_elapses(list(expressions), zone_name, base, iterations)


ISSUE_EXAMPLES = (
    "Mon..Fri 09:00", "*-*-* 02:00:00", "Mon *-*-1..7 09:00", "*-*~01 05:00", "quarterly",
    "semiannually", "weekly", "*:0/15", "Sat,Sun 10:00 Europe/Paris", "*-*-* 01:30",
    "*-*-* *:00/20", "*-*-* 02:30",
)


@pytest.mark.parametrize("expression", ISSUE_EXAMPLES)
@pytest.mark.parametrize("zone_name", ["Europe/Paris", "America/New_York"])
def test_the_issues_examples_and_dst_days(expression, zone_name):
    zone = zoneinfo.ZoneInfo(zone_name)
    for base in dst_bases(zone_name):
        expected = _systemd_all(ISSUE_EXAMPLES, zone_name, base, 8)[expression]
        assert _compare(expression, zone, base, expected, 8) is None


def test_fold_second_pass_fires_in_that_pass_as_systemd_does():
    # New York, 2024-11-03: 01:00-01:59 happens twice (05:00-05:59Z EDT, 06:00-06:59Z EST).
    # From 01:10 EST (second pass) systemd's next 01:30 is 01:30 EST; the oncalendar package
    # answers 01:30 EDT, an instant before the base.
    zone = zoneinfo.ZoneInfo("America/New_York")
    spec = parse_oncalendar("*-*-* 01:30", zone)
    base = datetime(2024, 11, 3, 6, 10, tzinfo=UTC)
    fires = [f.at for f in itertools.islice(calendar_fires(spec, zone, base), 2)]
    assert fires == [datetime(2024, 11, 3, 6, 30, tzinfo=UTC),
                     datetime(2024, 11, 4, 6, 30, tzinfo=UTC)]
    assert systemd_elapses(["*-*-* 01:30"], "America/New_York", base, 2)["*-*-* 01:30"] == fires


NOW = datetime(2024, 3, 30, 12, tzinfo=UTC)


@pytest.mark.parametrize(("expression", "zone", "message"), [
    ("*:*:0.5", "UTC", "fractional seconds are not supported"),
    ("*-02-30", "UTC", "never fires after 2024-03-30T12:00:00Z"),
    ("2020-01-01", "UTC", "never fires"),
    ("09:00 CET", "Europe/Paris", "'CET' is an abbreviation of Europe/Paris"),
    ("09:00 edt", "America/New_York", "'edt' is an abbreviation of America/New_York"),
    ("09:00 Mars/Base", "UTC", "unknown time zone 'Mars/Base'"),
    ("Mon..Fri 25:00", "UTC", "the hour part '25' is not valid: values are 0-23"),
    ("Mon..Fri at 9am", "UTC", "calendar event 'Mon..Fri at 9am' is not valid"),
    ("Fri..Mon 09:00", "UTC", "the weekday part 'Fri..Mon' is not valid"),
    ("@1700000000", "UTC", "unknown schedule keyword"),
    ("Mon 09:00\n" * 11, "UTC", "at most 10 calendar events"),
])
def test_deliberate_refusals_name_the_part(expression, zone, message):
    """systemd accepts the first five (fractions, 'never', abbreviations, epoch times);
    cronledger refuses them, saying why (docs/schedules.md, *OnCalendar*)."""
    with pytest.raises(InvalidSchedule, match=None) as info:
        parse_schedule(expression, zone, anchor=NOW, now=NOW)
    assert message in str(info.value)


def test_several_lines_fire_at_the_union_like_several_oncalendar_lines():
    text = "Mon..Fri 09:00\nSat 12:00 UTC"
    schedule = parse_schedule(text, "Europe/Paris", anchor=NOW, now=NOW)
    assert schedule.kind == "oncalendar" and schedule.expression == text
    fires = [f.at for f in schedule.fires(NOW, 12)]
    base = NOW
    expected = sorted({*systemd_elapses(["Mon..Fri 09:00"], "Europe/Paris", base, 12)[
        "Mon..Fri 09:00"], *systemd_elapses(["Sat 12:00 UTC"], "Europe/Paris", base, 12)[
        "Sat 12:00 UTC"]})[:12]
    assert fires == expected
    assert schedule.describe() == ("At 09:00, Monday through Friday; At 12:00, Saturday "
                                   "(UTC time) (Europe/Paris)")


#: Read wrongly or accepted against systemd before (issue 26's verification): each is now
#: read as systemd reads it, or refused as systemd refuses it, with the part named.
SYSTEMD_CASES = [
    ("*-06~06..09/2", None),  # '/' in a '~' range counts from its first day (~6, ~8)
    ("*-*~06..09/2 12:00", None),
    ("*-06/7-*", "the month part '06/7'"),
    ("*:00/60", "the minute part '00/60'"),
    ("*:*:00/60", "the second part '00/60'"),
    ("*-*~01/1", "the day part '~01/1'"),
    ("*-*~01..31", "the day part '~01..31'"),
    ("*-*~20,27", "the day part '~20,27'"),
    ("*-*~07,25", None),
    ("*-*~1,2,23", "the day part '~1,2,23'"),
    ("*-*-* 09:00 09:00", "'09:00' after the time of day '09:00'"),
    ("Mon,,Tue 09:00", "the weekday part 'Mon,,Tue'"),
    ("Tues 09:00", "'Tues' is not a weekday name"),
    ("Thurs,Fri 09:00", "'Thurs' is not a weekday name"),
    ("Mon, hourly", "'hourly' is a shorthand and stands alone"),
    ("03..03/13:00", None), ("*-*-* 9..17/24:00", None), ("*:00..59/60", None),
    ("biannually", None), ("bi-annually", None), ("semi-annually", None), ("anually", None),
    ("*-*-01/30", None), ("*-*-02/30", "the day part '02/30'"),
    ("1970/229-*-* 12:00", None), ("1970/230-*-*", "the year part '1970/230'"),
]


@pytest.mark.parametrize(("expression", "refused"), SYSTEMD_CASES)
@pytest.mark.parametrize("zone_name", ["Europe/Paris", "America/New_York"])
def test_systemd_reads_it_so_do_we_or_both_refuse(expression, refused, zone_name):
    """The rule: systemd refuses it -> a 422 naming the part; systemd accepts it -> the same
    fires, around both DST changes."""
    zone = zoneinfo.ZoneInfo(zone_name)
    for base in dst_bases(zone_name):
        expected = _systemd_all(tuple(e for e, _ in SYSTEMD_CASES), zone_name, base, 6)[
            expression]
        assert (expected is None) == (refused is not None), (expression, expected)
        assert _compare(expression, zone, base, expected, 6) is None
        if refused is not None:
            with pytest.raises(InvalidSchedule) as info:
                parse_schedule(expression, zone_name, anchor=base)
            assert refused in str(info.value)


@pytest.mark.parametrize("expression", ["Mon\u00a009:00", "Mon 09:00\u202fUTC",
                                        "*-*-*\u200902:30"])
def test_a_unicode_space_is_a_space_and_keeps_the_grammar(expression):
    plain = "".join(" " if ch.isspace() else ch for ch in expression)
    ours = parse_schedule(expression, "Europe/Paris", anchor=NOW)
    theirs = parse_schedule(plain, "Europe/Paris", anchor=NOW)
    assert ours.kind == theirs.kind == "oncalendar"
    assert [f.at for f in ours.fires(NOW, 10)] == [f.at for f in theirs.fires(NOW, 10)]
