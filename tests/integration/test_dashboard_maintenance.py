"""Maintenance windows made, edited and ended in the dashboard, jobs and monitors picked by
name (api/ui/pages/maintenance.py)."""

from __future__ import annotations

import re
from typing import Any

from litestar.testing import AsyncTestClient
from psycopg_pool import AsyncConnectionPool

from core.clock import FrozenClock
from core.jobs.commands import create_job
from core.monitors.commands import create_monitor
from tests.integration.test_dashboard_auth import sign_in


async def test_a_window_is_made_edited_and_ended(
        frozen_api: AsyncTestClient, team: dict[str, Any], pool: AsyncConnectionPool,
        clock: FrozenClock) -> None:
    actor = team["actor"]
    job_id = await create_job(pool, actor, {"name": "nightly", "schedule": "@every 1h",
                                            "request": {"url": "https://example.com/"}},
                              clock.now())
    monitor_id, _ = await create_monitor(pool, actor, {"name": "backup", "schedule": "1h"},
                                         clock.now())
    csrf = await sign_in(frozen_api, team["write"])
    page = await frozen_api.get("/ui/maintenance")
    assert f'value="{job_id}"> nightly' in page.text
    assert f'value="{monitor_id}"> backup' in page.text
    bad = await frozen_api.post("/ui/maintenance", data={
        "csrf": csrf, "from": "2026-12-02T10:00", "to": "2026-12-02T09:00"})
    assert bad.status_code == 422 and 'id="err-to"' in bad.text
    made = await frozen_api.post("/ui/maintenance", data={
        "csrf": csrf, "comment": "mise à jour", "from": "2026-12-02T10:00",
        "to": "2026-12-02T12:00", "jobs": str(job_id), "monitors": str(monitor_id)},
        follow_redirects=False)
    assert made.status_code == 303, made.text
    listing = await frozen_api.get("/ui/maintenance")
    assert "Maintenance window created." in listing.text and "mise à jour" in listing.text
    assert f'<a href="/ui/jobs/{job_id}">nightly</a>' in listing.text
    window_id = re.search(r'/ui/maintenance/([0-9a-f-]{36})/edit', listing.text).group(1)  # type: ignore[union-attr]
    form = await frozen_api.get(f"/ui/maintenance/{window_id}/edit")
    assert 'value="2026-12-02T10:00"' in form.text and f'value="{job_id}" checked' in form.text
    saved = await frozen_api.post(f"/ui/maintenance/{window_id}/edit", data={
        "csrf": csrf, "version": "1", "comment": "weekly", "schedule": "Sun 02:00",
        "duration_seconds": "2h", "timezone": "Europe/Paris", "tags": "db"},
        follow_redirects=False)
    assert saved.status_code == 303, saved.text
    listing = await frozen_api.get("/ui/maintenance")
    assert "<code>Sun 02:00</code> (Europe/Paris)" in listing.text
    stale = await frozen_api.post(f"/ui/maintenance/{window_id}/edit", data={
        "csrf": csrf, "version": "1", "comment": "x", "from": "2026-12-02T10:00",
        "to": "2026-12-02T12:00"})
    assert stale.status_code == 409 and "while you edited it" in stale.text
    ended = await frozen_api.post(f"/ui/maintenance/{window_id}/end", data={"csrf": csrf})
    assert ended.status_code == 200 and "ended:" in ended.text
    assert f"/ui/maintenance/{window_id}/edit" not in ended.text
    again = await frozen_api.post(f"/ui/maintenance/{window_id}/end", data={"csrf": csrf})
    assert again.status_code == 409
