"""The HTTP executor: sends one attempt of a run and classifies its outcome (DESIGN 5).

Attempts go out on one shared ``aiohttp.ClientSession`` per worker. httpx's own pool spends most
of its CPU on connection assignment once about a hundred requests are in flight, and even over
the aiohttp transport (``httpx-aiohttp``, still used for notifications by :func:`make_client`)
httpx's layers doubled the CPU per request, which at the slot is what decides fire lateness when
hundreds of jobs share a second; see docs/benchmarks.md. The request is sent outside any
database transaction; the caller records the :class:`AttemptResult`.

An attempt is sent in two steps so that the work before the slot is done before the slot:

- :meth:`Executor.prepare` (at claim time, during the lookahead): secrets opened and
  substituted, headers built, the recorded copy made.
- :meth:`Executor.preconnect` (during the lookahead): the connections the slot's requests will
  need are opened (or taken from the pool) and put back into the pool, so at the slot only the
  request bytes are written. No byte of a request is sent before its slot.
- :meth:`Executor.transmit` (at the slot): signature, send, read, classify.

What is sent and what is recorded differ on purpose:

- ``${secrets.NAME}`` placeholders are replaced just before sending, from the sealed values the
  claim attached to the :class:`Dispatch` (no database round trip here). The **recorded**
  request keeps the placeholders; credential headers typed literally into a job are recorded as
  ``[redacted]``; a secret value that comes back (an error message naming the URL, a response
  echoing a header) is replaced by its placeholder before anything is recorded.
- With a signing secret, ``X-Cronledger-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
  "<t>.<body>">`` is computed over the exact body bytes sent (Stripe's webhook scheme).
- Connect and read timeouts are told apart: aiohttp's own timers say which one fired, and when
  the overall per-attempt deadline fires first, the phase the request had reached (tracked
  with aiohttp tracing) decides.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import hmac
import ssl
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import aiohttp
import httpx
import yarl
from aiohttp.abc import AbstractResolver
from aiohttp.http_exceptions import ContentEncodingError
from httpx_aiohttp import AiohttpTransport

from core.clock import Clock, rfc3339
from core.crypto import KeyRing, Sealed, SecretUnavailable, secret_aad, signing_aad
from core.netguard import BlockedTarget, GuardedResolver, check_literal
from core.secrets import MARKER, substitute
from core.version import USER_AGENT

# Failures that another attempt cannot fix without a configuration change: not retried.
# ``invalid_request``: the stored request could not be built (core/worker.py, Worker._prepare).
FINAL_ERROR_CLASSES = ("secret", "blocked", "invalid_request")
# Recorded as [redacted] unless the value is a ${secrets.NAME} template.
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key",
                                "api-key", "x-auth-token", "x-access-token"})
REDACTED = "[redacted]"
SIGNATURE_HEADER = "X-Cronledger-Signature"
KEEPALIVE_SECONDS = 5.0
RESPONSE_CHUNK = 16384
# httpx sent no Content-Type unless the job set one; aiohttp would add application/octet-stream.
_NO_CONTENT_TYPE = frozenset({"Content-Type"})


@dataclass(frozen=True)
class Dispatch:
    """One claimed attempt of a run, ready to send.

    Attributes:
        run_id: the run; also the ``Idempotency-Key``.
        scheduled_for: the slot (UTC); the run's lateness is measured from it.
        attempt: 1-based attempt number.
        lease_token: proves this worker still owns the run when recording.
        request: ``{"method", "url", "headers", "body"}`` as defined on the job (placeholders
            unresolved).
        timeout_seconds: bound on the whole attempt.
        retry: the job's retry policy.
        success_statuses: accepted statuses, or ``None`` for any 2xx.
        secret_names: the ``${secrets.NAME}`` names the request uses.
        signing: the job has a signing secret.
        secrets: sealed values of ``secret_names`` found at claim time (missing names absent).
        signing_key: the sealed signing secret, when ``signing``.
        due_at: when this attempt became due (slot, retry time or lease expiry; UTC); the
            attempt's own lateness is measured from it. ``None`` means ``scheduled_for``.
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
    success_statuses: tuple[int, ...] | None = None
    secret_names: tuple[str, ...] = ()
    signing: bool = False
    secrets: Mapping[str, Sealed] = field(default_factory=dict, repr=False)
    signing_key: Sealed | None = field(default=None, repr=False)
    due_at: datetime | None = None


@dataclass
class AttemptResult:
    """What happened to one attempt. Times are UTC; ``duration_ms`` is wall time of the attempt.

    ``request`` is the request as recorded (placeholders kept, credentials redacted).
    """

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
    def final(self) -> bool:
        """A failure that retrying cannot fix (see :data:`FINAL_ERROR_CLASSES`)."""
        return self.error_class in FINAL_ERROR_CLASSES

    @property
    def lateness_ms(self) -> int:
        """Start of this attempt minus the slot, in milliseconds (never negative): the run's
        lateness when this is its first recorded attempt."""
        late = (self.started_at - self.dispatch.scheduled_for) / timedelta(milliseconds=1)
        return max(0, round(late))

    @property
    def attempt_lateness_ms(self) -> int:
        """Start of this attempt minus the instant it became due, in milliseconds (>= 0)."""
        due = self.dispatch.due_at or self.dispatch.scheduled_for
        return max(0, round((self.started_at - due) / timedelta(milliseconds=1)))


class Refused(Exception):
    """The attempt was not sent; ``error_class`` says why (``secret``, ``blocked``)."""

    def __init__(self, error_class: str, message: str) -> None:
        super().__init__(message)
        self.error_class = error_class


# -- the shared client --------------------------------------------------------------------------
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


def _trace_config(block_private_targets: bool) -> aiohttp.TraceConfig:
    trace = aiohttp.TraceConfig()
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
            :mod:`core.netguard`), checked on resolved addresses at connect time.
        resolver: the host name resolver (aiohttp's default, the system's, when ``None``).
    """
    if block_private_targets:
        resolver = GuardedResolver(resolver)
    connector = aiohttp.TCPConnector(
        limit=max_connections, ssl=_ssl_context(), keepalive_timeout=KEEPALIVE_SECONDS,
        resolver=resolver)
    return aiohttp.ClientSession(
        connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False,
        trace_configs=[_trace_config(block_private_targets)])


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


# -- request building ---------------------------------------------------------------------------
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


def redact_credentials(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers as recorded: credential headers without a ``${secrets.…}`` template become
    ``[redacted]`` (a template is kept: it shows which secret was used, not its value)."""
    return {name: REDACTED if name.lower() in CREDENTIAL_HEADERS and MARKER not in value
            else value for name, value in headers.items()}


def signature(secret: bytes, timestamp: int, body: bytes) -> str:
    """``t=<timestamp>,v1=<hex HMAC-SHA256(secret, "<timestamp>." + body)>``."""
    mac = hmac.new(secret, str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def _open_secrets(keyring: KeyRing, dispatch: Dispatch) -> dict[str, str]:
    values: dict[str, str] = {}
    for name in dispatch.secret_names:
        sealed = dispatch.secrets.get(name)
        if sealed is None:
            raise Refused("secret", f"secret {name} is not defined for this team "
                                    f"(create it with PUT /v1/secrets/{name})")
        try:
            values[name] = keyring.open(sealed, secret_aad(dispatch.team_id.bytes, name)).decode()
        except SecretUnavailable as exc:
            raise Refused("secret", f"secret {name} cannot be decrypted: {exc}") from None
    return values


def _open_signing_key(keyring: KeyRing, dispatch: Dispatch) -> bytes:
    if dispatch.signing_key is None:
        raise Refused("secret", "the job's signing secret is missing; set it again with "
                                "PATCH /v1/jobs/{id} {\"signing_secret\": ...}")
    try:
        return keyring.open(dispatch.signing_key,
                            signing_aad(dispatch.team_id.bytes, dispatch.job_id.bytes))
    except SecretUnavailable as exc:
        raise Refused("secret", f"the job's signing secret cannot be decrypted: {exc}") from None


def _resolve_headers(headers: dict[str, str], values: Mapping[str, str]) -> dict[str, str]:
    wire = {}
    for name, value in headers.items():
        resolved = substitute(value, values)
        if resolved is not value and any(c in resolved for c in "\r\n\0"):
            raise Refused("secret", f"header {name}: a secret used in it contains a line break "
                                    "or NUL, which an HTTP header cannot carry")
        wire[name] = resolved
    return wire


def _header_dict(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """Response headers as received (original case), repeated ones joined with ``, ``."""
    headers: dict[str, str] = {}
    seen: dict[str, str] = {}
    for raw_name, raw_value in raw:
        name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
        first = seen.setdefault(name.lower(), name)
        headers[first] = f"{headers[first]}, {value}" if first in headers else value
    return headers


def _scrub(result: AttemptResult, values: Mapping[str, str]) -> None:
    """Replace secret values found in what is about to be recorded by their placeholders."""
    pairs = sorted(((v, f"${{secrets.{n}}}") for n, v in values.items()),
                   key=lambda p: -len(p[0]))

    def clean(text: str) -> str:
        for value, placeholder in pairs:
            text = text.replace(value, placeholder)
        return text

    if result.error:
        result.error = clean(result.error)
    if result.response_headers:
        result.response_headers = {k: clean(v) for k, v in result.response_headers.items()}
    if result.response_body:
        body = result.response_body
        for value, placeholder in pairs:
            body = body.replace(value.encode(), placeholder.encode())
        result.response_body = body


# -- error classes ------------------------------------------------------------------------------
def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return chain


def _read_timeout(timeout_seconds: float, got_headers: bool) -> tuple[str, str]:
    where = "while reading the response body" if got_headers else "waiting for the response"
    return "timeout", f"read timeout after {timeout_seconds:g} s ({where})"


_TIMEOUTS = (aiohttp.ServerTimeoutError, httpx.TimeoutException, TimeoutError)


def classify_error(exc: BaseException, timeout_seconds: float, phase: str | None = None,
                   got_headers: bool = False) -> tuple[str, str]:
    """Map a transport exception to ``(error_class, message)``: the one classification of job
    attempts and notification deliveries (docs/api.md, "Error classes").

    Classes: ``timeout`` (the message starts with ``connect timeout`` or ``read timeout``),
    ``dns``, ``tls``, ``connect``, ``blocked``. A host name that does not resolve and a
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
        if isinstance(err, aiohttp.ClientPayloadError):
            if any(isinstance(cause, ContentEncodingError) for cause in chain):
                return "connect", ("the response body could not be decoded: it does not match "
                                   "its Content-Encoding header")
            return "connect", "the connection broke while reading the response body"
        if isinstance(err, aiohttp.ClientConnectorError):
            return "connect", f"cannot connect to {err.host}:{err.port}: {err.os_error.strerror}"
        if isinstance(err, aiohttp.ClientOSError):
            return "connect", f"connection error: {err.strerror or err}"
    for err in chain:
        if isinstance(err, httpx.ConnectTimeout):
            return "timeout", f"connect timeout after {timeout_seconds:g} s"
        if isinstance(err, httpx.TimeoutException | TimeoutError):
            # The overall deadline: the phase reached says which timeout it was.
            if got_headers or phase == "request":
                return _read_timeout(timeout_seconds, got_headers)
            return "timeout", f"connect timeout after {timeout_seconds:g} s"
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL | aiohttp.InvalidURL):
        return "connect", f"invalid request URL: {exc}"
    return "connect", f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


# -- the executor -------------------------------------------------------------------------------
@dataclass
class Prepared:
    """An attempt built ahead of its slot by :meth:`Executor.prepare`.

    Attributes:
        dispatch: the attempt.
        recorded: the request as it will be recorded (placeholders kept, credentials redacted).
        url: the URL to send, secrets resolved.
        headers: the headers to send, secrets resolved (the signature is added at send time).
        content: the body bytes, or ``None``.
        refused: set when the attempt must not be sent (a secret is missing or undecryptable);
            :meth:`Executor.transmit` records it as a failure without sending anything.
        secret_values: the opened ``${secrets.NAME}`` values, scrubbed from what is recorded.
        signing_key: the opened signing secret (the signature needs the send time).
    """

    dispatch: Dispatch
    recorded: dict[str, Any]
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    content: bytes | None = field(default=None, repr=False)
    refused: Refused | None = None
    secret_values: dict[str, str] = field(default_factory=dict, repr=False)
    signing_key: bytes | None = field(default=None, repr=False)


class Executor:
    """Sends attempts on one shared aiohttp session (created on first use, inside the loop).

    Args:
        clock: source of ``started_at`` / ``finished_at`` and of signature timestamps.
        body_limit: response bytes kept (``CRONLEDGER_RESPONSE_BODY_LIMIT``); when the body is
            longer, reading stops there and ``truncated`` is set.
        keyring: opens the sealed secrets of a dispatch; without one (secrets disabled), jobs
            that use secrets fail with error class ``secret``.
        max_connections: connection pool size (``CRONLEDGER_MAX_CONCURRENCY``).
        block_private_targets: refuse private and special-purpose target addresses.
        resolver: the host name resolver (the system's when ``None``).
    """

    def __init__(self, clock: Clock, body_limit: int, keyring: KeyRing | None = None, *,
                 max_connections: int = 100, block_private_targets: bool = False,
                 resolver: AbstractResolver | None = None) -> None:
        self.clock = clock
        self.body_limit = body_limit
        self.keyring = keyring or KeyRing([])
        self.max_connections = max_connections
        self.block_private_targets = block_private_targets
        self.resolver = resolver
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        """The shared session (created on first use; needs the running event loop)."""
        if self._session is None or self._session.closed:
            self._session = make_session(self.max_connections,
                                         block_private_targets=self.block_private_targets,
                                         resolver=self.resolver)
        return self._session

    async def aclose(self) -> None:
        """Close the session and its connections."""
        if self._session is not None:
            await self._session.close()

    def prepare(self, dispatch: Dispatch) -> Prepared:
        """Build an attempt's request: open and substitute its secrets, build the headers sent
        and the copy recorded. Never raises for a missing secret: see :attr:`Prepared.refused`.
        """
        spec = dispatch.request
        headers = outbound_headers(dispatch)
        recorded = {"method": spec["method"], "url": spec["url"],
                    "headers": redact_credentials(headers), "body": spec.get("body")}
        prepared = Prepared(dispatch, recorded)
        try:
            values = _open_secrets(self.keyring, dispatch) if dispatch.secret_names else {}
            prepared.secret_values = values
            prepared.url = substitute(spec["url"], values)
            body = substitute(spec["body"], values) if spec.get("body") is not None else None
            prepared.content = body.encode() if body is not None else None
            prepared.headers = _resolve_headers(headers, values) if values else headers
            if dispatch.signing:
                prepared.signing_key = _open_signing_key(self.keyring, dispatch)
        except Refused as exc:
            prepared.refused = exc
        return prepared

    async def send(self, dispatch: Dispatch) -> AttemptResult:
        """Prepare and transmit one attempt now; never raises for transport failures."""
        return await self.transmit(self.prepare(dispatch))

    async def transmit(self, prepared: Prepared) -> AttemptResult:
        """Send a prepared attempt and return its result; never raises for transport failures.

        ``started_at`` is taken here, so the recorded lateness is that of the send itself.
        """
        dispatch = prepared.dispatch
        recorded = prepared.recorded
        started_at = self.clock.now()
        t0 = time.perf_counter()
        result = AttemptResult(dispatch, started_at, started_at, 0, recorded)
        if prepared.refused is not None:
            result.error_class, result.error = prepared.refused.error_class, str(prepared.refused)
        else:
            wire = prepared.headers
            if prepared.signing_key is not None:
                signed = signature(prepared.signing_key, int(started_at.timestamp()),
                                   prepared.content or b"")
                wire = {**wire, SIGNATURE_HEADER: signed}
                recorded["headers"] = {**recorded["headers"], SIGNATURE_HEADER: signed}
            await self._send(dispatch, prepared.url, wire, prepared.content, result)
        result.duration_ms = round((time.perf_counter() - t0) * 1000)
        result.finished_at = started_at + timedelta(milliseconds=result.duration_ms)
        if result.error_class is None and not self._accepted(dispatch, result.response_status):
            result.error_class = "http_status"
            result.error = f"HTTP {result.response_status}"
            if 300 <= (result.response_status or 0) < 400:
                result.error += " (redirects are not followed)"
        if prepared.secret_values:
            _scrub(result, prepared.secret_values)
        return result

    async def preconnect(self, prepared: list[Prepared]) -> int:
        """Have one idle pooled connection ready per request in ``prepared``, per origin.

        For each origin (scheme, host, port) it acquires as many connections as there are
        requests for it (idle pooled ones first, new ones for the rest, at most the pool size)
        and releases them all back to the pool, where the requests at the slot find them. Only
        connections are opened (TCP, and TLS for https); no request byte is sent. Cancel it to
        stop early. Failures are ignored: the attempt at the slot connects again and records
        its own error. With ``block_private_targets``, blocked literal addresses are skipped and
        blocked names fail in the resolver, before any connection.

        Returns:
            The number of connections held ready.
        """
        origins: dict[tuple[str, str, int | None], tuple[yarl.URL, int]] = {}
        for item in prepared:
            if item.refused is not None:
                continue
            try:
                url = yarl.URL(item.url)
                key = (url.scheme, url.raw_host or "", url.port)
            except (ValueError, TypeError):
                continue
            if url.scheme not in ("http", "https") or not url.raw_host:
                continue
            known = origins.get(key)
            origins[key] = (url, (known[1] if known else 0) + 1)
        if not origins:
            return 0
        session = self.session
        loop = asyncio.get_running_loop()
        timeout = aiohttp.ClientTimeout(total=None, connect=30, sock_connect=30)
        held: list[aiohttp.connector.Connection] = []

        async def acquire(url: yarl.URL) -> None:
            request = aiohttp.ClientRequest("GET", url, loop=loop, ssl=True)
            with contextlib.suppress(Exception):
                held.append(await session.connector.connect(request, [], timeout))

        try:
            tasks = []
            for url, count in origins.values():
                if self.block_private_targets:
                    try:
                        check_literal(url.raw_host or "")
                    except BlockedTarget:
                        continue
                tasks += [acquire(url) for _ in range(min(count, self.max_connections))]
            await asyncio.gather(*tasks)
            return len(held)
        finally:
            for connection in held:
                connection.release()

    @staticmethod
    def _accepted(dispatch: Dispatch, status: int | None) -> bool:
        if status is None:
            return False
        if dispatch.success_statuses:
            return status in dispatch.success_statuses
        return 200 <= status < 300

    async def _send(self, dispatch: Dispatch, url: str, headers: dict[str, str],
                    content: bytes | None, result: AttemptResult) -> None:
        timeout = dispatch.timeout_seconds
        with tracking_progress() as progress:
            try:
                async with asyncio.timeout(timeout):
                    await self._exchange(dispatch.request["method"], url, headers, content,
                                         timeout, result)
            except Exception as exc:  # noqa: BLE001 - every failure becomes a recorded outcome
                result.error_class, result.error = classify_error(
                    exc, timeout, progress.phase, result.response_status is not None)

    async def _exchange(self, method: str, url: str, headers: dict[str, str],
                        content: bytes | None, timeout: float, result: AttemptResult) -> None:
        limits = aiohttp.ClientTimeout(total=None, connect=timeout, sock_connect=timeout,
                                       sock_read=timeout)
        async with self.session.request(
                method, url, headers=headers, data=content, allow_redirects=False,
                timeout=limits, skip_auto_headers=_NO_CONTENT_TYPE) as response:
            result.response_status = response.status
            result.response_headers = _header_dict(response.raw_headers)
            result.retry_after = response.headers.get("Retry-After")
            kept = bytearray()
            async for chunk in response.content.iter_chunked(RESPONSE_CHUNK):
                room = self.body_limit - len(kept)
                if room > 0:
                    kept.extend(chunk[:room])
                if len(chunk) > room:
                    result.truncated = True
                    response.close()  # the rest is not read; the connection is dropped
                    break
            result.response_body = bytes(kept)
