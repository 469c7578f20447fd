"""The advisor on the dashboard (docs/advice.md, *On the dashboard*): a monitor's and a job's
page link their advice; the advice page shows each suggestion with its reason and what it would
have changed; its Apply link opens the ordinary edit form with the value filled, and saving it
is the ordinary edit (``monitor.updated``). Through the ASGI test client on the frozen clock."""

from __future__ import annotations

import re
from datetime import timedelta

from litestar.testing import AsyncTestClient

from core.clock import FrozenClock
from core.db import ConnectionPool
from tests.integration.test_dashboard_auth import sign_in
from tests.teams import Team


async def _late_monitor(api: AsyncTestClient, team: Team, clock: FrozenClock) -> str:
    """A monitor (``1h``, a minute's grace) pinged hourly 10 s late, once 5 minutes late."""
    r = await api.post("/v1/monitors", json={"name": "nightly", "schedule": "1h",
                                             "grace_seconds": 60}, headers=team.auth)
    assert r.status_code == 201, r.text
    monitor = r.json()
    at = clock.now()
    for n in range(12):
        at += timedelta(hours=1, seconds=300 if n == 5 else 10)
        clock.set(at)
        assert (await api.get(f"/ping/{monitor['ping_token']}")).status_code == 200
    clock.set(at + timedelta(minutes=30))
    return str(monitor["id"])


async def test_a_monitor_s_advice_is_shown_and_applied_through_the_edit_form(
        frozen_api: AsyncTestClient, team: Team, clock: FrozenClock,
        pool: ConnectionPool) -> None:
    monitor_id = await _late_monitor(frozen_api, team, clock)
    csrf = await sign_in(frozen_api, team.write)
    page = await frozen_api.get(f"/ui/monitors/{monitor_id}")
    assert page.status_code == 200
    assert 'id="advice-title"' in page.text
    assert f'href="/ui/monitors/{monitor_id}/advice"' in page.text

    advice = await frozen_api.get(f"/ui/monitors/{monitor_id}/advice")
    assert advice.status_code == 200, advice.text
    assert "Grace: <code>60</code> → <code>360</code>" in advice.text
    assert "lateness p50 10 s, p95 300 s, max 300 s" in advice.text
    apply = f'href="/ui/monitors/{monitor_id}/edit?grace_seconds=360"'
    assert apply in advice.text
    form = await frozen_api.get(f"/ui/monitors/{monitor_id}/edit?grace_seconds=360")
    assert form.status_code == 200
    assert re.search(r'name="grace_seconds"[^>]*value="360"', form.text), form.text
    version = re.search(r'name="version" value="(\d+)"', form.text).group(1)  # type: ignore[union-attr]
    saved = await frozen_api.post(f"/ui/monitors/{monitor_id}/edit", data={
        "csrf": csrf, "version": version, "name": "nightly", "schedule": "1h",
        "grace_seconds": "360"}, follow_redirects=False)
    assert saved.status_code == 303
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT event_type, data FROM events WHERE stream_id = %s"
            " AND event_type = 'monitor.updated'", (monitor_id,))
        [event] = await cur.fetchall()
    assert event["data"]["changes"]["grace_seconds"] == 360  # an ordinary edit
    after = await frozen_api.get(f"/ui/monitors/{monitor_id}/advice")
    assert "Grace: <code>" not in after.text  # nothing left to suggest for the grace

    # a read-only session sees the advice without the button
    await frozen_api.post("/ui/signout", data={"csrf": csrf})
    await sign_in(frozen_api, team.read)
    read = await frozen_api.get(f"/ui/monitors/{monitor_id}/advice")
    assert read.status_code == 200 and "Apply in the edit form" not in read.text


async def test_a_job_s_advice_page_says_when_the_history_is_too_short(
        frozen_api: AsyncTestClient, team: Team) -> None:
    r = await frozen_api.post("/v1/jobs", json={
        "name": "report", "schedule": "@daily", "request": {"url": "https://example.com/"}},
        headers=team.auth)
    assert r.status_code == 201, r.text
    job_id = r.json()["id"]
    await sign_in(frozen_api, team.write)
    page = await frozen_api.get(f"/ui/jobs/{job_id}")
    assert f'href="/ui/jobs/{job_id}/advice"' in page.text
    advice = await frozen_api.get(f"/ui/jobs/{job_id}/advice")
    assert advice.status_code == 200
    assert 'id="advice-insufficient"' in advice.text
    assert "too little history: 0 finished runs in the last 90 days" in advice.text
    form = await frozen_api.get(f"/ui/jobs/{job_id}/edit?alert_after_failures=2")
    assert re.search(r'name="alert_after_failures"[^>]*value="2"', form.text)
    missing = await frozen_api.get("/ui/jobs/00000000-0000-0000-0000-000000000000/advice")
    assert missing.status_code == 404
