"""Slug URLs and auto-provisioning (docs/healthchecks.md), after healthchecks'
``hc/api/tests/test_ping_by_slug.py``: ``/ping/<ping-key>/<slug>`` behaves like the token URL,
an unknown key or slug is a 404 that writes nothing, ``?create=1`` creates the monitor."""

from __future__ import annotations

import random
import uuid
from dataclasses import replace
from typing import Any

import psycopg
from litestar.testing import AsyncTestClient

from api.app import create_app
from core.config import Settings
from core.db import ConnectionPool
from core.monitors.slugs import MAX_SLUG, slug_problem, slugify
from tests.teams import Team


async def _ping_key(api: AsyncTestClient, team: Team) -> str:
    r = await api.post("/v1/team/ping-key", headers=team.auth)
    assert r.status_code == 200, r.text
    key = r.json()["ping_key"]
    assert len(key) >= 22 and r.json()["ping_url"].endswith(f"/ping/{key}/")
    return key


async def _events(pool: ConnectionPool) -> int:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM events")
        return (await cur.fetchone())["n"]


async def _monitor(api: AsyncTestClient, team: Team, monitor_id: str) -> dict[str, Any]:
    r = await api.get(f"/v1/monitors/{monitor_id}", headers=team.auth)
    assert r.status_code == 200, r.text
    return r.json()


def _slug_candidates() -> list[str]:
    """Edge cases of the slug rule and 600 random strings over the characters next to its
    ranges (`` ` `` and ``{`` around ``a-z``, ``/`` and ``:`` around ``0-9``), capitals,
    a non-ASCII letter, spaces and newlines, 0 to 102 characters long."""
    edges = ["", "a", "z", "0", "9", "_", "-", "a" * MAX_SLUG, "a" * (MAX_SLUG + 1),
             "é" * MAX_SLUG, "abc\n", "\nabc", "ab c", "A", "a.b", "a/b", "[a]", "^a$"]
    valid, near = "az09_-m5", "`{/:AZé \n.^$[]\\"
    draw = random.Random(28)
    out = []
    for n in range(600):
        chars = [draw.choice(valid) for _ in range(draw.choice(
            [draw.randint(0, 5), draw.randint(95, 102)]))]
        if n % 2 and chars:  # one character from next to the ranges
            chars[draw.randrange(len(chars))] = draw.choice(near)
        out.append("".join(chars))
    return edges + out


def test_the_slug_constraint_is_the_slug_rule(shared_dsn: str) -> None:
    """``monitors_slug_check`` (migration 0041: ``ltrim``, not a regular expression, as the
    ping statement re-checks it on every UPDATE) accepts exactly the slugs
    :func:`core.monitors.slugs.slug_problem` accepts."""
    with psycopg.connect(shared_dsn) as conn:
        definition = conn.execute(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conname = 'monitors_slug_check'").fetchone()
        assert definition is not None and definition[0].startswith("CHECK ")
        candidates = _slug_candidates()
        rows = conn.execute(f"SELECT slug, coalesce({definition[0][6:]}, true) "  # noqa: S608
                            "FROM unnest(%s::text[]) AS t(slug)", [candidates]).fetchall()
    assert len(rows) == len(candidates)
    assert {slug: ok for slug, ok in rows} == {
        slug: slug_problem(slug) is None for slug in candidates}
    assert 100 < sum(ok for _, ok in rows) < len(rows) - 300


def test_slugify_follows_django() -> None:
    assert slugify("Nightly Backup (DB) ") == "nightly-backup-db"
    assert slugify("Ünïcode  --  name_") == "unicode-name"
    assert slugify("!!!") is None


async def test_team_shows_whether_a_ping_key_exists(api: AsyncTestClient, team: Team,
                                                     pool: ConnectionPool) -> None:
    r = await api.get("/v1/team", headers=team.read_auth)
    assert r.status_code == 200 and r.json()["has_ping_key"] is False
    assert r.json()["badge_url"].endswith(f"/badge/{r.json()['badge_key']}/*.svg")
    key = await _ping_key(api, team)
    assert (await api.get("/v1/team", headers=team.auth)).json()["has_ping_key"] is True
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT event_type, data, metadata FROM events WHERE stream_type = 'team' "
            "AND stream_id = %s", (team.actor.team_id,))
        [event] = await cur.fetchall()
    assert event["event_type"] == "team.ping_key_rotated" and key not in str(event)
    assert event["metadata"]["actor"].startswith("api_key:")
    r = await api.post("/v1/team/ping-key", headers=team.read_auth)
    assert r.status_code == 403


async def test_slug_ping_behaves_like_the_token_url(api: AsyncTestClient, team: Team,
                                                    pool: ConnectionPool) -> None:
    r = await api.post("/v1/monitors", json={"name": "Nightly Backup", "schedule": "1h"},
                       headers=team.auth)
    assert r.status_code == 201, r.text
    monitor = r.json()
    assert monitor["slug"] == "nightly-backup"
    key = await _ping_key(api, team)
    rid = str(uuid.uuid4())
    r = await api.get(f"/ping/{key}/nightly-backup/start?rid={rid}")
    assert r.status_code == 200 and r.text == "OK"
    assert r.headers["cache-control"] == "no-cache"
    r = await api.post(f"/ping/{key}/nightly-backup/?rid={rid}", content=b"done")
    assert r.status_code == 200
    state = await _monitor(api, team, monitor["id"])
    assert state["status"] == "up" and state["last_duration_ms"] is not None
    assert (await api.get(f"/ping/{key}/nightly-backup/1")).status_code == 200
    assert (await _monitor(api, team, monitor["id"]))["status"] == "down"
    assert (await api.get(f"/ping/{key}/nightly-backup/log")).status_code == 200
    assert (await api.get(f"/ping/{key}/nightly-backup/256")).status_code == 400
    pings = (await api.get(f"/v1/monitors/{monitor['id']}/pings",
                           headers=team.auth)).json()["items"]
    assert [p["kind"] for p in pings] == ["log", "fail", "success", "start"]
    assert pings[2]["body"] == "done"
    before = await _events(pool)
    for path in (f"/ping/{key}/other-slug", f"/ping/{'A' * 22}/nightly-backup",
                 f"/ping/{key}/Bad Slug", f"/ping/{key}/nightly-backup/nope"):
        r = await api.get(path)
        assert r.status_code == 404, path
        assert r.headers["cache-control"] == "no-cache"
    assert await _events(pool) == before


async def test_slugs_are_unique_per_team(api: AsyncTestClient, team: Team) -> None:
    first = (await api.post("/v1/monitors", json={"name": "db", "schedule": "1h"},
                            headers=team.auth)).json()
    second = await api.post("/v1/monitors", json={"name": "DB", "schedule": "1h"},
                            headers=team.auth)
    # derived "db" is taken: the smallest free numbered one
    assert second.status_code == 201 and second.json()["slug"] == "db-2"
    r = await api.post("/v1/monitors", json={"name": "x", "schedule": "1h", "slug": "db"},
                       headers=team.auth)
    assert r.status_code == 409 and "slug" in r.json()["detail"]
    r = await api.patch(f"/v1/monitors/{second.json()['id']}", json={"slug": "db-9"},
                        headers=team.auth)
    assert r.status_code == 200 and r.json()["slug"] == "db-9"
    r = await api.post("/v1/monitors", json={"name": "x", "schedule": "1h", "slug": "Not OK"},
                       headers=team.auth)
    assert r.status_code == 422
    assert first["slug"] == "db"


async def test_create_1_provisions_the_monitor(api: AsyncTestClient, team: Team,
                                              pool: ConnectionPool) -> None:
    key = await _ping_key(api, team)
    r = await api.get(f"/ping/{key}/fresh-job?create=1")
    assert r.status_code == 201 and r.headers["cache-control"] == "no-cache"
    r = await api.get(f"/ping/{key}/fresh-job?create=1")
    assert r.status_code == 200
    monitors = (await api.get("/v1/monitors", headers=team.auth)).json()["items"]
    [monitor] = [m for m in monitors if m["slug"] == "fresh-job"]
    assert monitor["name"] == "fresh-job" and monitor["status"] == "up"
    assert monitor["schedule"] == "1d" and monitor["grace_seconds"] == 3600
    events = (await api.get(f"/v1/monitors/{monitor['id']}/events",
                            headers=team.auth)).json()["items"]
    assert events[0]["event_type"] == "monitor.created"
    assert events[0]["metadata"]["actor"] == "ping"
    before = await _events(pool)
    assert (await api.get(f"/ping/{'B' * 22}/fresh-job?create=1")).status_code == 404
    assert await _events(pool) == before


async def test_create_1_stops_at_the_team_limit(shared_dsn: str, settings: Settings,
                                               team: Team, pool: ConnectionPool) -> None:
    app = create_app(shared_dsn, replace(settings, team_monitor_limit=1))
    async with AsyncTestClient(app=app, raise_server_exceptions=False) as api:
        key = await _ping_key(api, team)
        assert (await api.get(f"/ping/{key}/one?create=1")).status_code == 201
        before = await _events(pool)
        r = await api.get(f"/ping/{key}/two?create=1")
        assert r.status_code == 403 and "limit of 1 monitors" in r.text
        assert await _events(pool) == before
        assert (await api.get(f"/ping/{key}/one?create=1")).status_code == 200
