"""What-if replay of a monitor: its recorded pings and commands through the monitor rules.

The replay is the live state machine run again, with no second copy of a rule:

* each recorded ``monitor.pinged`` goes through :func:`core.monitors.rules.ping` (what the ping
  statement applies; ``tests/integration/test_monitor_rules_property.py`` keeps them equal);
* every other recorded event of the stream but the status flips (creation, edits, pause,
  resume, deletion, token rotation, broken, repaired) goes through the projection's fold,
  :func:`core.monitors.state.evolve`, and the proposal's overrides are applied again after it
  (a proposed field stays proposed through a recorded edit of it); the next decision instant
  is then :func:`core.monitors.rules.timing`, as the commands compute it;
* the passing of time is a perfectly timely checker: at each decision instant up to the next
  recorded event (inclusive: a deadline and a ping at the same instant, the checker first),
  :func:`core.monitors.checker.decide`, the checker's own decision;
* which failures and good pings alert is the failure tolerance, :func:`core.alerting.tolerate`
  (with the default thresholds :func:`core.monitors.rules.alert_for`): each side counts its
  failures (a ping that left the monitor down, a ``monitor.down`` by time, a slot missed while
  down) and good pings, as :mod:`core.monitors.tolerance` does live, under its own
  definition (the recorded one, or the proposal);
* maintenance (:mod:`core.replay.maintenance`): an alert inside a ``suppress: alerts`` window
  is held (``"maintenance": "suppressed"``, no incident opens), and at a window's close a
  monitor still down whose latest alert was held gets exactly one ``down`` alert
  (``"maintenance": "released"``), the rule of :mod:`core.maintenance.release`. The recorded
  side applies the recorded windows, the proposal those of :class:`~core.replay.proposal.
  Proposal` (the recorded ones by default).

The recorded status flips (``monitor.up``/``late``/``down``) are what *happened*; the replay
makes its own. The replay starts from the monitor's recorded state at ``from`` (the fold of its
stream before it) with the proposal applied at that instant, as a ``PATCH`` then would. A ping
recorded as ``ignored`` kept only its method and exit status: when a proposed ``methods``
accepts it, it is replayed as its exit status says (0 or none: success, else a failure);
since migration 0023 a ping keeps the kind its URL asked for (``requested``), and its body
is read with it, so proposed keywords decide again from the stored body.
Dependencies (:mod:`core.replay.dependencies`): each side names the parents of its
definition at each instant (an edit of ``depends_on`` at its instant, :meth:`Timeline.follow`)
and a down its parents held before ``from`` stays held into the window.
Re-alerts (``still_down``) are not replayed. Nothing is written.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal

from core.actor import Actor
from core.alerting import Streak, tolerate
from core.coerce import uuid_of
from core.db import ConnectionPool
from core.dependencies import check_proposed
from core.errors import NotFound
from core.history.streams import MONITOR, definition_events, stream_until
from core.monitors.checker import BrokenMonitor, decide
from core.monitors.definition import cached_schedule
from core.monitors.rules import alert_for, next_miss, ping, ping_outcome, timing, too_short
from core.monitors.state import STATUS_AFTER, MonitorState, evolve
from core.replay.compare import Incident, incidents, listed, summary
from core.replay.dependencies import Parents, hold, named, outages
from core.replay.maintenance import Maintenance, recorded_and_proposed
from core.replay.proposal import Proposal, monitor_proposal
from core.replay.window import replay_window
from core.schedule import Schedule
from core.stored import schedule_problem

FLIPS = ("monitor.up", "monitor.late", "monitor.down")  # what the replay decides itself
Outcome = Literal["failure", "success"]
PING_REASONS = ("fail", "failure_keyword", "too_short")  # a monitor.down a ping caused
MAX_LISTED = 1000  # transitions and alerts listed per side; the summary counts them all


def requested_kind(data: dict[str, Any]) -> str:
    """The kind a recorded ping asked for: ``requested`` (recorded since migration 0023); for
    an older ping its effective kind, or for an ``ignored`` one what its exit status says (the
    recorded event does not keep more)."""
    if data.get("requested"):
        return str(data["requested"])
    kind = data["kind"]
    if kind != "ignored":
        return str(kind)
    return "success" if data.get("exit_status") in (None, 0) else "fail"


def ping_reason(requested: str, action: str) -> str:
    """Why a ping that counts as a failure failed (live: the ``monitor.down`` data of
    :mod:`core.monitors.ping`, also when the monitor was down already): a success shorter
    than ``min_duration`` (``too_short``), a ``/fail`` (``fail``), else a failure keyword in
    its body (``failure_keyword``)."""
    if action == "success":
        return "too_short"
    return "fail" if requested == "fail" else "failure_keyword"


def transition(at: datetime, event_type: str, data: dict[str, Any]) -> dict[str, Any]:
    """A status flip as answered: ``{"at", "event_type", "previous_status", "status",
    "reason"}`` (``reason`` ``None`` for ``monitor.late``)."""
    return {"at": at, "event_type": event_type, "previous_status": data["previous_status"],
            "status": STATUS_AFTER[event_type], "reason": data.get("reason")}


def _schedule(state: MonitorState) -> Schedule | None:
    schedule, _ = schedule_problem(cached_schedule, state.schedule, state.timezone,
                                   state.created_at)
    return schedule


class Timeline:
    """What one side (proposed or recorded) went through: flips, alerts, status changes, under
    the maintenance windows ``maintenance`` (``None``: none) closing in ``(start, end]``; and
    the failure tolerance's count (:func:`core.alerting.tolerate`, as
    :mod:`core.monitors.tolerance` keeps it live), which decides the alerts."""

    def __init__(self, maintenance: Maintenance | None = None,
                 start: datetime | None = None, end: datetime | None = None) -> None:
        self.transitions: list[dict[str, Any]] = []
        self.alerts: list[dict[str, Any]] = []
        self.changes: list[tuple[datetime, bool, str | None]] = []  # for compare.incidents
        self.maintenance = maintenance
        self.closings = [] if maintenance is None or start is None or end is None \
            else maintenance.closings(start, end)
        self.current: str | None = None  # the status, once a change said it
        self.held: tuple[str, str | None] | None = None  # the latest alert, when held
        self.parents: Parents | None = None  # its parents' recorded outages, as named
        self.depending: tuple[datetime, str | None] | None = None  # a down a parent holds
        self.holding: list[uuid.UUID] = []  # the parents that held it (its recovery's held_by)
        self.streak = Streak()
        self.miss: tuple[datetime, datetime] | None = None  # (expected, deadline) watched

    def seed(self, status: str | None, last_alert: tuple[datetime, str, str | None] | None,
             start: datetime, counted: tuple[Streak, tuple[datetime, datetime] | None]
             ) -> None:
        """The status at ``start``, the latest alert before it ``(at, event, reason)`` (held
        when a window held it then and no closing since, up to ``start``, released it) and
        the failure tolerance's count then ``(streak, next missed slot)``."""
        self.current = status
        self.streak, self.miss = counted
        maintenance = self.maintenance
        if last_alert is None or maintenance is None or not maintenance.holds(last_alert[0]):
            return
        if any(not maintenance.holds(c) for c in maintenance.closings(last_alert[0], start)):
            return  # released before the period (the monitor was down since the alert)
        self.held = (last_alert[1], last_alert[2])

    def release(self, at: datetime) -> None:
        """Each window closing up to ``at`` (inclusive): one ``down`` alert when the monitor is
        still down, its latest alert was held and no window holds it still; and the ``down``
        a parent held, when its parents were all back by ``at`` and it is still down
        (:mod:`core.replay.dependencies`)."""
        if self.depending is not None and self.parents is not None:
            free = self.parents.free_at(self.depending[0])
            if free is not None and free <= at:
                reason, self.depending = self.depending[1], None
                if self.current == "down":
                    held = self.maintenance is not None and self.maintenance.holds(free)
                    self.alerts.append({"at": free, "event": "down", "reason": reason,
                                        "maintenance": "suppressed" if held else None,
                                        "dependency": "released"})
                    if not held:
                        self.changes.append((free, True, reason))
        while self.closings and self.closings[0] <= at:
            closing = self.closings.pop(0)
            assert self.maintenance is not None
            if self.held is None or self.held[0] != "down" or self.current != "down" \
                    or self.maintenance.holds(closing):
                continue
            self.alerts.append({"at": closing, "event": "down", "reason": self.held[1],
                                "maintenance": "released"})
            self.changes.append((closing, True, self.held[1]))
            self.held = None

    def follow(self, at: datetime, depends_on: list[uuid.UUID]) -> None:
        """The definition names ``depends_on`` from ``at`` on: a hold its former parents
        released by ``at`` is released, then one the new list leaves no parent down for is
        released at ``at`` (live: :func:`core.notifications.released.release_subject`, in
        the edit's transaction)."""
        if self.parents is None or self.parents.names(depends_on):
            return
        self.release(at)
        self.parents.follow(at, depends_on)
        self.release(at)

    def status(self, at: datetime, before: str | None, after: str) -> None:
        """A status change by a command (pause, resume, delete, creation): one that leaves
        ``down`` ends the count (live, :func:`core.notifications.outbox.forget_monitor_alert`)
        and the incident, silently."""
        self.release(at)
        self.current = after
        if before == after or after == "down":
            return
        self.depending = None  # it left down: nothing owed
        if self.streak.alerted:
            self.changes.append((at, False, None))
        self.streak, self.miss = Streak(), None

    def flip(self, at: datetime, event_type: str, data: dict[str, Any]) -> None:
        """A recorded or replayed status flip (alerts are :meth:`count`'s)."""
        self.release(at)
        shown = transition(at, event_type, data)
        self.transitions.append(shown)
        self.current = shown["status"]

    def count(self, at: datetime, state: MonitorState, outcome: Outcome | None,
              reason: str | None = None, slot_at: datetime | None = None) -> None:
        """One failure or good ping at ``at`` under the definition ``state``: the rule's alert
        (``down`` with ``reason``, ``up``), held as maintenance says; a failure short of
        ``alert_after_failures`` watches the next slot (:meth:`misses`)."""
        if outcome is None:
            return
        self.release(at)
        self.streak, alert = tolerate(self.streak, outcome,
                                      alert_after=state.alert_after_failures,
                                      recover_after=state.recover_after_successes)
        self.miss = None
        if alert is None and not self.streak.alerted and self.streak.failures:
            schedule = _schedule(state)
            if schedule is not None:
                self.miss = next_miss(schedule, state.grace_seconds, slot_at or at)
        if alert is None:
            return
        event = "down" if alert == "failure" else "up"
        reason = reason if event == "down" else "ping"  # only a good ping says up
        held = self.maintenance is not None and self.maintenance.holds(at)
        self.held = (event, reason) if held else None
        shown = {"at": at, "event": event, "reason": reason,
                 "maintenance": "suppressed" if held else None}
        down = self.parents.down_at(at) if self.parents is not None else []
        if event == "up" and self.depending is not None:
            self.depending = None  # back while held: nothing was said, nothing owed
            self.alerts.append(hold(shown, self.holding))
            return
        if event == "down" and down:
            self.depending, self.holding = (at, reason), down
            self.alerts.append(hold(shown, down))
            return
        self.alerts.append(shown)
        if event == "up":
            self.changes.append((at, False, None))
        elif not held:
            self.changes.append((at, True, reason))

    def misses(self, until: datetime, state: MonitorState | None) -> None:
        """The slots a down monitor missed up to ``until`` (inclusive), each a failure (the
        live checker's :func:`core.monitors.tolerance.count_misses`)."""
        while self.miss is not None and self.miss[1] <= until and state is not None \
                and self.current == "down":
            expected, deadline = self.miss
            self.count(deadline, state, "failure", "missed", expected)
            if self.miss is not None and self.miss[1] <= deadline:
                self.miss = None  # never spin

    def copy(self) -> Timeline:
        """A copy that goes on apart from this one (its lists and parents copied; the
        maintenance, read only, shared)."""
        new = copy.copy(self)
        new.parents = None if self.parents is None else copy.copy(self.parents)
        new.transitions, new.alerts = list(self.transitions), list(self.alerts)
        new.changes, new.closings = list(self.changes), list(self.closings)
        new.holding = list(self.holding)
        return new

    def answer(self, end: datetime) -> tuple[dict[str, Any], list[Incident]]:
        self.release(end)
        transitions, cut_t = listed(self.transitions, MAX_LISTED)
        alerts, cut_a = listed(self.alerts, MAX_LISTED)
        return ({"transitions": transitions, "alerts": alerts, "truncated": cut_t or cut_a},
                incidents(self.changes, end))


def _down_by_time(data: dict[str, Any]) -> bool:
    """A ``monitor.down`` the checker decided (the passing of time), not a ping's."""
    return data.get("reason") not in PING_REASONS


class Replay:
    """The replayed monitor: its state, its next decision instant, its timeline."""

    def __init__(self, state: MonitorState | None, proposal: Proposal, at: datetime,
                 timeline: Timeline | None = None) -> None:
        self.proposal = proposal
        self.state: MonitorState | None = None if state is None else proposal.apply(state)
        self.deadline: datetime | None = None
        self.timeline = timeline or Timeline()
        self._retime(at)

    def _retime(self, at: datetime) -> None:
        """The next decision instant after a ping or command at ``at`` (the commands' rule)."""
        state, self.deadline = self.state, None
        if state is None or state.broken_at is not None:
            return
        schedule = _schedule(state)
        if schedule is not None:
            _, self.deadline = timing(state, schedule, at)

    def resume(self, state: MonitorState, at: datetime) -> None:
        """Go on from ``state``, the state after a ping or command at ``at`` that this replay
        did not apply itself (the advisor's skip over a stretch it knows to end there,
        :mod:`core.advice.monitors`): its next decision instant is the one :meth:`apply`
        would have set."""
        self.state = state
        self._retime(at)

    def advance(self, until: datetime) -> None:
        """The checker, at each decision instant up to ``until`` (inclusive), then the slots
        a down monitor missed (a down monitor has no decision instant)."""
        while self.state is not None and self.deadline is not None and self.deadline <= until:
            at = self.deadline
            try:
                state = self.state
                decision = decide(state if state.next_expected_at is None
                                  else state.replaced(next_expected_at=None), at)
            except BrokenMonitor:
                self.deadline = None  # the live checker marks it broken and leaves it
                return
            if decision.event is not None:
                self.timeline.flip(at, *decision.event)
                if alert_for(self.state.status, decision.status) == "down":
                    data = decision.event[1]
                    self.timeline.count(at, self.state, "failure", data.get("reason"),
                                        data.get("expected_at"))
                self.state = self.state.replaced(status=decision.status)
            elif decision.alert_at is not None and decision.alert_at <= at:
                self.deadline = None  # cannot happen with the rules; never spin
                return
            self.deadline = decision.alert_at
        self.timeline.misses(until, self.state)

    def apply(self, event: dict[str, Any]) -> None:
        """One recorded event at its instant (the checker's decisions before it first)."""
        at = event["occurred_at"]
        self.advance(at)
        kind, data = event["event_type"], event["data"]
        if kind in FLIPS:
            return
        if kind == "monitor.pinged" and self.state is not None:
            outcome = ping(self.state, kind=requested_kind(data), method=data["method"],
                           rid=uuid_of(data.get("rid")), at=at,
                           exit_status=data.get("exit_status"), body=event.get("body"))
            reason = ping_reason(requested_kind(data), outcome.action)
            for event_type, flip in outcome.events[1:]:
                self.timeline.flip(at, event_type, flip)
                reason = flip.get("reason") or reason
            self.timeline.count(at, self.state,
                                ping_outcome(outcome.action, outcome.state.status), reason)
            self.state = outcome.state
        else:
            before = None if self.state is None else self.state.status
            after: MonitorState = self.proposal.apply(evolve(self.state, event))
            self.state = after
            self.timeline.follow(at, after.depends_on)
            self.timeline.status(at, before, after.status)
        self._retime(at)


def _recorded_outcome(state: MonitorState, data: dict[str, Any]
                      ) -> tuple[Outcome | None, str]:
    """What a recorded ping counted as (:func:`core.monitors.rules.ping_outcome`) under the
    recorded definition ``state`` before it, with the reason of a failure."""
    action = data["kind"]
    if action == "fail":
        return "failure", "fail" if data.get("requested") in (None, "fail") \
            else "failure_keyword"
    if too_short(state, action, data.get("duration_ms")):
        return "failure", "too_short"
    return ping_outcome(action, "up" if action == "success" else "new"), "ping"


def record(timeline: Timeline, previous: MonitorState | None, event: dict[str, Any]
           ) -> MonitorState:
    """The recorded side: add one recorded event to ``timeline`` (its flips, what it counted
    towards the failure tolerance under the recorded definition before it, and the status
    changes of lifecycle events); returns the recorded state after it."""
    kind, data, at = event["event_type"], event["data"], event["occurred_at"]
    if previous is not None:
        timeline.misses(at, previous)
    after = evolve(previous, event)
    if kind in FLIPS:
        timeline.flip(at, kind, data)
        if kind == "monitor.down" and _down_by_time(data) and previous is not None \
                and previous.status != "down":
            timeline.count(at, after, "failure", data.get("reason"), _instant(data))
    elif kind == "monitor.pinged" and previous is not None:
        outcome, reason = _recorded_outcome(previous, data)
        timeline.count(at, after, outcome, reason if outcome == "failure" else None, at)
    else:
        timeline.follow(at, after.depends_on)
        if kind in STATUS_AFTER or kind == "monitor.created":
            timeline.status(at, None if previous is None else previous.status, after.status)
    return after


def _instant(data: dict[str, Any]) -> datetime | None:
    value = data.get("expected_at")
    return value if value is None or isinstance(value, datetime) \
        else datetime.fromisoformat(value)


class Replayer:
    """A replay fed one recorded event at a time, in version order (a stream may be long: it
    is read once, as it comes, and no event is kept)."""

    def __init__(self, proposal: Proposal, start: datetime, end: datetime,
                 recorded: Maintenance | None = None,
                 simulated: Maintenance | None = None,
                 spans: dict[uuid.UUID, list[tuple[datetime, datetime | None]]] | None = None,
                 actual: bool = True) -> None:
        self.proposal, self.start, self.end = proposal, start, end
        self.actual = actual  # False: the recorded side in the window is not kept (empty)
        self.simulated = simulated
        self.spans = spans  # the recorded outages of every parent either side names
        self.prior: MonitorState | None = None  # the recorded state at ``start``
        self.before = Timeline()  # the recorded side before ``start``: its last alert, count
        if spans is not None:  # and a down its parents held then
            self.before.parents = Parents(spans)
        self.run: Replay | None = None
        self.recorded = Timeline(recorded, start, end)
        self.state: MonitorState | None = None  # the recorded state, in the window

    def feed(self, event: dict[str, Any]) -> None:
        """Take the next event (one after the window's end changes nothing)."""
        if self.run is None:
            if event["occurred_at"] < self.start:
                self.prior = record(self.before, self.prior, event)
                del self.before.transitions[:], self.before.changes[:]
                del self.before.alerts[:-1]
                return
            self._begin()
        assert self.run is not None
        if event["occurred_at"] <= self.end:
            if self.actual:
                self.state = record(self.recorded, self.state, event)
            self.run.apply(event)

    def prior_of(self, other: Replayer) -> None:
        """Take the recorded state at ``start`` (and the recorded alert and count before it)
        from ``other``, a replayer of the same stream, ``start`` and ``spans`` fed every event
        before ``start`` and nothing after, instead of being fed them: then feed only the
        events from ``start`` on. For many replays of one stream over one window (the advisor,
        :mod:`core.advice.monitors`); the fold before the window does not depend on the
        proposal, so the answer is the same.

        Raises:
            ValueError: either replayer has begun its window, or their starts differ.
        """
        if self.run is not None or other.run is not None or other.start != self.start:
            raise ValueError("share a prior only between unbegun replayers of one window")
        self.prior = other.prior
        self.before = other.before.copy()

    def _begin(self) -> None:
        """Start both sides at ``start`` from the recorded state, each knowing whether the
        latest recorded alert before it was held (by its own windows), with the recorded
        failure tolerance's count then."""
        prior = self.prior
        self.before.misses(self.start, prior)
        self.state = self.prior
        status = None if self.prior is None else self.prior.status
        last = self.before.alerts[-1] if self.before.alerts else None
        last_alert = None if last is None else (last["at"], last["event"], last["reason"])
        counted = (self.before.streak, self.before.miss)
        self.recorded.seed(status, last_alert, self.start, counted)
        timeline = Timeline(self.simulated, self.start, self.end)
        timeline.seed(status, last_alert, self.start, counted)
        self.run = Replay(prior, self.proposal, self.start, timeline)
        if self.spans is not None:  # each side names the parents of its state at start
            self.recorded.parents = Parents(self.spans, [] if prior is None
                                            else prior.depends_on)
            simulated = self.run.state
            timeline.parents = Parents(self.spans, [] if simulated is None
                                       else simulated.depends_on)
            self._held_before(self.recorded, timeline)

    def _held_before(self, *sides: Timeline) -> None:
        """A down the parents held before ``start`` and not released by then is held on
        each side at ``start`` (released when its parents are back, as live)."""
        before = self.before
        if before.depending is None or before.parents is None:
            return
        free = before.parents.free_at(before.depending[0])
        if free is not None and free < self.start:
            return
        for side in sides:
            side.depending, side.holding = before.depending, list(before.holding)

    def sides(self) -> tuple[tuple[dict[str, Any], list[Incident]],
                             tuple[dict[str, Any], list[Incident]]]:
        """``((simulated, its incidents), (actual, its incidents))`` once every event was fed,
        each side ``{"transitions", "alerts", "truncated"}`` (:func:`transition`; alerts
        ``{"at", "event": down|up, "reason", "maintenance": suppressed|released|None}``), its
        incidents those of :func:`core.replay.compare.incidents`. Call it once."""
        if self.run is None:
            self._begin()
        run = self.run
        assert run is not None
        run.advance(self.end)
        if self.actual:
            self.recorded.misses(self.end, self.state)
        return run.timeline.answer(self.end), self.recorded.answer(self.end)

    def answer(self) -> dict[str, Any]:
        """``{"simulated": side, "actual": side, "summary": {...}}`` (:meth:`sides`); the
        summary is :func:`core.replay.compare.summary`."""
        (simulated, proposed), (actual, happened) = self.sides()
        return {"simulated": simulated, "actual": actual, "summary": summary(proposed, happened)}


def replay(events: Iterable[dict[str, Any]], proposal: Proposal, start: datetime,
           end: datetime, recorded: Maintenance | None = None,
           simulated: Maintenance | None = None) -> dict[str, Any]:
    """The replay of one monitor stream (its events in version order) over ``[start, end]``
    under ``proposal`` and the windows ``simulated``, next to what was recorded (under the
    windows ``recorded``): :meth:`Replayer.answer`."""
    replayer = Replayer(proposal, start, end, recorded, simulated)
    for event in events:
        replayer.feed(event)
    return replayer.answer()


async def simulate_monitor(pool: ConnectionPool, actor: Actor, monitor_id: uuid.UUID,
                           changes: dict[str, Any], start: datetime | None,
                           end: datetime | None, now: datetime) -> dict[str, Any]:
    """``POST /v1/monitors/{id}/simulate``: :func:`replay` of the monitor's stream over
    ``[start, end]`` (read by :func:`core.replay.window.replay_window` once the monitor is
    found: the id first, docs/api.md, *The OpenAPI document*) under the
    proposal ``changes`` (:func:`core.replay.proposal.monitor_proposal`, validated against the
    latest definition). Reads only; the stream is read once, streamed.

    Returns:
        :func:`replay`'s answer with ``"changes"``: the proposal in canonical form, and the
        window as ``"from"``, ``"to"``.

    Raises:
        NotFound: no such monitor for this team (a deleted one can still be replayed).
        InvalidInput: a window or a proposal the rules refuse.
    """
    latest = None
    states: list[MonitorState | None] = []
    for event in await definition_events(pool, actor, MONITOR, monitor_id):
        latest = evolve(latest, event)
        states.append(latest)
    if latest is None:
        raise NotFound(f"monitor {monitor_id} not found")
    start, end = replay_window(start, end, now)
    proposal = monitor_proposal(changes, latest.as_row(), now)
    async with pool.connection() as conn:
        if "depends_on" in proposal.overrides:
            await check_proposed(conn, actor.team_id, monitor_id,
                                 proposal.overrides["depends_on"])
            states.append(proposal.apply(latest))
        recorded, simulated = await recorded_and_proposed(
            conn, "monitor", monitor_id, actor.team_id, proposal, start, end)
        found = await outages(conn, actor.team_id, named(states), end)
        replayer = Replayer(proposal, start, end, recorded, simulated,
                            None if found is None else found.spans)
        async for event in stream_until(conn, MONITOR, monitor_id, actor.team_id, end):
            replayer.feed(event)
    return {"changes": proposal.shown(), **replayer.answer(), "from": start, "to": end}
