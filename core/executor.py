"""The HTTP executor: sends one attempt of a run and classifies its outcome (DESIGN 5).

One shared ``httpx.AsyncClient`` per worker, backed by the aiohttp transport from
``httpx-aiohttp`` (httpx's own pool spends most of its CPU on connection assignment once about a
hundred requests are in flight; see docs/benchmarks.md). The request is sent outside any database
transaction; the caller records the :class:`AttemptResult`.
"""

from __future__ import annotations

import asyncio
import ssl
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

from core.clock import Clock, rfc3339
from core.version import USER_AGENT


@dataclass(frozen=True)
class Dispatch:
    """One claimed attempt of a run, ready to send.

    Attributes:
        run_id: the run; also the ``Idempotency-Key``.
        scheduled_for: the slot (UTC); lateness is measured from it.
        attempt: 1-based attempt number.
        lease_token: proves this worker still owns the run when recording.
        request: ``{"method", "url", "headers", "body"}`` as defined on the job.
        timeout_seconds: bound on the whole attempt.
        retry: the job's retry policy.
    """

    run_id: uuid.UUID
    job_id: uuid.UUID
    team_id: uuid.UUID
    scheduled_for: datetime
    trigger: str
    attempt: int
    max_attempts: int
    lease_token: uuid.UUID
    version: int
    request: dict[str, Any]
    timeout_seconds: float
    retry: dict[str, Any]


@dataclass
class AttemptResult:
    """What happened to one attempt. Times are UTC; ``duration_ms`` is wall time of the attempt."""

    dispatch: Dispatch
    started_at: datetime
    finished_at: datetime
    duration_ms: int
    request: dict[str, Any]
    response_status: int | None = None
    response_headers: dict[str, str] | None = None
    response_body: bytes | None = None
    truncated: bool = False
    error_class: str | None = None
    error: str | None = None
    retry_after: str | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.error_class is None

    @property
    def lateness_ms(self) -> int:
        """Start of this attempt minus the slot, in milliseconds (never negative)."""
        late = (self.started_at - self.dispatch.scheduled_for) / timedelta(milliseconds=1)
        return max(0, round(late))


def make_client(max_connections: int) -> httpx.AsyncClient:
    """The shared client: aiohttp transport, no redirects followed, no environment proxies."""
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=None)
    transport = AiohttpTransport(limits=limits, trust_env=False)
    return httpx.AsyncClient(transport=transport, follow_redirects=False, trust_env=False)


def outbound_headers(dispatch: Dispatch) -> dict[str, str]:
    """The job's headers plus cronledger's own (User-Agent, Idempotency-Key, X-Cronledger-*)."""
    headers = {"User-Agent": USER_AGENT}
    headers.update(dispatch.request.get("headers") or {})
    headers.update({
        "Idempotency-Key": str(dispatch.run_id),
        "X-Cronledger-Job-Id": str(dispatch.job_id),
        "X-Cronledger-Scheduled-For": rfc3339(dispatch.scheduled_for) or "",
        "X-Cronledger-Attempt": str(dispatch.attempt),
    })
    return headers


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return chain


def classify_error(exc: BaseException, timeout_seconds: float) -> tuple[str, str]:
    """Map a transport exception to ``(error_class, message)``.

    Classes: ``timeout`` (message says connect or read), ``dns``, ``tls``, ``connect``.
    """
    chain = _causes(exc)
    # aiohttp's own exception (the transport's cause) is the most precise; httpx-aiohttp maps
    # every aiohttp connection error to httpx.ConnectTimeout, so it is looked at first.
    for err in chain:
        if isinstance(err, aiohttp.ConnectionTimeoutError):
            return "timeout", f"connect timeout after {timeout_seconds:g} s"
        if isinstance(err, aiohttp.SocketTimeoutError):
            return "timeout", f"read timeout after {timeout_seconds:g} s"
        if isinstance(err, aiohttp.ClientConnectorDNSError):
            return "dns", f"DNS lookup failed: {err.os_error}"
        if isinstance(err, aiohttp.ClientSSLError | ssl.SSLError):
            return "tls", f"TLS error: {err}"
        if isinstance(err, aiohttp.ServerDisconnectedError):
            return "connect", "the server closed the connection without a response"
        if isinstance(err, aiohttp.ClientConnectorError):
            return "connect", f"cannot connect: {err.os_error}"
    for err in chain:
        if isinstance(err, httpx.ConnectTimeout):
            return "timeout", f"connect timeout after {timeout_seconds:g} s"
        if isinstance(err, httpx.TimeoutException | TimeoutError):
            return "timeout", f"read timeout after {timeout_seconds:g} s"
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return "connect", f"invalid request URL: {exc}"
    return "connect", f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class Executor:
    """Sends attempts on one shared client.

    Args:
        client: the shared ``httpx.AsyncClient`` (see :func:`make_client`).
        clock: source of ``started_at`` / ``finished_at``.
        body_limit: response bytes kept (``CRONLEDGER_RESPONSE_BODY_LIMIT``); when the body is
            longer, reading stops there and ``truncated`` is set.
    """

    def __init__(self, client: httpx.AsyncClient, clock: Clock, body_limit: int) -> None:
        self.client = client
        self.clock = clock
        self.body_limit = body_limit

    async def send(self, dispatch: Dispatch) -> AttemptResult:
        """Send one attempt and return its result; never raises for transport failures."""
        spec = dispatch.request
        headers = outbound_headers(dispatch)
        recorded = {"method": spec["method"], "url": spec["url"], "headers": headers,
                    "body": spec.get("body")}
        body = spec.get("body")
        started_at = self.clock.now()
        t0 = time.perf_counter()
        result = AttemptResult(dispatch, started_at, started_at, 0, recorded)
        try:
            async with asyncio.timeout(dispatch.timeout_seconds):
                await self._exchange(spec, headers, body, dispatch.timeout_seconds, result)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a recorded outcome
            result.error_class, result.error = classify_error(exc, dispatch.timeout_seconds)
        result.duration_ms = round((time.perf_counter() - t0) * 1000)
        result.finished_at = started_at + timedelta(milliseconds=result.duration_ms)
        if result.error_class is None and not 200 <= (result.response_status or 0) < 300:
            result.error_class = "http_status"
            result.error = f"HTTP {result.response_status}"
        return result

    async def _exchange(
        self, spec: dict[str, Any], headers: dict[str, str], body: str | None,
        timeout: float, result: AttemptResult,
    ) -> None:
        request = self.client.build_request(
            spec["method"], spec["url"], headers=headers,
            content=body.encode() if body is not None else None,
            timeout=httpx.Timeout(timeout),
        )
        response = await self.client.send(request, stream=True)
        try:
            result.response_status = response.status_code
            result.response_headers = dict(response.headers.items())
            result.retry_after = response.headers.get("retry-after")
            kept = bytearray()
            async for chunk in response.aiter_raw():
                room = self.body_limit - len(kept)
                if room > 0:
                    kept.extend(chunk[:room])
                if len(chunk) > room:
                    result.truncated = True
                    break  # the rest is not kept; closing the stream drops the connection
            result.response_body = bytes(kept)
        finally:
            await response.aclose()
