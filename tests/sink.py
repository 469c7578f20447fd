"""A real local HTTP server that records every request it receives (the jobs' target).

Each recorded hit keeps the arrival instant (UTC), method, path, headers and body. Responses are
scripted per path: status, delay, body, extra headers, or closing the connection.
"""

from __future__ import annotations

import asyncio
import socket
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


class Sink:
    """``async with Sink() as sink: sink.url("/x") …; sink.hits``."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.replies: dict[str, Reply | list[Reply]] = {}
        self.port = 0
        self._runner: web.AppRunner | None = None
        self.arrived = asyncio.Event()

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

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
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        site = web.SockSite(self._runner, sock)
        await site.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self._runner is not None
        await self._runner.cleanup()
