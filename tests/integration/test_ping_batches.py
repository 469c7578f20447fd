"""Batched pings: one statement folding many pings per monitor must give exactly what the same
pings give one by one; the batcher groups concurrent pings and keeps each monitor's order."""

from __future__ import annotations

import asyncio
import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.db import ConnectionPool
from core.monitors import commands
from core.monitors.batcher import PingBatcher
from core.monitors.definition import cached_schedule
from core.monitors.ping import Ping, PingPool, open_ping_pool, record_ping, record_pings
from core.monitors.rules import timing
from core.monitors.state import MonitorState
from tests.helpers import new_actor
from tests.monitor_helpers import add_monitor, monitor_row, stream

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
DEFINITIONS = [
    {"schedule": "1m", "grace_seconds": 30},
    {"schedule": "*/5 * * * *", "timezone": "Europe/Paris"},
    {"schedule": "1h", "methods": "post"},
    {"schedule": "10m", "manual_resume": True, "paused": True},
    {"schedule": "10m", "paused": True},
]
# Columns that differ between two copies of the same history. alert_at is only ever moved
# earlier by pings, so one by one it also keeps deadlines of intermediate states (checked apart).
IDENTITY = {"id", "team_id", "ping_token_hash", "name", "alert_at"}


async def _copy_of_monitors(pool: ConnectionPool) -> tuple[list[uuid.UUID], list[str]]:
    actor = await new_actor(pool)
    ids, tokens = [], []
    for i, definition in enumerate(DEFINITIONS):
        fields = dict(definition)
        paused = fields.pop("paused", False)
        monitor, token = await add_monitor(pool, actor, T0, name=f"m{i}", **fields)
        if paused:
            await commands.set_paused(pool, actor, monitor, True, T0)
        ids.append(monitor)
        tokens.append(token)
    return ids, tokens


def _script(seed: int) -> list[tuple[int, dict[str, Any]]]:
    """A random sequence of pings: (monitor index or -1 for an unknown token, ping fields)."""
    rng = random.Random(seed)
    rids = [uuid.uuid4() for _ in range(3)]
    script = []
    for _ in range(rng.randint(5, 40)):
        kind = rng.choice(["success", "success", "start", "fail", "log"])
        exit_status = rng.choice([None, None, 0, 1]) if kind in ("success", "fail") else None
        if exit_status is not None:
            kind = "success" if exit_status == 0 else "fail"
        script.append((rng.choice([-1, 0, 0, 1, 2, 3, 4]), {
            "kind": kind, "exit_status": exit_status,
            "rid": rng.choice([None, *rids]), "method": rng.choice(["GET", "POST", "HEAD"]),
            "body": rng.choice([None, b"ok", b"\xff\x00"]), "user_agent": f"n{len(script)}"}))
    return script


def _comparable(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(e["stream_version"], e["event_type"], e["occurred_at"],
             {k: v for k, v in e["data"].items() if k != "ping_token_hash"})
            for e in events]


@pytest.mark.parametrize("seed", range(12))
async def test_a_batch_equals_the_same_pings_one_by_one(
    fresh_pool: ConnectionPool, ping_pool: PingPool, seed: int
) -> None:
    one_by_one, tokens_a = await _copy_of_monitors(fresh_pool)
    batched, tokens_b = await _copy_of_monitors(fresh_pool)
    script = _script(seed)
    unknown = "ee" * 32
    pings = []
    for n, (target, fields) in enumerate(script):
        at = T0 + timedelta(seconds=10 * n + seed)
        size = len(fields["body"] or b"")
        pings.append((target, at, fields, size))
    statuses_a = [await record_ping(ping_pool, Ping(
        token=tokens_a[t] if t >= 0 else unknown, body_size=s, **f), at)
        for t, at, f, s in pings]
    statuses_b = await record_pings(ping_pool, [(Ping(
        token=tokens_b[t] if t >= 0 else unknown, body_size=s, **f), at)
        for t, at, f, s in pings])
    assert statuses_b == statuses_a
    for a, b in zip(one_by_one, batched, strict=True):
        row_a, row_b = await monitor_row(fresh_pool, a), await monitor_row(fresh_pool, b)
        assert {k: v for k, v in row_a.items() if k not in IDENTITY} == {
            k: v for k, v in row_b.items() if k not in IDENTITY}
        schedule = cached_schedule(row_b["schedule"], row_b["timezone"], row_b["created_at"])
        _, exact = timing(MonitorState.from_row(row_b), schedule, pings[-1][1])
        for row in (row_a, row_b):
            assert exact is None or (row["alert_at"] is not None and row["alert_at"] <= exact)
        assert _comparable(await stream(fresh_pool, a)) == _comparable(
            await stream(fresh_pool, b))
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(
            "SELECT b.monitor_id, b.version, b.body, e.event_type, e.data "
            "FROM monitor_ping_bodies b LEFT JOIN events e "
            "ON e.stream_id = b.monitor_id AND e.stream_version = b.version")
        bodies = await cur.fetchall()
    for row in bodies:  # each body sits at the version of its ping's event
        assert row["event_type"] == "monitor.pinged"
        assert row["data"]["body_size"] == len(row["body"])
    assert len(bodies) == sum(1 for t, _, f, _ in pings if t >= 0 and f["body"]) * 2


async def test_the_batcher_groups_concurrent_pings_and_keeps_their_order(
    fresh_pool: ConnectionPool, ping_pool: PingPool
) -> None:
    actor = await new_actor(fresh_pool)
    monitors = [await add_monitor(fresh_pool, actor, T0, "1h", name=f"m{i}") for i in range(3)]
    batcher = PingBatcher(ping_pool, max_in_flight=2, max_batch=50)
    unknown = "ff" * 32
    calls = []
    for n in range(300):
        token = monitors[n % 3][1] if n % 10 else unknown
        calls.append(batcher.record(Ping(token=token, kind="fail" if n % 7 == 0 else "success",
                                         method="GET", user_agent=str(n)),
                                    T0 + timedelta(milliseconds=n)))
    statuses = await asyncio.gather(*calls)
    assert statuses.count(None) == 30
    assert not batcher.pending and not batcher.busy and batcher.in_flight == 0
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(
            "SELECT count(DISTINCT tx_id) AS statements, count(*) AS pings FROM events "
            "WHERE event_type = 'monitor.pinged'")
        row = await cur.fetchone()
    assert row["pings"] == 270
    assert row["statements"] < 270  # grouped (how much depends on timing; at least some)
    for monitor, _ in monitors:
        pinged = [e for e in await stream(fresh_pool, monitor)
                  if e["event_type"] == "monitor.pinged"]
        arrival = [int(e["data"]["user_agent"]) for e in pinged]
        assert arrival == sorted(arrival) and len(arrival) == 90
        row = await monitor_row(fresh_pool, monitor)
        assert row["version"] == (await stream(fresh_pool, monitor))[-1]["stream_version"]
        assert row["status"] == ("down" if max(arrival) % 7 == 0 else "up")


async def test_a_failed_statement_fails_every_ping_it_carried(
    fresh_dsn: str, fresh_pool: ConnectionPool
) -> None:
    actor = await new_actor(fresh_pool)
    _, token = await add_monitor(fresh_pool, actor, T0)
    pool = await open_ping_pool(fresh_dsn, size=1)
    batcher = PingBatcher(pool)
    await pool.close()
    with pytest.raises(Exception):  # noqa: B017 - whatever the closed pool raises
        await batcher.record(Ping(token=token, kind="success", method="GET"), T0)
    assert batcher.in_flight == 0 and not batcher.busy
