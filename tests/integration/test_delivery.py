"""Retries, Retry-After, secrets and signing through the whole path: API -> claim -> send ->
record -> ``GET /v1/runs/{id}``, on a frozen clock against a real local HTTP server."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from api.app import create_app
from core.apikeys import create_api_key
from core.backoff import backoff_delay, parse_retry_after, retry_delay
from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool
from core.jobs.definition import normalize_definition
from core.runs.worker import Worker
from tests.helpers import make_worker, runs_of
from tests.sink import Reply, Sink

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


class Top(random.Random):
    """A "random" source that always draws the upper bound (full jitter's worst case)."""

    def uniform(self, a: float, b: float) -> float:
        return b


# -- backoff ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "expected"), [
    ("exponential", [10, 20, 40, 80, 100, 100]),
    ("linear", [10, 20, 30, 40, 50, 60]),
    ("fixed", [10, 10, 10, 10, 10, 10]),
])
def test_backoff_kinds_are_capped(kind: str, expected: list[float]) -> None:
    retry = {"backoff": kind, "delay_seconds": 10, "max_delay_seconds": 100}
    assert [backoff_delay(retry, n, Top()) for n in range(1, 7)] == expected


def test_full_jitter_stays_between_zero_and_the_delay() -> None:
    retry = {"backoff": "exponential", "delay_seconds": 10, "max_delay_seconds": 1000}
    rng = random.Random(7)
    draws = [backoff_delay(retry, 3, rng) for _ in range(500)]
    assert all(0 <= d <= 40 for d in draws)
    assert min(draws) < 10 and max(draws) > 30  # spread over the range, not a constant


def test_unknown_backoff_falls_back_to_fixed() -> None:
    job = normalize_definition({"name": "j", "schedule": "* * * * *",
                                "request": {"url": "http://h/x"},
                                "retry": {"backoff": "fibonacci", "attempts": 3}},
                               anchor=T0, now=T0)
    assert job["retry"]["backoff"] == "fixed"


def test_retry_after_forms() -> None:
    assert parse_retry_after("120", T0) == 120
    assert parse_retry_after(format_datetime(T0 + timedelta(seconds=90), usegmt=True), T0) == 90
    assert parse_retry_after(format_datetime(T0 - timedelta(hours=1), usegmt=True), T0) == 0
    assert parse_retry_after("soon", T0) is None and parse_retry_after(None, T0) is None
    retry = {"backoff": "fixed", "delay_seconds": 5, "max_delay_seconds": 60}
    assert retry_delay(retry, 1, 429, "30", T0, Top()) == 30
    assert retry_delay(retry, 1, 503, "3600", T0, Top()) == 60  # capped
    assert retry_delay(retry, 1, 500, "30", T0, Top()) == 5  # only on 429 and 503
    assert retry_delay(retry, 1, 429, "garbage", T0, Top()) == 5


# -- the whole path -----------------------------------------------------------------------------
@pytest.fixture
async def api(fresh_dsn: str, settings: Settings, clock: FrozenClock,
              fresh_pool: ConnectionPool) -> AsyncIterator[tuple[AsyncTestClient, dict]]:
    """The API on this test's own database and clock, with a write key's headers."""
    key, _ = await create_api_key(fresh_pool, "delivery")
    async with AsyncTestClient(app=create_app(fresh_dsn, settings, clock),
                               raise_server_exceptions=False) as client:
        yield client, {"Authorization": f"Bearer {key}"}


async def _rows(pool: ConnectionPool, sql: str) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        return await (await conn.execute(sql)).fetchall()


async def tick(worker: Worker, clock: FrozenClock, at: datetime) -> None:
    clock.set(at)
    await worker.run_once()
    await worker.settle()


async def _job(client: AsyncTestClient, auth: dict, **body: Any) -> dict[str, Any]:
    payload = {"name": "delivery", "schedule": "0 0 1 1 *", **body}
    r = await client.post("/v1/jobs", json=payload, headers=auth)
    assert r.status_code == 201, r.text
    return r.json()


async def _trigger(client: AsyncTestClient, auth: dict, job: dict[str, Any]) -> str:
    r = await client.post(f"/v1/jobs/{job['id']}/trigger", headers=auth)
    assert r.status_code == 202, r.text
    return r.json()["id"]


async def test_retry_after_is_honoured_and_capped(
    api: tuple[AsyncTestClient, dict], worker: Worker, clock: FrozenClock, sink: Sink,
    fresh_pool: ConnectionPool,
) -> None:
    client, auth = api
    clock.set(T0)
    date = format_datetime(T0 + timedelta(seconds=120 + 3600), usegmt=True)
    sink.reply("/busy", Reply(status=429, headers={"Retry-After": "120"}),
               Reply(status=503, headers={"Retry-After": date}), Reply(status=200))
    job = await _job(client, auth, request={"url": sink.url("/busy")},
                     retry={"attempts": 3, "backoff": "fixed", "delay_seconds": 1,
                            "max_delay_seconds": 600})
    run_id = await _trigger(client, auth, job)
    await tick(worker, clock, T0)
    [run] = await runs_of(fresh_pool, job["id"])
    assert (run["status"], run["attempt"]) == ("queued", 1)
    assert run["available_at"] == T0 + timedelta(seconds=120)  # seconds form, no jitter
    await tick(worker, clock, T0 + timedelta(seconds=119))
    assert len(sink.hits) == 1  # not before Retry-After
    await tick(worker, clock, T0 + timedelta(seconds=120))
    [run] = await runs_of(fresh_pool, job["id"])
    # HTTP-date form, one hour away, capped at max_delay_seconds.
    assert run["available_at"] == T0 + timedelta(seconds=120 + 600)
    await tick(worker, clock, T0 + timedelta(seconds=720))
    detail = (await client.get(f"/v1/runs/{run_id}", headers=auth)).json()
    assert detail["status"] == "succeeded" and detail["attempt"] == 3
    assert [a["response"]["status"] for a in detail["attempts"]] == [429, 503, 200]
    assert [a["error_class"] for a in detail["attempts"]] == ["http_status", "http_status", None]
    assert [a["lateness_ms"] for a in detail["attempts"]] == [0, 0, 0]
    assert detail["attempts"][0]["response"]["headers"]["Retry-After"] == "120"
    assert {h.headers["Idempotency-Key"] for h in sink.hits} == {run_id}


async def test_run_detail_shows_every_attempt_fully(
    api: tuple[AsyncTestClient, dict], worker: Worker, clock: FrozenClock, sink: Sink,
) -> None:
    client, auth = api
    clock.set(T0)
    sink.reply("/flaky", Reply(status=500, body=b"\xff\xfe binary"),
               Reply(close=True), Reply(status=200, body=b"x" * 5000))
    job = await _job(client, auth, request={"url": sink.url("/flaky"), "method": "POST",
                                            "body": "payload",
                                            "headers": {"Authorization": "Bearer literal"}},
                     retry={"attempts": 3, "backoff": "linear", "delay_seconds": 10,
                            "max_delay_seconds": 10})
    run_id = await _trigger(client, auth, job)
    await tick(worker, clock, T0 + timedelta(milliseconds=250))
    for step in (20, 40):  # jitter keeps each delay under 10 s
        await tick(worker, clock, T0 + timedelta(seconds=step))
    detail = (await client.get(f"/v1/runs/{run_id}", headers=auth)).json()
    assert detail["status"] == "succeeded" and len(detail["attempts"]) == 3
    first, second, third = detail["attempts"]
    assert first["attempt"] == 1 and first["lateness_ms"] == 250
    assert first["request"]["method"] == "POST" and first["request"]["body"] == "payload"
    assert first["request"]["headers"]["Authorization"] == "[redacted]"
    assert first["request"]["headers"]["X-Cronledger-Attempt"] == "1"
    assert first["response"]["status"] == 500 and first["response"]["body_encoding"] == "base64"
    assert (first["error_class"], first["error"]) == ("http_status", "HTTP 500")
    assert second["response"] is None and second["error_class"] == "connect"
    assert second["request"]["headers"]["X-Cronledger-Attempt"] == "2"
    assert third["error_class"] is None and third["response"]["truncated"] is False
    assert len(third["response"]["body"]) == 5000
    for attempt in detail["attempts"]:
        assert attempt["worker_id"] == "test-worker"  # make_worker's id
        started, finished = (datetime.fromisoformat(attempt[k])
                             for k in ("started_at", "finished_at"))
        assert started <= finished
        assert attempt["duration_ms"] >= 0
    assert detail["lateness_ms"] == 250


async def test_body_limit_setting_truncates_recorded_bodies(
    fresh_pool: ConnectionPool, fresh_dsn: str, settings: Settings, clock: FrozenClock,
    sink: Sink, api: tuple[AsyncTestClient, dict],
) -> None:
    from dataclasses import replace

    client, auth = api
    small = make_worker(fresh_pool, fresh_dsn, replace(settings, response_body_limit=100), clock)
    try:
        clock.set(T0)
        sink.reply("/big", Reply(body=b"z" * 10_000))
        job = await _job(client, auth, request={"url": sink.url("/big")})
        run_id = await _trigger(client, auth, job)
        await tick(small, clock, T0)
    finally:
        await small.executor.aclose()
    [attempt] = (await client.get(f"/v1/runs/{run_id}", headers=auth)).json()["attempts"]
    assert attempt["response"]["truncated"] is True and attempt["response"]["body"] == "z" * 100


async def test_secrets_and_signing_through_the_claim(
    api: tuple[AsyncTestClient, dict], worker: Worker, clock: FrozenClock, sink: Sink,
    fresh_pool: ConnectionPool,
) -> None:
    client, auth = api
    clock.set(T0)
    for name, value in (("TOKEN", "tok-value-5521"), ("PASSWORD", "pw-value-9034")):
        r = await client.put(f"/v1/secrets/{name}", json={"value": value}, headers=auth)
        assert r.status_code == 201, r.text
    job = await _job(client, auth, signing_secret="sign-me-please-0123", request={
        "url": sink.url("/s") + "?t=${secrets.TOKEN}", "method": "POST",
        "headers": {"Authorization": "Bearer ${secrets.TOKEN}"},
        "body": "p=${secrets.PASSWORD}"})
    assert job["signing"] is True and "signing_secret" not in job
    [row] = await _rows(fresh_pool, "SELECT secret_names, signing FROM jobs")
    assert row == {"secret_names": ["PASSWORD", "TOKEN"], "signing": True}
    run_id = await _trigger(client, auth, job)
    await tick(worker, clock, T0)
    [hit] = sink.hits
    assert hit.headers["Authorization"] == "Bearer tok-value-5521"
    assert hit.body == b"p=pw-value-9034"
    assert hit.headers["X-Cronledger-Signature"].startswith(f"t={int(T0.timestamp())},v1=")
    [attempt] = (await client.get(f"/v1/runs/{run_id}", headers=auth)).json()["attempts"]
    assert attempt["error_class"] is None
    assert attempt["request"]["url"].endswith("?t=${secrets.TOKEN}")
    assert attempt["request"]["body"] == "p=${secrets.PASSWORD}"
    assert attempt["request"]["headers"]["Authorization"] == "Bearer ${secrets.TOKEN}"
    # A replaced secret is used from the next claim on.
    await client.put("/v1/secrets/TOKEN", json={"value": "tok-value-rotated"}, headers=auth)
    await _trigger(client, auth, job)
    await tick(worker, clock, T0 + timedelta(seconds=1))
    assert sink.hits[-1].headers["Authorization"] == "Bearer tok-value-rotated"


async def test_missing_secret_fails_the_run_at_once(
    api: tuple[AsyncTestClient, dict], worker: Worker, clock: FrozenClock, sink: Sink,
) -> None:
    client, auth = api
    clock.set(T0)
    job = await _job(client, auth, request={"url": sink.url("/m"),
                                            "headers": {"X-Key": "${secrets.LATER}"}},
                     retry={"attempts": 5, "backoff": "fixed", "delay_seconds": 1})
    run_id = await _trigger(client, auth, job)
    await tick(worker, clock, T0)
    run = (await client.get(f"/v1/runs/{run_id}", headers=auth)).json()
    assert run["status"] == "failed" and run["attempt"] == 1  # not retried
    assert run["error_class"] == "secret"
    assert run["error"] == "secret LATER is not defined for this team " \
                           "(create it with PUT /v1/secrets/LATER)"
    assert sink.hits == []
    await client.put("/v1/secrets/LATER", json={"value": "now-it-exists"}, headers=auth)
    again = await _trigger(client, auth, job)
    await tick(worker, clock, T0 + timedelta(seconds=1))
    assert (await client.get(f"/v1/runs/{again}", headers=auth)).json()["status"] == "succeeded"
    assert sink.hits[0].headers["X-Key"] == "now-it-exists"


async def test_signing_can_be_replaced_and_removed(
    api: tuple[AsyncTestClient, dict], worker: Worker, clock: FrozenClock, sink: Sink,
    fresh_pool: ConnectionPool,
) -> None:
    client, auth = api
    clock.set(T0)
    job = await _job(client, auth, request={"url": sink.url("/sig")})
    assert job["signing"] is False
    url = f"/v1/jobs/{job['id']}"
    r = await client.patch(url, json={"signing_secret": "first-secret-0000"}, headers=auth)
    assert r.status_code == 200 and r.json()["signing"] is True
    r = await client.patch(url, json={"signing_secret": "second-secret-000"}, headers=auth)
    assert r.json()["signing"] is True and r.json()["version"] == 3
    await _trigger(client, auth, job)
    await tick(worker, clock, T0)
    r = await client.patch(url, json={"signing_secret": None}, headers=auth)
    assert r.json()["signing"] is False
    await _trigger(client, auth, job)
    await tick(worker, clock, T0 + timedelta(seconds=1))
    assert "X-Cronledger-Signature" in sink.hits[0].headers
    assert "X-Cronledger-Signature" not in sink.hits[1].headers
    events = (await client.get(f"{url}/events", headers=auth)).json()["items"]
    assert [e["data"].get("changes", {}).get("signing") for e in events[1:]] == [
        True, True, False]
    assert "secret-0" not in str(events)
    # The projection row is the fold of the stream (signing, secret_names included).
    from uuid import UUID

    from core.events import read_stream
    from core.jobs.state import fold

    async with fresh_pool.connection() as conn:
        row = await (await conn.execute("SELECT * FROM jobs WHERE id = %s", (job["id"],))
                     ).fetchone()
        assert fold(await read_stream(conn, "job", UUID(job["id"]), row["team_id"])).as_row() == row
    assert row["signing"] is False and row["secret_names"] == []
