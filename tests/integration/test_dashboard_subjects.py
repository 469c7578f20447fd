"""The overview and the audit log name what every event is about and link to it (a job, a
run's job, a monitor, a notification's job or monitor and its channel, a channel, a secret, a
maintenance window), and show text as text (core/history/subjects.py)."""

from __future__ import annotations

from datetime import timedelta

from litestar.testing import AsyncTestClient

from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.crypto import KeyRing
from core.db import ConnectionPool, transaction
from core.history.subjects import event_subjects
from core.jobs.commands import create_job, delete_job, trigger_job
from core.maintenance.commands import create_window
from core.maintenance.queries import held_alerts
from core.monitors.commands import create_monitor, set_paused
from core.notifications.outbox import enqueue_monitor_alert
from core.secrets import put_secret
from tests.integration.test_dashboard_auth import sign_in
from tests.teams import Team

KEY = "Qm9vdHN0cmFwIGtleSBmb3Igc2NyZWVuc2hvdHMhISE="


async def test_events_of_every_type_name_and_link_their_subject(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool,
        clock: FrozenClock) -> None:
    actor, now = team.actor, clock.now()
    ring = KeyRing.from_sources(KEY, None)
    job_id = await create_job(pool, actor, {"name": "sauvegarde à 3h", "schedule": "@every 1h",
                                            "request": {"url": "https://example.com/"}}, now)
    await trigger_job(pool, actor, job_id, now)
    gone = await create_job(pool, actor, {"name": "old job", "schedule": "@every 1h",
                                          "request": {"url": "https://example.com/"}}, now)
    await delete_job(pool, actor, gone, now)
    monitor_id, _ = await create_monitor(pool, actor, {"name": "backup-db",
                                                       "schedule": "1h"}, now)
    await set_paused(pool, actor, monitor_id, True, now)
    channel_id, _ = await create_channel(pool, AesGcmSealer(ring), actor, {
        "name": "on-call", "kind": "telegram", "chat_id": "@opsroom", "token_secret": "TG"},
        now)
    async with transaction(pool) as conn:
        await enqueue_monitor_alert(conn, team_id=actor.team_id, monitor_id=monitor_id,
                                    monitor_name="backup-db", channel_ids=[channel_id],
                                    event="down", since=now, last_ping=None, now=now,
                                    hold=held_alerts)
    await put_secret(pool, ring, actor, "TG", "token", now)
    await create_window(pool, actor, {"from": (now + timedelta(hours=1)).isoformat(),
                                      "to": (now + timedelta(hours=2)).isoformat(),
                                      "jobs": [str(job_id)], "comment": "database upgrade"},
                        now)
    await sign_in(frozen_api, team.write)
    log = await frozen_api.get("/ui/events")
    text = log.text
    assert f'<a href="/ui/jobs/{job_id}">sauvegarde à 3h</a>' in text
    assert f'<a href="/ui/jobs/{job_id}">run of sauvegarde à 3h</a>' in text
    assert f'<a href="/ui/jobs/{gone}">old job</a>' in text  # deleted: still named
    assert f'<a href="/ui/monitors/{monitor_id}">monitor backup-db</a>' in text
    assert (f'<a href="/ui/monitors/{monitor_id}">alert on backup-db</a> '
            '<span class="muted">to on-call</span>') in text
    assert '<a href="/ui/channels">channel on-call</a>' in text
    assert '<a href="/ui/secrets">secret <code>TG</code></a>' in text
    assert "maintenance window “database upgrade”" in text
    assert "\\u00e0" not in text and "sauvegarde à 3h" in text  # data as text
    overview = await frozen_api.get("/")
    assert f'<a href="/ui/monitors/{monitor_id}">alert on backup-db</a>' in overview.text
    assert "maintenance window “database upgrade”" in overview.text
    # Every event gets a subject; another team's id names nothing of this team's.
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT global_position, stream_type, stream_id, data "
                                 "FROM events WHERE team_id = %s", (actor.team_id,))
        events = await cur.fetchall()
    import uuid

    mine = await event_subjects(pool, actor.team_id, events)
    assert len(mine) == len(events)
    assert {s.name for s in mine.values()} >= {"sauvegarde à 3h", "backup-db", "on-call"}
    other = await event_subjects(pool, uuid.uuid4(), events)
    assert {s.name for s in other.values()} <= {None, "TG"}  # a secret's name is its event's


async def test_a_job_history_diff_shows_text_as_text(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool,
        clock: FrozenClock) -> None:
    job_id = await create_job(pool, team.actor, {
        "name": "rapport à 9h", "schedule": "tous les jours à 9h",
        "request": {"url": "https://example.com/", "body": "déjà vu ✓"}}, clock.now())
    await sign_in(frozen_api, team.write)
    page = await frozen_api.get(f"/ui/jobs/{job_id}")
    assert "\\u00e0" not in page.text and "\\u2713" not in page.text
    assert "+ name: &#34;rapport à 9h&#34;" in page.text
    assert "déjà vu ✓" in page.text
