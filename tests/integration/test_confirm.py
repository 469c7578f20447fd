"""Fire-and-confirm (docs/ledger.md): a 2xx leaves the run awaiting confirmation
until its one-time URL is pinged (success, /fail, exit status) or the timeout fails it
``unconfirmed``, alerting like any failed run.

Real PostgreSQL, a real local HTTP sink, the API app on the same database, a frozen clock.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from litestar.testing import AsyncTestClient

from api.app import create_app
from core.actor import Actor
from core.apikeys import create_api_key
from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool
from core.runs.claim import claim_due
from core.runs.confirm import HEADER, ConfirmTimeouts, confirm
from core.runs.recorder import Recorder
from core.runs.worker import Worker
from tests.helpers import add_job, run_events, runs_of
from tests.sink import Sink
from tests.teams import Team

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
SLOT = T0 + timedelta(minutes=1)


@pytest.fixture
async def app(fresh_dsn: str, settings: Settings,
              clock: FrozenClock) -> AsyncIterator[AsyncTestClient]:
    async with AsyncTestClient(app=create_app(fresh_dsn, settings, clock),
                               raise_server_exceptions=False) as client:
        yield client


async def _job(pool: ConnectionPool, sink: Sink, sealer: AesGcmSealer,
               timeout: int = 60) -> tuple[Actor, str, uuid.UUID]:
    key, record = await create_api_key(pool, f"team-{uuid.uuid4().hex[:8]}")
    actor = Actor(team_id=record["team_id"], key_id=record["id"])
    slack, _ = await create_channel(pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url("/services/T/B/C")}, T0)
    job = await add_job(pool, actor, T0, sink.url("/work"), "* * * * *",
                        confirm={"timeout_seconds": timeout}, channels=[str(slack)])
    return actor, key, job


async def _fire(worker: Worker, clock: FrozenClock, sink: Sink) -> str:
    """Run the slot; the path of the confirmation URL the attempt carried."""
    clock.set(SLOT)
    await worker.run_once()
    await worker.settle()
    [hit] = sink.hits_for("/work")
    url = hit.headers[HEADER]
    assert url.startswith("http://127.0.0.1:8000/ping/run/")
    return urlsplit(url).path


async def _alerts(pool: ConnectionPool, job: uuid.UUID) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT event, status FROM notifications WHERE subject_id = %s",
                                 (job,))
        return await cur.fetchall()


async def test_confirmed_run_succeeds_with_its_duration_and_the_token_is_single_use(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer, app: AsyncTestClient,
) -> None:
    _, key, job = await _job(fresh_pool, sink, sealer)
    path = await _fire(worker, clock, sink)
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "awaiting_confirmation" and run["response_status"] == 200
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT request FROM run_attempts WHERE run_id = %s",
                                 (run["id"],))
        recorded = (await cur.fetchone())["request"]
        cur = await conn.execute("SELECT token_hash FROM run_confirmations")
        [stored] = await cur.fetchall()
    token = path.rsplit("/", 1)[1]
    assert recorded["headers"][HEADER].endswith("/ping/run/[redacted]")  # never in clear
    assert token.encode() not in bytes(stored["token_hash"])
    clock.set(SLOT + timedelta(seconds=42))
    r = await app.get(path)
    assert (r.status_code, r.text) == (200, "OK")
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "succeeded" and run["error_class"] is None
    assert run["duration_ms"] == 42000 and run["finished_at"] == SLOT + timedelta(seconds=42)
    kinds = [e["event_type"] for e in await run_events(fresh_pool, run["id"])]
    assert kinds == ["run.started", "run.awaiting_confirmation", "run.succeeded"]
    assert (await app.get(path)).status_code == 404  # used
    assert (await app.get(f"{path}/fail")).status_code == 404
    shown = (await app.get(f"/v1/runs/{run['id']}",
                           headers={"Authorization": f"Bearer {key}"})).json()
    assert shown["confirmation"] == "succeeded" and shown["confirmed_at"] is not None
    assert shown["duration_ms"] == 42000
    assert await ConfirmTimeouts(fresh_pool, None, clock).run_once(SLOT + timedelta(hours=1)) == 0
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT confirmation, confirm_duration_ms, lateness_ms "
                                 "FROM reporting.runs WHERE run_id = %s", (run["id"],))
        assert await cur.fetchone() == {"confirmation": "succeeded",
                                        "confirm_duration_ms": 42000, "lateness_ms": 0}


async def test_confirm_fail_and_exit_status_fail_the_run_and_alert(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer, app: AsyncTestClient,
) -> None:
    _, _, job = await _job(fresh_pool, sink, sealer)
    path = await _fire(worker, clock, sink)
    assert (await app.get(f"{path}/start")).status_code == 400
    assert (await app.get(f"{path}/256")).status_code == 400
    assert (await app.post(f"{path}/3")).status_code == 200
    [run] = await runs_of(fresh_pool, job)
    assert (run["status"], run["error_class"]) == ("failed", "reported_failure")
    assert "exit status 3" in run["error"]
    assert await _alerts(fresh_pool, job) == [{"event": "failed", "status": "pending"}]
    assert (await app.get(f"{path}/fail")).status_code == 404


async def test_unconfirmed_run_fails_at_the_timeout_and_alerts(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer, app: AsyncTestClient,
) -> None:
    _, _, job = await _job(fresh_pool, sink, sealer, timeout=300)
    path = await _fire(worker, clock, sink)
    timeouts = ConfirmTimeouts(fresh_pool, None, clock)
    deadline = await timeouts.next_deadline()
    assert deadline is not None and SLOT + timedelta(seconds=300) <= deadline \
        < SLOT + timedelta(seconds=301)
    assert await timeouts.run_once(deadline - timedelta(seconds=1)) == 0
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "awaiting_confirmation"
    assert await _alerts(fresh_pool, job) == []
    # A new service (a restart) finds the deadline in the database.
    assert await ConfirmTimeouts(fresh_pool, None, clock).run_once(deadline) == 1
    [run] = await runs_of(fresh_pool, job)
    assert (run["status"], run["error_class"]) == ("failed", "unconfirmed")
    assert await _alerts(fresh_pool, job) == [{"event": "failed", "status": "pending"}]
    assert await timeouts.next_deadline() is None
    assert (await app.get(path)).status_code == 404  # too late
    events = await run_events(fresh_pool, run["id"])
    assert events[-1]["event_type"] == "run.failed"
    assert events[-1]["data"]["confirmation"]["outcome"] == "unconfirmed"


async def test_a_confirmation_before_the_2xx_is_recorded_is_applied_then(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    _, _, job = await _job(fresh_pool, sink, sealer)
    _, [dispatch] = await claim_due(fresh_pool, SLOT, limit=10, lookahead=0,
                                    worker_id="w", lease_margin=5)
    assert dispatch.confirm_token
    assert await confirm(fresh_pool, dispatch.confirm_token, failed=False, exit_status=None,
                         now=SLOT) == "running"
    assert await confirm(fresh_pool, dispatch.confirm_token, failed=False, exit_status=None,
                         now=SLOT) is None  # used
    clock.set(SLOT)
    result = await worker.executor.send(dispatch)
    assert await Recorder(fresh_pool).record([result], SLOT) == 1
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "succeeded"


async def test_confirm_input_is_checked(
    frozen_api: AsyncTestClient, team: Team,
) -> None:
    base = {"name": "c", "schedule": "* * * * *", "request": {"url": "https://example.com/"}}
    for confirm_body in ({"timeout_seconds": 0}, {}, {"timeout_seconds": 10**9},
                         {"timeout_seconds": 5, "x": 1}, 5):
        r = await frozen_api.post("/v1/jobs", headers=team.auth,
                                  json={**base, "confirm": confirm_body})
        assert r.status_code in (400, 422), (confirm_body, r.text)
    r = await frozen_api.post("/v1/jobs", headers=team.auth,
                              json={**base, "request": {**base["request"], "headers": {
                                  "X-Cronledger-Confirm-URL": "x"}}})
    assert r.status_code == 422
    r = await frozen_api.post("/v1/jobs", headers=team.auth,
                              json={**base, "confirm": {"timeout_seconds": 30}})
    assert r.status_code == 201 and r.json()["confirm"] == {"timeout_seconds": 30}
    url = f"/v1/jobs/{r.json()['id']}"
    r = await frozen_api.patch(url, headers=team.auth, json={"confirm": None})
    assert r.status_code == 200 and r.json()["confirm"] is None
    for path in ("/ping/run/short", "/ping/run/" + "a" * 43, "/ping/run/"):
        assert (await frozen_api.get(path)).status_code == 404


async def test_confirmation_urls_and_maintenance_routes_are_documented(
    frozen_api: AsyncTestClient,
) -> None:
    paths = (await frozen_api.get("/schema/openapi.json")).json()["paths"]
    for prefix in ("/ping", "/v1/ping"):
        for suffix in ("", "/fail", "/{exit_status}"):
            item = paths[f"{prefix}/run/{{token}}{suffix}"]
            assert set(item) == {"get", "post", "head"}
            for op in item.values():
                assert op["security"] == [] and {"200", "400", "404", "503"} <= set(
                    op["responses"])
    create = paths["/v1/maintenance"]["post"]["responses"]
    assert {"201", "401", "403", "422", "503"} <= set(create)
    assert "404" in paths["/v1/monitors/{monitor_id}/snooze"]["post"]["responses"]
    assert "409" in paths["/v1/maintenance/{window_id}/end"]["post"]["responses"]
