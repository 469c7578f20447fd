"""The advisor's rule and the figures it reads (docs/advice.md, *The rule*). Pure.

**Definitions.** Each candidate value of a field is replayed over the window with the what-if
replay (:mod:`core.replay`); the replay's *incidents* (:class:`core.replay.compare.Incident`:
a monitor from its ``down`` alert until it is up again, a job from its ``failed`` alert to its
``recovered`` one) are what that value would have alerted on.

* A **real outage** is an incident that lasted more than :data:`REAL_AFTER_PERIODS` periods
  of the schedule (the next check-in or run, due one period later, did not clear it either),
  or that was still open at the window's end. The outages of the window are the real
  incidents of the most sensitive candidate (the first in the candidates' order: the smallest
  grace, one failure before an alert, one good check-in before the recovery; overlapping ones
  merged), so they do not depend on the value being judged, and a lax candidate's longer
  incidents do not make a hiccup look like an outage.
* A **false alarm** is an incident of a candidate that opened outside every real outage: the
  subject was healthy again by its next check-in or run (an alert that stays open into a
  later outage was still raised for a hiccup).
* For ``recover_after_successes`` the false alarm is the recovery said too early: a
  **flap** is an incident that opened within :data:`REAL_AFTER_PERIODS` periods of the end
  of the one before it.
* A candidate **alerts on** an outage when one of its incidents overlaps it (spans share an
  instant, as :mod:`core.replay.compare` says).

**The rule** (:func:`choose`): among the candidates that alert on every real outage, those
with the fewest false alarms win; the current value is kept when it is among them, otherwise
the winner is the first in the candidates' order (the most sensitive: the smallest grace, the
fewest failures before an alert). When no candidate alerts on every outage, the ones that
alert on the most do, then the same.

The run-time bounds read the durations instead (:func:`duration_bounds`): every run that
reported success counts as a good run (the log cannot tell an empty run from a quick one).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from core.replay.compare import Incident
from core.schedule import Schedule

MIN_OBSERVATIONS = 10  # check-ins or runs in the window below which nothing is suggested
REAL_AFTER_PERIODS = 1.5  # an incident longer than this many periods is a real outage
MAX_DURATION_MARGIN = 1.5  # the suggested max_duration: the longest good run times this
MIN_DURATION_SHARE = 0.5  # the suggested min_duration: the shortest good run times this
MIN_DURATION_FLOOR = 60  # seconds: no minimum is suggested for runs quicker than this
QUICK_RUNS = 60  # seconds: a maximum for good runs all quicker than this must help (helps())
DEFAULT_DAYS, MAX_DAYS = 90, 90
MAX_GRACE_CANDIDATES = 24  # graces replayed per advice, at most (each replays the window)


@dataclass(frozen=True)
class Trial:
    """One candidate value replayed over the window: its incidents (the replay's alerting
    spans) and the alerts it listed (every kind, ``too_long`` included)."""

    value: Any
    incidents: list[Incident]
    alerts: int


@dataclass(frozen=True)
class Judged:
    """A :class:`Trial` judged against the window's real outages: how many it alerts on and
    its false alarms (incidents overlapping no outage)."""

    trial: Trial
    caught: int
    false_alarms: int


@dataclass(frozen=True)
class Verdict:
    """What :func:`choose` decided: the winner, the current value's judgement, the real
    outages (merged spans) and every candidate's judgement in order."""

    chosen: Judged
    current: Judged
    outages: list[Incident]
    judged: list[Judged] = field(default_factory=list)


def period_at(schedule: Schedule | None, at: datetime) -> timedelta | None:
    """The schedule's period around ``at``: an interval's length, or the gap between the first
    two fires after ``at`` (a cron's period there); ``None`` without a schedule or fires."""
    if schedule is None:
        return None
    if schedule.interval_seconds is not None:
        return timedelta(seconds=schedule.interval_seconds)
    first = schedule.next_fire(at)
    second = None if first is None else schedule.next_fire(first)
    return None if first is None or second is None else second - first


def is_real(incident: Incident, schedule: Schedule | None) -> bool:
    """Whether ``incident`` was a real outage (the module's definitions): still open at the
    window's end, or longer than :data:`REAL_AFTER_PERIODS` periods of ``schedule`` at its
    start (without a period, only an open incident is)."""
    if incident.open:
        return True
    period = period_at(schedule, incident.start)
    return period is not None and incident.end - incident.start > period * REAL_AFTER_PERIODS


def _overlaps(a: Incident, b: Incident) -> bool:
    return a.start <= b.end and b.start <= a.end


def merged(spans: Sequence[Incident]) -> list[Incident]:
    """``spans`` sorted and merged where they overlap (open if any merged one is)."""
    out: list[Incident] = []
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        if out and _overlaps(out[-1], span):
            last = out[-1]
            out[-1] = Incident(last.start, max(last.end, span.end), last.open or span.open,
                               last.reason)
        else:
            out.append(span)
    return out


def reopened(previous: Incident, incident: Incident, schedule: Schedule | None) -> bool:
    """Whether ``incident`` is a flap: it opened within :data:`REAL_AFTER_PERIODS` periods of
    ``schedule`` after ``previous`` ended."""
    period = period_at(schedule, previous.end)
    return period is not None and incident.start - previous.end <= period * REAL_AFTER_PERIODS


Flapped = Callable[[Incident, Incident], bool]


def judge(trial: Trial, outages: Sequence[Incident], flapped: Flapped | None = None) -> Judged:
    """``trial``'s count of ``outages`` alerted on and of false alarms (with ``flapped``, of
    flaps instead)."""
    caught = sum(any(_overlaps(o, i) for i in trial.incidents) for o in outages)
    if flapped is not None:
        spans = trial.incidents
        false = sum(flapped(a, b) for a, b in zip(spans, spans[1:], strict=False))
    else:
        false = sum(not any(o.start <= i.start <= o.end for o in outages)
                    for i in trial.incidents)
    return Judged(trial, caught, false)


def choose(trials: Sequence[Trial], current: Any, real: Callable[[Incident], bool],
           flapped: Flapped | None = None) -> Verdict:
    """The rule (the module's docstring) over ``trials``, most sensitive first (the first one
    gives the real outages), one of which has ``value == current``; ``real`` tells a real
    outage, ``flapped`` (for ``recover_after_successes``) a flap.

    Raises:
        ValueError: no trial is the current value.
    """
    outages = merged([i for i in trials[0].incidents if real(i)]) if trials else []
    judged = [judge(t, outages, flapped) for t in trials]
    mine = [j for j in judged if j.trial.value == current]
    if not mine:
        raise ValueError("the current value must be one of the trials")
    now = mine[0]
    most = max(j.caught for j in judged)
    fewest = min(j.false_alarms for j in judged if j.caught == most)
    best = [j for j in judged if j.caught == most and j.false_alarms == fewest]
    chosen = now if now in best else best[0]
    return Verdict(chosen, now, outages, judged)


def choose_replaying(values: Sequence[Any], replay: Callable[[Any], Trial | None],
                     current: Any, real: Callable[[Incident], bool],
                     flapped: Flapped | None = None) -> Verdict:
    """:func:`choose` over the replays of ``values`` (most sensitive first; ``replay`` gives
    ``None`` for a value the definition rules refuse), replaying only the candidates that can
    change the verdict: the first replayable value (it gives the real outages), the current
    value, then the others in order up to the first *clean* one (it alerts on every real
    outage with no false alarm, or flap). None after a clean one can win: at best they tie
    with it, and a tie goes to the current value or else to the earlier candidate; and when the
    current value (or the first) is clean, no other is replayed. So ``chosen``, ``current`` and
    ``outages`` are :func:`choose`'s over every value; ``judged`` lists the replayed ones.

    Raises:
        ValueError: ``current`` is not among ``values``, or no value replays.
    """
    order = list(values)
    if current not in order:
        raise ValueError("the current value must be one of the trials")
    done: dict[int, Trial] = {}
    for index, value in enumerate(order):
        trial = replay(value)
        if trial is not None:
            done[index] = trial
            break
    if not done:
        raise ValueError("no value replays")
    [first] = done
    outages = merged([i for i in done[first].incidents if real(i)])

    def clean(trial: Trial) -> bool:
        judged = judge(trial, outages, flapped)
        return judged.caught == len(outages) and judged.false_alarms == 0

    mine = order.index(current)
    if mine not in done:
        trial = replay(current)
        if trial is None:
            raise ValueError("the current value must replay")
        done[mine] = trial
    if not clean(done[first]) and not clean(done[mine]):
        for index in range(first + 1, len(order)):
            if index not in done:
                trial = replay(order[index])
                if trial is None:
                    continue
                done[index] = trial
            if clean(done[index]):
                break
    return choose([done[i] for i in sorted(done)], current, real, flapped)


def helps(verdict: Verdict, suggested: Any) -> bool:
    """Whether the candidate ``suggested`` of ``verdict`` does better than the current value:
    it alerts on more real outages, or raises fewer false alarms. A ``max_duration`` for good
    runs that all took under :data:`QUICK_RUNS` seconds is suggested only then (a bound of a
    minute or two, :func:`duration_bounds`, would otherwise be noise on every quick job).

    Raises:
        ValueError: no judged candidate is ``suggested``.
    """
    mine = [j for j in verdict.judged if j.trial.value == suggested]
    if not mine:
        raise ValueError("the suggested value must be one of the trials")
    now = verdict.current
    return mine[0].caught > now.caught or mine[0].false_alarms < now.false_alarms


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values`` by the nearest-rank method (a value that
    was observed). Raises ValueError on no values."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def figures(values: Sequence[float]) -> dict[str, float]:
    """``{"p50", "p95", "max"}`` of ``values`` (seconds, rounded to a millisecond)."""
    return {"p50": round(percentile(values, 50), 3), "p95": round(percentile(values, 95), 3),
            "max": round(max(values), 3)}


def whole_minutes_above(seconds: float) -> int:
    """The smallest whole number of minutes (as seconds) strictly above ``seconds``: a grace
    that a check-in ``seconds`` late beats (the deadline is inclusive,
    :func:`core.monitors.rules.status_at`)."""
    return (math.floor(max(seconds, 0) / 60) + 1) * 60


def grace_candidates(lateness: Sequence[float], current: int, limit: int) -> list[int]:
    """Candidate graces, smallest first: the current one and, for each check-in that came
    after its expected instant (``lateness`` in seconds), the whole minutes just above its
    lateness (:func:`whole_minutes_above`), at most ``limit`` seconds; when that gives more
    than :data:`MAX_GRACE_CANDIDATES` values, those of evenly spaced percentiles."""
    late = sorted(s for s in lateness if s > 0)
    above = sorted({min(whole_minutes_above(s), limit) for s in late})
    if len(above) > MAX_GRACE_CANDIDATES:
        n = MAX_GRACE_CANDIDATES
        above = sorted({above[round(i * (len(above) - 1) / (n - 1))] for i in range(n)})
    return sorted({current, *above})


def duration_bounds(durations: Sequence[float], limit: int) -> tuple[int, int | None]:
    """``(max_duration, min_duration)`` in whole seconds for runs that reported success taking
    ``durations`` seconds: the longest times :data:`MAX_DURATION_MARGIN` rounded up to a whole
    minute (at most ``limit``), and the shortest times :data:`MIN_DURATION_SHARE` rounded down
    to a whole second, or ``None`` when the shortest is under :data:`MIN_DURATION_FLOOR`
    seconds (too quick to tell an empty run from a good one)."""
    longest, shortest = max(durations), min(durations)
    upper = min(math.ceil(longest * MAX_DURATION_MARGIN / 60) * 60, limit)
    lower = math.floor(shortest * MIN_DURATION_SHARE) if shortest >= MIN_DURATION_FLOOR \
        else None
    return max(upper, 60), lower


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun`` in a reason, the noun plural unless ``n`` is 1: ``"1 day"``,
    ``"2 days"``, ``"0 check-ins"`` (``plural``: when it is not ``noun`` + "s")."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def seconds_text(seconds: float) -> str:
    """``seconds`` for a reason: ``"42 s"``, ``"15 min"``, ``"2.5 h"``, ``"3 d"`` (the
    largest unit it reaches; under two minutes in seconds)."""
    if seconds < 120:
        return f"{seconds:g} s" if seconds == int(seconds) else f"{seconds:.1f} s"
    unit, size = next((u, n) for u, n in (("d", 86400), ("h", 3600), ("min", 60))
                      if seconds >= n)
    value = seconds / size
    return f"{value:.0f} {unit}" if value == round(value) else f"{value:.1f} {unit}"
