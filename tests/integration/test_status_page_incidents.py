"""A status page's incidents as the alert rules record them (docs/status-pages.md): a monitor
with a channel goes down under the real checker (its ``down`` alert opens an incident), a ping
brings it back (``up`` resolves it), it goes down again (open), and the note written on that
alert is the incident's. Real PostgreSQL, the real checker and ping path, a frozen clock.
"""

from __future__ import annotations

from datetime import timedelta

from psycopg_pool import AsyncConnectionPool

from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.monitors.checker import Checker
from core.statuspages.commands import create_page, set_note
from core.statuspages.public import find_page, public_view
from tests.helpers import new_actor
from tests.integration.test_maintenance import HOOK, T0
from tests.monitor_helpers import add_monitor, advance, ping
from tests.sink import Sink


async def test_incidents_open_and_resolve_with_the_recorded_alerts(
    fresh_pool: AsyncConnectionPool, ping_pool: AsyncConnectionPool, checker: Checker,
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
