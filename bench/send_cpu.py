"""CPU per request sent: the executor's path and the lower-level candidates, side by side.

    uv run python bench/send_cpu.py [--requests 5000] [--concurrency 100] [--rounds 3]
        [--profile] [--smoke]

A minimal HTTP/1.1 sink runs in a process of its own (it answers every request ``200`` with a
2-byte body and counts them). In this process, with the event loop the worker uses (asyncio's
default), each client sends ``--requests`` GET requests carrying the headers a job attempt
carries, ``--concurrency`` at a time on connections opened ahead (as the worker's preconnect
does), and the CPU this process spent (``time.process_time``) is divided by the requests:

- ``executor/session`` and ``executor/connection``:
  :meth:`core.runs.executor.Executor.transmit` of attempts built ahead with
  :meth:`~core.runs.executor.Executor.prepare`, on each send path (``CRONLEDGER_SEND_PATH``,
  :mod:`core.http.exchange`): what a worker does at a slot, result and bookkeeping included
  (not the recording in the database); the CPU of ``prepare`` (before the slot) is printed
  apart;
- ``aiohttp``: ``ClientSession.request`` on a session from :func:`core.http.clients.make_session`
  and the body read, nothing else: the client library's share of the executor's cost;
- ``httptools``: the request bytes written on an ``asyncio.Protocol`` of its own and the answer
  parsed with ``httptools.HttpResponseParser`` (the C parser uvicorn uses): a floor for a send
  path of our own, without any of the executor's guarantees (timeouts, caps, TLS, netguard);
- ``httptools+guards``: the same with the per-request work such a path would keep (the
  attempt's deadline, headers as a dict, the body cap, the clock, the status check).

``--profile`` runs the executor once more on each path under ``cProfile`` and prints where
its CPU went, side by side, grouped by what the code does (build, write, read and parse, event
loop, tracing, our bookkeeping). Every request must be answered 200 and the sink must count
exactly the requests sent (exit status 1 otherwise); ``--smoke`` is the CI check
(``bench/smoke.py``): a few hundred requests per client, the same count checks, no timing
assertion.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import multiprocessing
import os
import pstats
import socket
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import httptools

from core.clock import SystemClock
from core.job_definition import Request, RetryPolicy
from core.runs.dispatch import Dispatch
from core.runs.executor import Executor, outbound_headers

ANSWER = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n"
          b"Date: Wed, 02 Dec 2026 07:00:00 GMT\r\nServer: sink\r\n\r\nok")


# -- the sink (a process of its own) ------------------------------------------------------------
class _Sink(asyncio.Protocol):
    count = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while b"\r\n\r\n" in self.buffer:  # GET requests: no body
            _, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
            _Sink.count += 1
            self.transport.write(ANSWER)  # type: ignore[attr-defined]


def _serve(sock: socket.socket, counts: multiprocessing.Queue, stop: multiprocessing.Event
           ) -> None:
    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(_Sink, sock=sock)
        async with server:
            while not stop.is_set():
                await asyncio.sleep(0.05)
        counts.put(_Sink.count)

    asyncio.run(main())


# -- the clients -------------------------------------------------------------------------------
def _dispatch(url: str) -> Dispatch:
    return Dispatch(run_id=uuid.uuid4(), job_id=uuid.uuid4(), team_id=uuid.uuid4(),
                    scheduled_for=datetime.now(UTC), trigger="schedule", attempt=1,
                    max_attempts=1, lease_token=uuid.uuid4(), version=1,
                    request=Request(method="GET", url=url, headers={}, body=None),
                    timeout_seconds=10, retry=RetryPolicy.from_json({}))


async def _bounded(count: int, concurrency: int, one: Callable[[int], Awaitable[int]]) -> list[int]:
    statuses: list[int] = []
    queue = iter(range(count))

    async def lane() -> None:
        for n in queue:
            statuses.append(await one(n))

    await asyncio.gather(*(lane() for _ in range(concurrency)))
    return statuses


PREPARE_CPU: dict[str, list[float]] = {}  # send path -> µs per Executor.prepare, each run


async def run_executor(url: str, count: int, concurrency: int,
                       profile: cProfile.Profile | None = None, send_path: str = "session"
                       ) -> tuple[float, list[int]]:
    executor = Executor(SystemClock(), body_limit=1024 * 1024, max_connections=concurrency,
                        send_path=send_path)
    try:
        dispatches = [_dispatch(url) for _ in range(count)]
        started = time.process_time()
        prepared = [executor.prepare(d) for d in dispatches]
        if profile is None:
            PREPARE_CPU.setdefault(send_path, []).append(
                (time.process_time() - started) * 1e6 / count)
        await executor.preconnect(prepared[:concurrency])
        started = time.process_time()

        async def one(n: int) -> int:
            return (await executor.transmit(prepared[n])).response_status or 0

        if profile is not None:
            profile.enable()
        statuses = await _bounded(count, concurrency, one)
        if profile is not None:
            profile.disable()
        return time.process_time() - started, statuses
    finally:
        await executor.aclose()


async def run_aiohttp(url: str, count: int, concurrency: int) -> tuple[float, list[int]]:
    from core.http.clients import make_session

    session = make_session(concurrency)
    headers = [outbound_headers(_dispatch(url)) for _ in range(count)]
    try:
        async def warm(_: int) -> int:
            async with session.get(url) as response:
                await response.read()
                return response.status

        await _bounded(concurrency, concurrency, warm)  # connections opened ahead
        started = time.process_time()

        async def one(n: int) -> int:
            async with session.request("GET", url, headers=headers[n],
                                       allow_redirects=False) as response:
                await response.read()
                return response.status

        statuses = await _bounded(count, concurrency, one)
        return time.process_time() - started, statuses
    finally:
        await session.close()


class _Connection(asyncio.Protocol):
    """One keep-alive connection: write a request, parse its answer with httptools."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.answer: asyncio.Future[int] | None = None
        self.body: list[bytes] = []
        self.headers: list[tuple[bytes, bytes]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        if self.answer is not None and not self.answer.done():
            self.answer.set_result(self.parser.get_status_code())

    async def request(self, head: bytes) -> int:
        self.answer = asyncio.get_running_loop().create_future()
        self.body, self.headers = [], []
        self.transport.write(head)  # type: ignore[attr-defined]
        return await self.answer


async def run_httptools(url: str, count: int, concurrency: int) -> tuple[float, list[int]]:
    host, port = url.removeprefix("http://").split("/")[0].split(":")
    loop = asyncio.get_running_loop()
    connections = [(await loop.create_connection(_Connection, host, int(port)))[1]
                   for _ in range(concurrency)]
    free: list[_Connection] = list(connections)
    heads = [outbound_headers(_dispatch(url)) for _ in range(count)]
    try:
        started = time.process_time()

        async def one(n: int) -> int:
            connection = free.pop()
            try:
                lines = [f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\n"]
                lines += [f"{name}: {value}\r\n" for name, value in heads[n].items()]
                lines.append("\r\n")
                return await connection.request("".join(lines).encode("latin-1"))
            finally:
                free.append(connection)

        statuses = await _bounded(count, concurrency, one)
        return time.process_time() - started, statuses
    finally:
        for connection in connections:
            connection.transport.close()


async def run_guarded(url: str, count: int, concurrency: int) -> tuple[float, list[int]]:
    """``httptools`` with the per-request work a real send path keeps: the attempt's deadline
    (``asyncio.timeout``), the request built from the prepared attempt, the response headers
    as a dict, the body capped, the clock read at start and end, the status accepted."""
    from datetime import timedelta

    clock = SystemClock()
    host, port = url.removeprefix("http://").split("/")[0].split(":")
    loop = asyncio.get_running_loop()
    connections = [(await loop.create_connection(_Connection, host, int(port)))[1]
                   for _ in range(concurrency)]
    free: list[_Connection] = list(connections)
    executor = Executor(SystemClock(), body_limit=1024 * 1024)
    prepared = [executor.prepare(_dispatch(url)) for _ in range(count)]
    limit = 1024 * 1024
    try:
        started = time.process_time()

        async def one(n: int) -> int:
            item = prepared[n]
            connection = free.pop()
            try:
                at = clock.now()
                t0 = time.perf_counter()
                async with asyncio.timeout(item.dispatch.timeout_seconds):
                    head = "".join([f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\n",
                                    *(f"{k}: {v}\r\n" for k, v in item.headers.items()),
                                    "\r\n"])
                    status = await connection.request(head.encode("latin-1"))
                headers = {k.decode("latin-1"): v.decode("latin-1")
                           for k, v in connection.headers}
                body = b"".join(connection.body)[:limit]
                duration = round((time.perf_counter() - t0) * 1000)
                _ = (at + timedelta(milliseconds=duration), headers, body,
                     200 <= status < 300)
                return status
            finally:
                free.append(connection)

        statuses = await _bounded(count, concurrency, one)
        return time.process_time() - started, statuses
    finally:
        for connection in connections:
            connection.transport.close()


async def run_connection(url: str, count: int, concurrency: int,
                         profile: cProfile.Profile | None = None) -> tuple[float, list[int]]:
    return await run_executor(url, count, concurrency, profile, send_path="connection")


CLIENTS: dict[str, Callable[..., Awaitable[tuple[float, list[int]]]]] = {
    "executor/session": run_executor, "executor/connection": run_connection,
    "aiohttp": run_aiohttp, "httptools": run_httptools, "httptools+guards": run_guarded}

GROUPS = (  # (group, fragments of "file:function"), the first that matches
    ("socket send (the system call)", ("'send' of '_socket",)),
    ("tracing (aiohttp trace hooks, progress phases)", ("tracing.py", "clients.py:on_event",
                                                       "clients.py:on_cache_hit")),
    ("build (request object, URL, headers)", ("client_reqrep.py:__init__", "yarl", "multidict",
                                              "client_reqrep.py:update", "helpers.py",
                                              "client_reqrep.py:_", "cookiejar")),
    ("write (serialise the request)", ("http_writer.py", "client_reqrep.py:send",
                                       "client_reqrep.py:write_bytes", "selector_events.py:write",
                                       "_serialize_headers")),
    ("read and parse (response, body stream)", ("http_parser.py", "client_proto.py",
                                                "streams.py", "client_reqrep.py", "_http_parser",
                                                "'recv'", "_read_ready")),
    ("connection pool", ("connector.py",)),
    ("the connection path (request written, head read)", ("core/http/exchange.py",)),
    ("session request (timeouts, context managers)", ("aiohttp/client.py", "helpers.py",
                                                      "contextlib.py")),
    ("our bookkeeping (executor, result, signing, clock)", ("core/", "dataclasses", "datetime",
                                                            "'extend' of 'bytearray'")),
    ("event loop (tasks, futures, timers, selector)", ("asyncio", "selectors.py", "contextvars",
                                                       "events.py", "'select'", "'poll'",
                                                       "heapq", "_contextvars")),
)


def _group(key: tuple[str, int, str]) -> str:
    where = f"{key[0]}:{key[2]}"
    for name, fragments in GROUPS:
        if any(fragment in where for fragment in fragments):
            return name
    return "other"


def profile_executor(url: str, count: int, concurrency: int, send_path: str
                     ) -> tuple[float, dict[str, float]]:
    """cProfile over ``count`` transmits: (total profiled seconds, seconds per group)."""
    profile = cProfile.Profile()
    asyncio.run(run_executor(url, count, concurrency, profile, send_path))
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    groups: dict[str, float] = {}
    for key, (_, _, tottime, _, _) in stats.items():
        groups[_group(key)] = groups.get(_group(key), 0.0) + tottime
    return sum(groups.values()) or 1.0, groups


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3, help="runs of each client, interleaved")
    parser.add_argument("--clients", type=lambda t: t.split(","), default=list(CLIENTS))
    parser.add_argument("--profile", action="store_true", help="where the executor's CPU goes")
    parser.add_argument("--smoke", action="store_true", help="CI check: small, counts only")
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio",
                        help="the clients' event loop (the worker runs on asyncio's)")
    args = parser.parse_args()
    if args.loop == "uvloop":
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    if args.smoke:
        args.requests, args.concurrency, args.rounds, args.profile = 300, 20, 1, True
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    counts: multiprocessing.Queue = multiprocessing.Queue()
    stop = multiprocessing.Event()
    sink = multiprocessing.Process(target=_serve, args=(sock, counts, stop), daemon=True)
    sink.start()
    sent, ok = 0, True
    cpu: dict[str, list[float]] = {name: [] for name in args.clients}
    try:
        for _ in range(args.rounds):
            for name in args.clients:
                wall = time.perf_counter()
                seconds, statuses = asyncio.run(CLIENTS[name](url, args.requests,
                                                              args.concurrency))
                wall = time.perf_counter() - wall
                sent += args.requests + (args.concurrency if name == "aiohttp" else 0)
                answered = statuses.count(200)
                ok &= answered == args.requests
                cpu[name].append(seconds * 1e6 / args.requests)
                print(f"{name:19} {args.requests} requests, {answered} answered 200, "
                      f"{cpu[name][-1]:6.1f} µs CPU each, {args.requests / wall:,.0f}/s wall",
                      flush=True)
        profiles = {path: profile_executor(url, args.requests, args.concurrency, path)
                    for path in (("session", "connection") if args.profile else ())}
        sent += args.requests * len(profiles)
    finally:
        stop.set()
        sink.join(10)
    counted = counts.get(timeout=10)
    print(f"\n{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, {args.requests} requests per "
          f"run, {args.concurrency} in flight, {args.rounds} rounds, {args.loop} loop\n")
    print("| client | CPU µs per request (median) | runs |\n|---|---:|---|")
    for name, values in cpu.items():
        runs = ", ".join(f"{v:.0f}" for v in values)
        print(f"| {name} | {statistics.median(values):.0f} | {runs} |")
    for path, values in PREPARE_CPU.items():
        print(f"\nExecutor.prepare on the {path} path (before the slot, not counted above): "
              f"{statistics.median(values):.0f} µs per attempt (median of "
              f"{', '.join(f'{v:.0f}' for v in values)})", end="")
    print()
    before, after = cpu.get("executor/session"), cpu.get("executor/connection")
    if before and after:
        ratio = statistics.median(after) / statistics.median(before)
        print(f"\nexecutor, connection path / session path: {ratio:.2f} of the CPU per request")
    if profiles:
        print("\nWhere the executor's CPU goes (cProfile, µs per request of profiled time, "
              "which cProfile inflates; share of it):\n")
        print("| part | session path | connection path |\n|---|---:|---:|")
        names = sorted({n for _, groups in profiles.values() for n in groups},
                       key=lambda n: -profiles["session"][1].get(n, 0.0))
        for name in [*names, "total"]:
            cells = []
            for total, groups in profiles.values():
                seconds = total if name == "total" else groups.get(name, 0.0)
                cells.append(f"{seconds * 1e6 / args.requests:.0f} ({seconds / total:.0%})")
            print(f"| {name} | {' | '.join(cells)} |")
    exact = counted == sent
    print(f"\nsink counted {counted} requests of {sent} sent: {'ok' if exact else 'MISMATCH'}")
    return 0 if ok and exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
