"""Shared acceptance cases for monitors (tests/data/time_cases.json, a copy of shared/cases):
M01, the grace boundary to the second, and H01, pings to unknown, malformed or deleted tokens."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from litestar.testing import AsyncTestClient

from core.clock import FrozenClock
from core.db import ConnectionPool
from core.monitors.checker import Checker
from core.monitors.ping import open_ping_pool
from tests.helpers import new_actor
from tests.monitor_helpers import add_monitor, advance, monitor_row, ping, stream
from tests.teams import Team

CASES = {c["id"]: c for c in json.loads(
    (Path(__file__).parents[1] / "data" / "time_cases.json").read_text())["cases"]}
STATUS_OF = {"monitor.up": "up", "monitor.late": "late", "monitor.down": "down"}


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _z(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


async def _run_m01(pool: ConnectionPool, dsn: str, pings: list[str],
                   evaluate: list[str], window_end: str) -> tuple[dict[str, str], list[dict]]:
    """Replay the case with a perfectly timely checker; returns the status at each evaluation
    instant and the monitor's transition events after the first ping."""
    case = CASES["M01"]["input"]
    actor = await new_actor(pool)
    start = _utc(case["window_utc"][0])
    clock = FrozenClock(start)
    monitor, token = await add_monitor(pool, actor, start, f"{case['monitor']['period_s']}s",
                                       grace_seconds=case["monitor"]["grace_s"])
    checker = Checker(pool, dsn, clock, batch=10)
    ping_pool = await open_ping_pool(dsn, size=1)
    statuses: dict[str, str] = {}
    try:
        timeline = sorted([(_utc(p), "ping") for p in pings]
                          + [(_utc(e), "evaluate") for e in evaluate])
        for at, what in timeline:
            await advance(checker, pool, at - timedelta(microseconds=1))
            if what == "ping":
                assert await ping(ping_pool, token, at) == "up"
            else:
                await checker.run_once(at)
                statuses[_z(at)] = (await monitor_row(pool, monitor))["status"]
        await advance(checker, pool, _utc(window_end))
    finally:
        await ping_pool.close()
    first_ping = _utc(pings[0])
    transitions = [e for e in await stream(pool, monitor)
                   if e["event_type"] in STATUS_OF and e["occurred_at"] > first_ping]
    return statuses, transitions


async def test_m01_grace_boundary_to_the_second(fresh_pool: ConnectionPool,
                                                 fresh_dsn: str) -> None:
    case = CASES["M01"]
    expected = case["expected"]
    statuses, transitions = await _run_m01(
        fresh_pool, fresh_dsn, case["input"]["pings_utc"], case["input"]["evaluate_at_utc"],
        case["input"]["window_utc"][1])
    assert statuses == expected["status_at"]
    assert [{"at_utc": _z(e["occurred_at"]), "status": STATUS_OF[e["event_type"]]}
            for e in transitions] == expected["transitions"]
    late = [e for e in transitions if e["event_type"] == "monitor.late"]
    assert _z(_utc(late[-1]["data"]["expected_at"])) == expected["expected_at_after_last_ping"]
    assert _z(_utc(late[-1]["data"]["deadline"])) == expected["deadline_after_last_ping"]


async def test_m01_ping_after_the_deadline(fresh_pool: ConnectionPool,
                                          fresh_dsn: str) -> None:
    variant = CASES["M01"]["expected"]["variant_ping_after_deadline"]
    _, transitions = await _run_m01(fresh_pool, fresh_dsn, variant["pings_utc"], [],
                                    CASES["M01"]["input"]["window_utc"][1])
    assert [{"at_utc": _z(e["occurred_at"]), "status": STATUS_OF[e["event_type"]]}
            for e in transitions] == variant["transitions"]
    # What a notifier alerts on: every down, and an up that recovers from down ('late' never).
    alerts = [f"{STATUS_OF[e['event_type']]}@{_z(e['occurred_at'])}" for e in transitions
              if e["event_type"] == "monitor.down"
              or (e["event_type"] == "monitor.up" and e["data"]["previous_status"] == "down")]
    assert alerts[:2] == variant["alerts"]


async def _event_count(pool: ConnectionPool) -> tuple[int, int, int]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT (SELECT count(*) FROM events) AS e, (SELECT count(*) FROM monitors) AS m, "
            "(SELECT count(*) FROM monitor_ping_bodies) AS p")
        row = await cur.fetchone()
    return row["e"], row["m"], row["p"]


async def test_h01_unknown_malformed_or_deleted_tokens_get_404(
    api: AsyncTestClient, team: Team, pool: ConnectionPool
) -> None:
    case = CASES["H01"]
    r = await api.post("/v1/monitors", json={"name": "to delete", "schedule": "1h"},
                       headers=team.auth)
    deleted_token = r.json()["ping_token"]
    assert (await api.delete(f"/v1/monitors/{r.json()['id']}",
                             headers=team.auth)).status_code == 204
    before = await _event_count(pool)
    requests = [*case["input"]["requests"],
                # our tokens are 64 hex characters: a well-formed one that does not exist
                {"method": "GET", "path": "/ping/" + "ab" * 32},
                {"method": "HEAD", "path": "/v1/ping/" + "cd" * 32 + "/start"}]
    answers = []
    for request in requests:
        path = request["path"].replace("<token of a deleted monitor>", deleted_token)
        response = await api.request(request["method"], path,
                                     content=request.get("body", "").encode() or None)
        assert response.status_code not in case["expected"]["never"]
        answers.append(response.status_code)
        if request["method"] != "HEAD":
            assert response.text == case["expected"]["body"]
        assert response.headers["content-type"].startswith("text/plain")
    assert answers == [404] * len(requests)
    assert case["expected"]["status"] == answers[:4]
    events, monitors, pings = await _event_count(pool)
    assert events - before[0] == case["expected"]["events_written"]
    assert (monitors, pings) == before[1:]


@pytest.mark.parametrize("path", ["/ping/", "/ping", "/v1/ping/x/y/z", "/ping/%ff%fe",
                                  "/ping/" + "ab" * 31, "/ping/" + "ab" * 32 + "/restart",
                                  "/ping/" + "ab" * 32 + "/-1", "/ping/" + "ab" * 32 + "/1e3"])
async def test_odd_ping_paths_are_404(api: AsyncTestClient, path: str) -> None:
    r = await api.get(path)
    assert r.status_code == 404 and r.text == "not found"
