"""A real local TCP proxy between a pool and PostgreSQL that a test can cut: the fault injector
of the outage tests (tests/integration/test_outage.py).

``async with Proxy.for_dsn(dsn) as proxy``: ``proxy.dsn(dsn)`` points a DSN at it;
``proxy.cut()`` drops every open connection and from then on accepts and at once closes new
ones (counted in ``refused``, so a test can wait for the pool to have tried); ``proxy.restore()``
forwards again.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType

from psycopg.conninfo import make_conninfo

from tests.servers import ServerAddress, server_address


class Proxy:
    """Forwards to ``target`` (TCP or a Unix socket, tests/servers.py) from ``127.0.0.1``."""

    def __init__(self, target: ServerAddress) -> None:
        self.target = target
        self.port = 0
        self.down = False
        self.refused = 0
        self.accepted = 0
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.StreamWriter] = set()

    @classmethod
    def for_dsn(cls, dsn: str) -> Proxy:
        return cls(server_address(dsn))

    def dsn(self, dsn: str) -> str:
        """``dsn`` with host and port replaced by the proxy's."""
        return make_conninfo(dsn, host="127.0.0.1", port=str(self.port))

    async def __aenter__(self) -> Proxy:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object | TracebackType) -> None:
        self.cut()
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    def cut(self) -> None:
        """Drop every open connection; refuse new ones until :meth:`restore`."""
        self.down = True
        for writer in list(self._pipes):
            writer.transport.abort()
        self._pipes.clear()

    def restore(self) -> None:
        self.down = False

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.down:
            self.refused += 1
            writer.transport.abort()
            return
        try:
            if self.target.is_unix:
                up_reader, up_writer = await asyncio.open_unix_connection(self.target.path)
            else:
                up_reader, up_writer = await asyncio.open_connection(self.target.host,
                                                                     self.target.port)
        except OSError:
            writer.transport.abort()
            return
        self.accepted += 1
        self._pipes.update((writer, up_writer))

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, ConnectionError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort()

        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))
        self._pipes.discard(writer)
        self._pipes.discard(up_writer)
