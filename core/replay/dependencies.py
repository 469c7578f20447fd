"""Dependencies in a what-if replay (docs/ledger.md, *What-if replay*; the live rule is
:mod:`core.notifications.dependencies`): when each parent was down, from the log, and what that
does to a side's alerts.

A parent's outages are read from what was recorded (a monitor from ``monitor.down`` to the
``monitor.up``, pause, resume or deletion that ends it; a job while it has a failure streak,
live's ``alert_states`` row: from a failed final run to the good run that ends the streak, the
first one when the streak never alerted, else the ``recover_after_successes``-th in a row,
replayed by :func:`core.replay.streak.down_spans` under the job's recorded definition), whatever
the proposal: a proposal changes the subject, not its parents. A
side holds its subject's problem alert raised while one of the parents it named then was down
(``"dependency": "held"``, no incident opens), holds its recovery while a hold is open
(nothing was said), and when no parent it names is down any more and the subject still is,
says the owed alert then (``"dependency": "released"``): at the parent's recovery, or at the
edit of ``depends_on`` that left no parent down, the instants live releases it at (in that
transaction, :mod:`core.notifications.released`). A side follows the ``depends_on`` of its
definition as it was at each instant (:class:`Parents`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from core.db import Connection
from core.history.streams import JOB, events_until
from core.queries import Q
from core.replay.streak import down_spans


class Outages:
    """The recorded outages of some parents: ``spans[parent] = [(start, end or None), ...]``
    (half-open, in order; ``None``: still down at the end of what was read)."""

    def __init__(self, spans: dict[uuid.UUID, list[tuple[datetime, datetime | None]]],
                 parents: Sequence[uuid.UUID]) -> None:
        self.spans = spans
        self.parents = list(parents)

    def down_at(self, at: datetime) -> list[uuid.UUID]:
        """The parents down at ``at``, in ``depends_on`` order."""
        return [p for p in self.parents
                if any(s <= at and (e is None or at < e) for s, e in self.spans.get(p, ()))]

    def free_at(self, at: datetime) -> datetime | None:
        """The first instant at or after ``at`` when no parent is down (``None``: never)."""
        moment: datetime | None = at
        while moment is not None:
            ends = [e for p in self.parents for s, e in self.spans.get(p, ())
                    if s <= moment and (e is None or moment < e)]
            if not ends:
                return moment
            moment = None if any(e is None for e in ends) else max(
                e for e in ends if e is not None)
        return None


class Parents:
    """The parents a side names as its definition changes: :attr:`outages` under the list in
    force since :attr:`since` (``None``: since before anything replayed)."""

    def __init__(self, spans: dict[uuid.UUID, list[tuple[datetime, datetime | None]]],
                 parents: Sequence[uuid.UUID] = ()) -> None:
        self.spans = spans
        self.outages = Outages(spans, parents)
        self.since: datetime | None = None

    def names(self, parents: Sequence[uuid.UUID]) -> bool:
        """Whether ``parents`` is the list in force."""
        return list(parents) == self.outages.parents

    def follow(self, at: datetime, parents: Sequence[uuid.UUID]) -> None:
        """The list ``parents`` in force from ``at`` on."""
        self.outages, self.since = Outages(self.spans, parents), at

    def down_at(self, at: datetime) -> list[uuid.UUID]:
        """The parents named then and down at ``at``, in ``depends_on`` order."""
        return self.outages.down_at(at)

    def free_at(self, held: datetime) -> datetime | None:
        """When an alert held at ``held`` is owed: the first instant, at or after it and
        after the list in force took force, when no parent it names is down."""
        return self.outages.free_at(held if self.since is None else max(held, self.since))


def named(states: Sequence[Any]) -> list[uuid.UUID]:
    """Every parent some of ``states`` (folded states with ``depends_on``, ``None`` ones
    skipped) names, each once."""
    return list(dict.fromkeys(p for s in states if s is not None for p in s.depends_on))


async def outages(conn: Connection, team_id: uuid.UUID,
                  parents: Sequence[uuid.UUID], end: datetime) -> Outages | None:
    """The recorded outages of ``parents`` up to ``end`` (``None`` when there are none to
    consider)."""
    if not parents:
        return None
    cur = await conn.execute(Q["ledger_parent_flips"], {"ids": list(parents),
                                                        "team_id": team_id, "to": end})
    spans: dict[uuid.UUID, list[tuple[datetime, datetime | None]]] = {}
    for row in await cur.fetchall():
        mine = spans.setdefault(row["parent"], [])
        is_open = bool(mine) and mine[-1][1] is None
        if row["event_type"] == "monitor.down":
            if not is_open:
                mine.append((row["occurred_at"], None))
        elif is_open:
            mine[-1] = (mine[-1][0], row["occurred_at"])
    for parent in parents:
        if parent in spans:
            continue  # a monitor
        job_events = await events_until(conn, JOB, parent, team_id, end)
        if job_events:
            cur = await conn.execute(Q["ledger_job_finals"], {
                "job_id": parent, "team_id": team_id,
                "from": job_events[0]["occurred_at"], "to": end})
            spans[parent] = down_spans(job_events, await cur.fetchall())
    return Outages(spans, parents)


def hold(alert: dict[str, Any], held_by: list[uuid.UUID]) -> dict[str, Any]:
    """``alert`` marked held by ``held_by``."""
    return {**alert, "dependency": "held", "held_by": held_by}
