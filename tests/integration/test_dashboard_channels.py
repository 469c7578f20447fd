"""Channels of every kind made, edited and deleted through the dashboard's forms, picked by
name on a job's and a monitor's form; secrets deleted (api/ui/pages/channels.py,
api/ui/channelform.py)."""

from __future__ import annotations

import re
from typing import Any

from litestar.testing import AsyncTestClient

from core.db import ConnectionPool
from tests.integration.test_dashboard_auth import sign_in
from tests.teams import Team

JOB = {"schedule": "@every 1h", "timezone": "UTC", "request.method": "GET",
       "request.url": "https://example.com/", "timeout_seconds": "30", "retry.attempts": "1",
       "retry.backoff": "exponential", "retry.delay_seconds": "10",
       "retry.max_delay_seconds": "60", "overlap": "allow", "catchup": "latest",
       "alert_after_failures": "1"}


async def _channel(pool: ConnectionPool, team: Team, name: str) -> dict[str, Any]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM channels WHERE team_id = %s AND name = %s "
                                 "AND deleted_at IS NULL", (team.actor.team_id, name))
        return await cur.fetchone()


async def test_every_kind_is_made_edited_and_deleted_in_the_forms(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    csrf = await sign_in(frozen_api, team.write)
    page = await frozen_api.get("/ui/channels")
    for label in ("Webhook", "Slack", "Discord", "Telegram", "E-mail"):
        assert f">{label}</option>" in page.text
    # Every field shows (without JavaScript); only the chosen kind's are sent on.
    telegram = await frozen_api.post("/ui/channels", data={
        "csrf": csrf, "name": "on-call", "kind": "telegram", "chat_id": "-100123",
        "token_secret": "TG_TOKEN", "url": "https://ignored.example.com/", "to": "x@y"},
        follow_redirects=False)
    assert telegram.status_code == 303, telegram.text
    row = await _channel(pool, team, "on-call")
    assert row["kind"] == "telegram" and row["config"]["chat_id"] == "-100123"
    bad = await frozen_api.post("/ui/channels", data={
        "csrf": csrf, "name": "mail", "kind": "email", "to": "ops@example.com, nope",
        "smtp.host": "smtp.example.com", "smtp.port": "99999"})
    assert bad.status_code == 422
    assert 'id="err-to"' in bad.text and 'id="err-smtp-port"' in bad.text
    assert 'value="ops@example.com, nope"' in bad.text  # what was typed stays
    mail = await frozen_api.post("/ui/channels", data={
        "csrf": csrf, "name": "mail", "kind": "email", "to": "ops@example.com dev@example.com",
        "smtp.host": "smtp.example.com", "smtp.security": "tls",
        "smtp.password_secret": "SMTP_PASSWORD"}, follow_redirects=False)
    assert mail.status_code == 303, mail.text
    row = await _channel(pool, team, "mail")
    assert row["config"]["to"] == ["ops@example.com", "dev@example.com"]
    assert row["config"]["smtp"]["port"] == 465
    hook = await frozen_api.post("/ui/channels", data={
        "csrf": csrf, "name": "hook", "kind": "webhook",
        "url": "https://hooks.example.com/secret-path"})
    assert "Webhook signing secret" in hook.text and "secret-path" not in hook.text
    dup = await frozen_api.post("/ui/channels", data={
        "csrf": csrf, "name": "hook", "kind": "slack", "url": "https://hooks.slack.com/x"})
    assert dup.status_code == 409 and 'id="err-name"' in dup.text

    row = await _channel(pool, team, "mail")
    form = await frozen_api.get(f"/ui/channels/{row['id']}/edit")
    assert 'value="ops@example.com, dev@example.com"' in form.text
    assert 'value="smtp.example.com"' in form.text
    saved = await frozen_api.post(f"/ui/channels/{row['id']}/edit", data={
        "csrf": csrf, "version": str(row["version"]), "name": "mail à l'équipe",
        "to": "ops@example.com"}, follow_redirects=False)
    assert saved.status_code == 303, saved.text
    row = await _channel(pool, team, "mail à l'équipe")
    assert row["config"]["to"] == ["ops@example.com"] and row["config"]["smtp"] is None
    stale = await frozen_api.post(f"/ui/channels/{row['id']}/edit", data={
        "csrf": csrf, "version": "1", "name": "again", "to": "ops@example.com"})
    assert stale.status_code == 409 and "while you edited it" in stale.text
    hook_row = await _channel(pool, team, "hook")
    kept = await frozen_api.post(f"/ui/channels/{hook_row['id']}/edit", data={
        "csrf": csrf, "name": "hook 2", "url": ""}, follow_redirects=False)
    assert kept.status_code == 303  # a blank URL keeps the sealed one
    assert (await _channel(pool, team, "hook 2"))["config"]["url"] == (
        "https://hooks.example.com/[redacted]")
    deleted = await frozen_api.post(f"/ui/channels/{row['id']}/delete", data={"csrf": csrf})
    assert "deleted." in deleted.text and await _channel(pool, team, "mail à l'équipe") is None


async def test_a_job_and_a_monitor_pick_their_channels_by_name(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    csrf = await sign_in(frozen_api, team.write)
    for name in ("on-call", "mail"):
        await frozen_api.post("/ui/channels", data={
            "csrf": csrf, "name": name, "kind": "telegram", "chat_id": "@opsroom",
            "token_secret": "TG"})
    on_call = (await _channel(pool, team, "on-call"))["id"]
    form = await frozen_api.get("/ui/jobs/new")
    assert re.search(r'<input type="checkbox" name="channels" value="[0-9a-f-]{36}"> on-call',
                     form.text)
    assert "channel ids" not in form.text and "OnCalendar" in form.text
    created = await frozen_api.post("/ui/jobs/new", data={
        "csrf": csrf, "name": "picked", **JOB, "channels": str(on_call)},
        follow_redirects=False)
    assert created.status_code == 303, created.text
    job_path = created.headers["location"]
    edit = await frozen_api.get(job_path + "/edit")
    assert f'value="{on_call}" checked> on-call' in edit.text
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT channels FROM jobs WHERE name = 'picked' "
                                 "AND team_id = %s", (team.actor.team_id,))
        assert (await cur.fetchone())["channels"] == [on_call]
    monitor = await frozen_api.post("/ui/monitors/new", data={
        "csrf": csrf, "name": "m", "schedule": "every day at 3am", "channels": str(on_call)},
        follow_redirects=False)
    assert monitor.status_code == 303, monitor.text
    edit = await frozen_api.get(monitor.headers["location"] + "/edit")
    assert f'value="{on_call}" checked> on-call' in edit.text
    # A deleted channel stays checked, named as deleted, so a save changes nothing.
    await frozen_api.post(f"/ui/channels/{on_call}/delete", data={"csrf": csrf})
    edit = await frozen_api.get(job_path + "/edit")
    assert f'value="{on_call}" checked> <span class="muted">a deleted channel' in edit.text


async def test_a_secret_is_deleted_by_its_button(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    await frozen_api.post("/ui/secrets", data={"csrf": csrf, "name": "OLD", "value": "v"})
    answer = await frozen_api.post("/ui/secrets/delete", data={"csrf": csrf, "name": "OLD"},
                                   follow_redirects=False)
    assert answer.status_code == 303
    page = await frozen_api.get("/ui/secrets")
    assert "Secret OLD deleted" in page.text and "<code>OLD</code>" not in page.text
    again = await frozen_api.post("/ui/secrets/delete", data={"csrf": csrf, "name": "OLD"})
    assert again.status_code == 404
    bad = await frozen_api.post("/ui/secrets/delete", data={"csrf": csrf, "name": "a b"})
    assert bad.status_code == 422


async def test_a_jobs_page_names_its_channels_and_its_history_too(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    csrf = await sign_in(frozen_api, team.write)
    await frozen_api.post("/ui/channels", data={
        "csrf": csrf, "name": "équipe de garde", "kind": "telegram", "chat_id": "@opsroom",
        "token_secret": "TG"})
    channel_id = (await _channel(pool, team, "équipe de garde"))["id"]
    created = await frozen_api.post("/ui/jobs/new", data={
        "csrf": csrf, "name": "named", **JOB, "channels": str(channel_id)},
        follow_redirects=False)
    page = await frozen_api.get(created.headers["location"])
    assert (f'<dd>to <a href="/ui/channels/{channel_id}/edit">équipe de garde</a>, after 1 '
            "failed run(s) in a row") in page.text  # named, linked to it
    assert "+ channels: [\n  &#34;équipe de garde&#34;\n]" in page.text
    assert str(channel_id) not in re.sub(r'href="[^"]*"', "", page.text)  # only in the link
