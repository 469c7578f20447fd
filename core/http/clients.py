"""Outbound HTTP, shared by job attempts (:mod:`core.runs.executor`) and notification delivery
(:mod:`core.notifications.delivery`): the clients, the one error classification, and signing.

- :func:`make_session` (aiohttp, what job attempts go out on) and :func:`make_client` (an
  ``httpx.AsyncClient`` over such a session, for notifications): no redirects, no proxies or
  ``.netrc`` from the environment, no cookie jar, optionally refusing private targets.
- :func:`classify_error` maps a transport exception to ``(error_class, message)``
  (docs/api.md, "Error classes"); :func:`tracking_progress` records, through the session's
  trace hooks, how far a request got, so a resolver that never answers is ``dns`` for both.
- :func:`sign` computes ``X-Cronledger-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
  "<t>.<body>">`` over the exact body bytes sent (Stripe's webhook scheme; docs/api.md and
  docs/notifications.md), the same header for jobs and webhooks so receivers verify one way.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import hmac
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import aiohttp
import httpx
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.http_exceptions import ContentEncodingError, HttpProcessingError
from aiohttp.resolver import DefaultResolver
from httpx_aiohttp import AiohttpTransport

from core.http.netguard import BlockedTarget, GuardedResolver, check_literal

SIGNATURE_HEADER = "X-Cronledger-Signature"
KEEPALIVE_SECONDS = 5.0


# -- the clients ------------------------------------------------------------------------------
@dataclass
class _Progress:
    """How far the current attempt got: ``dns`` | ``connect`` | ``request`` (connected)."""

    phase: str = "connect"


_PROGRESS: contextvars.ContextVar[_Progress | None] = contextvars.ContextVar(
    "cronledger_attempt_progress", default=None)


@contextlib.contextmanager
def tracking_progress() -> Iterator[_Progress]:
    """Track how far the requests sent inside the block get (through the session's trace
    hooks, :func:`make_session`), for :func:`classify_error`: job attempts and notification
    deliveries classify the same fault the same way."""
    progress = _Progress()
    token = _PROGRESS.set(progress)
    try:
        yield progress
    finally:
        _PROGRESS.reset(token)


def current_phase() -> str:
    """The phase reached by the request being tracked (``request`` when none is)."""
    progress = _PROGRESS.get()
    return progress.phase if progress is not None else "request"


def _phase_setter(phase: str) -> Any:
    async def on_event(_session: Any, _ctx: Any, _params: Any) -> None:
        progress = _PROGRESS.get()
        if progress is not None:
            progress.phase = phase
    return on_event


async def _refuse_blocked_literal(_session: Any, _ctx: Any,
                                  params: aiohttp.TraceRequestStartParams) -> None:
    check_literal(params.url.raw_host or "")


class _Lookups:
    """The host name lookups of one session in flight, and the requests waiting for another's.

    aiohttp resolves a host once for every request that needs it at the same time: the first
    request's lookup runs (``dns_resolvehost_start``), the others wait for its result and are
    told ``dns_cache_hit``. A request that waits for a lookup still in flight - one begun by
    the preconnect before the slot, whose resolver never answers - is in the ``dns`` phase
    too, until that lookup ends (measured: 5 of 20 such attempts were called "connect
    timeout").
    """

    def __init__(self) -> None:
        self.pending: dict[str, int] = {}  # host -> lookups of it in flight
        self.waiting: dict[str, list[_Progress]] = {}  # host -> requests waiting for them

    def begin(self, host: str) -> None:
        self.pending[host] = self.pending.get(host, 0) + 1

    def end(self, host: str) -> None:
        left = self.pending.get(host, 1) - 1
        if left > 0:
            self.pending[host] = left
            return
        self.pending.pop(host, None)
        for progress in self.waiting.pop(host, []):
            if progress.phase == "dns":
                progress.phase = "connect"

    async def on_cache_hit(self, _session: Any, _ctx: Any,
                           params: aiohttp.TraceDnsCacheHitParams) -> None:
        progress = _PROGRESS.get()
        if progress is not None and self.pending.get(params.host):
            progress.phase = "dns"
            self.waiting.setdefault(params.host, []).append(progress)


class _TrackedResolver(AbstractResolver):
    """``inner`` (aiohttp's default resolver when ``None``), telling ``lookups`` which
    lookups are in flight."""

    def __init__(self, inner: AbstractResolver | None, lookups: _Lookups) -> None:
        self.inner = inner or DefaultResolver()
        self.lookups = lookups

    async def resolve(self, host: str, port: int = 0,
                      family: int = 0) -> list[ResolveResult]:
        self.lookups.begin(host)
        try:
            # aiohttp's AbstractResolver says int, DefaultResolver socket.AddressFamily: same value
            return await self.inner.resolve(host, port, family)  # type: ignore[arg-type]
        finally:
            self.lookups.end(host)

    async def close(self) -> None:
        await self.inner.close()


def _trace_config(block_private_targets: bool, lookups: _Lookups) -> aiohttp.TraceConfig:
    trace = aiohttp.TraceConfig()
    trace.on_dns_cache_hit.append(lookups.on_cache_hit)
    trace.on_dns_resolvehost_start.append(_phase_setter("dns"))
    trace.on_dns_resolvehost_end.append(_phase_setter("connect"))
    trace.on_connection_create_end.append(_phase_setter("request"))
    trace.on_connection_reuseconn.append(_phase_setter("request"))
    if block_private_targets:
        trace.on_request_start.append(_refuse_blocked_literal)
    trace.freeze()
    return trace


def make_session(max_connections: int, *, block_private_targets: bool = False,
                 resolver: AbstractResolver | None = None) -> aiohttp.ClientSession:
    """An aiohttp session for outbound requests; call it inside the running event loop.

    No redirects are followed by the callers, no proxies or ``.netrc`` are taken from the
    environment, and there is **no cookie jar** (a cookie set by one job's target must never be
    sent with another job's request, possibly another team's).

    Args:
        max_connections: connection pool size.
        block_private_targets: refuse private and special-purpose addresses (see
            :mod:`core.http.netguard`), checked on resolved addresses at connect time.
        resolver: the host name resolver (aiohttp's default, the system's, when ``None``).
    """
    if block_private_targets:
        resolver = GuardedResolver(resolver)
    lookups = _Lookups()
    connector = aiohttp.TCPConnector(
        limit=max_connections, ssl=_ssl_context(), keepalive_timeout=KEEPALIVE_SECONDS,
        resolver=_TrackedResolver(resolver, lookups))
    return aiohttp.ClientSession(
        connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False,
        trace_configs=[_trace_config(block_private_targets, lookups)])


def _ssl_context() -> ssl.SSLContext:
    return httpx.create_ssl_context(trust_env=False)  # certifi's CA bundle, as httpx uses


def make_client(max_connections: int, *, block_private_targets: bool = False,
                resolver: AbstractResolver | None = None) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` over an aiohttp session from :func:`make_session` (through the
    ``httpx-aiohttp`` transport), for notifications and other non-critical requests: no
    redirects, no proxies from the environment, no cookie jar. ``resolver`` as for
    :func:`make_session`."""

    def session() -> aiohttp.ClientSession:  # created lazily, inside the running loop
        return make_session(max_connections, block_private_targets=block_private_targets,
                            resolver=resolver)

    no_cookies = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
    return httpx.AsyncClient(transport=AiohttpTransport(client=session), follow_redirects=False,
                             trust_env=False, cookies=no_cookies)


# -- signing ------------------------------------------------------------------------------------
def sign(secret: bytes | str, timestamp: int, body: bytes) -> str:
    """The ``X-Cronledger-Signature`` value: ``t=<timestamp>,v1=<hex HMAC-SHA256(secret,
    "<timestamp>." + body)>``; ``timestamp`` in Unix seconds, ``secret`` as bytes or text
    (UTF-8), ``body`` the exact bytes sent (``b""`` without a body)."""
    key = secret.encode() if isinstance(secret, str) else secret
    mac = hmac.new(key, str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


# -- error classes ------------------------------------------------------------------------------
def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _read_timeout(timeout_seconds: float, got_headers: bool) -> tuple[str, str]:
    where = "while reading the response body" if got_headers else "waiting for the response"
    return "timeout", f"read timeout after {timeout_seconds:g} s ({where})"


def _transport_class(err: BaseException, chain: list[BaseException], timeout_seconds: float,
                     got_headers: bool) -> tuple[str, str] | None:
    """``(error_class, message)`` of one exception of the chain that the transport (aiohttp)
    or the private-target check raised; None for any other."""
    if isinstance(err, BlockedTarget):
        return "blocked", str(err)
    if isinstance(err, aiohttp.ConnectionTimeoutError):
        return "timeout", f"connect timeout after {timeout_seconds:g} s"
    if isinstance(err, aiohttp.SocketTimeoutError):
        return _read_timeout(timeout_seconds, got_headers)
    if isinstance(err, aiohttp.ClientConnectorDNSError):
        return "dns", f"DNS lookup of {err.host} failed: {err.os_error.strerror or err}"
    if isinstance(err, aiohttp.ClientSSLError | ssl.SSLError):
        return "tls", f"TLS error: {err}"
    if isinstance(err, aiohttp.ServerDisconnectedError):
        return "connect", "the server closed the connection without a response"
    if isinstance(err, aiohttp.ClientResponseError) and \
            any(isinstance(cause, HttpProcessingError) for cause in chain):
        return "http", (f"HTTP protocol error: the response could not be read "
                        f"({err.message or type(err.__cause__).__name__})")
    if isinstance(err, aiohttp.ClientPayloadError):
        if any(isinstance(cause, ContentEncodingError) for cause in chain):
            return "connect", ("the response body could not be decoded: it does not match "
                               "its Content-Encoding header")
        return "connect", "the connection broke while reading the response body"
    if isinstance(err, aiohttp.ClientConnectorError):
        return "connect", f"cannot connect to {err.host}:{err.port}: {err.os_error.strerror}"
    if isinstance(err, aiohttp.ClientOSError):
        return "connect", f"connection error: {err.strerror or err}"
    return None


def _timeout_class(err: BaseException, timeout_seconds: float, phase: str,
                   got_headers: bool) -> tuple[str, str] | None:
    """``(error_class, message)`` of httpx's connect timeout or of the overall deadline (the
    phase reached says which timeout it was); None for any other exception."""
    if isinstance(err, httpx.ConnectTimeout):
        return "timeout", f"connect timeout after {timeout_seconds:g} s"
    if isinstance(err, httpx.TimeoutException | TimeoutError):
        if got_headers or phase == "request":
            return _read_timeout(timeout_seconds, got_headers)
        return "timeout", f"connect timeout after {timeout_seconds:g} s"
    return None


_TIMEOUTS = (aiohttp.ServerTimeoutError, httpx.TimeoutException, TimeoutError)


def classify_error(exc: BaseException, timeout_seconds: float, phase: str | None = None,
                   got_headers: bool = False) -> tuple[str, str]:
    """Map a transport exception to ``(error_class, message)``: the one classification of job
    attempts and notification deliveries (docs/api.md, "Error classes").

    Classes: ``timeout`` (the message starts with ``connect timeout`` or ``read timeout``),
    ``dns``, ``tls``, ``connect``, ``http`` (the response is not HTTP aiohttp can read: a
    header flood, a malformed status line), ``blocked``. A host name that does not resolve and a
    resolver that does not answer within the bound are both ``dns``, whichever timer fired
    (aiohttp's connect timeout, httpx's, or the overall deadline).

    Args:
        exc: what the send raised.
        timeout_seconds: the attempt's bound, quoted in messages.
        phase: how far the request got (``dns`` | ``connect`` | ``request``); by default the
            phase tracked by the enclosing :func:`tracking_progress` (``request`` outside one).
        got_headers: the response headers had arrived.
    """
    chain = _causes(exc)
    phase = phase or current_phase()
    if phase == "dns" and any(isinstance(err, _TIMEOUTS) for err in chain):
        return "dns", f"DNS lookup unanswered after {timeout_seconds:g} s"
    # aiohttp's own exception (the transport's cause) is the most precise; httpx-aiohttp maps
    # every aiohttp connection error to httpx.ConnectTimeout, so it is looked at first.
    for err in chain:
        if (found := _transport_class(err, chain, timeout_seconds, got_headers)) is not None:
            return found
    for err in chain:
        if (found := _timeout_class(err, timeout_seconds, phase, got_headers)) is not None:
            return found
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL | aiohttp.InvalidURL):
        return "connect", f"invalid request URL: {exc}"
    return "connect", f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
