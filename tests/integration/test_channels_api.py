"""``/v1/channels`` and ``/v1/notifications``: CRUD, redaction, the test endpoint, validation,
team scoping, and jobs' ``channels`` / alert rule fields."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from api.app import create_app
from core.channels.sealing import AesGcmSealer
from core.clock import SystemClock
from core.config import Settings
from core.db import ConnectionPool
from core.events import read_stream
from core.jobs.state import fold
from tests.notifying import DictSecrets, threaded_sink
from tests.sink import Reply, Sink
from tests.teams import Team

SLACK_URL_PATH = "/services/T0001/B0002/XXXXsecretXXXX"


@pytest.fixture
def sink() -> Iterator[Sink]:
    with threaded_sink() as s:
        yield s


@pytest.fixture
def secrets() -> DictSecrets:
    return DictSecrets()


@pytest.fixture
async def napi(shared_dsn: str, settings: Settings, sink: Sink,
               secrets: DictSecrets) -> AsyncIterator[AsyncTestClient]:
    settings = replace(settings, telegram_api_url=sink.url("/tg"))
    app = create_app(shared_dsn, settings, SystemClock(), sealer=AesGcmSealer.random(),
                     secrets=secrets)
    async with AsyncTestClient(app=app, raise_server_exceptions=False) as client:
        yield client


async def _create(api: AsyncTestClient, team: Team, **body: Any) -> dict[str, Any]:
    r = await api.post("/v1/channels", json=body, headers=team.auth)
    assert r.status_code == 201, r.text
    return r.json()


async def _team_text(pool: ConnectionPool, team: Team) -> str:
    """Everything stored for the team in plaintext columns (channels and events)."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT coalesce(jsonb_agg(to_jsonb(c) - 'sealed'), '[]') AS c FROM channels c "
            "WHERE team_id = %(t)s", {"t": team.actor.team_id})
        channels = (await cur.fetchone())["c"]
        cur = await conn.execute(
            "SELECT coalesce(jsonb_agg(data), '[]') AS e FROM events WHERE team_id = %(t)s",
            {"t": team.actor.team_id})
        events = (await cur.fetchone())["e"]
    return json.dumps([channels, events])


async def test_create_read_list_and_redaction(
    napi: AsyncTestClient, team: Team, pool: ConnectionPool, sink: Sink,
) -> None:
    slack = await _create(napi, team, name="ops", kind="slack",
                          url=f"https://hooks.slack.com{SLACK_URL_PATH}")
    assert slack["url"] == "https://hooks.slack.com/[redacted]"
    assert set(slack) == {"id", "name", "kind", "url", "version", "created_at", "updated_at"}
    hook = await _create(napi, team, name="hook", kind="webhook",
                         url="https://user:pw@receiver.example.com/in?token=abc")
    assert hook["url"] == "https://receiver.example.com/[redacted]"
    generated = hook["signing_secret"]
    assert generated.startswith("whsec_") and len(generated) > 40  # shown once
    again = (await napi.get(f"/v1/channels/{hook['id']}", headers=team.read_auth)).json()
    assert again["signing_secret"] == "[redacted]"
    tg = await _create(napi, team, name="tg", kind="telegram", chat_id=-100123,
                       token_secret="TG_TOKEN")
    assert (tg["chat_id"], tg["token_secret"]) == ("-100123", "TG_TOKEN")
    mail = await _create(napi, team, name="mail", kind="email", to="ops@example.com",
                         smtp={"host": "smtp.example.com", "security": "tls",
                               "username": "u", "password_secret": "SMTP"})
    assert mail["to"] == ["ops@example.com"]
    assert mail["smtp"] == {"host": "smtp.example.com", "port": 465, "security": "tls",
                            "username": "u", "password_secret": "SMTP", "from": None}
    page = (await napi.get("/v1/channels", params={"limit": 3}, headers=team.auth)).json()
    rest = (await napi.get("/v1/channels", params={"cursor": page["next_cursor"]},
                           headers=team.auth)).json()
    assert [c["id"] for c in page["items"] + rest["items"]] == [
        slack["id"], hook["id"], tg["id"], mail["id"]]
    stored = await _team_text(pool, team)
    for secret in ("XXXXsecretXXXX", "token=abc", ":pw@", generated):
        assert secret not in stored
    kinds = [e["event_type"] for e in await _events(pool, team, slack["id"])]
    assert kinds == ["channel.created"]


async def _events(pool: ConnectionPool, team: Team,
                  stream_id: str) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        return await read_stream(conn, "channel", uuid.UUID(stream_id), team.actor.team_id)


async def test_patch_delete_and_test_endpoint(
    napi: AsyncTestClient, team: Team, pool: ConnectionPool, sink: Sink,
) -> None:
    sink.reply("/slack-old", Reply(status=404, body=b"no_service"))
    slack = await _create(napi, team, name="ops", kind="slack", url=sink.url("/slack-old"))
    url = f"/v1/channels/{slack['id']}"
    r = await napi.post(f"{url}/test", headers=team.auth)
    assert r.status_code == 200, r.text
    result = r.json()
    assert result["ok"] is False and result["status"] == 404
    assert result["answer"] == "no_service" and result["error_class"] == "http_status"
    r = await napi.patch(url, json={"url": sink.url("/slack-new"), "name": "ops-2"},
                         headers=team.auth)
    assert r.status_code == 200, r.text
    assert r.json()["name"] == "ops-2"
    # The stored kind decides: another kind, or another kind's field, is a conflict with it.
    changed = await napi.patch(url, json={"kind": "discord"}, headers=team.auth)
    assert changed.status_code == 409 and changed.json()["errors"][0]["field"] == "kind"
    foreign = await napi.patch(url, json={"chat_id": 1}, headers=team.auth)
    assert foreign.status_code == 409 and foreign.json()["errors"][0]["field"] == "chat_id"
    stale = await napi.patch(url, json={"name": "x", "version": 1}, headers=team.auth)
    assert stale.status_code == 409
    r = await napi.post(f"{url}/test", headers=team.auth)
    assert r.json() | {"duration_ms": 0} == {"ok": True, "status": 200, "answer": "ok",
                                            "error_class": None, "error": None,
                                            "duration_ms": 0}
    [hit] = sink.hits_for("/slack-new")
    payload = json.loads(hit.body)
    assert payload["blocks"][0]["text"]["text"] == "Test notification from cronledger"
    assert "ops-2" in payload["blocks"][1]["text"]["text"]
    kinds = [e["event_type"] for e in await _events(pool, team, slack["id"])]
    assert kinds == ["channel.created", "channel.tested", "channel.updated", "channel.tested"]
    assert (await napi.delete(url, headers=team.auth)).status_code == 204
    assert (await napi.get(url, headers=team.auth)).status_code == 404
    assert (await napi.post(f"{url}/test", headers=team.auth)).status_code == 404
    # The name is free again.
    await _create(napi, team, name="ops-2", kind="slack", url=sink.url("/x"))


async def test_telegram_test_uses_the_team_secret(
    napi: AsyncTestClient, team: Team, sink: Sink, secrets: DictSecrets,
) -> None:
    tg = await _create(napi, team, name="tg", kind="telegram", chat_id="12345",
                       token_secret="BOT")
    r = await napi.post(f"/v1/channels/{tg['id']}/test", headers=team.auth)
    assert r.json()["ok"] is False and "BOT" in r.json()["error"]
    secrets.put(team.actor.team_id, "BOT", "999:secret-token")
    sink.reply("/tg/bot999:secret-token/sendMessage",
               Reply(body=b'{"ok":true,"result":{"message_id":1}}'))
    r = await napi.post(f"/v1/channels/{tg['id']}/test", headers=team.auth)
    assert r.json()["ok"] is True, r.text
    [hit] = sink.hits
    assert json.loads(hit.body)["chat_id"] == 12345


BAD = [
    ({"name": "x", "kind": "pager"}, "kind"),
    ({"name": "", "kind": "slack", "url": "https://h/x"}, "name"),
    ({"name": "x", "kind": "slack"}, "url"),
    ({"name": "x", "kind": "slack", "url": "ftp://h/x"}, "url"),
    ({"name": "x", "kind": "webhook", "url": "http://[::1/"}, "url"),
    ({"name": "x", "kind": "webhook", "url": "http://[foo]/"}, "url"),
    ({"name": "x", "kind": "webhook", "url": "http://[::1]]/"}, "url"),
    ({"name": "x", "kind": "slack", "url": "https://h/x", "chat_id": 1}, "chat_id"),
    ({"name": "x", "kind": "webhook", "url": "https://h/x", "signing_secret": "short"},
     "signing_secret"),
    ({"name": "x", "kind": "telegram", "chat_id": "not a chat", "token_secret": "T"},
     "chat_id"),
    ({"name": "x", "kind": "telegram", "chat_id": 1, "token_secret": "bad name!"},
     "token_secret"),
    ({"name": "x", "kind": "email", "to": "nobody"}, "to.0"),
    ({"name": "x", "kind": "email", "to": []}, "to"),
    ({"name": "x", "kind": "email", "to": "a@b.co", "smtp": {"host": "h", "port": 0}},
     "smtp.port"),
    ({"name": "x", "kind": "email", "to": "a@b.co", "smtp": {"host": "h", "tls": True}},
     "smtp.tls"),
    ({"name": "x", "kind": "slack", "url": "https://h/x", "extra": 1}, "extra"),
]


@pytest.mark.parametrize(("body", "field"), BAD)
async def test_bad_channels_are_rejected_and_change_nothing(
    napi: AsyncTestClient, team: Team, pool: ConnectionPool,
    body: dict[str, Any], field: str,
) -> None:
    before = await _team_text(pool, team)
    r = await napi.post("/v1/channels", json=body, headers=team.auth)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert field in [e["field"] for e in r.json()["errors"]], r.json()
    assert await _team_text(pool, team) == before


async def test_duplicate_name_scoping_and_auth(
    napi: AsyncTestClient, team: Team, pool: ConnectionPool,
) -> None:
    from core.apikeys import create_api_key

    ch = await _create(napi, team, name="dup", kind="slack", url="https://h/x")
    r = await napi.post("/v1/channels", json={"name": "dup", "kind": "slack",
                                              "url": "https://h/y"}, headers=team.auth)
    assert r.status_code == 409
    assert (await napi.post("/v1/channels", json={"name": "r", "kind": "slack",
                                                  "url": "https://h/y"},
                            headers=team.read_auth)).status_code == 403
    assert (await napi.get("/v1/channels")).status_code == 401
    other, _ = await create_api_key(pool, f"other-{uuid.uuid4().hex[:8]}")
    auth = {"Authorization": f"Bearer {other}"}
    url = f"/v1/channels/{ch['id']}"
    for method, path in (("GET", url), ("PATCH", url), ("DELETE", url),
                         ("POST", f"{url}/test")):
        r = await napi.request(method, path, headers=auth,
                               json={"name": "x"} if method == "PATCH" else None)
        assert r.status_code == 404, (method, path)
    assert (await napi.get("/v1/notifications", params={"status": "lost"},
                           headers=team.auth)).status_code == 422


async def test_no_secret_key_is_a_clear_503(
    shared_dsn: str, settings: Settings, team: Team,
) -> None:
    app = create_app(shared_dsn, replace(settings, secret_key=""), SystemClock())
    async with AsyncTestClient(app=app, raise_server_exceptions=False) as api:
        r = await api.post("/v1/channels", json={"name": "s", "kind": "slack",
                                                 "url": "https://h/x"}, headers=team.auth)
        assert r.status_code == 503 and "CRONLEDGER_SECRET_KEY" in r.json()["detail"]
        r = await api.post("/v1/channels", json={"name": "t", "kind": "telegram",
                                                 "chat_id": 1, "token_secret": "T"},
                           headers=team.auth)
        assert r.status_code == 201  # nothing to seal: the token is a team secret


async def test_job_channels_and_alert_rules(
    napi: AsyncTestClient, team: Team, pool: ConnectionPool,
) -> None:
    ch = await _create(napi, team, name="c", kind="slack", url="https://h/x")
    job = {"name": "j", "schedule": "0 3 * * *",
           "request": {"url": "http://127.0.0.1:9/x"}}
    r = await napi.post("/v1/jobs", json={**job, "channels": [ch["id"]],
                                          "alert_after_failures": 3, "realert_every": "1h30m"},
                        headers=team.auth)
    assert r.status_code == 201, r.text
    created = r.json()
    assert (created["channels"], created["alert_after_failures"],
            created["realert_every"]) == ([ch["id"]], 3, 5400)
    plain = (await napi.post("/v1/jobs", json={**job, "name": "j2"},
                             headers=team.auth)).json()
    assert (plain["channels"], plain["alert_after_failures"], plain["realert_every"]) == (
        [], 1, None)
    for body, field in (({"channels": [str(uuid.uuid4())]}, "channels.0"),
                        ({"channels": ["nope"]}, "channels"),
                        ({"alert_after_failures": 0}, "alert_after_failures"),
                        ({"realert_every": "5s"}, "realert_every"),
                        ({"realert_every": "often"}, "realert_every")):
        r = await napi.post("/v1/jobs", json={**job, **body}, headers=team.auth)
        assert r.status_code == 422, (body, r.text)
        assert any(e["field"].startswith(field) for e in r.json()["errors"]), r.json()
    url = f"/v1/jobs/{created['id']}"
    r = await napi.patch(url, json={"realert_every": None, "channels": []},
                         headers=team.auth)
    assert r.status_code == 200, r.text
    assert (r.json()["realert_every"], r.json()["channels"]) == (None, [])
    async with pool.connection() as conn:
        events = await read_stream(conn, "job", uuid.UUID(created["id"]),
                                   team.actor.team_id)
        cur = await conn.execute("SELECT * FROM jobs WHERE id = %s", (created["id"],))
        row = await cur.fetchone()
    assert fold(events).as_row() == row


async def test_notifications_list_shows_outbox_rows(
    napi: AsyncTestClient, team: Team, pool: ConnectionPool,
) -> None:
    from datetime import UTC, datetime

    from core.db import transaction
    from core.maintenance.queries import held_alerts
    from core.notifications.outbox import enqueue_monitor_alert

    ch = await _create(napi, team, name="c", kind="slack", url="https://h/x")
    now = datetime.now(UTC)
    async with transaction(pool) as conn:
        [nid] = await enqueue_monitor_alert(
            conn, team_id=team.actor.team_id, monitor_id=uuid.uuid4(), monitor_name="m",
            channel_ids=[uuid.UUID(ch["id"])], event="down", since=now, last_ping=None,
            now=now, hold=held_alerts)
    page = (await napi.get("/v1/notifications", params={"status": "pending"},
                           headers=team.read_auth)).json()
    assert [n["id"] for n in page["items"]] == [str(nid)]
    one = (await napi.get(f"/v1/notifications/{nid}", headers=team.auth)).json()
    assert one["event"] == "down" and one["message"]["title"] == "Monitor \u201cm\u201d is down"
    assert (await napi.get("/v1/notifications", params={"channel_id": ch["id"],
                                                        "status": "sent"},
                           headers=team.auth)).json()["items"] == []
