"""One DNS fault, one error class: a resolver that never answers is ``dns`` for a job attempt
(whichever of aiohttp's connect timer or the attempt's deadline fires first) and for a
notification delivery, and so is a resolver that answers SERVFAIL (docs/api.md, "Error
classes"). The resolver is real: queries go over UDP to a local server (tests/dns.py)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from core.clock import FrozenClock
from core.config import Settings
from core.http.clients import classify_error, make_client
from core.notifications.delivery import Delivery, Target
from core.runs.dispatch import Dispatch
from core.runs.executor import Executor
from tests.dns import SilentDNS

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def dispatch(url: str, timeout: float) -> Dispatch:
    return Dispatch(
        run_id=uuid.uuid4(), job_id=uuid.uuid4(), team_id=uuid.uuid4(), scheduled_for=T0,
        trigger="manual", attempt=1, max_attempts=1, lease_token=uuid.uuid4(), version=1,
        request={"method": "GET", "url": url, "headers": {}, "body": None},
        timeout_seconds=timeout, retry={})


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
