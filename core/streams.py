"""What every stream's commands share: fold a stream's events with its ``evolve``, and append
decided changes after the state they were decided on.

A command locks its stream's row (its own ``_lock``), decides the changes from that state (a
pure function: :mod:`core.jobs.decide`, :mod:`core.monitors.decide`), and hands them to
:func:`append_changes`,
which numbers them after the state's version, folds them onto it with the stream's ``evolve``
and appends them; the command then writes the new state to its inline row, in the same
transaction (docs/architecture.md, *Invariants*: a state change and its event commit together).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

import psycopg

from core.events import NewEvent, append_events, stream_events


class Versioned(Protocol):
    """A stream's state: a frozen value that knows the stream version it was folded to."""

    @property
    def version(self) -> int: ...


State = TypeVar("State", bound=Versioned)
Change = tuple[str, dict[str, Any]]  # what a decide returns: (event_type, data), in order
# A stream's fold step: the state before (None for a new stream) and one event as read from
# the log (``event_type``, ``data``, ``stream_id``, ``team_id``, ``stream_version``,
# ``occurred_at``) give the state after.
Evolve = Callable[[State | None, Mapping[str, Any]], State]


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


async def append_changes(
    conn: psycopg.AsyncConnection, evolve: Evolve[State], stream_type: str, stream_id: uuid.UUID,
    team_id: uuid.UUID, before: State | None, changes: Sequence[Change],
    now: datetime, metadata: dict[str, Any],
) -> State:
    """Append ``changes`` (``(event_type, data)`` pairs, at least one) to the stream after
    ``before``'s version, in the caller's transaction; returns the state they lead to.

    Raises:
        ConcurrencyConflict: another writer appended at those versions first.
    """
    events = stream_events(stream_type, stream_id, team_id, before.version if before else 0,
                           now, changes, metadata)
    state = fold(evolve, map(as_read, events), before)
    assert state is not None, "no changes to append"
    await append_events(conn, events)
    return state
