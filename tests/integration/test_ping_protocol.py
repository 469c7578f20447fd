"""The ping fast path (``api/ping_protocol.py``) answers and records exactly as the ASGI route.

Two real uvicorn servers on the same database: one with uvicorn's httptools protocol (every
request through the ASGI app), one with :class:`api.ping_protocol.PingProtocol`. The same raw
HTTP requests go to each, each server to a monitor of its own; the answers must be the same
bytes (but the ``date`` header) and the recorded pings the same, and the fast server's ASGI
app must have seen only the requests that are not plain pings.
"""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
import uvicorn
from litestar.testing import AsyncTestClient

from api.app import create_app
from api.ping_protocol import PingProtocol
from core.clock import SystemClock
from core.config import Settings
from core.monitors.batcher import PingBatcher
from tests.teams import Team

RID = "0b7e2d5e-4f8a-4c1e-9a57-3d2f1c0e8b6a"
RID2 = "7c1d9e40-2b3a-4f5e-8d6c-1a2b3c4d5e6f"


class _Counting:
    """An ASGI app counting the HTTP requests that reach it (``.app``: the wrapped one)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.paths: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.paths.append(scope["path"])
        await self.app(scope, receive, send)


@dataclass
class _Server:
    port: int
    app: _Counting


@asynccontextmanager
async def _serving(dsn: str, settings: Settings, http: Any) -> AsyncIterator[_Server]:
    """A uvicorn server with protocol ``http`` on a loopback port, its lifespan started
    before it accepts (requests sent earlier wait in the listen backlog)."""
    app = _Counting(create_app(dsn, settings, SystemClock()))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    config = uvicorn.Config(app, lifespan="on", access_log=False, proxy_headers=False,
                            http=http, log_config=None, timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield _Server(sock.getsockname()[1], app)
    finally:
        server.should_exit = True
        await task
        sock.close()


async def _exchange(port: int, raw: bytes, answers: int = 1) -> list[bytes]:
    """Send ``raw`` on one connection; the ``answers`` responses, without their date line."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(raw)
    await writer.drain()
    out = []
    for _ in range(answers):
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        length = next((int(line.split(b":")[1]) for line in lines
                       if line.lower().startswith(b"content-length:")), 0)
        body = b"" if raw.startswith(b"HEAD") else await reader.readexactly(length)
        out.append(b"\r\n".join(line for line in lines
                                if not line.lower().startswith(b"date:")) + body)
    writer.close()
    return out


def _requests(token: str, key: str, slug: str) -> list[tuple[bytes, int, int]]:
    """``(raw request, answers, of them answered by the route)`` for one monitor's token,
    ping key and slug (the others are plain pings, answered by the fast path)."""
    host = b"Host: testserver\r\n"

    def get(path: str, *, method: str = "GET", headers: bytes = b"", body: bytes = b"",
            version: bytes = b"1.1") -> bytes:
        length = f"Content-Length: {len(body)}\r\n".encode() if body else b""
        return (method.encode() + b" " + path.encode() + b" HTTP/" + version + b"\r\n" + host
                + headers + length + b"\r\n" + body)

    unknown = "f" * 64
    chunked = (b"POST /ping/" + token.encode() + b" HTTP/1.1\r\n" + host
               + b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
    return [
        (get(f"/ping/{token}", headers=b"User-Agent: curl/8.5.0\r\n"), 1, 0),
        (get(f"/ping/{token}", method="HEAD"), 1, 0),
        (get(f"/ping/{token}", method="POST", body=b"hello \xff body"), 1, 0),
        (get(f"/ping/{token}/fail", method="POST", body=b"x" * 20_000), 1, 0),  # > limit
        (get(f"/ping/{token}/start?rid={RID}"), 1, 0),
        (get(f"/ping/{token}/0?rid={RID}"), 1, 0),
        (get(f"/ping/{token}/3"), 1, 0),
        (get(f"/ping/{token}/log", method="POST", body=b"a line"), 1, 0),
        (get(f"/v1/ping/{token}/"), 1, 0),
        (get(f"/ping/{token}?x=1&rid="), 1, 1),  # ?rid= empty: 400 from the route
        # a repeated rid: the last one counts on both paths (parse_qsl into a dict)
        (get(f"/ping/{token}/start?rid=not-a-uuid&rid={RID}"), 1, 0),
        (get(f"/ping/{token}?rid={RID2}&rid={RID}"), 1, 0),
        (get(f"/ping/{token}/start?rid={RID}&rid={RID2}"), 1, 0),
        (get(f"/ping/{token}/fail?rid={RID2}&rid={RID}"), 1, 0),
        (get(f"/ping/{token}?rid={RID}&rid=not-a-uuid"), 1, 1),  # the last is bad: 400
        (get(f"/ping/{token}?rid={RID}&rid="), 1, 1),  # the last is empty: 400
        (get(f"/ping/{token}?rid=%30{RID[1:]}"), 1, 0),  # escaped, decoded on both
        (get(f"/ping/{token}/256"), 1, 1),  # 400 from the route
        (get(f"/ping/{token}/nope"), 1, 1),  # 404 from the route
        (get(f"/ping/{unknown}"), 1, 0),  # a well-formed unknown token: 404
        (get(f"/ping/{token}", method="PUT"), 1, 1),  # 405
        (get(f"/ping/{token}", headers=b"Expect: 100-continue\r\n", method="POST",
             body=b"e"), 1, 1),
        (chunked, 1, 1),
        (get(f"/ping/{token}", method="POST", body=b"y" * 70_000), 1, 1),  # > 64 KiB
        (get(f"/ping/%{ord(token[0]):x}{token[1:]}"), 1, 1),  # escaped: read by the route
        (get(f"/ping/{token}", version=b"1.0"), 1, 0),
        (get(f"/ping/{token}", headers=b"Connection: close\r\n"), 1, 0),
        (get(f"/ping/{token}", headers=b"X-Forwarded-For: 198.51.100.7\r\n"
                                       b"X-Forwarded-For: 203.0.113.9, 127.0.0.1\r\n"), 1, 0),
        (get(f"/ping/{key}/{slug}"), 1, 0),
        (get(f"/ping/{key}/{slug}/fail", method="POST", body=b"oops"), 1, 0),
        (get(f"/ping/{key}/no-such-slug"), 1, 0),
        (get(f"/ping/{key}/{slug}?create=1"), 1, 1),
        (get(f"/ping/run/{'a' * 43}"), 1, 1),  # a run's confirmation URL: the route's
        # pipelined: the second waits for the first, in order, on either path
        # (the fast path takes the first, the route the two behind it)
        (get(f"/ping/{token}/start") + get(f"/ping/{token}") + get(f"/ping/{token}/fail"),
         3, 2),
    ]


_VOLATILE = {"id", "at", "received_at", "created_at", "event_id", "duration_ms"}  # of the clock


async def _recorded(api: AsyncTestClient, team: Team, monitor_id: str) -> list[dict[str, Any]]:
    r = await api.get(f"/v1/monitors/{monitor_id}/pings?limit=100", headers=team.auth)
    assert r.status_code == 200, r.text
    return [{k: v for k, v in item.items() if k not in _VOLATILE and not k.endswith("_at")}
            for item in r.json()["items"]]


async def test_fast_path_answers_and_records_as_the_route(
        shared_dsn: str, settings: Settings, api: AsyncTestClient, team: Team) -> None:
    r = await api.post("/v1/team/ping-key", headers=team.auth)
    assert r.status_code == 200, r.text
    key = r.json()["ping_key"]
    monitors = []
    for _ in range(2):
        r = await api.post("/v1/monitors", json={"name": f"fast {uuid.uuid4().hex[:8]}",
                                                 "schedule": "1h"}, headers=team.auth)
        assert r.status_code == 201, r.text
        monitors.append(r.json())
    answers: list[list[list[bytes]]] = []
    async with _serving(shared_dsn, settings, "httptools") as plain, \
            _serving(shared_dsn, settings, PingProtocol) as fast:
        for server, monitor in ((plain, monitors[0]), (fast, monitors[1])):
            token, slug = monitor["ping_token"], monitor["slug"]
            answers.append([
                [a.replace(token.encode(), b"T").replace(slug.encode(), b"S")
                 for a in await _exchange(server.port, raw, n)]
                for raw, n, _ in _requests(token, key, slug)])
        routed = sum(n for _, _, n in _requests("t" * 64, key, "s"))
    assert answers[0] == answers[1]
    assert any(b" 200 OK" in a[0] for a in answers[1]) and any(
        b" 404 " in a[0] for a in answers[1]) and any(b" 400 " in a[0] for a in answers[1])
    assert len(fast.app.paths) == routed  # the plain pings never reached the ASGI app
    assert len(plain.app.paths) == sum(n for _, n, _ in _requests("t" * 64, key, "s"))
    first, second = [await _recorded(api, team, m["id"]) for m in monitors]
    assert len(first) >= 15 and first == second


async def test_fast_path_answers_failures_as_the_route(
        shared_dsn: str, settings: Settings, api: AsyncTestClient, team: Team,
        monkeypatch: Any) -> None:
    """A batch that failed, the database away or a query error: 503 with Retry-After on
    both paths, the same bytes."""
    r = await api.post("/v1/monitors", json={"name": f"fail {uuid.uuid4().hex[:8]}",
                                             "schedule": "1h"}, headers=team.auth)
    assert r.status_code == 201, r.text
    token = r.json()["ping_token"]
    failures = [psycopg.OperationalError("connection refused"),
                psycopg.errors.UndefinedColumn("column x does not exist")]

    def submit(self: PingBatcher, ping: Any, at: Any) -> asyncio.Future[str | None]:
        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        answer.set_exception(failures[0])
        return answer

    monkeypatch.setattr(PingBatcher, "submit", submit)
    raw = f"GET /ping/{token} HTTP/1.1\r\nHost: testserver\r\n\r\n".encode()
    async with _serving(shared_dsn, settings, "httptools") as plain, \
            _serving(shared_dsn, settings, PingProtocol) as fast:
        for _ in range(2):
            answers = [await _exchange(server.port, raw) for server in (plain, fast)]
            assert answers[0] == answers[1] and b" 503 " in answers[0][0]
            assert b"retry-after: " in answers[0][0]
            failures.pop(0)
    assert len(fast.app.paths) == 0 and len(plain.app.paths) == 2
