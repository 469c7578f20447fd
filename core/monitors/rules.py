"""The monitor rules, in one place: what a ping does, what the passing of time does, what alerts.

This module is the specification. Everything else applies it:

* the fold of a monitor's stream (:mod:`core.monitors.state`) calls :func:`ping_fields`;
* the commands, the rebuild and the checker compute ``next_expected_at`` / ``alert_at`` and
  the time transitions with :func:`timing`, :func:`status_at`, :func:`next_alert` and
  :func:`time_transition`;
* the ping path (the function ``monitor_ping_batch``, made by
  ``migrations/versions/2026_12_02_0021_ping_batch_function.py`` and called from
  ``core/sql/monitors.sql``) applies :func:`ping` in SQL, one statement per batch for speed;
  ``tests/integration/test_monitor_rules_property.py`` checks on generated ping sequences
  that the statement and :func:`ping` agree (docs/architecture.md, *Invariants*);
* both the ping path and the checker queue alerts where :func:`alert_for` says so.

The rules are healthchecks.io's (``hc/api/models.py``), with its ``grace`` state named
``late`` and stored. A state is the frozen :class:`core.monitors.state.MonitorState` (the
rules of time read only what :class:`Timed` names, so the checker's claimed row serves too);
instants are timezone-aware UTC ``datetime``; ``grace_seconds`` and periods are in seconds,
durations in milliseconds.

**A ping** (``Check.ping``; see docs/heartbeats.md, *Pinging*):

* effective action: the ping's kind (``success``, ``start``, ``fail``, ``log``), or
  ``ignored`` (healthchecks' ``ign``) for any ping to a ``paused`` monitor with
  ``manual_resume``, and for a non-POST ping to a monitor with ``methods = post``; else, when
  the monitor has keywords, what its body says (:func:`keyword_action`, healthchecks'
  ``filter_http_body``): a failure keyword makes it a ``fail``, a success keyword a
  ``success``, a start keyword a ``start``, none ``ignored``;
* status: ``success`` makes it ``up``, ``fail`` makes it ``down``; other actions keep it;
* pending start: ``start`` records ``last_start_at`` and its ``rid``; a success or failure
  whose ``rid`` matches the pending start (both ``None`` counts as a match) closes it and
  records the duration (``last_duration_ms``, floored to the millisecond); a failure, or a
  success without ``rid``, closes it in any case (without a duration); a success with another
  ``rid`` leaves it alone. A success or failure sets ``last_ping_at`` and
  ``last_duration_ms`` (``None`` without a matching start);
* run too short (``min_duration``, healthchecks #236): a success that closes a pending start
  with a duration below ``min_duration`` seconds is a failure: the monitor goes ``down`` with
  ``reason: too_short`` (the ping itself stays a ``success`` in the log, with its duration, so
  a replay with another bound decides again);
* events: ``monitor.pinged`` at the next stream version, then, when the status changed,
  ``monitor.up`` (``reason: ping``) or ``monitor.down`` (``reason: fail`` or ``too_short``)
  at the one after.

**Time** (``get_grace_start``, ``going_down_after``, ``get_status``):

* expected instant: ``last_ping_at + period`` for a period schedule; for cron, the first fire
  of the schedule strictly after ``last_ping_at``, evaluated in the monitor's zone with the
  same engine and DST rules as jobs. The ping statement has no cron engine: for a cron monitor
  it stores no expected instant and sets ``alert_at`` to the ping's instant, so the checker
  computes it at once;
* ``late`` from the expected instant (inclusive), ``down`` from ``expected + grace``
  (inclusive): a ping at 11:04:59 with a 1 h period and 5 min grace is expected at 12:04:59,
  late then, down at 12:09:59;
* a ``/start`` must be followed by a success or a failure within the grace period, whatever the
  status (``new`` and ``paused`` included), or the monitor is ``down`` at ``start + grace``
  (``reason: start_timeout``);
* run too long (``max_duration``): with a bound, the start's window is ``max_duration``
  instead of the grace, and while that run goes on it is the only deadline: the schedule's
  lateness is the *start's* (expected + grace, ``reason: overdue``), the run's is its own
  (``start + max_duration``, ``reason: too_long``), and a run still going then is ``down``
  while it runs, not when it ends;
* ``new``, ``paused`` and ``down`` never change with time, except through a pending start.

``alert_at`` is the next instant at which the stored status may change by the passing of time;
the checker claims a monitor when it is reached. The ping statement only ever moves it earlier:
a ping that pushes the deadline out leaves the indexed column alone (a HOT update), and the
checker, claiming the monitor at the old instant, finds it on time and sets the exact instant.
So ``alert_at`` is never later than the next change, possibly earlier.

**Alerts** (``Flip.select_channels``): a monitor alerts when it goes down and when it comes
back up after being down (:func:`alert_for`); ``late`` never alerts, nor ``new``/``paused`` →
``up``. Re-alerts while down (``still_down``) are the checker's, every ``realert_every``.

**Failure tolerance** (Sentry Crons' ``failure_issue_threshold`` / ``recovery_threshold``;
the rule is :func:`core.alerting.tolerate`, shared with jobs): each failure (a ping that
leaves the monitor ``down``: :func:`ping_outcome`; a ``monitor.down`` by time; a further slot
missed while down: :func:`next_miss`) and each good ping counts; the ``down`` alert waits for
``alert_after_failures`` failures in a row, the ``up`` alert for ``recover_after_successes``
good pings in a row. With both at 1 (the default) this is exactly :func:`alert_for`. The
status itself does not wait: the monitor is ``down`` at its first failure.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, Protocol

from core.alerting import shorter_than
from core.schedule import Schedule

if TYPE_CHECKING:  # state.py imports this module for its fold (ping_fields)
    from core.monitors.state import MonitorState

ACTIVE = ("up", "late")
KEYWORDS = ("failure_keywords", "success_keywords", "start_keywords")  # in the order they win
FINISHES = ("success", "fail")  # the actions that end a run (healthchecks: not start/log/ign)


class Timed(Protocol):
    """What the rules of time read of a monitor (a :class:`MonitorState` or the checker's
    claimed row): its stored ``status``, ``grace_seconds`` and ``max_duration`` (seconds),
    the last finished ping and the pending start (UTC)."""

    @property
    def status(self) -> str: ...
    @property
    def grace_seconds(self) -> int: ...
    @property
    def max_duration(self) -> int | None: ...
    @property
    def last_ping_at(self) -> datetime | None: ...
    @property
    def last_start_at(self) -> datetime | None: ...


# -- a ping ---------------------------------------------------------------------------------------
def filters_body(state: MonitorState) -> bool:
    """Whether the monitor decides its pings' actions by their bodies (any keyword set)."""
    return any(getattr(state, key) for key in KEYWORDS)


def keyword_action(body: bytes | None, state: MonitorState) -> str:
    """The action the body of a ping says, for a monitor with keywords (healthchecks'
    ``ping`` view in ``hc/api/views.py`` with ``filter_http_body``, and ``match_keywords``
    in ``hc/lib/string.py``):
    ``fail`` when it contains one of ``failure_keywords``, else ``success`` for one of
    ``success_keywords``, else ``start`` for one of ``start_keywords``, else ``ignored``.
    Matching is case-sensitive and on the stored body (truncated to the body limit, as
    healthchecks' ``PING_BODY_LIMIT``); a keyword matches its UTF-8 bytes, so a body that is
    not UTF-8 is still searched instead of refused. No body is an empty one."""
    data = body or b""
    for key, action in zip(KEYWORDS, ("fail", "success", "start"), strict=True):
        if any(word.encode() in data for word in getattr(state, key)):
            return action
    return "ignored"


def effective_action(kind: str, method: str, *, status: str, methods: str,
                     manual_resume: bool, body: bytes | None = None,
                     keywords: MonitorState | None = None) -> str:
    """The action a ping takes: its ``kind``, ``ignored`` (healthchecks' ``ign``), or what
    its body says.

    Args:
        kind: ``success``, ``start``, ``fail`` or ``log`` (an exit status already mapped).
        method: the HTTP method, upper case.
        status: the monitor's status when the ping arrives.
        methods: the monitor's ``methods`` (``any`` | ``post``).
        manual_resume: the monitor's ``manual_resume``.
        body: the ping's stored body (``None``: none).
        keywords: the monitor, for its keyword lists (``start_keywords`` …); with any
            keyword the body decides (:func:`keyword_action`), after ``ignored``.
    """
    if (status == "paused" and manual_resume) or (methods == "post" and method != "POST"):
        return "ignored"
    if keywords is not None and filters_body(keywords):
        return keyword_action(body, keywords)
    return kind


def status_after_ping(status: str, action: str) -> str:
    """The status after a ping of effective ``action`` (``Check.ping``'s ``new_status``)."""
    if action == "success":
        return "up"
    if action == "fail":
        return "down"
    return status


def _pairs(state: MonitorState, action: str, rid: uuid.UUID | None) -> bool:
    return action in FINISHES and state.last_start_at is not None \
        and state.last_start_rid == rid


def ping_duration_ms(state: MonitorState, action: str, rid: uuid.UUID | None,
                     at: datetime) -> int | None:
    """Milliseconds (floored) from the pending start to this success or failure at ``at``,
    when its ``rid`` matches the start's (both ``None`` counts); else ``None``."""
    if not _pairs(state, action, rid) or state.last_start_at is None:
        return None
    return (at - state.last_start_at) // timedelta(milliseconds=1)


def ping_fields(state: MonitorState, action: str, rid: uuid.UUID | None, at: datetime,
                duration_ms: int | None) -> dict[str, Any]:
    """The ping fields (``last_ping_at``, ``last_start_at``, ``last_start_rid``,
    ``last_duration_ms``) a ping of effective ``action`` at ``at`` changes, with their new
    values (empty: none). ``duration_ms`` is the ping's recorded duration
    (:func:`ping_duration_ms` when it was recorded). The status and version are not among
    them: they follow the events (the fold, :func:`core.monitors.state.evolve`, and
    :func:`ping` set them with these, in one copy of the state)."""
    new: dict[str, Any] = {}
    if action == "start":
        new.update(last_start_at=at, last_start_rid=rid)
    elif action in FINISHES:
        new.update(last_ping_at=at, last_duration_ms=duration_ms)
        if state.last_start_at is not None and (
                state.last_start_rid == rid or action == "fail" or rid is None):
            new.update(last_start_at=None, last_start_rid=None)
    return new


@dataclass(frozen=True)
class PingOutcome:
    """What one ping does to a monitor (see :func:`ping`).

    Attributes:
        action: the effective action (:func:`effective_action`).
        state: the state after the ping: ``status``, the ping fields and ``version`` updated.
        events: ``(event_type, data)`` to append, in order, at ``version + 1``, ``+ 2``.
    """

    action: str
    state: MonitorState
    events: tuple[tuple[str, dict[str, Any]], ...]


def too_short(state: MonitorState, action: str, duration_ms: int | None) -> bool:
    """Whether a ping of effective ``action`` that closed a run of ``duration_ms`` (``None``:
    no matching start) is a run shorter than the monitor's ``min_duration`` (seconds)."""
    return action == "success" and shorter_than(duration_ms, state.min_duration)


def ping(state: MonitorState, *, kind: str, method: str, rid: uuid.UUID | None,
         at: datetime, exit_status: int | None = None, body: bytes | None = None
         ) -> PingOutcome:
    """The rule of one ping (healthchecks' ``Check.ping``), as the ping statement applies it.

    Args:
        state: the monitor before the ping (its ``status``, ``methods``,
            ``manual_resume``, ping fields, ``version``, ``min_duration`` in seconds and
            keyword lists are read).
        kind, method, rid, exit_status, body: the ping (:class:`core.monitors.ping.Ping`;
            ``body`` as stored, truncated to the body limit).
        at: its arrival instant (UTC).

    Returns:
        The effective action, the state after it and its events: ``monitor.pinged``
        ``{"kind": action, "method", "rid", "exit_status", "duration_ms", "requested": kind}``
        (the caller adds ``body_size``, ``remote_addr``, ``user_agent``), then on a status
        change ``monitor.up`` ``{"previous_status", "reason": "ping"}`` or ``monitor.down``
        ``{"previous_status", "reason": "fail", "exit_status"}`` (``failure_keyword`` when
        a failure keyword in the body of a ping that was not a failure made it one) or, for
        a run shorter than
        ``min_duration``, ``{"previous_status", "reason": "too_short", "duration_ms",
        "min_duration"}``.
    """
    before = state.status
    action = effective_action(kind, method, status=before, methods=state.methods,
                              manual_resume=state.manual_resume, body=body, keywords=state)
    duration = ping_duration_ms(state, action, rid, at)
    short = too_short(state, action, duration)
    status = "down" if short else status_after_ping(before, action)
    fields = ping_fields(state, action, rid, at, duration)
    events: list[tuple[str, dict[str, Any]]] = [("monitor.pinged", {
        "kind": action, "method": method, "rid": rid, "exit_status": exit_status,
        "duration_ms": duration, "requested": kind})]
    if status == "up" != before:
        events.append(("monitor.up", {"previous_status": before, "reason": "ping"}))
    elif status == "down" != before and short:
        events.append(("monitor.down", {"previous_status": before, "reason": "too_short",
                                        "duration_ms": duration,
                                        "min_duration": state.min_duration}))
    elif status == "down" != before:
        events.append(("monitor.down", {
            "previous_status": before, "reason": "fail" if kind == "fail" else "failure_keyword",
            "exit_status": exit_status}))
    # one copy of the state per ping (ping_fields, the status, the version)
    new = state.replaced(**fields, status=status, version=state.version + len(events))
    return PingOutcome(action, new, tuple(events))


# -- time -----------------------------------------------------------------------------------------
def expected_after(schedule: Schedule, last_ping_at: datetime | None) -> datetime | None:
    """The instant the next ping is due after a success or failure at ``last_ping_at`` (UTC).

    Returns:
        ``None`` before the first ping, or for a cron schedule without a further fire.
    """
    if last_ping_at is None:
        return None
    if schedule.interval_seconds is not None:
        return last_ping_at + timedelta(seconds=schedule.interval_seconds)
    return schedule.next_fire(last_ping_at)


def _grace(state: Timed) -> timedelta:
    return timedelta(seconds=state.grace_seconds)


def _start_window(state: Timed) -> timedelta:
    """How long a run may go after its ``/start``: ``max_duration`` when set, else the grace
    (healthchecks' rule)."""
    bound = state.max_duration
    return _grace(state) if bound is None else timedelta(seconds=bound)


def _start_deadline(state: Timed) -> datetime | None:
    start = state.last_start_at
    return None if start is None else start + _start_window(state)


def _bounded_run(state: Timed) -> bool:
    """A run is going (a pending start) and the monitor has a ``max_duration``: that run's
    deadline is the only one until it ends (the start was on time)."""
    return state.last_start_at is not None and state.max_duration is not None


def status_at(state: Timed, expected: datetime | None, now: datetime) -> str:
    """The status the monitor has at ``now`` given its stored status (healthchecks' get_status).

    Args:
        state: the monitor (:class:`Timed`).
        expected: the expected instant (see :func:`expected_after`), ``None`` if unknown.
        now: the instant to evaluate (UTC).
    """
    status = state.status
    if status in ("down", "deleted"):
        return status
    start_deadline = _start_deadline(state)
    if start_deadline is not None and now >= start_deadline:
        return "down"
    if status not in ACTIVE or expected is None or _bounded_run(state):
        return status
    if now >= expected + _grace(state):
        return "down"
    return "late" if now >= expected else "up"


def next_alert(state: Timed, expected: datetime | None, status: str | None = None
               ) -> datetime | None:
    """The next instant at which the stored status (or ``status``, the one the monitor is
    about to take) may change by time alone, if any.

    A result at or before the current instant means the checker has a decision to make now.
    """
    status = state.status if status is None else status
    if status in ("down", "deleted"):
        return None
    candidates = [_start_deadline(state)]
    if _bounded_run(state):
        pass  # the run's deadline only
    elif status == "up" and expected is not None:
        candidates.append(expected)
    elif status == "late" and expected is not None:
        candidates.append(expected + _grace(state))
    present = [c for c in candidates if c is not None]
    return min(present) if present else None


def timing(state: Timed, schedule: Schedule, now: datetime
           ) -> tuple[datetime | None, datetime | None]:
    """``(next_expected_at, alert_at)`` for the projection row of ``state`` at ``now``.

    When the stored status no longer matches the time (a schedule or grace change made the
    monitor late, down or on time again), ``alert_at`` is ``now`` so the checker decides the
    transition and appends its event at once.
    """
    expected = expected_after(schedule, state.last_ping_at) if state.status in ACTIVE else None
    if status_at(state, expected, now) != state.status:
        return expected, now
    return expected, next_alert(state, expected)


def ping_timing(state: MonitorState, before: MonitorState, period_seconds: float | None,
                at: datetime) -> tuple[datetime | None, datetime | None]:
    """``(next_expected_at, alert_at)`` as the ping statement writes them after a batch.

    Args:
        state: the state after the batch's last ping to the monitor (:func:`ping`).
        before: the row as the statement locked it (``last_ping_at``, ``next_expected_at``,
            ``alert_at``).
        period_seconds: the period of a period schedule, ``None`` for cron.
        at: the instant of the batch's last ping to the monitor (UTC).

    A period schedule's expected instant is :func:`expected_after`. A cron monitor that an
    up/late ping finished gets none, and ``alert_at = at``: the checker, claiming it at once,
    computes it (SQL has no cron engine). ``alert_at`` only ever moves earlier: it is the
    earlier of the stored one and :func:`next_alert` (so a HOT update when the deadline moves
    out; the checker then sets the exact instant).
    """
    expected: datetime | None = None
    if state.status in ACTIVE:
        if period_seconds is not None and state.last_ping_at is not None:
            expected = state.last_ping_at + timedelta(seconds=period_seconds)
        elif state.last_ping_at == before.last_ping_at:
            expected = before.next_expected_at
    exact = at if state.status in ACTIVE and expected is None and period_seconds is None \
        else next_alert(state, expected)
    present = [a for a in (before.alert_at, exact) if a is not None]
    return expected, min(present) if present else None


def time_transition(state: Timed, status: str, expected: datetime | None
                    ) -> tuple[str, dict[str, Any]]:
    """The event of a change to ``status`` (from :func:`status_at`) by the passing of time.

    Returns:
        ``monitor.up`` ``{"previous_status", "reason": "on_time", "expected_at"}`` (a schedule
        change made it on time again), ``monitor.late`` ``{"previous_status", "expected_at",
        "deadline"}``, or ``monitor.down`` with ``reason`` ``too_long`` (``started_at``,
        ``deadline``, ``max_duration``) when a run is past its ``max_duration``,
        ``start_timeout`` (``started_at``, ``deadline``) when the pending start's grace ends
        first, else ``overdue`` (``expected_at``, ``deadline``: the start or ping was late).
    """
    grace = _grace(state)
    data: dict[str, Any] = {"previous_status": state.status}
    if status == "up":
        return "monitor.up", {**data, "reason": "on_time", "expected_at": expected}
    deadline = None if expected is None else expected + grace
    if status == "late":
        return "monitor.late", {**data, "expected_at": expected, "deadline": deadline}
    start = state.last_start_at
    if start is not None and _bounded_run(state):
        return "monitor.down", {**data, "reason": "too_long", "started_at": start,
                                "deadline": start + _start_window(state),
                                "max_duration": state.max_duration}
    if start is not None and (deadline is None or start + grace <= deadline):
        return "monitor.down", {**data, "reason": "start_timeout", "started_at": start,
                                "deadline": start + grace}
    return "monitor.down", {**data, "reason": "overdue", "expected_at": expected,
                            "deadline": deadline}


# -- alerts ---------------------------------------------------------------------------------------
def ping_outcome(action: str, status_after: str) -> Literal["failure", "success"] | None:
    """What a ping of effective ``action`` that left the monitor ``status_after`` counts as
    towards the failure tolerance: a success or failure that left it ``down`` (a ``/fail``, a
    failure keyword, a run too short) is a ``failure``, one that left it ``up`` a
    ``success``; starts, logs and ignored pings do not count."""
    if action not in FINISHES:
        return None
    if status_after == "down":
        return "failure"
    return "success" if status_after == "up" else None


def next_miss(schedule: Schedule, grace_seconds: int, slot_at: datetime
              ) -> tuple[datetime, datetime] | None:
    """``(expected_at, deadline)`` of the slot after the one expected at ``slot_at`` (or the
    failed ping at ``slot_at``): a down monitor that has not pinged by ``deadline`` (expected
    + grace, inclusive, as :func:`status_at`) missed that slot too, which counts as one more
    failure towards ``alert_after_failures``. ``None``: a cron schedule with no further
    fire."""
    expected = expected_after(schedule, slot_at)
    if expected is None:
        return None
    return expected, expected + timedelta(seconds=grace_seconds)
def alert_for(before: str, after: str) -> Literal["down", "up"] | None:
    """The alert a status change from ``before`` to ``after`` queues, if any.

    healthchecks' rule (``Flip.select_channels``): ``down`` when the monitor goes down (from
    any other status), ``up`` when it comes back up after being down; nothing otherwise (no
    change, ``late``, ``new``/``paused``/``late`` → ``up``). Used by the ping path
    (:mod:`core.monitors.ping`) and the checker (:mod:`core.monitors.checker`).
    """
    if after == "down" and before != "down":
        return "down"
    if after == "up" and before == "down":
        return "up"
    return None
