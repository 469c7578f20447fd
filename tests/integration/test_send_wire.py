"""The two send paths on the wire (core/http/exchange.py): the same request bytes, the same
reading of unusual answers (interim 1xx, no length, HEAD, a gzip bomb), connections kept alive
and reused. A raw TCP server records exactly the bytes each request arrived as."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import gzip
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from core.clock import FrozenClock
from core.crypto import KeyRing, signing_aad
from core.job_definition import Request, RetryPolicy
from core.runs.dispatch import Dispatch
from core.runs.executor import Executor
from tests.conftest import TEST_SECRET_KEY

T0 = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.UTC)
KEYRING = KeyRing.from_sources(TEST_SECRET_KEY, "")
PATHS = ("connection", "session")
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


@dataclass
class Raw:
    """A TCP server: each request's bytes as they arrived, answered with ``answer(head)``."""

    answer: Callable[[bytes], bytes] = lambda _head: OK
    close_after: bool = False
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0
    port: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length" and value.strip().isdigit():
                        length = int(value)
                body = await reader.readexactly(length) if length else b""
                self.requests.append(head + body)
                writer.write(self.answer(head))
                await writer.drain()
                if self.close_after:
                    break
        writer.close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@contextlib.asynccontextmanager
async def raw_server(**options: Any) -> AsyncIterator[Raw]:
    raw = Raw(**options)
    server = await asyncio.start_server(raw.handle, "127.0.0.1", 0)
    raw.port = server.sockets[0].getsockname()[1]
    try:
        yield raw
    finally:
        server.close()


def dispatch(url: str, method: str = "GET", headers: dict[str, str] | None = None,
             body: str | None = None, **extra: Any) -> Dispatch:
    return Dispatch(
        run_id=uuid.UUID(int=7), job_id=uuid.UUID(int=8), team_id=uuid.UUID(int=9),
        scheduled_for=T0, trigger="manual", attempt=1, max_attempts=1,
        lease_token=uuid.uuid4(), version=1,
        request=Request(method=method, url=url, headers=headers or {}, body=body),
        timeout_seconds=5, retry=RetryPolicy.from_json({}), **extra)


def signed(d: Dispatch) -> Dispatch:
    key = KEYRING.seal(b"whsec-wire-0123456789", signing_aad(d.team_id.bytes, d.job_id.bytes))
    return replace(d, signing=True, signing_key=key)


# (the request, whether the connection path builds it itself)
CASES: list[tuple[str, Callable[[Raw], Dispatch], bool]] = [
    ("get", lambda s: dispatch(s.url("/a?x=1&y=%20z#frag")), True),
    ("post json", lambda s: dispatch(s.url("/p"), "POST", {"Content-Type": "application/json"},
                                     '{"a": 1}'), True),
    ("post without body", lambda s: dispatch(s.url("/p"), "POST"), True),
    ("put utf-8", lambda s: dispatch(s.url("/p"), "PUT", None, "é"), True),
    ("delete", lambda s: dispatch(s.url("/p"), "DELETE"), True),
    ("patch empty", lambda s: dispatch(s.url("/p"), "PATCH", None, ""), True),
    ("overrides", lambda s: dispatch(s.url("/h"), "GET", {
        "host": "example.com", "user-agent": "me", "content-type": "a/b", "Accept": "text/html",
        "accept-encoding": "identity", "Connection": "close"}), True),
    ("non-ascii url", lambda s: dispatch(s.url("/ü ñ/{x}?q=ä b")), True),
    ("signed", lambda s: signed(dispatch(s.url("/s"), "POST", None, '{"n": 1}')), True),
    ("credentials in the url", lambda s: dispatch(
        f"http://user:pw@127.0.0.1:{s.port}/c"), False),
    ("content-length of its own", lambda s: dispatch(s.url("/l"), "POST",
                                                      {"Content-Length": "1"}, "x"), True),
    ("two user-agents", lambda s: dispatch(s.url("/u"), "GET", {"user-agent": "a"}), True),
]
# Sent on the session path: the connection path does not build them.
LEFT_TO_THE_SESSION: list[tuple[str, str, dict[str, str], str | None]] = [
    ("http://user:pw@example.com/", "GET", {}, None),
    ("http://example.com/", "POST", {"Content-Length": "9"}, "xy"),
    ("http://example.com/", "POST", {"Expect": "100-continue"}, "x"),
    ("http://example.com/", "POST", {"Transfer-Encoding": "chunked"}, "x"),
    ("http://example.com/", "GET", {"X-Bad": "a\r\nb"}, None),
    ("http://example.com/", "CONNECT", {}, None),
]


@pytest.mark.parametrize(("url", "method", "headers", "body"), LEFT_TO_THE_SESSION)
async def test_requests_the_connection_path_leaves_to_the_session(
        url: str, method: str, headers: dict[str, str], body: str | None) -> None:
    async with executor_on("connection") as executor:
        assert executor.prepare(dispatch(url, method, headers, body)).built is None
        assert executor.prepare(dispatch("http://example.com/")).built is not None


@contextlib.asynccontextmanager
async def executor_on(path: str, body_limit: int = 1000) -> AsyncIterator[Executor]:
    executor = Executor(FrozenClock(T0), body_limit, KEYRING, max_connections=5,
                        send_path=path)
    try:
        yield executor
    finally:
        await executor.aclose()


@pytest.mark.parametrize(("name", "make", "built"), CASES, ids=[c[0] for c in CASES])
async def test_both_paths_write_the_same_bytes(name: str, make: Callable[[Raw], Dispatch],
                                               built: bool) -> None:
    sent: dict[str, bytes] = {}
    for path in PATHS:
        async with raw_server() as raw, executor_on(path) as executor:
            prepared = executor.prepare(make(raw))
            assert (prepared.built is not None) == (built and path == "connection")
            result = await executor.transmit(prepared)
            assert result.response_status is not None, result.error
            sent[path] = b"".join(raw.requests).replace(str(raw.port).encode(), b"<port>")
    assert sent["connection"] == sent["session"]


@pytest.mark.parametrize("path", PATHS)
async def test_a_kept_alive_connection_is_reused(path: str) -> None:
    async with raw_server() as raw, executor_on(path) as executor:
        results = [await executor.send(dispatch(raw.url(f"/{n}"))) for n in range(3)]
    assert all(r.ok for r in results) and raw.connections == 1 and len(raw.requests) == 3


@pytest.mark.parametrize("path", PATHS)
async def test_a_connection_the_server_closes_is_not_reused(path: str) -> None:
    close = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
    async with raw_server(answer=lambda _h: close, close_after=True) as raw, \
            executor_on(path) as executor:
        results = [await executor.send(dispatch(raw.url(f"/{n}"))) for n in range(3)]
    assert all(r.ok for r in results) and raw.connections == 3


ANSWERS = {
    "interim 100 first": (b"HTTP/1.1 100 Continue\r\n\r\n" + OK, "GET", b"ok"),
    "no length, read until close": (b"HTTP/1.1 200 OK\r\n\r\nuntil the end", "GET",
                                    b"until the end"),
    "chunked": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", "GET", b"abcde"),
    "head with a length": (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", "HEAD", b""),
    "204": (b"HTTP/1.1 204 No Content\r\n\r\n", "GET", b""),
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", list(ANSWERS))
async def test_unusual_answers_are_read_alike(path: str, case: str) -> None:
    answer, method, body = ANSWERS[case]
    close = case.startswith("no length")
    async with raw_server(answer=lambda _h: answer, close_after=close) as raw, \
            executor_on(path) as executor:
        result = await executor.send(dispatch(raw.url("/x"), method))
    assert result.error is None and result.response_body == body


@pytest.mark.parametrize("path", PATHS)
async def test_a_gzip_bomb_is_cut_at_the_cap(path: str) -> None:
    """64 MiB of zeros in 64 KiB of gzip: the body kept is the cap, marked truncated, and the
    attempt ends well within its deadline."""
    bomb = gzip.compress(b"\0" * (64 << 20), compresslevel=9)
    answer = (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n"
              % len(bomb)) + bomb
    async with raw_server(answer=lambda _h: answer) as raw, \
            executor_on(path, body_limit=1 << 20) as executor:
        result = await executor.send(dispatch(raw.url("/bomb")))
    assert result.ok and result.truncated and result.response_body == b"\0" * (1 << 20)
    assert result.duration_ms < 5000


def test_the_send_path_setting() -> None:
    from core.config import ConfigError, load_settings

    assert load_settings({}).send_path == ""  # the executor's default
    assert load_settings({"CRONLEDGER_SEND_PATH": "Session"}).send_path == "session"
    with pytest.raises(ConfigError, match="CRONLEDGER_SEND_PATH must be one of connection, "
                                          "session, got 'fast'"):
        load_settings({"CRONLEDGER_SEND_PATH": "fast"})
    with pytest.raises(ValueError, match="send_path must be one of"):
        Executor(FrozenClock(T0), 1000, send_path="fast")


async def test_the_origins_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from core.http import exchange

    monkeypatch.setattr(exchange, "ORIGINS_KEPT", 10)
    async with executor_on("connection") as executor:
        for n in range(25):
            assert executor.prepare(dispatch(f"http://host-{n}.example/")).built is not None
        assert 0 < len(executor.connection_path._origins) <= 10
