"""The dependency graph of a team's monitors and jobs (``depends_on``; docs/notifications.md,
*Dependencies*): what a command checks before it writes an edge or deletes a parent.

A monitor or job names parents among the team's live monitors and jobs; the graph they make
must have no cycle (a self-edge included, and cycles through jobs), so that "a parent is down"
always bottoms out. Edges only change through the job and monitor commands, which call
:func:`check_depends_on` in their transaction under a per-team lock (two edits cannot close a
cycle between them). A parent with live dependents cannot be deleted
(:func:`refuse_delete_with_dependents`): its dependents would name an id that no longer means
anything. What the edges do to alerts is :mod:`core.notifications.dependencies`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from core.db import Connection, ConnectionPool
from core.errors import Conflict, FieldErrors
from core.queries import Q


async def check_depends_on(conn: Connection, team_id: uuid.UUID,
                           subject_id: uuid.UUID, depends_on: Sequence[uuid.UUID],
                           before: Sequence[uuid.UUID]) -> None:
    """Check a monitor's or job's new ``depends_on`` in the caller's transaction (nothing to
    do when it is unchanged).

    Raises:
        InvalidInput: on ``depends_on.<i>``: the subject itself, an id that is no live monitor
            or job of the team, or an edge that closes a cycle (the cycle is named).
    """
    if list(depends_on) == list(before):
        return
    await conn.execute(Q["dependency_lock"], {"team_id": team_id})
    cur = await conn.execute(Q["dependency_graph"], {"team_id": team_id})
    rows = await cur.fetchall()
    names = {row["id"]: f"{row['kind']} {row['name']!r}" for row in rows}
    edges = {row["id"]: list(row["depends_on"]) for row in rows}
    edges[subject_id] = list(depends_on)
    errors = FieldErrors()
    for i, parent in enumerate(depends_on):
        if parent == subject_id:
            errors.add(f"depends_on.{i}", "a monitor or job cannot depend on itself")
        elif parent not in names:
            errors.add(f"depends_on.{i}", f"{parent} is not a monitor or job of this team")
        elif (path := _path(edges, parent, subject_id)) is not None:
            cycle = " -> ".join(names.get(n, "this one") for n in [subject_id, *path])
            errors.add(f"depends_on.{i}", f"would make a cycle: {cycle}")
    errors.raise_if_any()


def _path(edges: dict[uuid.UUID, list[uuid.UUID]], start: uuid.UUID, goal: uuid.UUID
          ) -> list[uuid.UUID] | None:
    """A path from ``start`` to ``goal`` following the parents (depth first), or ``None``."""
    seen: set[uuid.UUID] = set()
    stack: list[tuple[uuid.UUID, list[uuid.UUID]]] = [(start, [start])]
    while stack:
        node, path = stack.pop()
        if node == goal:
            return path
        if node in seen:
            continue
        seen.add(node)
        stack.extend((parent, [*path, parent]) for parent in edges.get(node, ()))
    return None


async def refuse_delete_with_dependents(conn: Connection, team_id: uuid.UUID,
                                        subject_id: uuid.UUID, what: str) -> None:
    """Refuse to delete a parent that live monitors or jobs depend on.

    Raises:
        Conflict: naming the dependents (remove it from their ``depends_on`` first).
    """
    cur = await conn.execute(Q["dependency_dependents"], {"team_id": team_id,
                                                          "id": subject_id})
    dependents = await cur.fetchall()
    if dependents:
        listed = ", ".join(f"{row['kind']} {row['name']!r} ({row['id']})"
                           for row in dependents)
        raise Conflict(f"{what} {subject_id} has dependents: {listed}; remove it from their "
                       "depends_on first")


async def parents_by_name(pool: ConnectionPool, team_id: uuid.UUID,
                          names: Sequence[str]) -> list[dict[str, Any]]:
    """The team's live monitors and jobs named ``names``: rows ``{"id", "kind", "name"}`` (a
    name may be one monitor's and one job's)."""
    if not names:
        return []
    async with pool.connection() as conn:
        cur = await conn.execute(Q["dependency_by_name"], {"team_id": team_id,
                                                           "names": list(names)})
        return await cur.fetchall()


async def parent_names(pool: ConnectionPool, team_id: uuid.UUID,
                       ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, dict[str, Any]]:
    """``{id: {"id", "kind", "name"}}`` of those of ``ids`` that are the team's monitors or
    jobs (deleted ones too)."""
    if not ids:
        return {}
    async with pool.connection() as conn:
        cur = await conn.execute(Q["dependency_names"], {"team_id": team_id, "ids": list(ids)})
        return {row["id"]: row for row in await cur.fetchall()}


async def check_proposed(conn: Connection, team_id: uuid.UUID,
                         subject_id: uuid.UUID, depends_on: Sequence[uuid.UUID]) -> None:
    """Check a ``depends_on`` proposed to a what-if replay (nothing is written): the subject
    itself or an id that is no live monitor or job of the team is refused.

    Raises:
        InvalidInput: on ``changes.depends_on.<i>``.
    """
    cur = await conn.execute(Q["dependency_graph"], {"team_id": team_id})
    known = {row["id"] for row in await cur.fetchall()}
    errors = FieldErrors()
    for i, parent in enumerate(depends_on):
        if parent == subject_id or parent not in known:
            errors.add(f"changes.depends_on.{i}", f"{parent} is not another monitor or job "
                                                  "of this team")
    errors.raise_if_any()
