"""One DNS fault, one error class: a resolver that never answers is ``dns`` for a job attempt
(whichever of aiohttp's connect timer or the attempt's deadline fires first) and for a
notification delivery, and so is a resolver that answers SERVFAIL (docs/api.md, "Error
classes"). The resolver is real: queries go over UDP to a local server (tests/dns.py)."""

from __future__ import annotations

import asyncio
import socket
import uuid
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from core.clock import FrozenClock
from core.config import Settings
from core.http.clients import classify_error, make_client
from core.job_definition import Request, RetryPolicy
from core.notifications.delivery import Delivery, Target
from core.runs.dispatch import Dispatch
from core.runs.executor import Executor
from tests.dns import SilentDNS
from tests.helpers import eventually
from tests.integration.test_executor import unanswered_port

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def dispatch(url: str, timeout: float) -> Dispatch:
    return Dispatch(
        run_id=uuid.uuid4(), job_id=uuid.uuid4(), team_id=uuid.uuid4(), scheduled_for=T0,
        trigger="manual", attempt=1, max_attempts=1, lease_token=uuid.uuid4(), version=1,
        request=Request(method="GET", url=url, headers={}, body=None),
        timeout_seconds=timeout, retry=RetryPolicy.from_json({}))


@pytest.mark.parametrize("servfail", [False, True])
async def test_job_attempt_with_an_unanswering_resolver_is_dns(servfail: bool) -> None:
    async with SilentDNS(servfail=servfail) as dns:
        executor = Executor(FrozenClock(T0), 1000, max_connections=5, resolver=dns.resolver())
        try:
            result = await executor.send(dispatch("http://jobs.cronledger.test/hook", 0.3))
        finally:
            await executor.aclose()
        assert dns.queries >= 1
    assert result.error_class == "dns", result.error
    assert result.error and "DNS" in result.error


@pytest.mark.parametrize("servfail", [False, True])
async def test_notification_with_an_unanswering_resolver_is_dns(servfail: bool) -> None:
    settings = replace(Settings(database_url=None), notify_timeout_seconds=0.3)
    async with SilentDNS(servfail=servfail) as dns:
        client = make_client(5, resolver=dns.resolver())
        delivery = Delivery(client, settings, FrozenClock(T0))
        target = Target(uuid.uuid4(), uuid.uuid4(), "hook", "webhook", {},
                        {"url": "http://alerts.cronledger.test/hook"})
        try:
            result = await delivery.send(target, {"event": "down", "subject": {}}, uuid.uuid4())
        finally:
            await client.aclose()
        assert dns.queries >= 1
    assert not result.ok
    assert result.error_class == "dns", result.error


def test_every_timer_during_the_lookup_gives_dns() -> None:
    import aiohttp
    import httpx

    for exc in (TimeoutError(), aiohttp.ConnectionTimeoutError("connect"),
                httpx.ConnectTimeout("connect"), httpx.ReadTimeout("read")):
        assert classify_error(exc, 2, "dns") == ("dns", "DNS lookup unanswered after 2 s")


async def test_an_attempt_waiting_for_the_preconnects_lookup_is_dns() -> None:
    """The lookup began during the preconnect before the slot (aiohttp resolves a host once for
    every request that needs it): the attempt at the slot waits for that lookup, and its
    timeout is still ``dns``, every time."""
    async with SilentDNS() as dns:
        executor = Executor(FrozenClock(T0), 1000, max_connections=5, resolver=dns.resolver())
        try:
            results = []
            for n in range(5):
                prepared = executor.prepare(dispatch(f"http://slot{n}.cronledger.test/", 0.3))
                preconnect = asyncio.create_task(executor.preconnect([prepared]))
                await eventually(lambda n=n: dns.queries > n, what="the preconnect's lookup")
                preconnect.cancel()  # at the slot, as the worker does
                results.append(await executor.transmit(prepared))
        finally:
            await executor.aclose()
    assert [(r.error_class, r.error) for r in results] == [
        ("dns", "DNS lookup unanswered after 0.3 s")] * 5


async def test_an_attempt_that_waited_for_a_lookup_that_answered_is_not_dns() -> None:
    """Once the shared lookup has answered, a connection that then hangs is a connect
    timeout, not ``dns``."""
    with unanswered_port() as port:
        executor = Executor(FrozenClock(T0), 1000, max_connections=5,
                            resolver=_SlowLocalhost(port))
        try:
            first = executor.prepare(dispatch("http://slow.cronledger.test/", 1.0))
            second = executor.prepare(dispatch("http://slow.cronledger.test/", 1.0))
            results = await asyncio.gather(executor.transmit(first), executor.transmit(second))
        finally:
            await executor.aclose()
    for result in results:
        assert result.error_class == "timeout", result.error
        assert (result.error or "").startswith("connect timeout")


class _SlowLocalhost(AbstractResolver):
    """Answers 127.0.0.1:``port`` after 0.2 s."""

    def __init__(self, port: int) -> None:
        self.port = port

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET
                      ) -> list[ResolveResult]:
        await asyncio.sleep(0.2)
        return [{"hostname": host, "host": "127.0.0.1", "port": self.port,
                 "family": socket.AF_INET, "proto": 0, "flags": 0}]

    async def close(self) -> None:
        return None
