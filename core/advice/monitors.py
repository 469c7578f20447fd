"""The advisor for a monitor (docs/advice.md): its check-ins over the last days, each
candidate replayed with :class:`core.replay.monitors.Replayer`, judged by
:func:`core.advice.rules.choose`.

Fields examined: ``grace_seconds`` (candidates from the check-ins' lateness),
``alert_after_failures`` (1 to :data:`TOLERANCES`) and ``recover_after_successes`` (1 to
:data:`RECOVERIES`), each with the others as they are; ``max_duration`` and ``min_duration``
when at least :data:`~core.advice.rules.MIN_OBSERVATIONS` runs were timed (a ``/start``
followed by its success, :func:`core.advice.rules.duration_bounds`); the ``schedule`` when the
check-ins keep another period or offset (:mod:`core.advice.schedules`). Every replay uses the
recorded maintenance windows and the recorded outages of the monitor's parents.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from core.actor import Actor
from core.advice.answer import (
    Advice,
    Kept,
    Suggestion,
    Window,
    bound,
    compared,
    constant_fields,
    examined,
    in_a_row,
    trial_key,
    window,
)
from core.advice.rules import (
    MIN_OBSERVATIONS,
    Trial,
    choose,
    choose_replaying,
    counted,
    duration_bounds,
    figures,
    grace_candidates,
    is_real,
    reopened,
    seconds_text,
)
from core.advice.schedules import Fit, offset, other_period
from core.alerting import MAX_RUN_SECONDS, Streak
from core.db import ConnectionPool
from core.errors import InvalidInput, NotFound
from core.history.streams import MONITOR, definition_events, stream_until
from core.monitors.definition import MAX_GRACE_SECONDS, cached_schedule
from core.monitors.rules import FINISHES, expected_after
from core.monitors.state import MonitorState, evolve
from core.replay.compare import Incident
from core.replay.dependencies import Outages, named, outages
from core.replay.maintenance import Maintenance, recorded_and_proposed
from core.replay.monitors import FLIPS, Replayer
from core.replay.proposal import Proposal, monitor_proposal
from core.schedule import Schedule
from core.stored import schedule_problem

TOLERANCES = 4  # alert_after_failures candidates: 1 to this
RECOVERIES = 3  # recover_after_successes candidates: 1 to this


@dataclass(frozen=True)
class CheckIn:
    """A success or failure ping in the window: when, its effective kind (``success`` or
    ``fail``), its lateness (seconds after the instant the rules expected it,
    :func:`core.monitors.rules.expected_after`; negative when early, ``None`` for the first
    ping or while paused) and, for a success paired with its ``/start``, the run's duration
    in seconds."""

    at: datetime
    kind: str
    lateness: float | None
    duration: float | None


def _schedule(state: MonitorState) -> Schedule | None:
    schedule, _ = schedule_problem(cached_schedule, state.schedule, state.timezone,
                                   state.created_at)
    return schedule


def check_ins(events: Sequence[dict[str, Any]], start: datetime) -> list[CheckIn]:
    """The check-ins recorded from ``start`` on in the monitor's stream ``events`` (version
    order), each read against the state the fold had just before it: its schedule, status and
    last check-in. A ping changes none of them but the last check-in (the fold's
    :func:`core.monitors.rules.ping_fields`), so only the other events are folded and the
    last check-in is kept beside (a copy of the state per ping was most of this read)."""
    out: list[CheckIn] = []
    state: MonitorState | None = None
    schedule: Schedule | None = None
    last: datetime | None = None  # the fold's last_ping_at
    for event in events:
        data = event["data"]
        if event["event_type"] != "monitor.pinged" or state is None:
            state = evolve(state, event)  # it leaves last_ping_at alone (but a creation)
            schedule = _schedule(state)
            if event["event_type"] == "monitor.created":
                last = state.last_ping_at
            continue
        at = event["occurred_at"]
        if data["kind"] not in FINISHES:
            continue
        if at >= start:
            expected = None if schedule is None or state.status in ("paused", "new") \
                else expected_after(schedule, last)
            late = None if expected is None else (at - expected).total_seconds()
            ms = data.get("duration_ms") if data["kind"] == "success" else None
            out.append(CheckIn(at, data["kind"], late, None if ms is None else ms / 1000))
        last = at
    return out


# The fields whose candidates replay by skipping what the family's first replay shows to be
# quiet (_Trials): each later candidate is less sensitive than the first (a larger grace,
# more failures before an alert, more good check-ins before the recovery), so a stretch that
# raised nothing under the first raises nothing under it either.
SKIPPING = ("grace_seconds", "alert_after_failures", "recover_after_successes")
RECORDED = ("recorded", None)  # core/advice/answer.py:trial_key of a proposal changing nothing


@dataclass(frozen=True, slots=True)
class _Mark:
    """A full replay right after one event of the window: its state and next decision
    instant, its timeline's status and count, and whether the event left it *quiet*: no
    alert or status change listed at it, nothing held, watched or owed, no failure counted,
    up or late."""

    state: MonitorState | None
    deadline: datetime | None
    current: str | None
    streak: Streak
    quiet: bool


class _Trials:
    """Replays of the monitor's stream under one proposal each (cached by change).

    **Skipping** (docs/advice.md, *Cost*): the first replay of a field of :data:`SKIPPING`
    is fed every event of the window and marks each (:class:`_Mark`); a later candidate of
    that field is fed the events one by one too, but wherever it stands exactly where the
    first did (the same state but for the field, the same next decision instant, count and
    status; both quiet) it jumps over the following events that left the first quiet, to the
    last ping among them, taking the first's state there with its own value (and its own
    version: the rules never read it). Over such a
    stretch the first raised no alert, counted no failure and crossed no deadline of its
    grace; a less sensitive value decides the same there, so its alerts and incidents are
    those of the full replay (its listed transitions are not: the advisor reads none). A
    ``max_duration`` at least as long as the run's window of the recorded definition skips by
    that definition's replay likewise (:meth:`_base`). Only without maintenance windows or
    parents' outages (their instants would need their own checks); otherwise, and for the
    other fields, every replay is fed every event."""

    def __init__(self, events: Sequence[dict[str, Any]], latest: MonitorState,
                 start: datetime, end: datetime, now: datetime,
                 maintenance: Maintenance | None, parents: Outages | None) -> None:
        self.events, self.latest = events, latest
        self.start, self.end, self.now = start, end, now
        self.maintenance, self.parents = maintenance, parents
        self.schedule = _schedule(latest)
        self._done: dict[tuple[str, Any], Trial] = {}
        # the stream before the window is folded once, for every candidate (it does not
        # depend on the proposal: Replayer.prior_of); each replay is fed the window only
        self.spans = None if parents is None else parents.spans
        self._before = Replayer(Proposal(), start, end, spans=self.spans)
        first = 0
        while first < len(events) and events[first]["occurred_at"] < start:
            self._before.feed(events[first])
            first += 1
        self._window = events[first:]
        # the definition as recorded at the window's start and after each edit in it: a
        # proposal of values that never changed replays as the recorded one (trial_key)
        states: list[MonitorState] = [] if self._before.prior is None \
            else [self._before.prior]
        for event in self._window:
            if event["event_type"] in ("monitor.created", "monitor.updated"):
                states.append(evolve(states[-1] if states else None, event))
        self._constant = constant_fields(states)
        self._marks: dict[tuple[str, Any], list[_Mark]] = {}  # of each full replay, by key
        self._first: dict[str, tuple[str, Any]] = {}  # each field's first replay, its key
        self._skips = maintenance is None and parents is None
        self.fed = 0  # events fed to replays (tests/unit/test_advice_skipping.py reads it)

    def trial(self, field_name: str, value: Any) -> Trial | None:
        """The replay with ``{field_name: value}`` over the whole window, the current value as
        any other candidate (the setting in force now, not the values the recorded history
        had at the time: after a suggestion is applied, the same history keeps it, issue 32);
        ``None`` when the definition rules refuse the value."""
        try:
            proposal = monitor_proposal({field_name: value}, self.latest.as_row(), self.now)
        except InvalidInput:
            return None
        key = trial_key(field_name, value, proposal.overrides, self._constant)
        first = self._first.setdefault(field_name, key)
        if key not in self._done:
            # the recorded side is not kept (actual=False): the advice reads the replay's
            replayer = Replayer(proposal, self.start, self.end, self.maintenance,
                                self.maintenance, self.spans, actual=False)
            replayer.prior_of(self._before)
            # the recorded definition's replay is always marked: the first of most fields,
            # and the one a max_duration skips by
            marks = None if key == RECORDED else self._base(field_name, value, key, first)
            if marks is not None:
                self._skipping(replayer, proposal, marks)
            else:
                self._marks[key] = self._marked(replayer)
            (side, incidents), _ = replayer.sides()
            alerts = sum(a["event"] == "down" and a.get("maintenance") != "suppressed"
                         and a.get("dependency") != "held" for a in side["alerts"])
            self._done[key] = Trial(value, incidents, alerts)
        done = self._done[key]
        return done if done.value == value else Trial(value, done.incidents, done.alerts)

    def trials(self, field_name: str, values: Sequence[Any]) -> list[Trial]:
        return [t for t in (self.trial(field_name, v) for v in values) if t is not None]

    def _base(self, field_name: str, value: Any, key: tuple[str, Any],
              first: tuple[str, Any]) -> list[_Mark] | None:
        """The marks of a full replay the candidate ``{field_name: value}`` (kept under
        ``key``) may skip by, being less sensitive than it and otherwise the same: the
        field's first replay for a field of :data:`SKIPPING`; for a ``max_duration`` (not
        none), the recorded definition's, when the grace and the bound were the same over the
        window and the run's window they give (the bound, else the grace) is no longer than
        ``value`` (with a bound the run's deadline is its only one: the schedule waits)."""
        if not self._skips:
            return None
        if field_name in SKIPPING:
            return None if key == first else self._marks.get(first)
        constant = self._constant
        if field_name == "max_duration" and value is not None \
                and "grace_seconds" in constant and "max_duration" in constant:
            window = constant["max_duration"] or constant["grace_seconds"]
            if value >= window:
                return self._marks.get(RECORDED)
        return None

    def _marked(self, replayer: Replayer) -> list[_Mark]:
        """Feed ``replayer`` every event of the window, marking each (:class:`_Mark`)."""
        marks: list[_Mark] = []
        alerts = changes = 0
        for event in self._window:
            replayer.feed(event)
            run = replayer.run
            assert run is not None
            line = run.timeline
            quiet = (len(line.alerts) == alerts and len(line.changes) == changes
                     and line.current in ("up", "late") and line.held is None
                     and line.depending is None and line.miss is None
                     and line.streak.idle)
            alerts, changes = len(line.alerts), len(line.changes)
            marks.append(_Mark(run.state, run.deadline, line.current, line.streak, quiet))
        self.fed += len(self._window)
        return marks

    def _skipping(self, replayer: Replayer, proposal: Proposal, marks: list[_Mark]) -> None:
        """Feed ``replayer`` (a less sensitive candidate of the field ``marks`` come from)
        the window, jumping over what ``marks`` show quiet (the class's docstring)."""
        window, overrides = self._window, proposal.overrides
        # reach[k]: the last ping of the quiet stretch that starts at event k (None: event k
        # left the first replay not quiet, or the stretch holds no ping); a stretch holds
        # pings and recorded flips only (the replay decides flips itself)
        reach: list[int | None] = [None] * (len(window) + 1)
        for k in range(len(window) - 1, -1, -1):
            kind = window[k]["event_type"]
            if marks[k].quiet and (kind == "monitor.pinged" or kind in FLIPS):
                reach[k] = reach[k + 1] if reach[k + 1] is not None \
                    else k if kind == "monitor.pinged" else None
        index = 0
        while index < len(window):
            replayer.feed(window[index])
            self.fed += 1
            end = reach[index + 1]
            if end is not None and end > index + 1 \
                    and self._level(replayer, marks[index], overrides):
                mark = marks[end]
                assert mark.state is not None
                run = replayer.run
                assert run is not None
                run.timeline.current, run.timeline.streak = mark.current, mark.streak
                assert run.state is not None
                run.resume(mark.state.replaced(**overrides, version=run.state.version),
                           window[end]["occurred_at"])
                index = end
            index += 1

    @staticmethod
    def _level(replayer: Replayer, mark: _Mark, overrides: dict[str, Any]) -> bool:
        """Whether ``replayer`` stands where the marked replay stood (the class's
        docstring): both quiet, the same state but for ``overrides`` and ``version`` (a
        count of the events each appended, which the rules write and never read: a candidate
        that flipped less has a lower one), decision instant, status and count."""
        run = replayer.run
        if run is None or not mark.quiet or mark.state is None or run.state is None:
            return False
        line = run.timeline
        return (run.deadline == mark.deadline and line.current == mark.current
                and line.streak == mark.streak and line.held is None
                and line.depending is None and line.miss is None
                and run.state == mark.state.replaced(**overrides, version=run.state.version))

    def real(self, incident: Incident) -> bool:
        return is_real(incident, self.schedule)

    def flapped(self, previous: Incident, incident: Incident) -> bool:
        return reopened(previous, incident, self.schedule)


def _grace(runs: _Trials, ins: list[CheckIn], during: str) -> Suggestion | Kept:
    lateness = [c.lateness for c in ins if c.lateness is not None and c.kind == "success"]
    current = runs.latest.grace_seconds
    values = grace_candidates(lateness, current, MAX_GRACE_SECONDS)
    verdict = choose_replaying(values, partial(runs.trial, "grace_seconds"), current,
                               runs.real)
    late = sum(s > 0 for s in lateness)
    good = sum(c.kind == "success" for c in ins)
    # the figures of every lateness read, early ones negative (docs/advice.md, *What is
    # examined*), not of the late ones alone (issue 32)
    seen = (f"{counted(good, 'good check-in')} {during}, {late} after the expected "
            "instant" + (", lateness p50 {p50:g} s, p95 {p95:g} s, max {max:g} s".format(
                **figures(lateness)) if lateness else ""))
    return examined("grace_seconds", verdict, seen, lambda v: f"a grace of {seconds_text(v)}")


def _tolerance(runs: _Trials, ins: list[CheckIn], during: str) -> list[Suggestion | Kept]:
    failures = sum(c.kind == "fail" for c in ins)
    # a slot missed while down counts as a failure too, and is no check-in: the false alarms
    # may come from those alone (issue 32: "0 of them failures" beside false alarms)
    seen = (f"{counted(len(ins), 'check-in')} {during}, "
            f"{counted(failures, 'failed ping')} among them (a missed slot counts as a "
            "failure too)")
    out: list[Suggestion | Kept] = []
    for name, top, word in (("alert_after_failures", TOLERANCES, "failures"),
                            ("recover_after_successes", RECOVERIES, "good check-ins")):
        current = getattr(runs.latest, name)
        values = sorted({*range(1, top + 1), current})
        flaps = name == "recover_after_successes"
        verdict = choose_replaying(values, partial(runs.trial, name), current,
                                   runs.real, runs.flapped if flaps else None)
        out.append(examined(name, verdict, seen, in_a_row(word),
                            "flap" if flaps else "false alarm"))
    return out


def _durations(runs: _Trials, ins: list[CheckIn], during: str) -> list[Suggestion | Kept]:
    timed = [c.duration for c in ins if c.duration is not None]
    if len(timed) < MIN_OBSERVATIONS:
        return []
    upper, lower = duration_bounds(timed, MAX_RUN_SECONDS)
    seen = ("{n} timed runs {during} took p50 {p50:g} s, p95 {p95:g} s, longest {max:g}"
            " s, shortest {low:g} s").format(n=len(timed), during=during, low=min(timed),
                                              **figures(timed))
    return [bound(runs, "max_duration", runs.latest.max_duration, upper, seen, max(timed)),
            bound(runs, "min_duration", runs.latest.min_duration, lower, seen, min(timed))]


def _schedule_fit(runs: _Trials, ins: list[CheckIn]) -> Suggestion | None:
    schedule = runs.schedule
    if schedule is None:
        return None
    good = [c for c in ins if c.kind == "success"]
    fit: Fit | None = other_period([c.at for c in good], schedule) or offset(
        [c.lateness for c in good if c.lateness is not None and c.lateness >= 0], schedule)
    if fit is None or fit.schedule == runs.latest.schedule:
        return None  # never the current schedule as a change (issue 32)
    trials = runs.trials("schedule", [runs.latest.schedule, fit.schedule])
    if len(trials) < 2:
        return None
    verdict = choose(trials, runs.latest.schedule, runs.real)
    return compared("schedule", verdict, fit.schedule, fit.reason)


def advise(events: Sequence[dict[str, Any]], latest: MonitorState, days: int, now: datetime,
           maintenance: Maintenance | None = None, parents: Outages | None = None) -> Advice:
    """The advice for a monitor whose stream is ``events`` (version order, up to ``now``) and
    whose definition is ``latest``, over the ``days`` days before ``now``, or since its
    schedule last changed in them (:func:`core.advice.answer.window`; docs/advice.md)."""
    span: Window = window(events, days, now)
    start, during = span.start, span.during

    def answer(insufficient: str | None, found: Sequence[Suggestion | Kept] = ()) -> Advice:
        return Advice("monitor", latest.id, start, now, days, len(ins), insufficient,
                      [f for f in found if isinstance(f, Suggestion)],
                      [f for f in found if isinstance(f, Kept)], span.changed)

    ins = check_ins(events, start)
    if len(ins) < MIN_OBSERVATIONS:
        return answer(f"too little history: {counted(len(ins), 'check-in')} {span.last}, "
                      f"at least {MIN_OBSERVATIONS} are needed")
    runs = _Trials(events, latest, start, now, now, maintenance, parents)
    if runs.schedule is None:
        return answer("the monitor's schedule no longer evaluates: repair it first")
    found: list[Suggestion | Kept] = [_grace(runs, ins, during),
                                      *_tolerance(runs, ins, during),
                                      *_durations(runs, ins, during)]
    fit = _schedule_fit(runs, ins)
    if fit is not None:
        found.append(fit)
    return answer(None, found)


async def advise_monitor(pool: ConnectionPool, actor: Actor, monitor_id: uuid.UUID,
                         days: int, now: datetime) -> Advice:
    """``GET /v1/monitors/{id}/advice``: :func:`advise` over the monitor's stream as recorded
    up to ``now``, the replays in a worker thread (:func:`asyncio.to_thread`). Reads only.

    Raises:
        NotFound: no such monitor for this team, or a deleted one.
    """
    latest = None
    states: list[MonitorState | None] = []
    for event in await definition_events(pool, actor, MONITOR, monitor_id):
        latest = evolve(latest, event)
        states.append(latest)
    if latest is None or latest.status == "deleted":
        raise NotFound(f"monitor {monitor_id} not found")
    start = now - timedelta(days=days)
    async with pool.connection() as conn:
        recorded, _ = await recorded_and_proposed(conn, "monitor", monitor_id, actor.team_id,
                                                  Proposal(), start, now)
        parents = await outages(conn, actor.team_id, named(states), now)  # as ever named
        events = [e async for e in stream_until(conn, MONITOR, monitor_id, actor.team_id, now)]
    # the replays are CPU-bound (seconds for a busy monitor): off the event loop, so pings
    # and other requests of the process are still served meanwhile
    return await asyncio.to_thread(advise, events, latest, days, now, recorded, parents)
