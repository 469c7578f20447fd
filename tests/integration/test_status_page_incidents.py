"""A status page's incidents as the alert rules record them (docs/status-pages.md): a monitor
with a channel goes down under the real checker (its ``down`` alert opens an incident), a ping
brings it back (``up`` resolves it), it goes down again (open), and the note written on that
alert is the incident's. Real PostgreSQL, the real checker and ping path, a frozen clock.
"""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest

from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.db import ConnectionPool
from core.monitors.checker import Checker
from core.monitors.ping import PingPool
from core.queries import Q
from core.statuspages.commands import create_page, set_note
from core.statuspages.incidents import EVENTS, PROBLEMS, RECOVERIES, Incident, incidents
from core.statuspages.public import find_page, public_view
from tests.helpers import new_actor
from tests.integration.test_maintenance import HOOK, T0
from tests.monitor_helpers import add_monitor, advance, ping
from tests.sink import Sink


async def test_incidents_open_and_resolve_with_the_recorded_alerts(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer, clock: FrozenClock,
) -> None:
    actor = await new_actor(fresh_pool)
    slack, _ = await create_channel(fresh_pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url(HOOK)}, T0)
    monitor, token = await add_monitor(fresh_pool, actor, T0, "10m", name="backup-internal",
                                       grace_seconds=60, channels=[str(slack)])
    minted = await create_page(fresh_pool, None, actor, {
        "title": "Acme", "components": [monitor], "names": {str(monitor): "Backups"}}, T0)
    assert await ping(ping_pool, token, T0) == "up"
    await advance(checker, fresh_pool, T0 + timedelta(minutes=12))  # down at 11 min
    assert await ping(ping_pool, token, T0 + timedelta(minutes=20)) == "up"
    await advance(checker, fresh_pool, T0 + timedelta(minutes=32))  # down again at 31 min
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT id, event, created_at FROM alerts WHERE subject_id = %s"
                                 " ORDER BY created_at", (monitor,))
        alerts = await cur.fetchall()
    assert [a["event"] for a in alerts] == ["down", "up", "down"]
    await set_note(fresh_pool, actor, alerts[2]["id"], "Disk full; cleaning up.",
                   T0 + timedelta(minutes=33))
    page = await find_page(fresh_pool, minted.key)
    assert page is not None
    view = await public_view(fresh_pool, fresh_pool, page, T0 + timedelta(minutes=34))
    [current] = view.open_incidents
    [past] = view.resolved_incidents
    assert (current.name, current.started_at, current.note) == (
        "Backups", alerts[2]["created_at"], "Disk full; cleaning up.")
    assert (past.name, past.started_at, past.resolved_at, past.note) == (
        "Backups", alerts[0]["created_at"], alerts[1]["created_at"], None)
    assert [i.ref for i in view.feed] == [current.ref, past.ref]
    assert view.overall == ("bad", "Some systems have problems")


@pytest.mark.parametrize("seed", range(4))
async def test_the_statement_pairs_alerts_by_the_python_rule(
    pool: ConnectionPool, seed: int,
) -> None:
    """``status_page_incidents`` (core/sql/status_pages.sql) against
    :func:`core.statuspages.incidents.incidents` on random alerts: problems, repeats,
    recoveries without an incident, events of the other kind or of neither, equal instants,
    empty and written notes; every incident, then only those a page shows."""
    rnd = random.Random(seed)
    actor = await new_actor(pool)
    subjects = [(rnd.choice(["job", "monitor"]), uuid.uuid4()) for _ in range(6)]
    events = ["failed", "still_failing", "recovered", "down", "still_down", "up", "missed"]
    now = T0 + timedelta(days=30)
    rows = []
    async with pool.connection() as conn:
        for _ in range(160):
            kind, subject = rnd.choice(subjects)
            row = {"id": uuid.uuid4(), "subject_type": kind, "subject_id": subject,
                   "event": rnd.choice(events), "note": rnd.choice([None, None, "", "a", "b"]),
                   "created_at": T0 + timedelta(hours=rnd.randrange(0, 700))}
            rows.append(row)
            await conn.execute(
                "INSERT INTO alerts (id, team_id, subject_type, subject_id, event, created_at)"
                " VALUES (%s, %s, %s, %s, %s, %s)", (row["id"], actor.team_id, kind, subject,
                                                     row["event"], row["created_at"]))
            if row["note"] is not None:
                await conn.execute(
                    "INSERT INTO alert_notes (alert_id, team_id, note, version, updated_at)"
                    " VALUES (%s, %s, %s, 1, %s)", (row["id"], actor.team_id, row["note"], now))
    since = T0 + timedelta(days=3)
    rows = sorted((r for r in rows if r["created_at"] >= since and r["event"] in EVENTS),
                  key=lambda r: (r["created_at"], r["id"].bytes))
    expected = incidents(rows)

    async def read(recent: datetime, newest: int) -> list[tuple[Any, ...]]:
        async with pool.connection() as conn:
            cur = await conn.execute(Q["status_page_incidents"], {
                "team_id": actor.team_id, "ids": [s for _, s in subjects], "since": since,
                "events": EVENTS, "problems": PROBLEMS, "recoveries": RECOVERIES,
                "recent": recent, "newest": newest})
            found = await cur.fetchall()
        latest = max((i.resolved_at or i.started_at for i in expected), default=None)
        assert all(r["latest"] == latest for r in found)
        return [(r["alert_id"], r["subject_type"], r["subject_id"], r["started_at"],
                 r["resolved_at"], r["note"]) for r in found]

    def shape(found: list[Incident]) -> list[tuple[Any, ...]]:
        return [(i.alert_id, i.subject_type, i.subject_id, i.started_at, i.resolved_at,
                 i.note) for i in found]

    assert len(expected) > 5
    assert await read(T0, 10_000) == shape(expected)
    recent = T0 + timedelta(days=20)
    assert await read(recent, 3) == shape([
        i for n, i in enumerate(expected)
        if i.resolved_at is None or i.resolved_at >= recent or n < 3])
