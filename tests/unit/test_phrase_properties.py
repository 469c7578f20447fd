"""Generated phrases, English and French, checked by an independent reading (issue 26).

Each example is a small specification - times on weekdays, a period of minutes (in a window of
the day, on weekdays), a period of days, a period of weeks on a weekday - written as a phrase
in either language, as people write them. The test then computes, by brute force and without
the schedule engine, what the words say: the instants in the zone that match, with the DST
rule the words' form has (times of day and calendar periods: Vixie cron's fixed-time rule, a
skipped time fires at the gap's end, a repeated one once; periods of minutes: real elapsed
time). The reader must accept the phrase and fire exactly there, or - only where the words ask
for what one schedule cannot hold (times that share neither minute nor hour; a window whose
last hour is partial) - refuse it with a message naming the word.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, note, settings
from hypothesis import strategies as st

from core.schedule import InvalidSchedule, parse_schedule
from core.schedule.words import PhraseError

ANCHOR = datetime(2026, 1, 10, 7, 30, tzinfo=UTC)
ZONES = ("UTC", "Europe/Paris", "America/New_York", "Australia/Sydney")
STARTS = (datetime(2026, 3, 7, 22, tzinfo=UTC), datetime(2026, 3, 28, 20, tzinfo=UTC),
          datetime(2026, 4, 4, 10, tzinfo=UTC), datetime(2026, 10, 24, 20, tzinfo=UTC),
          datetime(2026, 10, 31, 22, tzinfo=UTC))
COUNT = 12
EN_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
FR_DAYS = ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche")


@dataclass(frozen=True)
class Spec:
    """What the words say. ``weekdays``: Python weekdays (0 = Monday), empty: every day."""

    kind: str  # "times" | "minutes" | "days" | "weeks"
    weekdays: frozenset[int] = frozenset()
    times: tuple[time, ...] = ()
    n: int = 1
    window: tuple[time, time] | None = None


# -- writing a spec as words ---------------------------------------------------------------
def _time(t: time, language: str, style: int) -> str:
    if language == "fr":
        return f"{t.hour}h" if t.minute == 0 and style else f"{t.hour}h{t.minute:02d}"
    if style == 0:
        return f"{t.hour:02d}:{t.minute:02d}"
    suffix = "am" if t.hour < 12 else "pm"
    hour = t.hour % 12 or 12
    return f"{hour}{suffix}" if t.minute == 0 else f"{hour}:{t.minute:02d}{suffix}"


def _join(items: list[str], language: str) -> str:
    word = " and " if language == "en" else " et "
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + word + items[-1]


def _days(spec: Spec, language: str) -> str:
    names = EN_DAYS if language == "en" else FR_DAYS
    days = [names[d] for d in sorted(spec.weekdays)]
    if language == "en":
        return "every " + _join(days, language)
    return "tous les " + _join([d + "s" for d in days], language)


def phrase(spec: Spec, language: str, style: int) -> str:
    at = "at" if language == "en" else "à"
    times = _join([_time(t, language, style) for t in spec.times], language) if spec.times \
        else ""
    if spec.kind == "times":
        days = _days(spec, language) if spec.weekdays else (
            "every day" if language == "en" else "tous les jours")
        return f"{days} {at} {times}"
    if spec.kind == "minutes":
        words = [f"every {spec.n} minutes" if language == "en" else f"toutes les {spec.n} minutes"]
        if spec.window:
            a, b = (_time(t, language, style) for t in spec.window)
            words.append(f"between {a} and {b}" if language == "en" else f"de {a} à {b}")
        if spec.weekdays:
            names = EN_DAYS if language == "en" else FR_DAYS
            days = _join([names[d] for d in sorted(spec.weekdays)], language)
            words.append(f"on {days}" if language == "en" else f"le {days}")
        return " ".join(words)
    if spec.kind == "days":
        if language == "fr":
            lead = "un jour sur deux" if spec.n == 2 and style else f"tous les {spec.n} jours"
        else:
            lead = {0: f"every {spec.n} days", 1: "every other day" if spec.n == 2 else
                    f"every {spec.n} days"}[style]
        return f"{lead} {at} {times}"
    day = (EN_DAYS if language == "en" else FR_DAYS)[next(iter(spec.weekdays))]
    if language == "fr":
        lead = f"un {day} sur deux" if spec.n == 2 and style else \
            f"toutes les {spec.n} semaines le {day}"
    else:
        lead = f"every other {day}" if spec.n == 2 and style else \
            f"every {spec.n} weeks on {day}"
    return f"{lead} {at} {times}"


# -- the independent reading ---------------------------------------------------------------
def _fixed(day: date, t: time, zone: ZoneInfo) -> datetime:
    """Vixie cron's fixed-time rule, by brute force: a wall time that does not exist fires
    at the first wall time after it that does; one that exists twice, at the first."""
    wall = datetime.combine(day, t)
    while (wall.replace(tzinfo=zone).astimezone(UTC).astimezone(zone).replace(tzinfo=None)
           != wall):
        wall += timedelta(minutes=1)
    return wall.replace(tzinfo=zone, fold=0).astimezone(UTC)


def holds(spec: Spec) -> bool:
    """Whether one schedule can hold what the words say."""
    if spec.kind == "times":
        return len({t.minute for t in spec.times}) == 1 or len({t.hour for t in spec.times}) == 1
    if spec.kind == "minutes" and spec.window:
        start, end = spec.window
        if end < start:
            return False  # a window that ends before it starts
        # one cron expression: the same minutes in every hour of the window, and at least one
        # (between 09:00 and 09:00, both ends included, is 09:00; between 08:30 and 08:30
        # every 20 minutes is nothing)
        inside: dict[int, set[int]] = {}
        for minute in range(0, 24 * 60, spec.n):
            if start <= time(minute // 60, minute % 60) <= end:
                inside.setdefault(minute // 60, set()).add(minute % 60)
        return bool(inside) and len({frozenset(m) for m in inside.values()}) == 1
    return True


def expected(spec: Spec, zone: ZoneInfo, after: datetime) -> list[datetime]:
    out: set[datetime] = set()
    if spec.kind == "minutes":  # real elapsed time: every UTC minute whose wall time matches
        at = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
        while len(out) < COUNT:
            local = at.astimezone(zone)
            if local.minute % spec.n == 0 and (not spec.weekdays or local.weekday()
                                               in spec.weekdays) and (
                    spec.window is None or spec.window[0] <= local.time() <= spec.window[1]):
                out.add(at)
            at += timedelta(minutes=1)
        return sorted(out)
    if spec.kind == "times":
        days = [after.astimezone(zone).date() + timedelta(days=k) for k in range(-1, 100)]
        days = [d for d in days if not spec.weekdays or d.weekday() in spec.weekdays]
    else:
        step = spec.n * (7 if spec.kind == "weeks" else 1)
        first = ANCHOR.astimezone(zone).date()
        while (spec.weekdays and first.weekday() not in spec.weekdays) or all(
                _fixed(first, t, zone) <= ANCHOR for t in spec.times):
            first += timedelta(days=1)
        days = [first + timedelta(days=k * step) for k in range(0, 500)]
    for day in days:
        for t in spec.times:
            at = _fixed(day, t, zone)
            if at > after and (spec.kind in ("times",) or at > ANCHOR):
                out.add(at)
    return sorted(out)[:COUNT]


# -- the strategy ----------------------------------------------------------------------------
_times = st.builds(time, st.integers(0, 23), st.sampled_from((0, 15, 30, 45)))


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    kind = draw(st.sampled_from(("times", "minutes", "days", "weeks")))
    times = tuple(sorted(set(draw(st.lists(_times, min_size=1, max_size=3)))))
    if kind == "times":
        return Spec("times", frozenset(draw(st.sets(st.integers(0, 6), max_size=3))), times)
    if kind == "minutes":
        n = draw(st.sampled_from((5, 10, 15, 20, 30)))
        window = None
        if draw(st.booleans()):
            h1 = draw(st.integers(6, 20))
            h2 = draw(st.integers(h1, 23))
            m2 = draw(st.sampled_from((0, 60 - n, 59, 30)))
            window = (time(h1, draw(st.sampled_from((0, 0, 0, 30)))), time(h2, m2))
        return Spec("minutes", frozenset(draw(st.sets(st.integers(0, 6), max_size=2))),
                    (), n, window)
    if kind == "days":
        return Spec("days", frozenset(), times, draw(st.one_of(st.integers(2, 9),
                                                               st.just(15))))
    return Spec("weeks", frozenset({draw(st.integers(0, 6))}), times[:2],
                draw(st.integers(2, 4)))


def _check_phrase(spec: Spec, language: str, style: int, zone_name: str) -> None:
    """The property, for one example (also run at length by
    ``tests/integration/test_phrase_properties_long.py``)."""
    words = phrase(spec, language, style)
    note(f"{words!r} in {zone_name}")
    if language == "fr" and spec.kind == "days" and spec.n in (8, 15):
        # French counts both ends: "tous les 15 jours" is every two weeks, "8 jours" one
        spec = replace(spec, n=spec.n - 1)
    zone = ZoneInfo(zone_name)
    try:
        schedule = parse_schedule(words, zone_name, anchor=ANCHOR)
    except PhraseError as exc:
        assert not holds(spec), f"{words!r} refused: {exc}"
        assert str(exc).startswith("could not read the schedule at ") and exc.word in words
        return
    assert holds(spec), f"{words!r} accepted as {schedule.expression!r}"
    note(f"read as {schedule.expression!r}: {schedule.describe()}")
    for start in STARTS:
        assert [f.at for f in schedule.fires(start, COUNT)] == expected(spec, zone, start), start
    # the round trip: the stored form, exported with its anchor named and applied eleven days
    # later, fires at the same instants; so does the description when it reads as a phrase
    exported = schedule.pinned()
    again = parse_schedule(exported, zone_name, anchor=ANCHOR + timedelta(days=11, hours=5))
    described = schedule.describe().removesuffix(f" ({zone_name})")
    try:
        read_back = parse_schedule(described, zone_name, anchor=ANCHOR)
    except InvalidSchedule:
        read_back = None
    for start in STARTS:
        fires = [f.at for f in schedule.fires(start, COUNT)]
        assert [f.at for f in again.fires(start, COUNT)] == fires, exported
        if read_back is not None:
            assert [f.at for f in read_back.fires(start, COUNT)] == fires, described


EXAMPLE = {"spec": specs(), "language": st.sampled_from(("en", "fr")),
           "style": st.integers(0, 1), "zone_name": st.sampled_from(ZONES)}


@settings(max_examples=10, deadline=None, derandomize=True)  # 80 in tests/long
@given(**EXAMPLE)
def test_generated_phrases_fire_as_their_words_say(spec: Spec, language: str, style: int,
                                                   zone_name: str) -> None:
    _check_phrase(spec, language, style, zone_name)
