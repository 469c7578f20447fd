"""A job's or monitor's definition history: each creation, edit and lifecycle event with its
actor, instant and a field-level diff.

The diff compares the states before and after the event as the projection's fold
(:attr:`core.history.streams.Kind.evolve`) gives them, on the user-editable fields
(``DEFINITION_FIELDS`` of the concept's ``definition.py``, plus a job's ``signing`` flag, never
the secret itself) and ``status``. Pings and status flips by pings or time are not definition
changes and are left out (they change none of those fields; read ``/events`` for them).
"""

from __future__ import annotations

import uuid
from typing import Any

from core.actor import Actor
from core.db import ConnectionPool
from core.errors import NotFound
from core.history.streams import Kind, definition_events

EXTRA_FIELDS = {"job": ("signing", "status"), "monitor": ("status",)}


def diff(before: dict[str, Any] | None, after: dict[str, Any],
         fields: tuple[str, ...]) -> list[dict[str, Any]]:
    """``[{"field", "before", "after"}]`` for each of ``fields`` whose value differs (all of
    them, with ``before: None``, when ``before`` is ``None``: a creation), in ``fields`` order."""
    return [{"field": f, "before": None if before is None else before.get(f),
             "after": after.get(f)}
            for f in fields if before is None or before.get(f) != after.get(f)]


async def definition_history(pool: ConnectionPool, actor: Actor, kind: Kind,
                             stream_id: uuid.UUID, *, after_version: int,
                             limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` definition changes of one stream after stream version ``after_version``,
    oldest first: ``{"version", "event_type", "occurred_at", "actor", "changes": diff}``
    (``actor`` as recorded in the event's metadata, e.g. ``api_key:<id>``, ``checker:<id>``).

    Raises:
        NotFound: no such job or monitor for this team (deleted ones included: their history
            stays readable).
    """
    events = await definition_events(pool, actor, kind, stream_id)
    if not events:
        raise NotFound(f"{kind.name} {stream_id} not found")
    fields = (*kind.definition_fields, *EXTRA_FIELDS[kind.name])
    entries: list[dict[str, Any]] = []
    state = None
    for event in events:
        before, state = state, kind.evolve(state, event)
        if event["stream_version"] <= after_version:
            continue
        entries.append({"version": event["stream_version"], "event_type": event["event_type"],
                        "occurred_at": event["occurred_at"],
                        "actor": (event["metadata"] or {}).get("actor"),
                        "changes": diff(None if before is None else kind.row(before),
                                        kind.row(state), fields)})
        if len(entries) == limit:
            break
    return entries
