"""The schedule a phrase reads as (:mod:`core.schedule.words`): a
:class:`~core.schedule.words.reading.Reading` into one canonical schedule string - an
anchored calendar period, an interval, a stepped period, minutes past the hour or times of
day, each with the days they hold on (:mod:`core.schedule.words.day_fields`)."""

from __future__ import annotations

from core.schedule.windows import WindowError, window_fields
from core.schedule.words.day_fields import cron_list, day_fields
from core.schedule.words.reading import SUB_DAY, UNIT_SECONDS, Period, Reading, ambiguous


def build(r: Reading, language: str) -> str:
    """The canonical schedule string of a reading: an anchored calendar period (``every 3
    days``), an interval (a period of several units, or one that does not divide its cycle),
    a stepped period (``every 15 minutes``), minutes past the hour, or times of day, each with
    the days they hold on (:func:`~core.schedule.words.day_fields.day_fields`).

    Args:
        r: the reading.
        language: the vocabulary's language (``en`` | ``fr``): French "quinze jours" is two
            weeks.

    Raises:
        PhraseError: the reading cannot be one schedule (naming the word at fault).
    """
    _check_groups(r)
    _check_frames(r)
    periods, words = _said_periods(r)
    sub_day = _sub_day_periods(periods)
    calendar = _calendar_periods(r, periods)
    if calendar:
        return _day_period(r, calendar, sub_day, words, language)
    if len(sub_day) > 1:
        return _compound_period(r, sub_day, words)
    if sub_day:
        return _sub_day_period(r, sub_day[0], periods, words)
    if r.minutes_past:
        return _minutes_past(r, periods, words)
    return _times_of_day(r, periods, words)


def _said_periods(r: Reading) -> tuple[set[Period], dict[Period, str]]:
    """The periods a reading gives (a fortnight is two weeks) and the words each was said in."""
    said = [(2 * n, "week", w) if u == "fortnight" else (n, u, w) for n, u, w in r.periods]
    return {(n, unit) for n, unit, _ in said}, {(n, unit): w for n, unit, w in said}


def _sub_day_periods(periods: set[Period]) -> list[Period]:
    """The periods of seconds, minutes or hours, the longest unit first."""
    return sorted((p for p in periods if p[1] in SUB_DAY), key=lambda p: -UNIT_SECONDS[p[1]])


def _calendar_periods(r: Reading, periods: set[Period]) -> list[Period]:
    """The periods of several days or weeks, and "every week" when no weekday or day of the
    month is given: those are anchored calendar periods (:func:`_day_period`)."""
    weekday_given = bool(r.dows or r.nth or r.doms or r.last_dom)
    return [p for p in periods if p[1] in ("day", "week") and (
        p[0] > 1 or p[1] == "week" and not weekday_given)]


def _days_given(r: Reading) -> bool:
    return bool(r.dows or r.nth or r.doms or r.last_dom or r.months)


def _compound_period(r: Reading, sub_day: list[Period], words: dict[Period, str]) -> str:
    """``every 1 hour 30 minutes``: an interval of their sum, alone."""
    if _days_given(r) or r.times or r.window or r.minutes_past:
        raise ambiguous("a period of several units cannot be combined with days or times",
                        words[sub_day[0]])
    return "@every " + _duration(sum(n * UNIT_SECONDS[u] for n, u in sub_day))


def _sub_day_period(r: Reading, period: Period, periods: set[Period],
                    words: dict[Period, str]) -> str:
    """One period of seconds, minutes or hours (``every 15 minutes``, ``every 2 hours``):
    a step of its cron field, an interval when it does not divide its cycle, within the
    window and on the days given."""
    n, unit = period
    word = words[period]
    if r.times:
        raise ambiguous(f"'every {n} {unit}{'s' if n > 1 else ''}' and a time of day "
                        f"({r.times[0][3]!r}) cannot "
                        "both hold; use 'between ... and ...' for a window", r.times[0][3])
    cycle = 24 if unit == "hour" else 60
    if n > 1 and cycle % n:
        if _days_given(r) or r.window or r.minutes_past:
            raise ambiguous(f"every {n} {unit}s does not divide the {_cycle_name(unit)}, "
                            "so it can only be an interval, which cannot be limited to days "
                            "or hours", word)
        return "@every " + _duration(n * UNIT_SECONDS[unit])
    if r.minutes_past and unit != "hour":
        raise ambiguous(f"'every {n} {unit}s' and 'minutes past the hour' cannot both hold",
                        word)
    if unit == "hour" and n > 1 and r.window is None:
        return _every_n_hours(r, n, periods, words)
    if r.window is not None:
        fields = _windowed(r, unit, n)
    else:
        step = "*" if n == 1 else f"*/{n}"
        fields = {"second": [step, "*", "*"], "minute": [step, "*"],
                  "hour": [cron_list(sorted(set(r.minutes_past or [0]))), step]}[unit]
    return " ".join([*fields, *day_fields(r, periods, words)])


def _every_n_hours(r: Reading, n: int, periods: set[Period], words: dict[Period, str]) -> str:
    """``every N hours`` (N dividing the day) without a window."""
    if not (_days_given(r) or r.minutes_past):
        # elapsed time, as systemd's OnUnitActiveSec= and Cloud Scheduler's "every N
        # hours": exactly N hours apart across DST changes, anchored like intervals
        return f"@every {n}h"
    # limited to days (or at minutes past): those wall-clock times of those days,
    # fixed times (DST as for "at 9am"): 0-22/2 starts with a digit
    fields = [cron_list(sorted(set(r.minutes_past or [0]))), f"0-{24 - n}/{n}"]
    return " ".join([*fields, *day_fields(r, periods, words)])


def _minutes_past(r: Reading, periods: set[Period], words: dict[Period, str]) -> str:
    """``at 15 minutes past the hour``: every hour (of the window) at those minutes."""
    if r.times:
        raise ambiguous("minutes past the hour and a time of day cannot both hold",
                        r.times[0][3])
    fields = [cron_list(sorted(set(r.minutes_past))), "*"] if r.window is None \
        else _windowed(r, None, 1)
    return " ".join([*fields, *day_fields(r, periods, words)])


def _times_of_day(r: Reading, periods: set[Period], words: dict[Period, str]) -> str:
    """``at 7am and 7pm``: the times (midnight when none), which one cron expression holds
    only when they share their minutes or their hour."""
    if r.window is not None:
        raise ambiguous("a time window needs a period inside it, such as 'every 15 minutes'",
                        r.window[0][3])
    times = sorted({(h, m, s) for h, m, s, _ in r.times}) or [(0, 0, 0)]
    seconds = {s for _, _, s in times}
    minutes = {m for _, m, _ in times}
    hours = {h for h, _, _ in times}
    if len(seconds) > 1 or (len(minutes) > 1 and len(hours) > 1):
        shown = ", ".join(f"{h:02d}:{m:02d}" for h, m, _ in times)
        raise ambiguous(f"one cron expression cannot hold the times {shown}: they must share "
                        "their minutes (7:00 and 19:00) or their hour (9:00 and 9:30)",
                        r.times[-1][3])
    fields = [cron_list(sorted(minutes)), cron_list(sorted(hours))]
    if seconds != {0}:
        fields.insert(0, str(next(iter(seconds))))
    return " ".join([*fields, *day_fields(r, periods, words)])


def _check_frames(r: Reading) -> None:
    """A period said with "every" and the days given must agree: "every day" is every day
    (not "every day and every monday"), "every year" needs a month for its day, "every
    month" names no month and needs to say which of its weekdays."""
    days = r.dows or r.nth or r.doms or r.last_dom
    every = r.every_units
    if "day" in every and days:
        raise ambiguous(f"{every['day']!r} and the days given cannot both hold: every day is "
                        "every day; name only the days ('every monday', 'on the 1st')",
                        every["day"])
    if "year" in every and days and not r.months:
        raise ambiguous(f"{every['year']!r} needs the month of its day ('every year on March "
                        "3', 'every year on the first monday of march')", every["year"])
    if "month" in every and r.months:
        raise ambiguous(f"{every['month']!r} and the month {r.month_word!r} cannot both hold",
                        r.month_word)
    if "month" in every and r.dows and not (r.nth or r.doms or r.last_dom):
        raise ambiguous(f"{every['month']!r} and {r.dow_word!r}: which one of the month? "
                        f"('the first {r.dow_word} of every month', 'every {r.dow_word}')",
                        r.dow_word)


def _check_groups(r: Reading) -> None:
    """Days and times given in several groups ("at 9am on mondays and 5pm on fridays") hold
    in one schedule only when every group has the same times or the same days."""
    segments = r.segments
    if len(segments) <= 2:
        return
    if len(segments) % 2:
        kind, _, word = segments[-1]
        what = "days" if kind == "T" else "times"
        raise ambiguous(f"it is not clear which {what} {word!r} belongs with; give the days and "
                        "the times once each ('at 9am and 5pm on mondays and fridays')", word)
    groups = [(segments[i][1], segments[i + 1][1]) for i in range(0, len(segments), 2)]
    if all(g == groups[0] for g in groups):
        return
    if len({g[0] for g in groups}) == 1 or len({g[1] for g in groups}) == 1:
        return  # the same times on several day groups, or several times on the same days
    word = segments[2][2]
    raise ambiguous("different times on different days: one schedule cannot hold them; make "
                    "one job or monitor for each", word)


def _day_period(r: Reading, calendar: list[Period], sub_day: list[Period],
                words: dict[Period, str], language: str) -> str:
    """``every 3 days at 9am``, ``every other tuesday``: an anchored calendar period
    (:mod:`core.schedule.days`), ``@every <N>d [on <day>] at HH:MM[,…]``."""
    n, unit = calendar[0]
    _check_day_period(r, calendar, sub_day, words)
    days = n * (7 if unit == "week" else 1)
    if language == "fr" and unit == "day" and n in (8, 15):
        days = n - 1  # "tous les quinze jours" is every two weeks, "huit jours" one week
    if days > 366:
        raise ambiguous(f"every {n} {unit}s is longer than the longest period, 366 days",
                        words[(n, unit)])
    on = _period_weekday(r, n, unit)
    times = sorted({(h, m, s) for h, m, s, _ in r.times}) or [(0, 0, 0)]
    shown = ",".join(f"{h:02d}:{m:02d}" + (f":{s:02d}" if s else "") for h, m, s in times)
    return f"@every {days}d{on} at {shown}"


def _check_day_period(r: Reading, calendar: list[Period], sub_day: list[Period],
                      words: dict[Period, str]) -> None:
    """A calendar period stands alone: no other period, no minutes past the hour, no time
    window, no day of the month or month; "every week" needs its weekday."""
    n, unit = calendar[0]
    word = words[(n, unit)]
    if unit == "week" and n == 1:
        raise ambiguous("a week has no first day everyone agrees on (Sunday for cron, Monday "
                        "for systemd): say which day ('every monday', 'every sunday')", word)
    others = [p for p in words if p != (n, unit)]
    what = f"every {n} {unit}s"
    if len(calendar) > 1 or sub_day or others or r.minutes_past or r.window:
        raise ambiguous(f"{what} is a period of whole days and cannot be combined with "
                        "another period, minutes past the hour or a time window", word)
    if r.doms or r.last_dom or r.nth or r.months:
        raise ambiguous(f"{what} fires whatever the date, and cannot be "
                        "limited to days of the month or months", word)


def _period_weekday(r: Reading, n: int, unit: str) -> str:
    """`` on <day>`` of a period of weeks given one weekday (``""``: none given)."""
    if not r.dows:
        return ""
    if unit != "week" or len(r.dows) > 1:
        raise ambiguous(f"every {n} {unit}{'s' if n > 1 else ''} and "
                        f"{'these weekdays' if unit == 'week' else 'a weekday'} cannot "
                        "both hold: a weekday goes with a period of weeks, one weekday at "
                        "a time ('every 2 weeks on monday')", r.dow_word)
    return " on " + ("sun", "mon", "tue", "wed", "thu", "fri", "sat")[next(iter(r.dows))]


def _windowed(r: Reading, unit: str | None, n: int) -> list[str]:
    assert r.window is not None
    (h1, m1, s1, w1), (h2, m2, s2, w2) = r.window
    try:
        fields = window_fields(unit, n, sorted(set(r.minutes_past)), (h1, m1, s1),
                               (h2, m2, s2))
    except WindowError as exc:
        raise ambiguous(str(exc), w1 if exc.start is not None else w2) from None
    return ([fields.seconds] if fields.seconds is not None else []) + [fields.minutes,
                                                                        fields.hours]


def _cycle_name(unit: str) -> str:
    return "day" if unit == "hour" else ("hour" if unit == "minute" else "minute")


def _duration(seconds: int) -> str:
    parts = []
    for suffix, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size:
            parts.append(f"{seconds // size}{suffix}")
            seconds %= size
    return "".join(parts)
