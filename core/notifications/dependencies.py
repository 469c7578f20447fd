"""What dependencies do to alerts (docs/notifications.md, *Dependencies*): the one place where
a parent's outage holds a dependent's alert, folds it into the parent's messages and releases
it when the parents are back.

A monitor or job names parents in ``depends_on`` (checked by :mod:`core.dependencies`). A
parent is *down* when it is a monitor whose status is ``down`` or a job in a failure streak
(its ``alert_states`` row). The rules, applied by the outbox
(:func:`core.notifications.outbox.enqueue`) in the transaction that raises the alert:

- A dependent's problem alert (:data:`PROBLEM`: a monitor's ``down`` / ``still_down``, a
  job's ``failed`` / ``still_failing``) raised while one of its parents is down is *held*:
  recorded like any alert (``alerts.held_by`` names the parents down, its rule keeps every
  parent's state at that instant as ``dependencies``), its notifications written
  ``suppressed``, never sent.
- Every alert of a parent (down, re-alert, recovery) carries the dependents held by it at
  that moment: ``"router down; 3 dependents also silent"`` (:func:`core.notifications.
  messages.with_dependents`). So a parent whose own alert goes out after its dependents' were
  held (a failure tolerance, a later slot) names them in that alert, and one already alerted
  names them in its re-alerts and its recovery.
- A dependent that comes back while held: its recovery alert (``up`` / ``recovered``) is held
  too (nothing was said, so nothing is taken back) and its held alerts are closed, that
  recovery included (:func:`close_held_recoveries`): nothing of them is owed later.
- When no parent is down any more, :mod:`core.notifications.released` sends each dependent
  still down the alert it owes, once, in the transaction that ended the hold (a parent's
  recovery, an edit of the dependent's ``depends_on``; the checker's pass for what those
  left): its first held alert's message, with the rule ``released_from`` (that alert's id),
  and closes the held ones (:func:`release`, ``alert.released``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from core.db import Connection
from core.events import Head, append_at
from core.notifications.messages import with_dependents
from core.queries import Q

PROBLEM = {"monitor": ("down", "still_down"), "job": ("failed", "still_failing")}
RECOVERY = {"monitor": ("up",), "job": ("recovered",)}


@dataclass(frozen=True)
class Considered:
    """The parents of the subjects of some alerts, as they were when the alerts were raised.

    Attributes:
        parents: per subject, ``[{"id", "kind", "name", "status", "down"}]`` in
            ``depends_on`` order (deleted parents left out).
        open_holds: per subject, its held alerts not released yet ``[{"id", "event",
            "held_by"}]``, oldest first (locked).
        dependents: per parent, the dependents it holds now ``[{"id", "kind", "name"}]``.
    """

    parents: dict[uuid.UUID, list[dict[str, Any]]] = field(default_factory=dict)
    open_holds: dict[uuid.UUID, list[dict[str, Any]]] = field(default_factory=dict)
    dependents: dict[uuid.UUID, list[dict[str, Any]]] = field(default_factory=dict)

    def held_by(self, subject_type: str, subject_id: uuid.UUID, event: str
                ) -> list[uuid.UUID]:
        """The parents that hold an alert ``event`` of the subject (``[]``: not held): the
        parents down for a problem alert; for a recovery, those of its open holds."""
        if event in PROBLEM.get(subject_type, ()):
            return [p["id"] for p in self.parents.get(subject_id, ()) if p["down"]]
        if event in RECOVERY.get(subject_type, ()):
            held = [p for h in self.open_holds.get(subject_id, ()) for p in h["held_by"]]
            return list(dict.fromkeys(held))
        return []


async def consider(conn: Connection, alerts: Sequence[Any]) -> Considered:
    """Read what :class:`Considered` needs for ``alerts`` (:class:`core.notifications.outbox.
    Alert` s about jobs and monitors) in the caller's transaction: three statements."""
    ids = sorted({a.subject_id for a in alerts})
    teams = sorted({a.team_id for a in alerts})
    if not ids:
        return Considered()
    out = Considered()
    cur = await conn.execute(Q["dependency_parents"], {"ids": ids})
    for row in await cur.fetchall():
        out.parents.setdefault(row["subject_id"], []).append(
            {"id": row["id"], "kind": row["kind"], "name": row["name"],
             "status": row["status"], "down": row["down"]})
    recovering = [a.subject_id for a in alerts if a.event in RECOVERY.get(a.subject_type, ())]
    if recovering:
        cur = await conn.execute(Q["dependency_held_open"], {"team_ids": teams,
                                                             "ids": recovering})
        for row in await cur.fetchall():
            out.open_holds.setdefault(row["subject_id"], []).append(row)
    cur = await conn.execute(Q["dependency_held_dependents"], {"team_ids": teams, "ids": ids})
    for row in await cur.fetchall():
        out.dependents.setdefault(row["parent"], []).append(
            {"id": row["id"], "kind": row["kind"], "name": row["name"]})
    return out


def annotate(alert: Any, considered: Considered) -> tuple[Any, list[uuid.UUID]]:
    """``alert`` with its parents' state in its rule (``dependencies``, and ``held_by`` when
    held) and the dependents it holds in its message; and the parents holding it."""
    parents = considered.parents.get(alert.subject_id)
    held_by = considered.held_by(alert.subject_type, alert.subject_id, alert.event)
    dependents = considered.dependents.get(alert.subject_id)
    if not parents and not dependents:
        return alert, held_by
    rule = dict(alert.rule or {})
    if parents:
        rule["dependencies"] = [{k: p[k] for k in ("id", "kind", "name", "status", "down")}
                                for p in parents]
    if held_by:
        rule["held_by"] = held_by
    message = with_dependents(alert.message, alert.event, dependents or [])
    return replace(alert, rule=rule, message=message), held_by


async def close_recovered(conn: Connection, considered: Considered,
                          subject_ids: Sequence[uuid.UUID], now: datetime) -> None:
    """Close the open holds of subjects that came back while held (their recovery was held
    too): nothing is owed any more."""
    ids = [h["id"] for s in subject_ids for h in considered.open_holds.get(s, ())]
    await release(conn, ids, None, now, "it came back while its parents were down")


async def close_held_recoveries(conn: Connection,
                                recorded: Sequence[tuple[uuid.UUID, str, str]],
                                now: datetime) -> None:
    """Close, as soon as recorded, the held recovery alerts among ``recorded`` (``[(alert id,
    subject_type, event)]`` of the held alerts just written): a recovery held is owed nothing
    later. Left open, a parent's recovery would take it for a hold and, were the subject
    failing again by then (a job's new streak below its ``alert_after_failures``), send a
    ``failed`` it never owed (docs/notifications.md, *Dependencies*: a dependent that came
    back while held owes nothing)."""
    await release(conn, [i for i, kind, event in recorded if event in RECOVERY.get(kind, ())],
                  None, now, "it came back while its parents were down")


async def release(conn: Connection, ids: Sequence[uuid.UUID],
                   released_as: uuid.UUID | None, now: datetime, why: str) -> None:
    """Mark held alerts released and append their ``alert.released`` ``{"released_as",
    "why"}`` (stream ``alert``, after ``alert.raised`` and any ``alert.noted``: a note may be
    written on a held alert)."""
    if not ids:
        return
    cur = await conn.execute(Q["dependency_release"], {"ids": list(ids), "now": now,
                                                       "released_as": released_as})
    await append_at(conn, [
        (Head("alert", row["id"], row["team_id"], row["version"]),
         [("alert.released", {"released_as": released_as, "why": why})])
        for row in await cur.fetchall()], now, {"actor": "system"})
