"""Every page names its team; a browser signed in with the keys of several teams switches
between them; signing out of one falls back to the next (api/ui/auth.py, api/ui/pages/signin.py).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from litestar.testing import AsyncTestClient

from core.apikeys import create_api_key
from core.clock import FrozenClock
from core.db import ConnectionPool
from core.monitors.commands import create_monitor
from core.sessions import issue_signin_link
from tests.integration.test_dashboard_auth import CSRF, sign_in
from tests.teams import Team

PAGES = ("/", "/ui/jobs", "/ui/monitors", "/ui/channels", "/ui/secrets", "/ui/apikeys",
         "/ui/events", "/ui/alerts", "/ui/jobs/new", "/ui/monitors/new")


async def _second_team(pool: ConnectionPool, clock: FrozenClock) -> dict[str, Any]:
    name = f"other-{uuid.uuid4().hex[:8]}"
    key, record = await create_api_key(pool, name, "write", "ops laptop")
    from core.actor import Actor

    monitor_id, _ = await create_monitor(pool, Actor(team_id=record["team_id"]), {
        "name": "other team's monitor", "schedule": "1h"}, clock.now())
    return {"name": name, "key": key, "monitor_id": monitor_id}


async def test_every_page_names_the_team_and_a_second_key_adds_a_switcher(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool,
        clock: FrozenClock) -> None:
    await sign_in(frozen_api, team.write)
    for path in PAGES:
        page = await frozen_api.get(path)
        assert f"<strong data-team>{team.name}</strong>" in page.text, path
        assert 'action="/ui/team"' not in page.text
    other = await _second_team(pool, clock)
    adding = await frozen_api.get("/ui/signin?add=1")
    assert f"<strong>{team.name}</strong>" in adding.text  # "signed in to team …"
    csrf = await sign_in(frozen_api, other["key"])  # a second session; the first is kept
    overview = await frozen_api.get("/")
    assert 'action="/ui/team"' in overview.text
    assert f"{other['name']} (ops laptop)</option>" in overview.text
    monitors = await frozen_api.get("/ui/monitors")
    assert "other team&#39;s monitor" in monitors.text
    key_id = re.search(r'<option value="([0-9a-f-]{36})">' + re.escape(team.name),
                       overview.text).group(1)  # type: ignore[union-attr]
    switched = await frozen_api.post("/ui/team", data={"csrf": csrf, "key": key_id},
                                     follow_redirects=False)
    assert switched.status_code == 303 and switched.headers["location"] == "/"
    page = await frozen_api.get("/")
    assert f"Now showing team “{team.name}”." in page.text
    assert f'<option value="" selected>{team.name}' in page.text
    monitors = await frozen_api.get("/ui/monitors")
    assert "other team&#39;s monitor" not in monitors.text
    # An object of the team not shown is not found (no leak across teams).
    assert (await frozen_api.get(f"/ui/monitors/{other['monitor_id']}")).status_code == 404
    # A key this browser holds no session of: refused, nothing switched.
    csrf = CSRF.search(page.text).group(1)  # type: ignore[union-attr]
    refused = await frozen_api.post("/ui/team", data={"csrf": csrf, "key": str(uuid.uuid4())})
    assert refused.status_code == 404
    assert (await frozen_api.post("/ui/team", data={"key": key_id})).status_code == 403

    # Signing out of the team shown falls back to the other one; then to the sign-in page.
    out = await frozen_api.post("/ui/signout", data={"csrf": csrf}, follow_redirects=False)
    assert out.status_code == 303 and out.headers["location"] == "/"
    page = await frozen_api.get("/")
    assert f"Signed out of team “{team.name}”" in page.text
    assert f"<strong data-team>{other['name']}</strong>" in page.text
    csrf = CSRF.search(page.text).group(1)  # type: ignore[union-attr]
    out = await frozen_api.post("/ui/signout", data={"csrf": csrf}, follow_redirects=False)
    assert out.headers["location"] == "/ui/signin"
    assert (await frozen_api.get("/", follow_redirects=False)).status_code == 303


async def test_the_sign_in_link_adds_its_team_too(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool,
        clock: FrozenClock) -> None:
    await sign_in(frozen_api, team.write)
    other = f"linked-{uuid.uuid4().hex[:8]}"
    token = await issue_signin_link(pool, other, clock.now())
    opened = await frozen_api.get(f"/ui/signin?token={token}", follow_redirects=False)
    assert opened.status_code == 303
    page = await frozen_api.get("/")
    assert f'<option value="" selected>{other} (dashboard sign-in link)' in page.text
    assert f">{team.name}</option>" in page.text
    assert "Nothing has happened yet in team" in page.text
