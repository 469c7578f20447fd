"""Slots that did not run are alertable (docs/notifications.md, *Slots that did not run*): a
job's ``alert_on`` names the reasons (``skipped`` by the overlap policy, ``missed`` beyond the
catch-up policy, ``held`` by a ``suppress: runs`` maintenance window) whose slots raise an alert
through the outbox, recorded and explained like a failure's. Real PostgreSQL, the real claim,
fixed instants (no worker sends anything: a claimed run stays in flight).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from litestar.testing import AsyncTestClient

from core.actor import Actor
from core.alerts.explain import explain_alert
from core.alerts.queries import list_alerts
from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.db import ConnectionPool
from core.maintenance.commands import create_window
from core.runs.claim import claim_due
from tests.helpers import add_job, new_actor, runs_of
from tests.teams import Team

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)
SLACK = {"kind": "slack", "url": "https://hooks.slack.com/services/T0/B0/x"}


async def _claim(pool: ConnectionPool, at: datetime) -> None:
    await claim_due(pool, at, limit=100, lookahead=0, worker_id="w1", lease_margin=30)


async def _setup(pool: ConnectionPool, sealer: AesGcmSealer
                 ) -> tuple[Actor, uuid.UUID]:
    actor = await new_actor(pool)
    channel, _ = await create_channel(pool, sealer, actor, {"name": "ops", **SLACK}, T0)
    return actor, channel


async def _notifications(pool: ConnectionPool, job: uuid.UUID) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM notifications WHERE subject_id = %s "
                                 "ORDER BY created_at, id", (job,))
        return await cur.fetchall()


async def test_a_slot_skipped_by_overlap_alerts_once_naming_it(
    fresh_pool: ConnectionPool, sealer: AesGcmSealer,
) -> None:
    actor, channel = await _setup(fresh_pool, sealer)
    job = await add_job(fresh_pool, actor, T0, "https://example.com/a", "* * * * *",
                        name="report", overlap="skip", timeout_seconds=600,
                        channels=[str(channel)], alert_on=["skipped"])
    quiet = await add_job(fresh_pool, actor, T0, "https://example.com/b", "* * * * *",
                          name="quiet", overlap="skip", timeout_seconds=600,
                          channels=[str(channel)])
    await _claim(fresh_pool, T0 + MIN)  # slot 1 runs (and stays in flight)
    await _claim(fresh_pool, T0 + 2 * MIN)  # slot 2 is skipped
    runs = await runs_of(fresh_pool, job)
    assert [r["status"] for r in runs] == ["running", "skipped"]
    assert [r["status"] for r in await runs_of(fresh_pool, quiet)] == ["running", "skipped"]

    [alert] = await list_alerts(fresh_pool, actor, limit=10, before=None, job=job)
    assert alert["event"] == "skipped"
    assert alert["rule"]["reason"] == "alert_on: skipped"
    assert datetime.fromisoformat(alert["rule"]["scheduled_for"]) == T0 + 2 * MIN
    assert str(alert["rule"]["run_id"]) == str(runs[1]["id"])
    [row] = await _notifications(fresh_pool, job)
    assert row["event"] == "skipped" and row["channel_id"] == channel
    assert "2026-11-30T12:02:00Z" in row["message"]["title"]
    assert "overlap policy skip" in row["message"]["text"]
    why = await explain_alert(fresh_pool, actor, alert["id"])
    assert why["rule"]["name"] == "job.skipped"
    assert why["rule"]["text"].startswith("The slot of ")
    assert "alert_on names skipped" in why["rule"]["text"]
    assert why["definition"]["alert_on"] == ["skipped"]
    assert why["expected"]["slot"] == T0 + 2 * MIN

    # without alert_on nothing; the same slot recorded again alerts no second time
    assert await list_alerts(fresh_pool, actor, limit=10, before=None, job=quiet) == []
    assert await _notifications(fresh_pool, quiet) == []
    await _claim(fresh_pool, T0 + 2 * MIN)
    assert len(await list_alerts(fresh_pool, actor, limit=10, before=None, job=job)) == 1


async def test_a_slot_held_by_maintenance_alerts_with_held(
    fresh_pool: ConnectionPool, sealer: AesGcmSealer,
) -> None:
    actor, channel = await _setup(fresh_pool, sealer)
    held = await add_job(fresh_pool, actor, T0, "https://example.com/a", "* * * * *",
                         name="held", channels=[str(channel)], alert_on=["held"])
    skipped_only = await add_job(fresh_pool, actor, T0, "https://example.com/b", "* * * * *",
                                 name="other", channels=[str(channel)],
                                 alert_on=["skipped", "missed"])
    await create_window(fresh_pool, actor, {
        "from": T0, "to": T0 + MIN + timedelta(seconds=30), "jobs": [held, skipped_only],
        "suppress": "runs"}, T0)
    await _claim(fresh_pool, T0 + MIN)
    assert [(r["status"], r["reason"]) for r in await runs_of(fresh_pool, held)] == [
        ("skipped", "maintenance")]
    [alert] = await list_alerts(fresh_pool, actor, limit=10, before=None, job=held)
    assert (alert["event"], alert["rule"]["reason"]) == ("held", "alert_on: held")
    assert [r["event"] for r in await _notifications(fresh_pool, held)] == ["held"]
    # a held slot is not "skipped" for alert_on: the other job says nothing
    assert await list_alerts(fresh_pool, actor, limit=10, before=None, job=skipped_only) == []


async def test_a_slot_missed_beyond_catch_up_alerts_with_missed(
    fresh_pool: ConnectionPool, sealer: AesGcmSealer,
) -> None:
    actor, channel = await _setup(fresh_pool, sealer)
    job = await add_job(fresh_pool, actor, T0, "https://example.com/a", "* * * * *",
                        name="late", catchup="latest", channels=[str(channel)],
                        alert_on=["missed"])
    # down for three minutes: catch-up "latest" records the older slots missed
    await _claim(fresh_pool, T0 + 3 * MIN + timedelta(seconds=5))
    runs = await runs_of(fresh_pool, job)
    missed = [r["id"] for r in runs if r["status"] == "missed"]
    assert missed and len(missed) < len(runs)
    alerts = await list_alerts(fresh_pool, actor, limit=10, before=None, job=job)
    assert {a["event"] for a in alerts} == {"missed"}  # one per missed slot, nothing else
    assert sorted(str(a["rule"]["run_id"]) for a in alerts) == sorted(map(str, missed))


async def test_alert_on_through_the_api(
    frozen_api: AsyncTestClient, team: Team,
) -> None:
    auth = team.auth
    body = {"name": "n", "schedule": "1h", "request": {"url": "https://example.com/"}}
    r = await frozen_api.post("/v1/jobs", headers=auth, json=body)
    assert r.status_code == 201, r.text
    job = r.json()
    assert job["alert_on"] == []
    for bad in (["nope"], ["skipped", "skipped"], "skipped", [1]):
        r = await frozen_api.post("/v1/jobs", headers=auth,
                                  json={**body, "name": "m", "alert_on": bad})
        assert r.status_code in (400, 422), (bad, r.text)
        assert "alert_on" in r.text
        r = await frozen_api.patch(f"/v1/jobs/{job['id']}", headers=auth,
                                   json={"alert_on": bad})
        assert r.status_code in (400, 422), (bad, r.text)
        assert "alert_on" in r.text
    r = await frozen_api.patch(f"/v1/jobs/{job['id']}", headers=auth,
                               json={"alert_on": ["held", "skipped"]})
    assert r.status_code == 200, r.text
    assert r.json()["alert_on"] == ["skipped", "held"]
    r = await frozen_api.get(f"/v1/jobs/{job['id']}", headers=auth)
    assert r.json()["alert_on"] == ["skipped", "held"] and r.json()["version"] == 2
    r = await frozen_api.get(f"/v1/jobs/{job['id']}/events", headers=auth)
    assert r.status_code == 200, r.text
    updated = [e for e in r.json()["items"] if e["event_type"] == "job.updated"]
    assert updated[-1]["data"]["changes"] == {"alert_on": ["skipped", "held"]}
