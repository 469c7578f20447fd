"""Status pages for their owner (docs/status-pages.md): create by tags or by components with
display names, the public URL readable again only when sealed under a secret key, changes and
deletion as events of the page's stream, the field messages, and notes on incidents.

Real PostgreSQL, the API in process, a frozen clock.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from litestar.testing import AsyncTestClient

from api.app import create_app
from core.config import Settings
from core.db import ConnectionPool
from core.tokens import token_hash
from tests.helpers import add_job
from tests.monitor_helpers import add_monitor
from tests.teams import Team

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


async def _subjects(pool: ConnectionPool, team: Team) -> tuple[uuid.UUID,
                                                                               uuid.UUID]:
    job = await add_job(pool, team.actor, T0, "https://internal.example.com/backup",
                        name="nightly-backup-db7", tags=["public"])
    monitor, _ = await add_monitor(pool, team.actor, T0, name="hb-billing-queue",
                                   tags=["public"])
    return job, monitor


async def _events(pool: ConnectionPool, page_id: str) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT event_type, data, stream_version FROM events WHERE stream_type = "
            "'status_page' AND stream_id = %s ORDER BY stream_version", (page_id,))
        return await cur.fetchall()


async def test_create_by_components_answers_201_with_an_unguessable_url(
        frozen_api: AsyncTestClient, pool: ConnectionPool, team: Team) -> None:
    job, monitor = await _subjects(pool, team)
    answer = await frozen_api.post("/v1/status-pages", headers=team.auth, json={
        "title": "Acme status", "components": [str(monitor), str(job)],
        "names": {str(job): "Backups"}})
    assert answer.status_code == 201, answer.text
    page = answer.json()
    key = page["url"].rsplit("/status/", 1)[1]
    assert len(key) == 32 and int(key, 16) >= 0  # 128 random bits
    assert page["feed_url"] == page["url"] + "/feed.atom"
    assert page["components"] == [str(monitor), str(job)]
    assert page["names"] == {str(job): "Backups"} and page["url_note"] is None
    # stored: the hash to look it up, the key only sealed; the event carries the hash only
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM status_pages WHERE id = %s", (page["id"],))
        row = await cur.fetchone()
        cur = await conn.execute("SELECT data::text AS d FROM events WHERE stream_id = %s",
                                 (page["id"],))
        stored = " ".join(r["d"] for r in await cur.fetchall())
    assert bytes(row["key_hash"]) == token_hash(key)
    assert key.encode() not in bytes(row["ciphertext"]) and key not in stored
    assert token_hash(key).hex() in stored
    # the owner reads the URL again, with a write key and with a read key
    for auth in (team.auth, team.read_auth):
        again = await frozen_api.get(f"/v1/status-pages/{page['id']}", headers=auth)
        assert again.status_code == 200 and again.json()["url"] == page["url"]
    listed = await frozen_api.get("/v1/status-pages", headers=team.read_auth)
    assert [p["url"] for p in listed.json()["items"]] == [page["url"]]
    assert [e["event_type"] for e in await _events(pool, page["id"])] == [
        "status_page.created"]


async def test_without_a_secret_key_the_url_is_shown_once(
        shared_dsn: str, settings: Settings, pool: ConnectionPool,
        team: Team) -> None:
    app = create_app(shared_dsn, Settings(**{**settings.__dict__, "secret_key": ""}))
    async with AsyncTestClient(app=app) as client:
        made = await client.post("/v1/status-pages", headers=team.auth,
                                 json={"title": "S", "tags": ["public"]})
        assert made.status_code == 201 and made.json()["url"]
        again = await client.get(f"/v1/status-pages/{made.json()['id']}", headers=team.auth)
    assert again.json()["url"] is None and "secret key" in again.json()["url_note"]


async def test_changes_are_events_and_a_rotation_ends_the_old_url(
        frozen_api: AsyncTestClient, pool: ConnectionPool, team: Team) -> None:
    job, monitor = await _subjects(pool, team)
    page = (await frozen_api.post("/v1/status-pages", headers=team.auth, json={
        "title": "Acme", "tags": ["public"]})).json()
    old = page["url"].split("/status/")[1]
    assert (await frozen_api.get(f"/status/{old}")).status_code == 200
    changed = await frozen_api.patch(f"/v1/status-pages/{page['id']}", headers=team.auth,
                                     json={"components": [str(job)], "path": "acme-ops",
                                           "version": 1})
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert body["tags"] == [] and body["components"] == [str(job)]
    assert body["path_url"].endswith("/status/acme-ops") and body["url"] == page["url"]
    stale = await frozen_api.patch(f"/v1/status-pages/{page['id']}", headers=team.auth,
                                   json={"title": "x", "version": 1})
    assert stale.status_code == 409
    rotated = (await frozen_api.patch(f"/v1/status-pages/{page['id']}", headers=team.auth,
                                      json={"rotate_key": True})).json()
    new = rotated["url"].split("/status/")[1]
    assert new != old
    assert (await frozen_api.get(f"/status/{old}")).status_code == 404
    assert (await frozen_api.get(f"/status/{new}")).status_code == 200
    assert (await frozen_api.get("/status/acme-ops")).status_code == 200
    read_only = await frozen_api.patch(f"/v1/status-pages/{page['id']}",
                                       headers=team.read_auth, json={"title": "no"})
    assert read_only.status_code == 403
    gone = await frozen_api.delete(f"/v1/status-pages/{page['id']}", headers=team.auth)
    assert gone.status_code == 204
    assert (await frozen_api.get(f"/status/{new}")).status_code == 404
    assert (await frozen_api.get("/status/acme-ops")).status_code == 404
    assert (await frozen_api.get(f"/v1/status-pages/{page['id']}",
                                 headers=team.auth)).status_code == 404
    events = await _events(pool, page["id"])
    assert [e["event_type"] for e in events] == [
        "status_page.created", "status_page.updated", "status_page.updated",
        "status_page.deleted"]
    assert events[1]["data"]["changes"] == {"tags": [], "components": [str(job)],
                                            "path": "acme-ops"}
    assert set(events[2]["data"]["changes"]) == {"key_hash"}


async def test_field_messages(frozen_api: AsyncTestClient, pool: ConnectionPool,
                              team: Team) -> None:
    job, _ = await _subjects(pool, team)
    other = uuid.uuid4()

    async def refused(body: dict[str, Any]) -> list[str]:
        answer = await frozen_api.post("/v1/status-pages", headers=team.auth, json=body)
        assert answer.status_code == 422, answer.text
        return [e["field"] for e in answer.json()["errors"]]

    assert await refused({"title": "x", "tags": ["a"], "components": [str(job)]}) == [
        "components"]
    assert await refused({"title": "x"}) == ["components"]
    assert await refused({"title": "x", "components": [str(job), str(other)]}) == [
        "components.1"]
    assert await refused({"title": "x", "components": [str(job)],
                          "names": {str(other): "n"}}) == [f"names.{other}"]
    assert await refused({"title": "x", "tags": ["a"], "path": "Bad_Path"})
    first = await frozen_api.post("/v1/status-pages", headers=team.auth,
                                  json={"title": "x", "tags": ["a"], "path": "taken-path"})
    assert first.status_code == 201
    again = await frozen_api.post("/v1/status-pages", headers=team.auth,
                                  json={"title": "y", "tags": ["a"], "path": "taken-path"})
    assert again.status_code == 409 and "path" in again.json()["detail"]


async def test_a_note_on_an_incident_is_an_event_of_the_alert(
        frozen_api: AsyncTestClient, pool: ConnectionPool, team: Team) -> None:
    _, monitor = await _subjects(pool, team)
    down, up = uuid.uuid4(), uuid.uuid4()
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO alerts (id, team_id, subject_type, subject_id, event, title, "
            "created_at) VALUES (%s, %s, 'monitor', %s, 'down', 't', %s), "
            "(%s, %s, 'monitor', %s, 'up', 't', %s)",
            (down, team.actor.team_id, monitor, T0, up, team.actor.team_id, monitor, T0))
    put = await frozen_api.put(f"/v1/alerts/{down}/note", headers=team.auth,
                               json={"note": "The queue host is being replaced."})
    assert put.status_code == 200, put.text
    assert put.json() == {"alert_id": str(down), "note": "The queue host is being replaced."}
    refused = await frozen_api.put(f"/v1/alerts/{up}/note", headers=team.auth,
                                   json={"note": "x"})
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "alert"
    assert (await frozen_api.put(f"/v1/alerts/{uuid.uuid4()}/note", headers=team.auth,
                                 json={"note": "x"})).status_code == 404
    cleared = await frozen_api.put(f"/v1/alerts/{down}/note", headers=team.auth,
                                   json={"note": None})
    assert cleared.json()["note"] is None
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT event_type, stream_version, data FROM events WHERE "
                                 "stream_id = %s ORDER BY stream_version", (down,))
        events = await cur.fetchall()
    assert [(e["event_type"], e["stream_version"]) for e in events] == [
        ("alert.noted", 2), ("alert.noted", 3)]
    assert events[1]["data"] == {"note": None}
