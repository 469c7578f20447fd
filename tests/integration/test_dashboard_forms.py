"""The dashboard's forms end in a redirect (POST → 303 → GET) with a sealed notice, monitors are
edited and deleted with the API's messages, and a 409 while editing shows the form again
(api/ui/flash.py, api/ui/pages/monitors.py, api/ui/pages/jobs.py)."""

from __future__ import annotations

import re
from typing import Any

from litestar.testing import AsyncTestClient

from api.ui.flash import FLASH_COOKIE, Flash, seal, unseal
from core.db import ConnectionPool
from core.monitors import commands
from tests.integration.test_dashboard_auth import sign_in
from tests.teams import Team

PING_URL = re.compile(r'<code id="ping-url">([^<]+)</code>')


async def _count(pool: ConnectionPool, team: Team, table: str) -> int:
    async with pool.connection() as conn:
        cur = await conn.execute(f"SELECT count(*) AS n FROM {table} "  # noqa: S608 - fixed names
                                 "WHERE team_id = %s", (team.actor.team_id,))
        return (await cur.fetchone())["n"]


async def _create(client: AsyncTestClient, csrf: str, **form: str) -> str:
    """Create a monitor through the form (no redirect followed): its id."""
    answer = await client.post("/ui/monitors/new", data={"csrf": csrf, **form},
                               follow_redirects=False)
    assert answer.status_code == 303, answer.text
    match = re.fullmatch(r"/ui/monitors/([0-9a-f-]{36})", answer.headers["location"])
    assert match is not None
    return match.group(1)


async def test_a_create_is_a_redirect_and_its_notice_is_shown_once_sealed(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    """The notice travels sealed in a cookie and is shown once; the ping URL, kept with the
    server's secret key, is on the page at every visit (a value the server cannot keep rides in
    the notice instead: test_dashboard_monitors, without a secret key)."""
    csrf = await sign_in(frozen_api, team.write)
    monitor_id = await _create(frozen_api, csrf, name="nightly", schedule="1h")
    sealed = frozen_api.cookies[FLASH_COOKIE]
    assert "nightly" not in sealed  # sealed, not readable in the cookie
    page = await frozen_api.get(f"/ui/monitors/{monitor_id}")
    url = PING_URL.search(page.text).group(1)  # type: ignore[union-attr]
    token = url.rsplit("/", 1)[1]
    assert len(token) == 64 and token not in sealed
    assert "Monitor “nightly” created." in page.text
    assert "cronledger_flash=" in page.headers["set-cookie"]  # deleted on the page showing it
    again = await frozen_api.get(f"/ui/monitors/{monitor_id}")  # a reload: no second notice
    assert "created." not in again.text
    assert PING_URL.search(again.text).group(1) == url  # type: ignore[union-attr]
    assert await _count(pool, team, "monitors") == 1
    # A sealed notice opens only with the session it was sealed for.
    assert unseal("another session", sealed) is None
    assert unseal("s", seal("s", Flash("hi", "v", "API key"))) == Flash("hi", "v", "API key")
    assert unseal("s", "garbage") is None and unseal("s", "") is None


async def test_a_monitor_is_edited_with_the_apis_messages_and_deleted(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    csrf = await sign_in(frozen_api, team.write)
    monitor_id = await _create(frozen_api, csrf, name="backup", schedule="1h",
                               tags="prod", slug="backup-db")
    form = await frozen_api.get(f"/ui/monitors/{monitor_id}/edit")
    assert form.status_code == 200
    assert 'value="backup-db"' in form.text and 'value="prod"' in form.text
    version = re.search(r'name="version" value="(\d+)"', form.text).group(1)  # type: ignore[union-attr]
    bad = await frozen_api.post(f"/ui/monitors/{monitor_id}/edit", data={
        "csrf": csrf, "version": version, "name": "backup", "schedule": "every blursday",
        "grace_seconds": "60", "tags": "a/b"})
    assert bad.status_code == 422 and bad.headers["content-type"].startswith("text/html")
    assert 'id="schedule-error"' in bad.text and "blursday" in bad.text
    assert 'id="tags-error"' in bad.text and "a/b" in bad.text
    assert 'value="every blursday"' in bad.text  # what was typed stays
    saved = await frozen_api.post(f"/ui/monitors/{monitor_id}/edit", data={
        "csrf": csrf, "version": version, "name": "backup à 3h", "schedule": "0 3 * * *",
        "timezone": "Europe/Paris", "grace_seconds": "600", "slug": "backup-db",
        "tags": "prod db"}, follow_redirects=False)
    assert saved.status_code == 303 and saved.headers["location"] == f"/ui/monitors/{monitor_id}"
    page = await frozen_api.get(f"/ui/monitors/{monitor_id}")
    assert "Monitor “backup à 3h” saved." in page.text and "Europe/Paris" in page.text
    # The old version: someone saved in between, so the form comes back with the message.
    stale = await frozen_api.post(f"/ui/monitors/{monitor_id}/edit", data={
        "csrf": csrf, "version": version, "name": "mine", "schedule": "1h"})
    assert stale.status_code == 409 and stale.headers["content-type"].startswith("text/html")
    assert "while you edited it" in stale.text and 'value="mine"' in stale.text
    assert f'action="/ui/monitors/{monitor_id}/edit"' in stale.text
    # A slug another monitor holds: 409 at the slug field.
    other = await _create(frozen_api, csrf, name="other", schedule="1h")
    taken = await frozen_api.post(f"/ui/monitors/{other}/edit", data={
        "csrf": csrf, "name": "other", "schedule": "1h", "slug": "backup-db"})
    assert taken.status_code == 409 and 'id="slug-error"' in taken.text
    deleted = await frozen_api.post(f"/ui/monitors/{monitor_id}/delete", data={"csrf": csrf},
                                    follow_redirects=False)
    assert deleted.status_code == 303 and deleted.headers["location"] == "/ui/monitors"
    listing = await frozen_api.get("/ui/monitors")
    assert "Monitor “backup à 3h” deleted" in listing.text
    assert f'href="/ui/monitors/{monitor_id}"' not in listing.text
    gone = await frozen_api.get(f"/ui/monitors/{monitor_id}/edit")
    assert gone.status_code == 404


async def test_a_read_key_cannot_edit_or_delete_a_monitor(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool,
        clock: Any) -> None:
    monitor_id, _ = await commands.create_monitor(pool, team.actor, {
        "name": "kept", "schedule": "1h"}, clock.now())
    csrf = await sign_in(frozen_api, team.read)
    assert (await frozen_api.get(f"/ui/monitors/{monitor_id}/edit")).status_code == 403
    assert (await frozen_api.get("/ui/monitors/new")).status_code == 403
    for action in ("edit", "delete"):
        answer = await frozen_api.post(f"/ui/monitors/{monitor_id}/{action}", data={
            "csrf": csrf, "name": "x", "schedule": "1h"})
        assert answer.status_code == 403
    assert await _count(pool, team, "monitors") == 1
    page = await frozen_api.get(f"/ui/monitors/{monitor_id}")
    assert f"/ui/monitors/{monitor_id}/edit" not in page.text and ">Delete<" not in page.text


async def test_every_form_that_changes_something_answers_a_redirect(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    for path, form, target in (
            ("/ui/secrets", {"name": "TOKEN", "value": "s3cret-value"}, "/ui/secrets"),
            ("/ui/apikeys", {"name": "deploy", "scope": "read"}, "/ui/apikeys"),
            ("/ui/channels", {"name": "hook", "kind": "webhook",
                              "url": "https://hooks.example.com/x"}, "/ui/channels")):
        answer = await frozen_api.post(path, data={"csrf": csrf, **form},
                                       follow_redirects=False)
        assert answer.status_code == 303, (path, answer.text)
        assert answer.headers["location"] == target
        page = await frozen_api.get(target)
        assert "s3cret-value" not in page.text
        assert "created." in page.text
        refused = await frozen_api.post(path, data={"csrf": csrf, "name": "a\x00"})
        assert refused.status_code == 422, path
        assert refused.headers["content-type"].startswith("text/html"), path
    keys = await frozen_api.get("/ui/apikeys")
    assert "created." not in keys.text  # shown once


async def test_a_job_saved_meanwhile_shows_the_form_again_with_the_message(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    fields = {"csrf": csrf, "name": "job one", "schedule": "@every 1h", "timezone": "UTC",
              "request.method": "GET", "request.url": "https://example.com/",
              "timeout_seconds": "30", "retry.attempts": "1", "retry.backoff": "exponential",
              "retry.delay_seconds": "10", "retry.max_delay_seconds": "60",
              "overlap": "allow", "catchup": "latest", "alert_after_failures": "1"}
    created = await frozen_api.post("/ui/jobs/new", data=fields, follow_redirects=False)
    assert created.status_code == 303, created.text
    job_path = created.headers["location"]
    page = await frozen_api.get(job_path)
    assert "Job “job one” created." in page.text
    dup = await frozen_api.post("/ui/jobs/new", data=fields)
    assert dup.status_code == 409 and 'id="err-name"' in dup.text
    saved = await frozen_api.post(job_path + "/edit", data={**fields, "version": "1",
                                                            "name": "job two"},
                                  follow_redirects=False)
    assert saved.status_code == 303 and saved.headers["location"] == job_path
    again = await frozen_api.post(job_path + "/edit", data={**fields, "version": "1",
                                                           "name": "job three"})
    assert again.status_code == 409
    assert "while you edited it" in again.text and 'value="job three"' in again.text
