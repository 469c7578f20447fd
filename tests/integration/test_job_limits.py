"""Limits on job definitions and the executor's job fields: every violation is a 422 that names
the field and changes nothing (never a 500)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from core.db import ConnectionPool
from tests.teams import Team

JOB = {"name": "limits", "schedule": "@hourly", "request": {"url": "http://127.0.0.1:9/x"}}


def _request(**over: Any) -> dict[str, Any]:
    return {**JOB, "request": {**JOB["request"], **over}}


BAD = [
    (_request(url="http://h/" + "a" * 2048), "request.url"),
    (_request(headers={f"X-H{i}": "v" for i in range(51)}), "request.headers"),
    (_request(headers={"X-Big": "v" * 8193}), "request.headers.X-Big"),
    (_request(headers={"X" * 257: "v"}), "request.headers." + "X" * 257),
    (_request(headers={"X-Crlf": "a\r\nb"}), "request.headers.X-Crlf"),
    (_request(headers={"Idempotency-Key": "mine"}), "request.headers.Idempotency-Key"),
    (_request(headers={"X-Cronledger-Signature": "forged"}),
     "request.headers.X-Cronledger-Signature"),
    (_request(body="b" * (256 * 1024 + 1)), "request.body"),
    (_request(url="http://h/${secrets.bad name}"), "request.url"),
    (_request(headers={"Authorization": "Bearer ${secrets.}"}), "request.headers.Authorization"),
    (_request(body="${secrets.unterminated"), "request.body"),
    ({**JOB, "success_statuses": []}, "success_statuses"),
    ({**JOB, "success_statuses": [99]}, "success_statuses"),
    ({**JOB, "success_statuses": [200, 600]}, "success_statuses"),
    ({**JOB, "success_statuses": list(range(200, 302))}, "success_statuses"),
    ({**JOB, "success_statuses": 200}, "success_statuses"),
    ({**JOB, "signing_secret": "short"}, "signing_secret"),
    ({**JOB, "signing_secret": "s" * 1025}, "signing_secret"),
    ({**JOB, "signing_secret": 12345678901234567}, "signing_secret"),
]


async def _counts(pool: ConnectionPool, team: Team) -> tuple[int, ...]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT (SELECT count(*) FROM jobs WHERE team_id = %(t)s) AS jobs, "
            "(SELECT count(*) FROM events WHERE team_id = %(t)s) AS events, "
            "(SELECT count(*) FROM job_signing_secrets WHERE team_id = %(t)s) AS signing",
            {"t": team.actor.team_id})
        row = await cur.fetchone()
    return row["jobs"], row["events"], row["signing"]


@pytest.mark.parametrize(("body", "field"), BAD, ids=[f for _, f in BAD])
async def test_limits_are_422(api: AsyncTestClient, team: Team,
                              pool: ConnectionPool, body: dict[str, Any], field: str) -> None:
    before = await _counts(pool, team)
    r = await api.post("/v1/jobs", json=body, headers=team.auth)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert field in [e["field"] for e in r.json().get("errors", [])], r.json()
    assert await _counts(pool, team) == before


async def test_limits_apply_to_patch_too(api: AsyncTestClient, team: Team,
                                         pool: ConnectionPool) -> None:
    r = await api.post("/v1/jobs", json=JOB, headers=team.auth)
    job = r.json()
    before = await _counts(pool, team)
    for patch in ({"success_statuses": [1000]}, {"signing_secret": "tiny"},
                  {"request": {"headers": {"X-H": "${secrets.no good}"}}}):
        r = await api.patch(f"/v1/jobs/{job['id']}", json=patch, headers=team.auth)
        assert r.status_code == 422, (patch, r.text)
    assert await _counts(pool, team) == before


async def test_success_statuses_and_signing_are_shown(
    api: AsyncTestClient, team: Team
) -> None:
    r = await api.post("/v1/jobs", headers=team.auth, json={
        **JOB, "success_statuses": [302, 200, 200], "signing_secret": "0123456789abcdef"})
    assert r.status_code == 201, r.text
    job = r.json()
    assert job["success_statuses"] == [200, 302] and job["signing"] is True
    assert "0123456789abcdef" not in r.text
    r = await api.patch(f"/v1/jobs/{job['id']}", json={"success_statuses": None},
                        headers=team.auth)
    assert r.json()["success_statuses"] is None
    plain = (await api.post("/v1/jobs", json={**JOB, "name": "plain"},
                            headers=team.auth)).json()
    assert plain["success_statuses"] is None and plain["signing"] is False
