"""Cursors of every paginated route: hostile cursors are a 422 on field ``cursor`` (never a 500,
never a database error), valid ones still page; ``/v1/api-keys`` pages like the other lists."""

from __future__ import annotations

import uuid

import pytest
from litestar.testing import AsyncTestClient

from api.deps import whole_number_words
from api.pagination import BAD_CURSOR, MAX_LIMIT
from core.apikeys import create_api_key
from core.db import ConnectionPool
from tests.teams import Team

ROW = uuid.uuid4()
AT = 1_577_836_800_000_000  # 2020-01-01T00:00:00Z in microseconds


def keyset(micros: int | str = AT, row: uuid.UUID | str = ROW) -> str:
    return f"{micros}_{row.hex if isinstance(row, uuid.UUID) else row}"


# (route kind, path template); {job} and {monitor} are filled in per team.
ROUTES = [
    ("keyset", "/v1/jobs"),
    ("keyset", "/v1/jobs/{job}/runs"),
    ("position", "/v1/jobs/{job}/events"),
    ("keyset", "/v1/monitors"),
    ("position", "/v1/monitors/{monitor}/pings"),
    ("position", "/v1/monitors/{monitor}/events"),
    ("position", "/v1/jobs/{job}/history"),
    ("position", "/v1/monitors/{monitor}/history"),
    ("keyset", "/v1/channels"),
    ("keyset", "/v1/notifications"),
    ("name", "/v1/secrets"),
    ("keyset", "/v1/api-keys"),
    ("keyset", "/v1/maintenance"),
    ("keyset", "/v1/alerts"),
    ("keyset", "/v1/status-pages"),
]

# (cursor, the route kinds for which it is a valid cursor)
HOSTILE: list[tuple[str, set[str]]] = [
    ("WyIyMDIwLTAxLTAxVDAwOjAwOjAwKzAwOjAwIiwgNV0", {"name"}),  # the old base64url cursors
    ("\x00", set()),  # NUL
    ("!!!", set()),  # no cursor's alphabet
    ("A" * 20_000, set()),  # huge
    (keyset(row=str(ROW)), {"name"}),  # the id with hyphens (a secret name may have them)
    (keyset(row=ROW.hex.upper()), {"name"}),
    (keyset(row=ROW.hex[:31]), {"name"}),
    (keyset("+1"), set()),
    (keyset("1" * 17), {"name"}),  # beyond the years 1653 to 2286
    (keyset("١٢"), set()),  # Arabic-Indic digits, which int() would accept
    (keyset() + "\x00", set()),
    (keyset() + "_", {"name"}),
    (" " + keyset(), set()),
    ("a\x00b", set()),
    ("x" * 101, set()),  # a name longer than secret names may be
    ("bad name", set()),
    (".hidden", set()),
    ("-1", set()),
    ("²", set()),  # a Unicode digit: str.isdigit() says yes, int() says no
    ("١٢", set()),
    ("1234567890", {"name"}),  # a position beyond PostgreSQL's integer; a secret's name
    # cursors of other routes
    (keyset(), {"keyset", "name"}),  # letters, digits and _: a name too
    (keyset(-AT), {"keyset"}),  # 1940: any instant of the pattern is a position
    (keyset("9" * 16, "f" * 32), {"keyset", "name"}),
    ("API_TOKEN", {"name"}),
    ("12", {"position", "name"}),
]


@pytest.fixture
async def paths(api: AsyncTestClient, team: Team) -> list[tuple[str, str]]:
    job = await api.post("/v1/jobs", headers=team.auth, json={
        "name": "j", "schedule": "0 3 * * *", "paused": True,
        "request": {"method": "GET", "url": "http://127.0.0.1:9/"}})
    assert job.status_code == 201, job.text
    monitor = await api.post("/v1/monitors", headers=team.auth,
                             json={"name": "m", "schedule": "1h"})
    assert monitor.status_code == 201, monitor.text
    ids = {"job": job.json()["id"], "monitor": monitor.json()["id"]}
    return [(kind, path.format(**ids)) for kind, path in ROUTES]


async def test_every_paginated_route_refuses_hostile_cursors(
    api: AsyncTestClient, team: Team, paths: list[tuple[str, str]]
) -> None:
    failures = []
    for kind, path in paths:
        for cursor, valid_for in HOSTILE:
            r = await api.get(path, params={"cursor": cursor}, headers=team.auth)
            expected = 200 if kind in valid_for else 422
            body = r.json()
            ok = r.status_code == expected and (
                expected == 200 or (
                    r.headers["content-type"].startswith("application/problem+json")
                    and body["errors"] == [{"field": "cursor", "message": BAD_CURSOR}]
                    and "cursor" in body["detail"]))  # words, never a raw pattern
            if not ok:
                failures.append((path, cursor[:60], r.status_code, r.text[:200]))
    assert failures == []


async def test_whole_numbers_in_the_query_are_digits(
    api: AsyncTestClient, team: Team, paths: list[tuple[str, str]]
) -> None:
    """``?limit=1e1`` or ``?limit=10.0`` is refused in words naming the parameter (Litestar's
    conversion read them as 10); ``?limit=10`` is read. Also the preview's ``count`` and the
    peaks' ``top``."""
    job = next(p for _, p in paths if p.endswith("/runs")).split("/")[3]
    routes = [(path, "limit", 1, MAX_LIMIT if kind == "keyset" or kind == "name" else None)
              for kind, path in paths]
    routes += [("/v1/schedules/preview?schedule=0+3+*+*+*", "count", 1, 100),
               ("/v1/schedules/peaks", "top", 1, None), (f"/v1/jobs/{job}/advice", "days", 1, 90)]
    failures = []
    for path, name, good, high in routes:
        sep = "&" if "?" in path else "?"
        r = await api.get(f"{path}{sep}{name}={good}", headers=team.auth)
        if r.status_code != 200:
            failures.append((path, name, good, r.status_code, r.text[:200]))
        for text in ("1e1", "10.0", "+5", "05", " 5"):
            r = await api.get(path + sep, params={name: text}, headers=team.auth)
            errors = r.json().get("errors") if r.status_code == 422 else None
            if not errors or errors[0]["field"] != name or (
                    high is not None and errors[0]["message"] != whole_number_words(1, high)):
                failures.append((path, name, text, r.status_code, r.text[:200]))
    assert failures == []


async def test_the_route_list_is_complete(api: AsyncTestClient) -> None:
    """Every GET route taking ``cursor`` is in ROUTES (a new list must join the table)."""
    schema = (await api.get("/schema/openapi.json")).json()
    with_cursor = {path for path, item in schema["paths"].items()
                   if any(p["name"] == "cursor" for p in item.get("get", {}).get("parameters", []))}
    listed = {path.replace("{job}", "{job_id}").replace("{monitor}", "{monitor_id}")
              for _, path in ROUTES}
    assert with_cursor == listed


async def test_api_keys_page_through_more_than_limit(
    api: AsyncTestClient, team: Team, pool: ConnectionPool
) -> None:
    extra = [(await create_api_key(pool, team.actor.team_id, "read", f"k{i}"))[1]["id"]
             for i in range(4)]
    revoked = extra.pop()
    r = await api.delete(f"/v1/api-keys/{revoked}", headers=team.auth)
    assert r.status_code == 204
    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        r = await api.get("/v1/api-keys", params=params, headers=team.read_auth)
        assert r.status_code == 200, r.text
        page = r.json()
        assert len(page["items"]) <= 2
        assert all("key" not in k or k["key"] is None for k in page["items"])
        seen += [k["id"] for k in page["items"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 5 and pages == 3  # the fixture's two keys and three of ours
    assert seen[2:] == [str(i) for i in extra] and str(revoked) not in seen
    for limit in (0, 201):  # refused as on the other lists
        r = await api.get("/v1/api-keys", params={"limit": limit}, headers=team.auth)
        jobs = await api.get("/v1/jobs", params={"limit": limit}, headers=team.auth)
        assert r.status_code == jobs.status_code == 422, r.text
