"""The release of alerts a parent's outage held (docs/notifications.md, *Dependencies*; the
hold itself is :mod:`core.notifications.dependencies`): when no parent of a held dependent is
down any more, the alert it owes goes out if it is still down, once: in the transaction that
ended the hold (a parent's recovery, :func:`release_dependents`; an edit of the dependent's
``depends_on``, :func:`release_subject`), and the checker's pass (:func:`release_held`) for
what those could not take.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from core.db import Connection
from core.notifications.dependencies import PROBLEM, release
from core.notifications.outbox import DEFAULT_MAX_ATTEMPTS, Alert, Hold, enqueue
from core.queries import Q

RELEASE_POLL = 5.0  # seconds: how soon the checker looks again while alerts are held


async def release_held(conn: Connection, now: datetime, *, limit: int,
                       hold: Hold, max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> int:
    """Release the held alerts whose subject has no parent down any more, in the caller's
    transaction: the checker's pass, which finds what the transactions that end a hold
    (:func:`release_dependents`, :func:`release_subject`) left (a hold locked by another
    transaction then, or one from before they released at once).

    Per subject: still down (a monitor ``down``, a job in a failure streak), with channels
    and a held problem alert (a held recovery owes nothing), its first held problem alert's
    message goes out as a new alert (``down`` or
    ``failed``; rule: the held one's, with ``released_from``: its id; a maintenance window
    may still hold it: ``hold``, :data:`core.notifications.outbox.Hold`); else nothing is
    owed. Either way its held alerts are marked released
    (``released_as``: the new alert, or none) with an ``alert.released`` event.

    Returns:
        How many held alerts were claimed (``SKIP LOCKED``: another checker or the subject's
        recovery holds the others).
    """
    cur = await conn.execute(Q["dependency_held_claim"], {"limit": limit})
    rows = await cur.fetchall()
    await _release_free(conn, rows, now, hold, max_attempts)
    return len(rows)


async def release_dependents(conn: Connection, parents: Sequence[uuid.UUID],
                             now: datetime, *, hold: Hold,
                             max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> None:
    """In the transaction where ``parents`` stopped being down (a monitor's ``monitor.up`` or
    pause, a job's failure streak ended): release, at ``now``, the held alerts they hold
    whose subjects have no parent down any more, as :func:`release_held` does (``SKIP
    LOCKED``: a hold another transaction has locked is left to the checker's pass). So the
    owed alert is dated at the parent's recovery, the instant the what-if replay gives it
    (docs/ledger.md, *What-if replay*)."""
    if not parents:
        return
    cur = await conn.execute(Q["dependency_held_claim_of_parents"], {"ids": list(parents)})
    await _release_free(conn, await cur.fetchall(), now, hold, max_attempts)


async def release_subject(conn: Connection, subject_id: uuid.UUID,
                          now: datetime, *, hold: Hold,
                          max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> None:
    """In the transaction that changed ``subject_id``'s ``depends_on``: its held alerts,
    released at ``now`` when none of its parents (the new list) is down."""
    cur = await conn.execute(Q["dependency_held_claim_of_subject"], {"id": subject_id})
    await _release_free(conn, await cur.fetchall(), now, hold, max_attempts)


async def _release_free(conn: Connection, rows: Sequence[dict[str, Any]],
                        now: datetime, hold: Hold, max_attempts: int) -> None:
    """Release the held alerts ``rows`` (claimed, oldest first) of the subjects with no
    parent down now."""
    by_subject: dict[uuid.UUID, list[dict[str, Any]]] = {}
    for row in rows:
        by_subject.setdefault(row["subject_id"], []).append(row)
    if not by_subject:
        return
    cur = await conn.execute(Q["dependency_parents"], {"ids": sorted(by_subject)})
    waiting = {row["subject_id"] for row in await cur.fetchall() if row["down"]}
    for subject_id, held in by_subject.items():
        if subject_id not in waiting:
            await _release_one(conn, held, now, hold, max_attempts)


async def _release_one(conn: Connection, held: list[dict[str, Any]],
                       now: datetime, hold: Hold, max_attempts: int) -> None:
    ids = [h["id"] for h in held]
    # only a held problem alert is owed; a held recovery recorded before
    # dependencies.close_held_recoveries closed it at once is closed with nothing sent
    problems = [h for h in held if h["event"] in PROBLEM[h["subject_type"]]]
    first = problems[0] if problems else held[0]
    cur = await conn.execute(Q["dependency_subject_down"], {
        "subject_type": first["subject_type"], "id": first["subject_id"]})
    subject = await cur.fetchone()
    if not problems or subject is None or not subject["down"] or not subject["channels"]:
        await release(conn, ids, None, now,
                      "it was no longer down when its parents came back")
        return
    cur = await conn.execute(Q["dependency_held_message"], {"id": first["id"]})
    found = await cur.fetchone()
    message = {k: v for k, v in (found["message"] if found else {}).items()
               if k not in ("alert_id", "links")} or {"title": subject["name"]}
    rule = {k: v for k, v in (first["rule"] or {}).items()
            if k not in ("held_by", "dependencies")}
    rule["released_from"] = first["id"]
    event = PROBLEM[first["subject_type"]][0]  # down / failed: the first thing not said
    written = await enqueue(conn, [Alert(first["team_id"], first["subject_type"],
                                         first["subject_id"], event, subject["channels"],
                                         message, rule)],
                            now, max_attempts, hold=hold)
    alert_id = None
    if written:
        cur = await conn.execute(Q["dependency_alert_of"], {"ids": written})
        row = await cur.fetchone()
        alert_id = row["alert_id"] if row else None
    await release(conn, ids, alert_id, now, "its parents came back and it was still down")


async def any_held(conn: Connection) -> bool:
    """Whether some alert is held and not released (the checker then looks again within
    :data:`RELEASE_POLL` seconds)."""
    cur = await conn.execute(Q["dependency_held_any"])
    row = await cur.fetchone()
    return bool(row and row["any"])
