"""A monitor's ping URL read again (core/monitors/tokens.py, docs/heartbeats.md, *The ping
URL*): kept sealed, shown to write keys at any time, never to read keys, gone at rotation,
shown once without a secret key, resealed by ``secrets rotate-key``."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from litestar.testing import AsyncTestClient

from core.config import Settings
from core.crypto import KeyRing, new_key
from core.db import ConnectionPool
from core.monitors.commands import create_monitor
from core.monitors.tokens import NO_KEY, NOT_KEPT, read_token
from core.secrets import rotate_key
from tests.conftest import _client
from tests.teams import Team

BODY = {"name": "backup", "schedule": "1h"}


def _key(team: Team, scope: str = "write") -> dict[str, str]:
    return {"X-Api-Key": team.write if scope == "write" else team.read}


@pytest.fixture
async def keyless(shared_dsn: str, settings: Settings) -> AsyncIterator[AsyncTestClient]:
    """The API of a server without a secret key."""
    async for client in _client(shared_dsn, replace(settings, secret_key=""), None):
        yield client


async def test_rotation_replaces_the_readable_url_at_once(api: AsyncTestClient,
                                                          team: Team) -> None:
    created = (await api.post("/v1/monitors", json=BODY, headers=team.auth)).json()
    url = f"/v1/monitors/{created['id']}"
    rotated = (await api.post(f"{url}/rotate-token", headers=team.auth)).json()
    assert rotated["ping_token"] != created["ping_token"] and rotated["ping_url_note"] is None
    read = (await api.get(url, headers=team.auth)).json()
    assert read["ping_url"] == rotated["ping_url"]
    assert (await api.get(f"/ping/{created['ping_token']}")).status_code == 404
    assert (await api.get(f"/ping/{rotated['ping_token']}")).status_code == 200
    v3 = (await api.get(f"/api/v3/checks/{created['id']}", headers=_key(team))).json()
    assert v3["ping_url"] == rotated["ping_url"]
    assert "ping_url" not in (await api.get("/api/v3/checks/", headers=_key(team, "read"))
                              ).json()["checks"][0]


async def test_without_a_secret_key_the_url_is_shown_once_and_the_answer_says_why(
        keyless: AsyncTestClient, api: AsyncTestClient, team: Team,
        pool: ConnectionPool) -> None:
    r = await keyless.post("/v1/monitors", json=BODY, headers=team.auth)
    created = r.json()
    assert r.status_code == 201 and len(created["ping_token"]) == 64
    assert created["ping_url_note"] == NO_KEY
    read = (await keyless.get(f"/v1/monitors/{created['id']}", headers=team.auth)).json()
    assert (read["ping_token"], read["ping_url"], read["ping_url_note"]) == (None, None, NO_KEY)
    v3 = await keyless.post("/api/v3/checks/", json={"name": "v3"}, headers=_key(team))
    assert v3.json()["ping_url"].endswith("/ping/" + v3.json()["ping_url"].rsplit("/", 1)[1])
    assert v3.json()["ping_url_note"] == NO_KEY  # shown once: the answer says so, as /v1's
    again = await keyless.get(f"/api/v3/checks/{v3.json()['uuid']}", headers=_key(team))
    assert again.json()["ping_url"] == "" and again.json()["ping_url_note"] == NO_KEY
    # with a key the v3 answers carry no note (healthchecks' own fields only)
    kept = await api.post("/api/v3/checks/", json={"name": "v3k"}, headers=_key(team))
    assert "ping_url_note" not in kept.json()
    assert "ping_url_note" not in (await api.get(f"/api/v3/checks/{kept.json()['uuid']}",
                                                 headers=_key(team))).json()
    # a server that has a key now: the monitor made without one says so, until its rotation
    read = (await api.get(f"/v1/monitors/{created['id']}", headers=team.auth)).json()
    assert read["ping_url"] is None and read["ping_url_note"] == NOT_KEPT
    await api.post(f"/v1/monitors/{created['id']}/rotate-token", headers=team.auth)
    read = (await api.get(f"/v1/monitors/{created['id']}", headers=team.auth)).json()
    assert read["ping_url"] and read["ping_url_note"] is None
    # rotating without a key drops the kept copy of the previous token
    r = await keyless.post(f"/v1/monitors/{created['id']}/rotate-token", headers=team.auth)
    assert r.json()["ping_url_note"] == NO_KEY
    read = (await api.get(f"/v1/monitors/{created['id']}", headers=team.auth)).json()
    assert read["ping_url"] is None
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM monitor_ping_tokens "
                                 "WHERE monitor_id = %s", (uuid.UUID(created["id"]),))
        assert (await cur.fetchone())["n"] == 0


async def test_a_sealed_token_opens_only_for_its_own_monitor(
        api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    a = (await api.post("/v1/monitors", json=BODY, headers=team.auth)).json()
    b = (await api.post("/v1/monitors", json={**BODY, "name": "b"}, headers=team.auth)
         ).json()
    async with pool.connection() as conn:  # b's row given a's ciphertext and a's hash
        await conn.execute(
            "UPDATE monitor_ping_tokens t SET key_id = s.key_id, nonce = s.nonce, "
            "ciphertext = s.ciphertext FROM monitor_ping_tokens s "
            "WHERE t.monitor_id = %s AND s.monitor_id = %s", (b["id"], a["id"]))
    read = (await api.get(f"/v1/monitors/{b['id']}", headers=team.auth)).json()
    assert read["ping_url"] is None and read["ping_url_note"] == NOT_KEPT


async def test_rotate_key_reseals_ping_tokens(fresh_pool: ConnectionPool) -> None:
    from core.actor import Actor
    from core.apikeys import create_api_key

    old, new = new_key(), new_key()
    _, record = await create_api_key(fresh_pool, "tokens")
    actor = Actor(team_id=record["team_id"], key_id=record["id"])
    monitor, token = await create_monitor(fresh_pool, actor, BODY, datetime.now(UTC),
                                          KeyRing.from_sources(old, ""))
    ring = KeyRing.from_sources(f"{new},{old}", "")
    summary = await rotate_key(fresh_pool, ring)
    assert summary["ping_tokens"] == 1 and summary["key_usage"] == {ring.current_id: 1}
    only_new = KeyRing.from_sources(new, "")
    assert await read_token(fresh_pool, only_new, actor.team_id, monitor) == token
    assert await read_token(fresh_pool, KeyRing.from_sources(old, ""), actor.team_id,
                            monitor) is None
