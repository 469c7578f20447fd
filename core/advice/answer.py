"""The advisor's answer as typed values (docs/advice.md, *The routes*): what each suggestion
says, and what it would have changed over the window by the what-if replay."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from core.advice.rules import QUICK_RUNS, Judged, Trial, Verdict, choose, counted, helps
from core.replay.compare import Incident


@dataclass(frozen=True)
class Outage:
    """A real outage of the window (:mod:`core.advice.rules`): from its first alert to its
    end (the window's end when ``open``), UTC."""

    start: datetime
    end: datetime
    open: bool


@dataclass(frozen=True)
class WhatIf:
    """The current value and the suggestion side by side over the window: incidents each opens
    (``*_alerts``: ``down`` / ``failed`` alerts that were not held; ``too_long`` counted for a
    job's ``max_duration``), the real outages and how many each alerts on, the false alarms of
    each and how many the suggestion avoids.

    Only the figures read from the replays are stored; ``real_outages`` and
    ``false_alarms_avoided`` are computed from them here, and nowhere else, so they cannot
    disagree with them."""

    current_alerts: int
    suggested_alerts: int
    outages_alerted_current: int
    outages_alerted_suggested: int
    false_alarms_current: int
    false_alarms_suggested: int
    outages: list[Outage] = field(default_factory=list)

    @property
    def real_outages(self) -> int:
        """How many real outages the window held: the spans listed."""
        return len(self.outages)

    @property
    def false_alarms_avoided(self) -> int:
        """The current value's false alarms less the suggestion's, never below 0."""
        return max(0, self.false_alarms_current - self.false_alarms_suggested)


@dataclass(frozen=True)
class Suggestion:
    """One suggested change: ``field`` from ``current`` to ``suggested`` (seconds, counts or a
    schedule, as the PATCH body takes them: ``change`` is that body, computed from them), the
    ``reason`` with the observed figures, and ``what_if``."""

    field: str
    current: Any
    suggested: Any
    reason: str
    what_if: WhatIf

    @property
    def change(self) -> dict[str, Any]:
        """The ``PATCH`` body that applies the suggestion."""
        return {self.field: self.suggested}


@dataclass(frozen=True)
class Kept:
    """A field the advisor looked at and would not change, and why."""

    field: str
    current: Any
    reason: str


@dataclass(frozen=True)
class Advice:
    """``GET /v1/{monitors,jobs}/{id}/advice``: the subject, the window ``[from_, to]`` read
    (the ``days`` days asked for, from ``schedule_changed_at`` when the schedule changed in
    them: :func:`window`), how many check-ins or final runs it holds (``observations``), the
    suggestions and the fields kept; ``insufficient`` says why nothing is suggested when the
    history is too short (then both lists are empty)."""

    subject: str
    id: uuid.UUID
    from_: datetime
    to: datetime
    days: int
    observations: int
    insufficient: str | None
    suggestions: list[Suggestion] = field(default_factory=list)
    kept: list[Kept] = field(default_factory=list)
    schedule_changed_at: datetime | None = None


@dataclass(frozen=True)
class Window:
    """The history the advice reads: from ``start`` to now, the ``days`` asked for or, when the
    schedule (or its zone) changed in them, only since that change (``changed``, its instant):
    the suggestions are for the current definition, and a check-in or run of before was due
    by another schedule (docs/advice.md, *After a schedule change*)."""

    start: datetime
    days: int
    changed: datetime | None

    @property
    def during(self) -> str:
        """The window in a reason: ``"in 30 days"``, or ``"since 2026-11-20 14:00 UTC, when
        the schedule changed"``."""
        if self.changed is None:
            return f"in {counted(self.days, 'day')}"
        return f"since {self.changed:%Y-%m-%d %H:%M} UTC, when the schedule changed"

    @property
    def last(self) -> str:
        """The window in the too-little-history reason: ``"in the last 30 days"``, or as
        :attr:`during` says it after a change."""
        return f"in the last {counted(self.days, 'day')}" if self.changed is None \
            else self.during


def window(events: Sequence[dict[str, Any]], days: int, now: datetime) -> Window:
    """The :class:`Window` of the ``days`` days before ``now`` for a monitor's or job's stream
    ``events`` (version order): from the last ``*.updated`` event in them whose changes gave
    the schedule or its time zone another value, if any. Reads the definition events only."""
    start, changed = now - timedelta(days=days), None
    said: tuple[Any, Any] | None = None
    for event in events:
        kind, data = event["event_type"], event["data"]
        if kind.endswith(".created"):
            said = (data.get("schedule"), data.get("timezone"))
        elif kind.endswith(".updated") and said is not None:
            changes = data.get("changes") or {}
            new = (changes.get("schedule", said[0]), changes.get("timezone", said[1]))
            if new != said and start < event["occurred_at"] <= now:
                changed = event["occurred_at"]
            said = new
    return Window(start if changed is None else changed, days, changed)


def what_if(verdict: Verdict, suggested: Judged) -> WhatIf:
    """The :class:`WhatIf` of ``suggested`` next to the verdict's current value."""
    now = verdict.current
    return WhatIf(
        current_alerts=now.trial.alerts, suggested_alerts=suggested.trial.alerts,
        outages_alerted_current=now.caught, outages_alerted_suggested=suggested.caught,
        false_alarms_current=now.false_alarms, false_alarms_suggested=suggested.false_alarms,
        outages=[Outage(o.start, o.end, o.open) for o in verdict.outages])


def verdict_text(verdict: Verdict, shown: Any, noun: str = "false alarm") -> str:
    """The rule's outcome in words: ``shown`` (the chosen value as said) against the current
    one, with the counts (of ``noun``: false alarms, or flaps)."""
    now, chosen = verdict.current, verdict.chosen
    total = len(verdict.outages)
    return (f"over the window {counted(total, 'real outage')}: the current value alerts on "
            f"{now.caught} with {counted(now.false_alarms, noun)}, {shown} on {chosen.caught} "
            f"with {chosen.false_alarms}")


def examined(field_name: str, verdict: Verdict, observed: str, show: Any = str,
             noun: str = "false alarm") -> Suggestion | Kept:
    """A field the rule judged: a :class:`Suggestion` when the verdict's winner is not the
    current value, else :class:`Kept`; ``observed`` (the figures read) opens the reason and
    ``show`` writes a value in it."""
    current, chosen = verdict.current.trial.value, verdict.chosen.trial.value
    text = f"{observed}; {verdict_text(verdict, show(chosen), noun)}"
    if chosen == current:
        return Kept(field_name, current, f"{text}: the current value already alerts on every "
                                         f"real outage with the fewest {noun}s")
    return Suggestion(field_name, current, chosen, text, what_if(verdict, verdict.chosen))


def compared(field_name: str, verdict: Verdict, suggested: Any, reason: str) -> Suggestion:
    """A suggestion made by a rule of its own (a run-time bound, a schedule), with the
    verdict's judgement of ``suggested`` (one of its trials, not the current value: the
    callers ask only for a change) next to the current value."""
    judged = next(j for j in verdict.judged if j.trial.value == suggested)
    return Suggestion(field_name, verdict.current.trial.value, suggested, reason,
                      what_if(verdict, judged))


def constant_fields(states: Sequence[Any]) -> dict[str, Any]:
    """The fields (of the frozen dataclass states ``states``, a stream's definition states in
    order) whose value is the same in every one: a proposal that sets only these to those
    values changes no replayed state, so its replay is the recorded definition's, whatever
    field it was asked for (:func:`trial_key`)."""
    if not states:
        return {}
    first = states[0]
    return {f.name: getattr(first, f.name) for f in dataclasses.fields(first)
            if all(getattr(s, f.name) == getattr(first, f.name) for s in states[1:])}


def trial_key(field_name: str, value: Any, overrides: dict[str, Any],
              constant: dict[str, Any]) -> tuple[str, Any]:
    """The key a replay is kept under: ``("recorded", None)`` for every proposal that changes
    nothing (its ``overrides`` are values the fields had throughout, ``constant``): the
    current value of each field examined, when the window holds no edit of it, is one replay,
    not one per field (docs/advice.md, *Cost*); else ``(field_name, value)``."""
    if all(k in constant and constant[k] == v for k, v in overrides.items()):
        return ("recorded", None)
    return (field_name, value)


class Trials(Protocol):
    """What replays a subject's history under one changed field (a monitor's or a job's)."""

    def trials(self, field_name: str, values: Sequence[Any]) -> list[Trial]: ...

    def real(self, incident: Incident) -> bool: ...

    def flapped(self, previous: Incident, incident: Incident) -> bool: ...


def bound(runs: Trials, name: str, current: int | None, suggested: int | None, seen: str,
          extreme: float) -> Suggestion | Kept:
    """A run-time bound ``name`` (``max_duration`` or ``min_duration``, seconds) against the
    one :func:`core.advice.rules.duration_bounds` gives: kept when the current bound flags no
    good run (``extreme``: the longest or the shortest, seconds) and is within a factor of two
    of the suggestion, or when there is no suggestion; a maximum for good runs all quicker
    than :data:`~core.advice.rules.QUICK_RUNS` is kept unless its replay does better
    (:func:`~core.advice.rules.helps`); else suggested, with the replay of both."""
    above = name == "max_duration"
    fits = current is not None and suggested is not None and (
        extreme < current <= 2 * suggested if above else suggested / 2 <= current <= extreme)
    if suggested is None or current == suggested or fits:
        why = "no good run was slow enough to tell a quick run from an empty one" \
            if suggested is None else "the current bound flags no good run"
        return Kept(name, current, f"{seen}: {why}")
    # most sensitive first: the smaller maximum, the larger minimum (no bound: the least)
    order = sorted([current, suggested], key=lambda v: (v is None, v if above else -(v or 0)))
    trials = runs.trials(name, order)
    if len(trials) < 2:
        return Kept(name, current, f"{seen}: {suggested} s is refused by the definition rules")
    verdict = choose(trials, current, runs.real)
    if above and extreme < QUICK_RUNS and not helps(verdict, suggested):
        return Kept(name, current, f"{seen}: every good run took under {QUICK_RUNS} s, and a "
                    f"maximum of {suggested} s would have alerted on no more real outages "
                    "with no fewer false alarms over the window")
    rule = ("the longest good run plus half of it, in whole minutes" if above
            else "half the shortest good run, in whole seconds")
    return compared(name, verdict, suggested, f"{seen}; suggested: {rule}")


def in_a_row(things: str) -> Callable[[int], str]:
    """How a count threshold is said: ``"2 failures in a row"``, ``"1 failure in a row"``
    (``things`` in the plural, made singular by its last letter)."""
    return lambda n: f"{n} {things if n != 1 else things[:-1]} in a row"
