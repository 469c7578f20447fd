"""Maintenance windows made, edited and ended in the dashboard, jobs and monitors picked by
name (api/ui/pages/maintenance.py)."""

from __future__ import annotations

import re
from typing import Any

from litestar.testing import AsyncTestClient

from core.clock import FrozenClock
from core.db import ConnectionPool
from core.jobs.commands import create_job
from core.monitors.commands import create_monitor
from tests.integration.test_dashboard_auth import sign_in
from tests.teams import Team


async def test_a_window_is_made_edited_and_ended(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool,
        clock: FrozenClock) -> None:
    actor = team.actor
    job_id = await create_job(pool, actor, {"name": "nightly", "schedule": "@every 1h",
                                            "request": {"url": "https://example.com/"}},
                              clock.now())
    monitor_id, _ = await create_monitor(pool, actor, {"name": "backup", "schedule": "1h"},
                                         clock.now())
    csrf = await sign_in(frozen_api, team.write)
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


async def test_jobs_and_monitors_beyond_the_pickers_lists_are_named_and_kept(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool,
        clock: FrozenClock, monkeypatch: Any) -> None:
    from api.ui.pages import maintenance

    monkeypatch.setattr(maintenance, "CHOICES", 2)  # the pickers list 2 (200 in production)
    actor = team.actor
    jobs, monitors = [], []
    for n in range(3):  # listed in creation order
        clock.advance(1)
        jobs.append(str(await create_job(pool, actor, {
            "name": f"job {n}", "schedule": "@every 1h",
            "request": {"url": "https://example.com/"}}, clock.now())))
        monitors.append(str((await create_monitor(pool, actor, {
            "name": f"monitor {n}", "schedule": "1h"}, clock.now()))[0]))
    csrf = await sign_in(frozen_api, team.write)
    page = await frozen_api.get("/ui/maintenance")
    assert f'value="{jobs[1]}"' in page.text and f'value="{jobs[2]}"' not in page.text
    assert f'value="{monitors[2]}"' not in page.text
    assert 'name="more_jobs"' in page.text and 'name="more_monitors"' in page.text
    bad = await frozen_api.post("/ui/maintenance", data={
        "csrf": csrf, "from": "2026-12-02T10:00", "to": "2026-12-02T12:00",
        "more_jobs": "job 2\njob 9", "more_monitors": "job 0"})
    assert bad.status_code == 422
    assert "no job named &#39;job 9&#39;" in bad.text and 'id="err-jobs"' in bad.text
    assert "no monitor named &#39;job 0&#39;" in bad.text  # a job's name is no monitor's
    assert ">job 2\njob 9</textarea>" in bad.text  # what was typed stays
    made = await frozen_api.post("/ui/maintenance", data={
        "csrf": csrf, "from": "2026-12-02T10:00", "to": "2026-12-02T12:00",
        "jobs": jobs[0], "more_jobs": "job 2", "more_monitors": "monitor 2"},
        follow_redirects=False)
    assert made.status_code == 303, made.text
    listing = await frozen_api.get("/ui/maintenance")  # named, though not in the pickers
    assert f'<a href="/ui/jobs/{jobs[2]}">job 2</a>' in listing.text
    assert f'<a href="/ui/monitors/{monitors[2]}">monitor 2</a>' in listing.text
    window_id = re.search(r'/ui/maintenance/([0-9a-f-]{36})/edit', listing.text).group(1)  # type: ignore[union-attr]
    form = await frozen_api.get(f"/ui/maintenance/{window_id}/edit")
    # the ones beyond the lists are offered, ticked and named, so a save keeps them
    assert f'value="{jobs[2]}" checked> job 2' in form.text
    assert f'value="{monitors[2]}" checked> monitor 2' in form.text
    checked = re.findall(r'name="(jobs|monitors)" value="([0-9a-f-]{36})" checked', form.text)
    saved = await frozen_api.post(f"/ui/maintenance/{window_id}/edit", data={
        "csrf": csrf, "version": "1", "from": "2026-12-02T10:00", "to": "2026-12-02T13:00",
        "jobs": [i for f, i in checked if f == "jobs"],
        "monitors": [i for f, i in checked if f == "monitors"]}, follow_redirects=False)
    assert saved.status_code == 303, saved.text
    again = await frozen_api.get(f"/ui/maintenance/{window_id}/edit")
    assert f'value="{jobs[2]}" checked' in again.text
    assert f'value="{monitors[2]}" checked' in again.text
    assert f'value="{jobs[0]}" checked' in again.text
