"""The dashboard's monitors, channels, secrets, API keys and events pages, through the ASGI
test client on the frozen clock (api/ui/pages/monitors.py and its siblings)."""

from __future__ import annotations

import re
import uuid
from dataclasses import replace
from datetime import timedelta

import pytest
from litestar.testing import AsyncTestClient

from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool
from core.errors import FieldErrors
from core.monitors.ping import Ping, open_ping_pool, record_pings
from core.monitors.slugs import slug_problem
from core.tags import normalize_tags
from tests.conftest import _client
from tests.integration.test_dashboard_auth import sign_in
from tests.teams import Team

HOSTILE = "<script>alert(1)</script>\"'&"
PING_URL = re.compile(r'<code id="ping-url">([^<]+)</code>')
FLASH_SECRET = re.compile(r'<code id="flash-secret">([^<]+)</code>')


async def _create_monitor(client: AsyncTestClient, csrf: str, name: str,
                          schedule: str = "1h") -> tuple[str, str]:
    """Create a monitor through the form (POST, redirect, GET): ``(monitor id, ping token)``."""
    answer = await client.post("/ui/monitors/new", data={
        "csrf": csrf, "name": name, "schedule": schedule, "grace_seconds": "60"})
    assert answer.status_code == 200, answer.text
    assert answer.history and answer.history[0].status_code == 303  # a reload never re-posts
    assert answer.request.method == "GET" and "created." in answer.text
    url = PING_URL.search(answer.text).group(1)  # type: ignore[union-attr]
    token = url.rsplit("/", 1)[1]
    monitor_id = re.search(r'/ui/monitors/([0-9a-f-]{36})/live', answer.text).group(1)  # type: ignore[union-attr]
    return monitor_id, token


async def test_a_monitor_page_shows_its_ping_url_at_any_time(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    monitor_id, token = await _create_monitor(frozen_api, csrf, "nightly backup", "0 3 * * *")
    assert len(token) == 64
    page = await frozen_api.get(f"/ui/monitors/{monitor_id}")
    assert page.status_code == 200
    assert PING_URL.search(page.text).group(1).endswith(f"/ping/{token}")  # type: ignore[union-attr]
    # the crontab line at its schedule, with the real URL
    assert f"0 3 * * * /usr/local/bin/backup.sh &amp;&amp; curl -fsS -m 10 --retry 5 -o " \
           f"/dev/null http://testserver.local/ping/{token}" in page.text
    assert "&lt;token&gt;" not in page.text
    assert 'data-status="new"' in page.text
    listing = await frozen_api.get("/ui/monitors")
    assert f'href="/ui/monitors/{monitor_id}"' in listing.text and "<svg" in listing.text
    assert token not in listing.text
    # a read-only viewer never sees it
    await frozen_api.post("/ui/signout", data={"csrf": csrf})
    await sign_in(frozen_api, team.read)
    page = await frozen_api.get(f"/ui/monitors/{monitor_id}")
    assert token not in page.text and "/ping/&lt;token&gt;" in page.text
    assert "only viewers who may write see it" in page.text


async def test_without_a_secret_key_the_ping_url_is_shown_once_and_says_why(
        shared_dsn: str, settings: Settings, clock: FrozenClock,
        team: Team) -> None:
    async for client in _client(shared_dsn, replace(settings, secret_key=""), clock):
        csrf = await sign_in(client, team.write)
        answer = await client.post("/ui/monitors/new", data={
            "csrf": csrf, "name": "no key", "schedule": "1h"})
        assert answer.status_code == 200 and answer.history[0].status_code == 303
        # shown once, in the redirect's notice; the page says why it is not kept
        token = FLASH_SECRET.search(answer.text).group(1).rsplit("/", 1)[1]  # type: ignore[union-attr]
        assert "Not shown: this server has no secret key (CRONLEDGER_SECRET_KEY)" in answer.text
        monitor_id = re.search(r'/ui/monitors/([0-9a-f-]{36})/live', answer.text).group(1)  # type: ignore[union-attr]
        page = await client.get(f"/ui/monitors/{monitor_id}")
        assert token not in page.text and "/ping/&lt;token&gt;" in page.text
        assert "Not shown: this server has no secret key" in page.text


async def test_the_form_answers_the_apis_messages_next_to_each_field(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    csrf = await sign_in(frozen_api, team.write)
    answer = await frozen_api.post("/ui/monitors/new", data={
        "csrf": csrf, "name": "x", "schedule": "every blursday", "grace_seconds": "zero"})
    assert answer.status_code == 422
    assert 'id="grace-error"' in answer.text and "whole number" in answer.text
    answer = await frozen_api.post("/ui/monitors/new", data={
        "csrf": csrf, "name": "x", "schedule": "every blursday"})
    assert answer.status_code == 422 and 'id="schedule-error"' in answer.text
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM monitors WHERE team_id = %s",
                                 (team.actor.team_id,))
        assert (await cur.fetchone())["n"] == 0


async def test_pings_flips_and_hostile_text_render_inert(
        frozen_api: AsyncTestClient, team: Team, shared_dsn: str,
        clock: FrozenClock) -> None:
    csrf = await sign_in(frozen_api, team.write)
    monitor_id, token = await _create_monitor(frozen_api, csrf, HOSTILE)
    ping_pool = await open_ping_pool(shared_dsn, size=1)
    try:
        await record_pings(ping_pool, [
            (Ping(token=token, kind="success", method="POST", body=HOSTILE.encode(),
                  body_size=len(HOSTILE), user_agent=HOSTILE), clock.now()),
            (Ping(token=token, kind="log", method="POST", body=b"\xff\xfe\x00binary",
                  body_size=9), clock.now() + timedelta(seconds=1))])
    finally:
        await ping_pool.close()
    clock.advance(180)
    page = await frozen_api.get(f"/ui/monitors/{monitor_id}")
    assert page.status_code == 200
    assert "<script>alert(1)" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert 'data-status="up"' in page.text and "3 min ago" in page.text
    assert "00000000  ff fe 00 62 69 6e 61 72 79" in page.text  # not text: a hex preview
    # The timeline reads the pings without their bodies: two received, the slot an hour on.
    assert 'aria-label="Timeline: 0 expected pings, 0 missing, 0 late; 2 pings received"' \
        in page.text
    assert page.text.count('class="ping-ok"') == 1 and page.text.count('class="ping-log"') == 1
    listing = await frozen_api.get("/ui/monitors")
    assert "<script>alert(1)" not in listing.text and 'data-status="up"' in listing.text


async def test_pause_resume_and_rotate_are_csrf_forms(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    monitor_id, token = await _create_monitor(frozen_api, csrf, "to pause")
    forged = await frozen_api.post(f"/ui/monitors/{monitor_id}/pause", data={})
    assert forged.status_code == 403
    paused = await frozen_api.post(f"/ui/monitors/{monitor_id}/pause", data={"csrf": csrf})
    assert paused.status_code == 200 and 'data-status="paused"' in paused.text
    assert ">Resume</button>" in paused.text
    resumed = await frozen_api.post(f"/ui/monitors/{monitor_id}/resume", data={"csrf": csrf})
    assert 'data-status="new"' in resumed.text
    rotated = await frozen_api.post(f"/ui/monitors/{monitor_id}/rotate", data={"csrf": csrf})
    assert rotated.history[0].status_code == 303 and "old ping URL no longer works" in rotated.text
    new_token = PING_URL.search(rotated.text).group(1).rsplit("/", 1)[1]  # type: ignore[union-attr]
    assert len(new_token) == 64 and new_token != token
    page = await frozen_api.get(f"/ui/monitors/{monitor_id}")
    assert new_token in page.text and token not in page.text


async def test_a_read_key_sees_every_page_and_no_control(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    monitor_id, _ = await _create_monitor(frozen_api, csrf, "watched")
    await frozen_api.post("/ui/signout", data={"csrf": csrf})
    read_csrf = await sign_in(frozen_api, team.read)
    for path in (f"/ui/monitors/{monitor_id}", "/ui/monitors", "/ui/channels", "/ui/secrets",
                 "/ui/apikeys", "/ui/events"):
        page = await frozen_api.get(path)
        assert page.status_code == 200, path
        forms = re.findall(r'<form method="post" action="([^"]+)"', page.text)
        assert forms == ["/ui/signout"], (path, forms)
        assert "New monitor" not in page.text
    refused = await frozen_api.post(f"/ui/monitors/{monitor_id}/pause", data={"csrf": read_csrf})
    assert refused.status_code == 403
    page = await frozen_api.get(f"/ui/monitors/{monitor_id}")
    assert 'data-status="new"' in page.text


async def test_secrets_show_names_never_values(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    value = f"s3cret-{uuid.uuid4().hex}"
    answer = await frozen_api.post("/ui/secrets", data={"csrf": csrf, "name": "API_TOKEN",
                                                        "value": value})
    assert answer.status_code == 200 and "<code>API_TOKEN</code>" in answer.text
    assert value not in answer.text
    bad = await frozen_api.post("/ui/secrets", data={"csrf": csrf, "name": "no spaces",
                                                     "value": "x"})
    assert bad.status_code == 422 and value not in bad.text
    page = await frozen_api.get("/ui/secrets")
    assert "API_TOKEN" in page.text and value not in page.text


async def test_api_keys_are_shown_once_and_revoked_by_a_button(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    answer = await frozen_api.post("/ui/apikeys", data={"csrf": csrf, "name": "deploy",
                                                        "scope": "read"})
    assert answer.status_code == 200
    key = re.search(r'<code id="flash-secret">([^<]+)</code>', answer.text).group(1)  # type: ignore[union-attr]
    page = await frozen_api.get("/ui/apikeys")
    assert key not in page.text and "deploy" in page.text
    key_id = re.search(r'action="/ui/apikeys/([0-9a-f-]{36})/revoke"[^>]*>'
                       r'(?:(?!</tr>).)*Revoke deploy', page.text, re.S)
    assert key_id is not None
    revoked = await frozen_api.post(f"/ui/apikeys/{key_id.group(1)}/revoke",
                                    data={"csrf": csrf})
    assert revoked.status_code == 200 and "Revoke deploy" not in revoked.text
    check = await frozen_api.get("/v1/jobs", headers={"Authorization": f"Bearer {key}"})
    assert check.status_code == 401


async def test_events_filter_by_stream_type_and_page_by_position(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    for n in range(3):
        await _create_monitor(frozen_api, csrf, f"monitor {n}")
    await frozen_api.post("/ui/secrets", data={"csrf": csrf, "name": "K", "value": "v"})
    monitors = await frozen_api.get("/ui/events?stream_type=monitor")
    assert monitors.status_code == 200
    assert monitors.text.count("<code>monitor.created</code>") == 3
    assert "secret.set" not in monitors.text
    every = await frozen_api.get("/ui/events")
    assert "<code>secret.set</code>" in every.text
    bad = await frozen_api.get("/ui/events?stream_type=nope")
    assert bad.status_code == 422
    bad_time = await frozen_api.get("/ui/events?since=yesterday")
    assert bad_time.status_code == 422
    later = await frozen_api.get("/ui/events?since=2999-01-01T00:00")
    assert later.status_code == 200 and "No events match" in later.text


async def test_bad_input_on_these_pages_is_a_4xx_page_never_a_500(
        frozen_api: AsyncTestClient, team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    for path in ("/ui/monitors?cursor=nope", "/ui/monitors/live?cursor=nope",
                 "/ui/channels?cursor=%00", "/ui/apikeys?cursor=x", "/ui/secrets?after=%00",
                 "/ui/events?actor=%00", "/ui/events?before=12x",
                 "/ui/events?until=2026-13-01T00:00",
                 f"/ui/monitors/{uuid.uuid4()}", f"/ui/monitors/{uuid.uuid4()}/live"):
        answer = await frozen_api.get(path)
        assert 400 <= answer.status_code < 500, (path, answer.status_code)
        assert "text/html" in answer.headers["content-type"], path
    for path, form in (("/ui/monitors/new", {"name": "a\x00b", "schedule": "1h"}),
                       ("/ui/monitors/new", {"name": "x" * 5000, "schedule": "1h"}),
                       ("/ui/channels", {"name": "n\x00", "kind": "webhook", "url": "x"}),
                       ("/ui/channels", {"name": "n", "kind": "nope", "url": "ftp://x"}),
                       ("/ui/secrets", {"name": "A\x00", "value": "v"}),
                       ("/ui/apikeys", {"name": "k\x00", "scope": "read"}),
                       ("/ui/apikeys", {"name": "k", "scope": "admin"}),
                       (f"/ui/channels/{uuid.uuid4()}/test", {}),
                       (f"/ui/apikeys/{uuid.uuid4()}/revoke", {}),
                       (f"/ui/monitors/{uuid.uuid4()}/pause", {})):
        answer = await frozen_api.post(path, data={"csrf": csrf, **form})
        assert 400 <= answer.status_code < 500, (path, form, answer.status_code)


@pytest.mark.parametrize("text", ["\u00b2", "\u0661\u0662", "+5", "1e3", "05", " 5", "5.0"])
async def test_numbers_typed_otherwise_than_in_ascii_digits_are_refused(
        frozen_api: AsyncTestClient, team: Team, text: str) -> None:
    """Issue 32 (outside test): ``str.isdigit`` took "²" (then ``int`` failed: a 500) and
    "١٢" (``int`` read it as 12); ``int`` took "+60". A dashboard query number follows the API's
    rule (ASCII digits, no sign or leading zero) and a form number is ASCII digits; anything
    else is a 422 page naming the field, nothing saved."""
    csrf = await sign_in(frozen_api, team.write)
    answer = await frozen_api.get("/ui/events", params={"before": text})
    assert answer.status_code == 422, answer.text
    assert "text/html" in answer.headers["content-type"] and "before" in answer.text
    assert (await frozen_api.get("/ui/events", params={"before": "5"})).status_code == 200
    if text in ("05", " 5"):
        return  # in a form, still the number typed (the field's text is stripped)
    monitor_id, _ = await _create_monitor(frozen_api, csrf, "digits")
    form = {"csrf": csrf, "name": "renamed", "schedule": "1h", "grace_seconds": "60"}
    for field in ("version", "grace_seconds"):
        answer = await frozen_api.post(f"/ui/monitors/{monitor_id}/edit",
                                       data={**form, field: text}, follow_redirects=False)
        assert answer.status_code == 422, (field, answer.status_code)
        assert field in answer.text
    page = await frozen_api.get(f"/ui/monitors/{monitor_id}")
    assert page.status_code == 200 and "renamed" not in page.text


async def test_tags_and_slug_go_through_the_form(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    csrf = await sign_in(frozen_api, team.write)
    form = (await frozen_api.get("/ui/monitors/new")).text
    assert '<label for="tags">Tags</label>' in form and '<label for="slug">Slug</label>' in form
    answer = await frozen_api.post("/ui/monitors/new", data={
        "csrf": csrf, "name": "Nightly backup", "schedule": "1h", "slug": "backup-db",
        "tags": "prod, db prod"})
    assert answer.status_code == 200, answer.text
    monitor_id = re.search(r'/ui/monitors/([0-9a-f-]{36})/live', answer.text).group(1)  # type: ignore[union-attr]
    stored = (await frozen_api.get(f"/v1/monitors/{monitor_id}", headers=team.auth)).json()
    assert stored["slug"] == "backup-db" and stored["tags"] == ["prod", "db"]
    page = (await frozen_api.get(f"/ui/monitors/{monitor_id}")).text
    assert "<code>backup-db</code>" in page and '<span class="tag">db</span>' in page
    derived = await frozen_api.post("/ui/monitors/new", data={
        "csrf": csrf, "name": "Backup DB", "schedule": "1h", "tags": ""})
    assert derived.status_code == 200
    taken = await frozen_api.post("/ui/monitors/new", data={
        "csrf": csrf, "name": "other", "schedule": "1h", "slug": "backup-db"})
    assert taken.status_code == 409 and 'id="slug-error"' in taken.text
    bad = await frozen_api.post("/ui/monitors/new", data={
        "csrf": csrf, "name": "x", "schedule": "1h", "slug": "Not A Slug", "tags": "ok a/b"})
    assert bad.status_code == 422
    core = FieldErrors()
    normalize_tags(["a/b"], core)
    messages = {"tags[0]": core.items[0].message, "slug": slug_problem("Not A Slug")}
    assert f'<p class="field-error" id="tags-error">&#39;a/b&#39;: {messages["tags[0]"]}</p>' \
        in bad.text
    assert f'<p class="field-error" id="slug-error">{messages["slug"]}</p>' in bad.text
    assert 'value="ok a/b"' in bad.text
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM monitors WHERE team_id = %s",
                                 (team.actor.team_id,))
        assert (await cur.fetchone())["n"] == 2


async def test_job_and_monitor_pages_show_a_maintenance_in_effect(
        frozen_api: AsyncTestClient, team: Team, clock: FrozenClock) -> None:
    h = team.auth
    csrf = await sign_in(frozen_api, team.write)
    monitor_id, _ = await _create_monitor(frozen_api, csrf, "m")
    job = (await frozen_api.post("/v1/jobs", headers=h, json={
        "name": "j", "schedule": "@hourly", "request": {"url": "https://example.com/"}})).json()
    assert "alerts off until" not in (await frozen_api.get(f"/ui/monitors/{monitor_id}")).text
    assert "in maintenance until" not in (await frozen_api.get(f"/ui/jobs/{job['id']}")).text
    now = clock.now()
    window = await frozen_api.post("/v1/maintenance", headers=h, json={
        "from": now.isoformat(), "to": (now + timedelta(hours=1)).isoformat(),
        "monitors": [monitor_id], "jobs": [job["id"]]})
    assert window.status_code == 201, window.text
    assert "alerts off until" in (await frozen_api.get(f"/ui/monitors/{monitor_id}")).text
    assert "in maintenance until" in (await frozen_api.get(f"/ui/jobs/{job['id']}")).text
