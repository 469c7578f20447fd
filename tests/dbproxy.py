"""A real local TCP proxy between cronledger and PostgreSQL that can cut the database off.

The upstream server may listen on TCP (``DATABASE_URL``) or on a Unix socket (the embedded
server): the proxy reaches it either way (tests/servers.py) and is itself reached on
``127.0.0.1``.

Modes (switching away from ``forward`` cuts every proxied connection, as a PostgreSQL restart
does):

- ``forward``: connections are passed through to PostgreSQL.
- ``refuse``: nothing listens on the port (connection refused), as when PostgreSQL is stopped.
- ``blackhole``: connections are accepted and never answered - a connect hangs, as behind a
  network partition. They are passed through once the proxy forwards again (the partition
  heals).
- ``full``: every connection is answered with PostgreSQL's own ``FATAL 53300 sorry, too many
  clients already`` error message.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
import threading
from collections.abc import Coroutine
from typing import Any

from psycopg.conninfo import make_conninfo

from tests.servers import server_address

_SSL_REQUEST, _GSS_REQUEST = 80877103, 80877104


def _error_response(code: str, message: str) -> bytes:
    fields = b"".join(tag + value.encode() + b"\0" for tag, value in (
        (b"S", "FATAL"), (b"V", "FATAL"), (b"C", code), (b"M", message)))
    body = fields + b"\0"
    return b"E" + struct.pack("!i", len(body) + 4) + body


class DbProxy:
    """Listens on ``127.0.0.1:port`` (a free one unless given) and forwards to ``upstream``'s
    host and port. Use as ``with DbProxy(dsn) as proxy`` and connect to ``proxy.dsn``; switch
    with ``proxy.blackhole()`` etc. (they return once the switch is done).

    It runs on an event loop in a thread of its own, so it keeps working while the test's loop
    is blocked (Litestar's test client starts the app synchronously).
    """

    def __init__(self, upstream: str, port: int = 0, mode: str = "forward") -> None:
        self.core = _Proxy(upstream, port, mode)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                       name="dbproxy")

    def _call(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=10)

    @property
    def dsn(self) -> str:
        """The upstream DSN pointing at the proxy."""
        return self.core.dsn

    @property
    def port(self) -> int:
        return self.core.port

    def __enter__(self) -> DbProxy:
        self.thread.start()
        self._call(self.core.start())
        return self

    def __exit__(self, *_: object) -> None:
        try:
            self._call(self.core.close())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)
            self.loop.close()

    def forward(self) -> None:
        """Pass connections through again, the held ones (``blackhole``) first."""
        self._call(self.core.forward())

    def refuse(self) -> None:
        """Stop listening (connection refused) and cut the open connections."""
        self._call(self.core.refuse())

    def blackhole(self) -> None:
        """Accept connections without answering them, and cut the open ones."""
        self._call(self.core.blackhole())

    def full(self) -> None:
        """Answer every new connection with ``FATAL 53300``, and cut the open ones."""
        self._call(self.core.full())


class _Proxy:

    def __init__(self, upstream: str, port: int = 0, mode: str = "forward") -> None:
        self.upstream = upstream
        self.target = server_address(upstream)
        self.port = port
        self.mode = mode
        self.server: asyncio.Server | None = None
        self.links: set[asyncio.StreamWriter] = set()  # both ends of every proxied connection
        self.held: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self.tasks: set[asyncio.Task[None]] = set()
        self.accepted = 0

    @property
    def dsn(self) -> str:
        """The upstream DSN pointing at the proxy."""
        return make_conninfo(self.upstream, host="127.0.0.1", port=str(self.port))

    async def start(self) -> None:
        if self.mode != "refuse":
            await self._listen()

    async def close(self) -> None:
        await self._stop_listening()
        self._cut()
        for _, writer in self.held:
            writer.transport.abort()
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _listen(self) -> None:
        if self.server is None:
            self.server = await asyncio.start_server(self._accept, "127.0.0.1", self.port,
                                                     reuse_address=True)
            self.port = self.server.sockets[0].getsockname()[1]

    async def _stop_listening(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None

    def _cut(self) -> None:
        for writer in list(self.links):
            writer.transport.abort()
        self.links.clear()

    async def forward(self) -> None:
        self.mode = "forward"
        await self._listen()
        held, self.held = self.held, []
        for reader, writer in held:
            self._spawn(self._pipe(reader, writer))

    async def refuse(self) -> None:
        self.mode = "refuse"
        await self._stop_listening()
        self._cut()

    async def blackhole(self) -> None:
        self.mode = "blackhole"
        await self._listen()
        self._cut()

    async def full(self) -> None:
        self.mode = "full"
        await self._listen()
        self._cut()

    def _spawn(self, coro: object) -> None:
        task = asyncio.create_task(coro)  # type: ignore[arg-type]
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self.mode == "blackhole":
            self.held.append((reader, writer))
        elif self.mode == "full":
            await self._too_many_clients(reader, writer)
        else:
            await self._pipe(reader, writer)

    async def _too_many_clients(self, reader: asyncio.StreamReader,
                                writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while True:  # refuse SSL/GSS encryption, then answer the startup message
                length, code = struct.unpack("!ii", await reader.readexactly(8))
                await reader.readexactly(length - 8)
                if code not in (_SSL_REQUEST, _GSS_REQUEST):
                    break
                writer.write(b"N")
            writer.write(_error_response("53300", "sorry, too many clients already"))
            await writer.drain()
        writer.close()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if self.target.is_unix:
                up_reader, up_writer = await asyncio.open_unix_connection(self.target.path)
            else:
                up_reader, up_writer = await asyncio.open_connection(self.target.host,
                                                                     self.target.port)
        except OSError:
            writer.transport.abort()
            return
        self.links |= {writer, up_writer}

        async def copy(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort()

        self._spawn(copy(reader, up_writer))
        self._spawn(copy(up_reader, writer))
