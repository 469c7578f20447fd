"""Generated calendar events for the differential against ``systemd-analyze calendar``.

Every part of systemd.time(7)'s grammar is drawn - weekday lists and ranges (``..`` and ``-``,
short and long names, any case), dates with ``*``, lists, ranges, repetitions and 2-digit years,
the last-days form ``~``, times with seconds or without, the shorthands and trailing zones -
and about one expression in six is mutated into something that may be invalid (a value out of
range, a backwards range, a zero repetition, a stray word), so that the two parsers are also
compared on what they refuse. Deterministic for a given seed.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
LONG = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
SHORTHANDS = ("minutely", "hourly", "daily", "monthly", "weekly", "yearly", "annually",
              "quarterly", "semiannually", "anually", "biannually", "bi-annually",
              "semi-annually")
TRAILING_ZONES = ("UTC", "utc", "Asia/Tokyo", "Europe/London", "America/Santiago")
#: Zones of the differential: none, the two usual DST changes, 30-minute DST (Lord Howe),
#: DST changes at midnight (Santiago), a 30-minute offset without DST (Kolkata).
ZONES = ("UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe",
         "America/Santiago", "Asia/Kolkata")


def _weekday(rng: random.Random) -> str:
    def name(i: int) -> str:
        text = rng.choice((WEEKDAYS, LONG))[i]
        return rng.choice((text, text.lower(), text.upper()))
    items = []
    for _ in range(rng.choice((1, 1, 1, 2))):
        a = rng.randrange(7)
        if rng.random() < 0.4:
            b = rng.randrange(a, 7)
            items.append(f"{name(a)}{rng.choice(('..', '-'))}{name(b)}")
        else:
            items.append(name(a))
    return ",".join(items)


def _value(rng: random.Random, low: int, high: int, width: int) -> str:
    def n(v: int) -> str:
        return f"{v:0{width}d}" if rng.random() < 0.5 else str(v)
    kind = rng.random()
    if kind < 0.25:
        return "*"
    if kind < 0.5:
        return n(rng.randint(low, high))
    if kind < 0.65:
        values = sorted(rng.sample(range(low, high + 1), rng.randint(2, 3)))
        return ",".join(n(v) for v in values)
    if kind < 0.8:
        a = rng.randint(low, high)
        b = rng.randint(a, high)
        return f"{n(a)}..{n(b)}"
    a = rng.randint(low, min(high, low + 5))
    # now and then a repetition near or past the part's length (systemd refuses some)
    step = rng.randint(1, max(1, (high - low) // 3)) if rng.random() < 0.8 \
        else rng.randint(high - low - 2, high - low + 2)
    if rng.random() < 0.3:
        b = rng.randint(a, high)
        return f"{n(a)}..{n(b)}/{step}"
    return f"{n(a)}/{step}"


def _date(rng: random.Random) -> str:
    year = rng.choice(("*", "*", "*", "2024", "2025", "24", "2024..2026", "2025,2027"))
    month = _value(rng, 1, 12, 2)
    if rng.random() < 0.2:
        day = "~" + rng.choice(("1", "01", "3", "1..3", "7/2", "2,5", "06..09/2",
                                "01/1", "02/1", "01..31", "20,27", "07,25", "1,2,22",
                                "1,2,23", "28", "29", "04/3", "1..28/27"))
        return f"{year}-{month}{day}" if rng.random() < 0.7 else f"{month}{day}"
    day = _value(rng, 1, 31, 2)
    return f"{year}-{month}-{day}" if rng.random() < 0.7 else f"{month}-{day}"


def _time(rng: random.Random) -> str:
    hour = _value(rng, 0, 23, 2)
    minute = _value(rng, 0, 59, 2)
    if rng.random() < 0.35:
        return f"{hour}:{minute}:{_value(rng, 0, 59, 2)}"
    return f"{hour}:{minute}"


_MUTATIONS = (
    lambda e: e.replace("01", "32", 1), lambda e: e.replace(":", ":60", 1),
    lambda e: "24:00" if ":" not in e else e.replace(e.split()[-1], "25:00"),
    lambda e: e + " nonsense", lambda e: e.replace("..", "...", 1),
    lambda e: e.replace("/", "/0", 1), lambda e: "Fri..Mon " + e,
    lambda e: e.replace("~", "~29", 1), lambda e: e.replace("-", "-13-", 1),
    lambda e: "* " + e, lambda e: e.replace("*", "*,1", 1), lambda e: e + " Mars/Base",
    lambda e: "1969-01-01 " + e.split()[-1], lambda e: e.replace(":", "::", 1),
    lambda e: "Tues " + e, lambda e: "Thurs,Fri " + e, lambda e: "Mon,,Tue " + e,
    lambda e: "Mon..Wed..Fri " + e, lambda e: "Mon, " + e, lambda e: e + " " + e.split()[-1],
    lambda e: "*-06/7-* " + e.split()[-1], lambda e: e.replace(":", ":00/60:", 1),
    lambda e: "Mon-Wed..Fri " + e, lambda e: "Monday,Sun " + e,
)


def calendar_expressions(seed: int, count: int) -> list[str]:
    """``count`` expressions (duplicates removed), about one in six mutated."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        if rng.random() < 0.06:
            expression = rng.choice(SHORTHANDS)
            expression = rng.choice((expression, expression.capitalize()))
        else:
            parts = []
            if rng.random() < 0.35:
                parts.append(_weekday(rng))
            if rng.random() < 0.5:
                parts.append(_date(rng))
            if rng.random() < 0.85 or not parts:
                parts.append(_time(rng))
            expression = " ".join(parts)
        if rng.random() < 0.1:
            expression += " " + rng.choice(TRAILING_ZONES)
        if rng.random() < 0.17:
            expression = rng.choice(_MUTATIONS)(expression)
        if expression not in out:
            out.append(expression)
    return out


def dst_bases(zone_name: str, year: int = 2024) -> list[datetime]:
    """Base instants around ``zone_name``'s DST changes in ``year`` (a day before, an hour
    before, inside the repeated hour's first and second pass), or two plain instants for a
    zone without changes; always one instant far from any change."""
    return list(_dst_bases(zone_name, year))


@cache
def _dst_bases(zone_name: str, year: int) -> tuple[datetime, ...]:
    """:func:`dst_bases`, found once per zone and year (it steps through the year by hours)."""
    zone = ZoneInfo(zone_name)
    bases = [datetime(year, 5, 20, 10, 17, 3, tzinfo=UTC)]
    t = datetime(year, 1, 1, tzinfo=UTC)
    end = datetime(year + 1, 1, 1, tzinfo=UTC)
    while t < end:
        nxt = t + timedelta(hours=1)
        before, after = t.astimezone(zone).utcoffset(), nxt.astimezone(zone).utcoffset()
        if before != after:
            # the change happens in (t, nxt]: find it to the minute
            change = t
            while change.astimezone(zone).utcoffset() == before:
                change += timedelta(minutes=1)
            bases += [change - timedelta(days=1), change - timedelta(hours=1)]
            if after < before:  # fold: inside the first and the second pass
                bases += [change - timedelta(minutes=10), change + timedelta(minutes=10)]
        t = nxt
    if len(bases) == 1:
        bases.append(datetime(year, 11, 3, 5, 30, tzinfo=UTC))
    return tuple(bases)
