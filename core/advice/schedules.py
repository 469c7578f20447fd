"""The schedule a monitor's check-ins fit, when it is not the configured one (docs/advice.md,
*Schedule mismatch*). Pure.

Two mismatches are told, both only from a consistent pattern (:data:`CONSISTENT` of the
observations within :data:`TOLERANCE` of their median):

* **another period**: the gaps between good check-ins have a median more than
  :data:`PERIOD_RATIO` times shorter or longer than the schedule's period (configured daily,
  pinged hourly): the period that fits, as read (:func:`period_text`: ``"5s"``, ``"90s"``,
  ``"1h"``, ``"90m"``, ``"1d"``), never the configured schedule itself;
* **an offset**: a cron schedule whose minute field is one number, with check-ins that arrive
  at least :data:`MIN_OFFSET` seconds after their slot, consistently within
  :data:`OFFSET_SPREAD` seconds of the median: the same expression with the minute moved by
  the median (``0 3 * * *`` pinged at about 03:15 → ``15 3 * * *``), when it stays in the hour.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from core.advice.rules import MIN_OBSERVATIONS, counted, percentile, period_at, seconds_text
from core.schedule import Schedule

PERIOD_RATIO = 1.5
TOLERANCE = 0.1  # of the median gap
CONSISTENT = 0.8  # share of the observations that must agree
MIN_OFFSET = 300  # seconds after the slot before an offset is told
OFFSET_SPREAD = 90  # seconds either side of the median offset
SECONDS_BELOW = 120  # periods shorter than this are said in whole seconds


@dataclass(frozen=True)
class Fit:
    """A schedule that fits the check-ins better: the ``schedule`` to suggest and the
    ``reason`` in words, with the figures observed."""

    schedule: str
    reason: str


def period_said(seconds: float) -> int:
    """The whole seconds of :func:`period_text` of ``seconds``."""
    whole = max(1, round(seconds))
    return whole if whole < SECONDS_BELOW else round(seconds / 60) * 60


def period_text(seconds: float) -> str:
    """The closest readable period in the monitor grammar (an interval,
    docs/schedules.md): under :data:`SECONDS_BELOW` seconds in whole seconds (at least one:
    ``"5s"``, ``"90s"``), else in whole minutes (``"1d"``, ``"2h"``, ``"90m"``)."""
    said = period_said(seconds)
    if said < SECONDS_BELOW:
        return f"{said}s"
    minutes = said // 60
    if minutes % 1440 == 0:
        return f"{minutes // 1440}d"
    if minutes % 60 == 0:
        return f"{minutes // 60}h"
    return f"{minutes}m"


def _agree(values: Sequence[float], centre: float, spread: float) -> bool:
    return sum(abs(v - centre) <= spread for v in values) >= CONSISTENT * len(values)


def other_period(arrivals: Sequence[datetime], schedule: Schedule) -> Fit | None:
    """The period the good check-ins at ``arrivals`` (ascending) keep, when it is not the
    schedule's (the module's rule); ``None`` when they fit it, are too few
    (:data:`MIN_OBSERVATIONS` gaps), keep none consistently, or when the period said
    (:func:`period_text`) is the schedule's own (pinged every 0.5 s, configured ``"1s"``)."""
    gaps = [(b - a).total_seconds() for a, b in zip(arrivals, arrivals[1:], strict=False)]
    if len(gaps) < MIN_OBSERVATIONS:
        return None
    period = period_at(schedule, arrivals[0])
    median = percentile(gaps, 50)
    if period is None or median <= 0 or not _agree(gaps, median, median * TOLERANCE):
        return None
    configured = period.total_seconds()
    if configured / PERIOD_RATIO <= median <= configured * PERIOD_RATIO:
        return None
    text = period_text(median)
    if text == schedule.expression or period_said(median) == configured:
        return None  # the closest period said is the configured one: nothing to change
    return Fit(text, f"{len(gaps) + 1} check-ins came every {seconds_text(median)} (median "
                     f"gap; {sum(abs(g - median) <= median * TOLERANCE for g in gaps)} of "
                     f"{counted(len(gaps), 'gap')} within {TOLERANCE:.0%}), but the schedule "
                     f"{schedule.expression!r} expects one every {seconds_text(configured)}")


def offset(lateness: Sequence[float], schedule: Schedule) -> Fit | None:
    """The cron schedule moved by the delay the check-ins consistently keep after their slot
    (``lateness``, seconds after each expected instant), or ``None`` (the module's rule)."""
    fields = schedule.expression.split()
    if schedule.kind != "cron" or len(fields) != 5 or not fields[0].isdigit() \
            or len(lateness) < MIN_OBSERVATIONS:
        return None
    median = percentile(lateness, 50)
    if median < MIN_OFFSET or not _agree(lateness, median, OFFSET_SPREAD):
        return None
    minute = int(fields[0]) + round(median / 60)
    if minute > 59:
        return None
    shifted = " ".join([str(minute), *fields[1:]])
    return Fit(shifted, f"{len(lateness)} check-ins came {seconds_text(median)} after their "
                        f"slot (median; {sum(abs(v - median) <= OFFSET_SPREAD for v in lateness)}"
                        f" of {len(lateness)} within {OFFSET_SPREAD} s of it): the schedule "
                        f"{schedule.expression!r} runs {round(median / 60)} min early")
