"""A real local HTTP server that records every request it receives (the jobs' target).

Each recorded hit keeps the arrival instant (UTC), method, path, headers and body. Responses are
scripted per path: status, delay, body, extra headers, closing the connection, or a body sent
slowly after the headers. ``Sink(ssl_context=...)`` serves HTTPS.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from multidict import CIMultiDict


@dataclass
class Hit:
    at: datetime
    method: str
    path: str
    headers: CIMultiDict[str]  # case-insensitive, like HTTP
    body: bytes


@dataclass
class Reply:
    status: int = 200
    delay: float = 0.0
    body: bytes = b"ok"
    headers: dict[str, str] = field(default_factory=dict)
    close: bool = False  # drop the connection without answering
    trickle: float = 0.0  # send the headers and a first chunk, then wait this long for the rest
    echo: bool = False  # answer with the request's headers (JSON) and body, like httpbin


class Sink:
    """``async with Sink() as sink: sink.url("/x") …; sink.hits``."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self.ssl_context = ssl_context
        self.hits: list[Hit] = []
        self.replies: dict[str, Reply | list[Reply]] = {}
        self.port = 0
        self._runner: web.AppRunner | None = None
        self.arrived = asyncio.Event()

    def url(self, path: str = "/hook") -> str:
        scheme = "https" if self.ssl_context else "http"
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    def reply(self, path: str, *replies: Reply) -> None:
        """Script the answers for ``path``: one reply for all, or one per hit (last repeats)."""
        self.replies[path] = list(replies) if len(replies) > 1 else replies[0]

    def hits_for(self, path: str) -> list[Hit]:
        return [h for h in self.hits if h.path == path]

    def _next_reply(self, path: str) -> Reply:
        scripted = self.replies.get(path, Reply())
        if isinstance(scripted, Reply):
            return scripted
        return scripted.pop(0) if len(scripted) > 1 else scripted[0]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.hits.append(Hit(datetime.now(UTC), request.method, request.path,
                             CIMultiDict(request.headers), body))
        self.arrived.set()
        reply = self._next_reply(request.path)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.close:
            assert request.transport is not None
            request.transport.close()
            return web.Response()
        if reply.echo:
            echoed = json.dumps({"headers": dict(request.headers), "body": body.decode()})
            return web.Response(status=reply.status, body=echoed.encode(),
                                headers={**reply.headers, "X-Echo-Url": str(request.url)})
        if reply.trickle:
            response = web.StreamResponse(status=reply.status, headers=reply.headers)
            response.content_length = len(reply.body) + 1
            await response.prepare(request)
            await response.write(reply.body[:1])
            await asyncio.sleep(reply.trickle)
            await response.write(reply.body[1:] + b".")
            await response.write_eof()
            return response
        return web.Response(status=reply.status, body=reply.body, headers=reply.headers)

    async def wait_for(self, count: int, timeout: float = 10.0, path: str | None = None) -> None:
        """Wait until at least ``count`` hits (on ``path`` when given) arrived."""
        async with asyncio.timeout(timeout):
            while len(self.hits if path is None else self.hits_for(path)) < count:
                self.arrived.clear()
                await self.arrived.wait()

    async def __aenter__(self) -> Sink:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        # A short shutdown timeout: handlers still sleeping for a client that went away (killed
        # workers) must not hold the test up.
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        site = web.SockSite(self._runner, sock, ssl_context=self.ssl_context)
        await site.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self._runner is not None
        await self._runner.cleanup()


class CountingServer(asyncio.Protocol):
    """A bare HTTP/1.1 server that counts TCP connections and the requests on each, with the
    arrival time (``time.time()``) of every request head; answers each with 200 ``ok``."""

    connections: list[CountingServer]

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.arrivals: list[float] = []
        self.connections.append(self)

    @property
    def requests(self) -> int:
        return len(self.arrivals)

    def data_received(self, data: bytes) -> None:
        for _ in range(data.count(b"\r\n\r\n")):
            self.arrivals.append(time.time())
            self.transport.write(  # type: ignore[attr-defined]
                b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")


@contextlib.asynccontextmanager
async def counting_server() -> AsyncIterator[tuple[str, list[CountingServer]]]:
    """``async with counting_server() as (base_url, connections)``."""
    connections: list[CountingServer] = []
    protocol = type("Counting", (CountingServer,), {"connections": connections})
    server = await asyncio.get_running_loop().create_server(protocol, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", connections
    finally:
        server.close()
