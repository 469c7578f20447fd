"""What every stream's commands share: lock the stream's read row, fold, decide, append, and
write the read row, in the caller's transaction.

Each stream type that commands change (``job``, ``monitor``, ``channel``, ``maintenance``,
``status_page``) describes itself once as a :class:`StreamKind`: its locked read row
(``from_row``), its fold step (``evolve``) and how its read row is written (``write``). A
command then:

1. :func:`lock` takes the row (``FOR UPDATE``) and checks the version the caller expects;
2. asks the stream's pure ``decide`` (:mod:`core.jobs.decide`, :mod:`core.monitors.decide`,
   :mod:`core.channels.decide`, :mod:`core.maintenance.decide`, :mod:`core.statuspages.decide`)
   for the changes;
3. :func:`append` numbers them after the state's version, folds them onto it, appends them
   and writes the read row: the state change and its events commit together
   (docs/architecture.md, *Invariants*).

:func:`execute` is the three steps at once; a command that has database checks of its own
between deciding and appending (the channels a job lists, a window's subjects) calls
:func:`lock` and :func:`append` around them.

What a create or an update decides is one type for every stream, :class:`Decision`: the
definition after the command and the events. A stream whose command needs more that no event
carries extends it with keyword fields: a job's ``set_signing``
(:class:`core.jobs.decide.Update`), a monitor's ``changes`` (:class:`core.monitors.decide.Update`),
a channel's ``sealed`` secrets (:class:`core.channels.decide.ChannelDecision`). The commands that
decide no definition (pause, delete, end, rotate) return the events alone. Two other types are
named for deciding and are not this one, for a reason: the monitor checker's
:class:`core.monitors.checker.Decision` is a check's verdict (a status, the next alert instant,
at most one event), written by a compare-and-set of its own and not through :func:`append`;
the claim's :class:`core.runs.slots.OverlapDecision` sorts slots (run, queue, skip) and holds no
event.

Streams whose read row is written by its own statement, with no fold (``team``, ``secret``,
``notification``, ``alert``), append with :func:`core.events.append_at` after the version that
statement gave; :func:`append` numbers its events with the same rule
(:func:`core.events.stream_events`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

from core.actor import Actor
from core.db import Connection, team_row
from core.errors import ConcurrencyConflict
from core.events import Change as Change  # what a decide returns, in order
from core.events import NewEvent, append_events, stream_events, to_json


class Versioned(Protocol):
    """A stream's state: a frozen value that knows the stream version it was folded to."""

    @property
    def version(self) -> int: ...


State = TypeVar("State", bound=Versioned)
Command = TypeVar("Command")

@dataclass(frozen=True)
class Decision:
    """What a create or an update decided, for every stream (the module says which extend it):
    ``definition``, the whole definition after the command (canonical; a channel's with its
    URLs redacted, its secrets being ``sealed``), and ``events`` to append, in order; empty
    when nothing changes."""

    definition: dict[str, Any]
    events: list[Change] = field(default_factory=list)


def event_data(definition: Mapping[str, Any]) -> dict[str, Any]:
    """A definition as an event carries it: JSON-ready (ids, instants as ISO 8601 text)."""
    result: dict[str, Any] = json.loads(to_json(definition))
    return result


# A stream's fold step: the state before (None for a new stream) and one event as read from
# the log (``event_type``, ``data``, ``stream_id``, ``team_id``, ``stream_version``,
# ``occurred_at``) give the state after.
Evolve = Callable[[State | None, Mapping[str, Any]], State]
# Writes the read row of the state after a command (with the state before it, None for a new
# stream, and the command's instant) in the caller's transaction; returns the state written
# (a stream may derive columns at the instant, as a monitor's next alert).
Write = Callable[[Connection, State | None, State, datetime], Awaitable[State]]


@dataclass(frozen=True, slots=True)
class StreamKind(Generic[State]):
    """One stream type as its commands handle it.

    Attributes:
        stream_type: the events' ``stream_type`` (``job``, ``maintenance`` …).
        noun: its name in errors (``job``, ``maintenance window`` …).
        lock_query: the statement (``Q[<name>]``, core/sql/) that reads the read row
            ``FOR UPDATE`` by ``id`` and ``team_id``.
        from_row: the state in that row.
        evolve: the fold step.
        write: writes the read row (:data:`Write`).
    """

    stream_type: str
    noun: str
    lock_query: str
    from_row: Callable[[Mapping[str, Any]], State]
    evolve: Evolve[State]
    write: Write[State]


def fold(evolve: Evolve[State], events: Iterable[Mapping[str, Any]],
         state: State | None = None) -> State | None:
    """The state after ``events`` of one stream, in version order, from ``state`` (``None``:
    the stream's beginning; ``None`` back when there are no events)."""
    for event in events:
        state = evolve(state, event)
    return state


def as_read(event: NewEvent) -> dict[str, Any]:
    """``event`` in the shape the log hands to a fold."""
    return {"event_type": event.event_type, "data": event.data, "stream_id": event.stream_id,
            "team_id": event.team_id, "stream_version": event.version,
            "occurred_at": event.occurred_at}


async def lock(conn: Connection, kind: StreamKind[State], actor: Actor,
               stream_id: uuid.UUID, expected_version: int | None = None) -> State:
    """The stream's state, its read row locked until the caller's transaction ends.

    Raises:
        NotFound: no such stream for the actor's team (or it was deleted).
        ConcurrencyConflict: ``expected_version`` is given and is not the current version.
    """
    row = await team_row(conn, kind.lock_query, kind.noun, stream_id, actor.team_id)
    state = kind.from_row(row)
    if expected_version is not None and expected_version != state.version:
        raise ConcurrencyConflict(f"{kind.noun} {stream_id} is at version {state.version}, "
                                  f"not {expected_version}")
    return state


async def append(
    conn: Connection, kind: StreamKind[State], actor: Actor,
    stream_id: uuid.UUID, before: State | None, changes: Sequence[Change], now: datetime,
    amend: Callable[[State], State] | None = None,
) -> State:
    """Append ``changes`` (``(event_type, data)`` pairs, at least one) after ``before``'s
    version and write the read row of the state they lead to, in the caller's transaction.

    Args:
        amend: columns of the read row that no event carries (a channel's sealed secrets),
            set on the folded state before it is written.

    Returns:
        The state written.

    Raises:
        ConcurrencyConflict: another writer appended at those versions first.
    """
    events = stream_events(kind.stream_type, stream_id, actor.team_id,
                           before.version if before else 0, now, changes, actor.metadata())
    state = fold(kind.evolve, map(as_read, events), before)
    assert state is not None, "no changes to append"
    if amend is not None:
        state = amend(state)
    await append_events(conn, events)
    return await kind.write(conn, before, state, now)


async def execute(
    conn: Connection, kind: StreamKind[State], actor: Actor,
    stream_id: uuid.UUID, decide: Callable[[State, Command], Sequence[Change] | None],
    command: Command, now: datetime, expected_version: int | None = None,
) -> tuple[State, State | None]:
    """Lock the stream, decide ``command`` on its state and append what was decided.

    Returns:
        ``(before, after)``: ``after`` is ``None`` when ``decide`` decided nothing (an empty
        list or ``None``), and nothing was written.

    Raises:
        NotFound, ConcurrencyConflict: as :func:`lock`; what ``decide`` raises.
    """
    before = await lock(conn, kind, actor, stream_id, expected_version)
    changes = decide(before, command)
    if not changes:
        return before, None
    return before, await append(conn, kind, actor, stream_id, before, changes, now)
