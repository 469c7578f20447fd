"""A real local DNS server over UDP that never answers (or answers SERVFAIL), and an aiohttp
resolver that asks it: the DNS faults of tests/integration/test_dns.py, without leaving the machine.

``async with SilentDNS() as dns``: ``dns.resolver()`` is an ``aiohttp.abc.AbstractResolver``
that sends each lookup as a DNS query (RFC 1035 wire format, type A) to the server and waits
for the answer; ``dns.queries`` counts the queries the server received (and dropped, or
refused with SERVFAIL when ``servfail=True``).
"""

from __future__ import annotations

import asyncio
import socket
import struct
from types import TracebackType
from typing import Any

from aiohttp.abc import AbstractResolver, ResolveResult


def _query(query_id: int, host: str) -> bytes:
    header = struct.pack("!HHHHHH", query_id, 0x0100, 1, 0, 0, 0)  # recursion desired
    name = b"".join(bytes([len(p)]) + p.encode() for p in host.split(".")) + b"\0"
    return header + name + struct.pack("!HH", 1, 1)  # A, IN


class _Server(asyncio.DatagramProtocol):
    def __init__(self, owner: SilentDNS) -> None:
        self.owner = owner

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.owner.queries += 1
        if self.owner.servfail:  # same id and question, QR set, RCODE 2
            self.transport.sendto(data[:2] + b"\x81\x82" + data[4:], addr)


class _Client(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.answer: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

    def datagram_received(self, data: bytes, addr: Any) -> None:
        if not self.answer.done():
            self.answer.set_result(data)


class _UdpResolver(AbstractResolver):
    def __init__(self, server: tuple[str, int]) -> None:
        self.server = server

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        loop = asyncio.get_running_loop()
        transport, client = await loop.create_datagram_endpoint(_Client,
                                                                remote_addr=self.server)
        try:
            transport.sendto(_query(0x1234, host))
            answer = await client.answer  # a silent server: waits until cancelled
        finally:
            transport.close()
        rcode = answer[3] & 0x0F
        raise OSError(socket.EAI_AGAIN if rcode == 2 else socket.EAI_NONAME,
                      f"DNS answer with RCODE {rcode} for {host}")

    async def close(self) -> None:
        return None


class SilentDNS:
    def __init__(self, servfail: bool = False) -> None:
        self.servfail = servfail
        self.queries = 0
        self.address: tuple[str, int] = ("127.0.0.1", 0)
        self._transport: asyncio.DatagramTransport | None = None

    def resolver(self) -> AbstractResolver:
        return _UdpResolver(self.address)

    async def __aenter__(self) -> SilentDNS:
        loop = asyncio.get_running_loop()
        self._transport, _ = await loop.create_datagram_endpoint(
            lambda: _Server(self), local_addr=("127.0.0.1", 0))
        self.address = self._transport.get_extra_info("sockname")[:2]
        return self

    async def __aexit__(self, *exc: object | TracebackType) -> None:
        if self._transport is not None:
            self._transport.close()
