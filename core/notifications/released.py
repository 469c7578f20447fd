"""The release of alerts a parent's outage held (docs/notifications.md, *Dependencies*; the
hold itself is :mod:`core.notifications.dependencies`): the checker's pass, when no parent of a
held dependent is down any more, sends the alert it owes if it is still down, once.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import psycopg

from core.notifications.dependencies import PROBLEM, release
from core.notifications.outbox import DEFAULT_MAX_ATTEMPTS, Alert, Hold, enqueue
from core.queries import Q

RELEASE_POLL = 5.0  # seconds: how soon the checker looks again while alerts are held


async def release_held(conn: psycopg.AsyncConnection, now: datetime, *, limit: int,
                       hold: Hold, max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> int:
    """Release the held alerts whose subject has no parent down any more, in the caller's
    transaction.

    Per subject: still down (a monitor ``down``, a job in a failure streak) and with
    channels, its first held alert's message goes out as a new alert (``down`` or
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
    by_subject: dict[uuid.UUID, list[dict[str, Any]]] = {}
    for row in rows:
        by_subject.setdefault(row["subject_id"], []).append(row)
    if not by_subject:
        return 0
    cur = await conn.execute(Q["dependency_parents"], {"ids": sorted(by_subject)})
    waiting = {row["subject_id"] for row in await cur.fetchall() if row["down"]}
    for subject_id, held in by_subject.items():
        if subject_id not in waiting:
            await _release_one(conn, held, now, hold, max_attempts)
    return len(rows)


async def _release_one(conn: psycopg.AsyncConnection, held: list[dict[str, Any]],
                       now: datetime, hold: Hold, max_attempts: int) -> None:
    first = held[0]
    ids = [h["id"] for h in held]
    cur = await conn.execute(Q["dependency_subject_down"], {
        "subject_type": first["subject_type"], "id": first["subject_id"]})
    subject = await cur.fetchone()
    if subject is None or not subject["down"] or not subject["channels"]:
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


async def any_held(conn: psycopg.AsyncConnection) -> bool:
    """Whether some alert is held and not released (the checker then looks again within
    :data:`RELEASE_POLL` seconds)."""
    cur = await conn.execute(Q["dependency_held_any"])
    row = await cur.fetchone()
    return bool(row and row["any"])
