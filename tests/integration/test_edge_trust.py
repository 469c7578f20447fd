"""What the API believes about its callers: ``X-Forwarded-For`` only from trusted proxies
(``CRONLEDGER_TRUSTED_PROXIES``), and ``/metrics`` behind ``CRONLEDGER_METRICS_TOKEN``."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace

import httpx
import pytest
from litestar.testing import AsyncTestClient

from api.app import create_app
from core.clock import SystemClock
from core.config import ConfigError, Settings, load_settings
from core.http.proxies import TrustedProxies
from tests.teams import Team


@asynccontextmanager
async def serving(dsn: str,
                  settings: Settings) -> AsyncIterator[Callable[[str], httpx.AsyncClient]]:
    """The app with its lifespan running; yields ``client(peer)``: an HTTP client whose
    requests come from the peer address ``peer`` (the ASGI scope's ``client``)."""
    app = create_app(dsn, settings, SystemClock())
    async with AsyncTestClient(app=app, raise_server_exceptions=False):
        clients: list[httpx.AsyncClient] = []

        def client(peer: str) -> httpx.AsyncClient:
            c = httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(peer, 40000)),
                                  base_url="http://testserver")
            clients.append(c)
            return c

        try:
            yield client
        finally:
            for c in clients:
                await c.aclose()


# -- X-Forwarded-For ---------------------------------------------------------------------------
@pytest.mark.parametrize(("trusted", "peer", "header", "expected"), [
    ("127.0.0.1,::1", "203.0.113.7", "198.51.100.1", "203.0.113.7"),  # untrusted peer: ignored
    ("127.0.0.1,::1", "127.0.0.1", "198.51.100.1", "198.51.100.1"),
    ("127.0.0.1,::1", "::1", "198.51.100.1", "198.51.100.1"),
    ("10.0.0.0/8", "10.1.2.3", "198.51.100.1:4711", "198.51.100.1"),  # port dropped
    ("10.0.0.0/8", "10.1.2.3", "[2001:db8::1]:443", "2001:db8::1"),
    # multi-hop: the right-most address that is not a trusted proxy; the client's own text
    # (left of it) is never believed
    ("10.0.0.0/8", "10.0.0.2", "6.6.6.6, 198.51.100.1, 10.0.0.1", "198.51.100.1"),
    ("10.0.0.0/8", "10.0.0.2", "10.0.0.9, 10.0.0.1", "10.0.0.9"),  # all trusted: left-most
    ("*", "203.0.113.7", "198.51.100.1, 10.0.0.1", "198.51.100.1"),  # *: left-most
    ("10.0.0.0/8", "10.0.0.2", "not-an-ip", "10.0.0.2"),  # malformed: the peer
    ("10.0.0.0/8", "10.0.0.2", "6.6.6.6, garbage", "10.0.0.2"),
    ("10.0.0.0/8", "10.0.0.2", "", "10.0.0.2"),
    ("10.0.0.0/8", "10.0.0.2", " , ", "10.0.0.2"),
    ("10.0.0.0/8", "10.0.0.2", "1.2.3.4" + ", 1.2.3.4" * 1000, "10.0.0.2"),  # oversized
    ("10.0.0.0/8", None, "198.51.100.1", None),  # no peer (a Unix socket): nothing trusted
])
def test_client_address_rules(trusted: str, peer: str | None, header: str,
                              expected: str | None) -> None:
    assert TrustedProxies.parse(trusted).client(peer, header) == expected


@pytest.mark.parametrize("value", ["10.0.0.300", "10.0.0.0/33", "localhost", ",", "1.2.3.4,x"])
def test_bad_trusted_proxies_stop_the_start(value: str) -> None:
    with pytest.raises(ConfigError, match="CRONLEDGER_TRUSTED_PROXIES"):
        load_settings({"CRONLEDGER_TRUSTED_PROXIES": value})


def test_trusted_proxies_default_is_uvicorns() -> None:
    assert load_settings({}).trusted_proxies == "127.0.0.1,::1"
    assert load_settings({"CRONLEDGER_TRUSTED_PROXIES": "10.0.0.0/8, *"}).trusted_proxies \
        == "10.0.0.0/8, *"


async def _ping_addr(client: httpx.AsyncClient, api: AsyncTestClient, team: Team,
                     headers: list[tuple[str, str]]) -> str | None:
    r = await api.post("/v1/monitors", json={"name": f"m {uuid.uuid4().hex[:8]}",
                                             "schedule": "1h"},  # names are unique per team
                       headers=team.auth)
    assert r.status_code == 201, r.text
    monitor = r.json()
    r = await client.get(f"/ping/{monitor['ping_token']}", headers=headers)
    assert r.status_code == 200, r.text
    r = await api.get(f"/v1/monitors/{monitor['id']}/pings", headers=team.auth)
    (ping,) = r.json()["items"]
    return ping["remote_addr"]


async def test_recorded_remote_addr_trusts_only_configured_proxies(
    shared_dsn: str, settings: Settings, api: AsyncTestClient, team: Team
) -> None:
    spoof = [("X-Forwarded-For", "6.6.6.6")]
    async with serving(shared_dsn, replace(settings, trusted_proxies="10.0.0.0/8")) as client:
        assert await _ping_addr(client("203.0.113.7"), api, team, spoof) == "203.0.113.7"
        assert await _ping_addr(client("10.9.9.9"), api, team, spoof) == "6.6.6.6"
        # two headers (two proxies): joined, right-most untrusted entry
        assert await _ping_addr(client("10.9.9.9"), api, team, [
            ("X-Forwarded-For", "6.6.6.6"), ("X-Forwarded-For", "198.51.100.4, 10.0.0.1")]
        ) == "198.51.100.4"
        assert await _ping_addr(client("10.9.9.9"), api, team,
                                [("X-Forwarded-For", "bogus")]) == "10.9.9.9"
    async with serving(shared_dsn, settings) as client:  # the default: loopback only
        assert await _ping_addr(client("203.0.113.7"), api, team, spoof) == "203.0.113.7"
        assert await _ping_addr(client("127.0.0.1"), api, team, spoof) == "6.6.6.6"


# -- /metrics ----------------------------------------------------------------------------------
async def test_metrics_token_required_when_set(shared_dsn: str, settings: Settings) -> None:
    token = "m3trics-t0ken"
    async with serving(shared_dsn, replace(settings, metrics_token=token)) as client:
        c = client("203.0.113.7")
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": token},
                        {"Authorization": f"Basic {token}"},
                        {"Authorization": f"Bearer {token}x"}):
            r = await c.get("/metrics", headers=headers)
            assert r.status_code == 401, (headers, r.text)
            assert r.headers["www-authenticate"] == "Bearer"
            assert r.headers["content-type"].startswith("application/problem+json")
            assert "cronledger_" not in r.text
        r = await c.get("/metrics", headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 200 and "cronledger_jobs" in r.text
        r = await c.get("/metrics", headers={"Authorization": f"bearer  {token} "})
        assert r.status_code == 200


async def test_metrics_open_without_token(shared_dsn: str, settings: Settings) -> None:
    assert settings.metrics_token == ""
    async with serving(shared_dsn, settings) as client:
        r = await client("203.0.113.7").get("/metrics")
        assert r.status_code == 200 and "cronledger_jobs" in r.text
        assert r.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"


def test_metrics_token_setting() -> None:
    assert load_settings({"CRONLEDGER_METRICS_TOKEN": " abc "}).metrics_token == "abc"
    assert "abc" not in repr(load_settings({"CRONLEDGER_METRICS_TOKEN": "abc"}))
    with pytest.raises(ConfigError, match="CRONLEDGER_METRICS_TOKEN"):
        load_settings({"CRONLEDGER_METRICS_TOKEN": "a b"})
