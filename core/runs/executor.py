"""The HTTP executor: sends one attempt of a run and classifies its outcome (docs/architecture.md).

The attempt and its result are :mod:`core.runs.dispatch`; the session, the error
classification and the signature are :mod:`core.http.clients`, shared with notification delivery.
Attempts go out on one shared ``aiohttp.ClientSession`` per worker, by one of the two send paths
of :mod:`core.http.exchange` (``CRONLEDGER_SEND_PATH``): ``session.request``, or the request's
bytes built at :meth:`Executor.prepare` and written at the slot on the session's pooled
connections, the answer read by the connection's own parser (about half the CPU per request,
the same behaviour; both run the executor's tests). httpx's own pool spends most
of its CPU on connection assignment once about a hundred requests are in flight, and even over
the aiohttp transport (``httpx-aiohttp``, still used for notifications by
:func:`core.http.clients.make_client`)
httpx's layers doubled the CPU per request, which at the slot is what decides fire lateness when
hundreds of jobs share a second; see docs/benchmarks.md. The request is sent outside any
database transaction; the caller records the :class:`AttemptResult`.

An attempt is sent in two steps so that the work before the slot is done before the slot:

- :meth:`Executor.prepare` (at claim time, during the lookahead): secrets opened and
  substituted, headers built (on the connection path, the request's bytes), the recorded copy
  made.
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
  "<t>.<body>">`` is computed over the exact body bytes sent (:func:`core.http.clients.sign`).
- Connect and read timeouts are told apart: aiohttp's own timers say which one fired, and when
  the overall per-attempt deadline fires first, the phase the request had reached (tracked
  with aiohttp tracing) decides.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

import aiohttp
import yarl
from aiohttp.abc import AbstractResolver

from core.clock import Clock, rfc3339
from core.crypto import KeyRing, SecretUnavailable, secret_aad, signing_aad
from core.http import exchange
from core.http.clients import (
    SIGNATURE_HEADER,
    classify_error,
    make_session,
    sign,
    tracking_progress,
)
from core.http.netguard import BlockedTarget, check_literal
from core.runs.confirm import HEADER as CONFIRM_HEADER
from core.runs.confirm import confirm_url
from core.runs.dispatch import AttemptResult, Dispatch, Prepared, Refused
from core.secrets import MARKER, substitute
from core.version import USER_AGENT

# Recorded as [redacted] unless the value is a ${secrets.NAME} template.
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key",
                                "api-key", "x-auth-token", "x-access-token"})
REDACTED = "[redacted]"
RESPONSE_CHUNK = exchange.RESPONSE_CHUNK


# -- request building ---------------------------------------------------------------------------
def outbound_headers(dispatch: Dispatch) -> dict[str, str]:
    """The job's headers plus cronledger's own (User-Agent, Idempotency-Key, X-Cronledger-*)."""
    headers = {"User-Agent": USER_AGENT}
    headers.update(dispatch.request.headers)
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


def _header_dict(raw: Sequence[tuple[bytes, bytes]]) -> dict[str, str]:
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


def _in_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


# -- the executor -------------------------------------------------------------------------------
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
        base_url: the public base URL confirmation URLs start with (``Settings.base_url``).
        send_path: ``connection`` (requests built ahead, written on the pool's connections) or
            ``session`` (``ClientSession.request``); ``CRONLEDGER_SEND_PATH``, see
            :mod:`core.http.exchange`.
    """

    def __init__(self, clock: Clock, body_limit: int, keyring: KeyRing | None = None, *,
                 max_connections: int = 100, block_private_targets: bool = False,
                 resolver: AbstractResolver | None = None, base_url: str = "",
                 send_path: str | None = None) -> None:
        send_path = send_path or exchange.DEFAULT_SEND_PATH
        if send_path not in exchange.SEND_PATHS:
            raise ValueError(f"send_path must be one of {', '.join(exchange.SEND_PATHS)}")
        self.send_path = send_path
        self._limits: dict[float, aiohttp.ClientTimeout] = {}
        self.clock = clock
        self.base_url = base_url
        self.body_limit = body_limit
        self.keyring = keyring or KeyRing([])
        self.max_connections = max_connections
        self.block_private_targets = block_private_targets
        self.resolver = resolver
        self._session: aiohttp.ClientSession | None = None
        self._connection_path: exchange.ConnectionPath | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        """The shared session (created on first use; needs the running event loop)."""
        if self._session is None or self._session.closed:
            self._session = make_session(self.max_connections,
                                         block_private_targets=self.block_private_targets,
                                         resolver=self.resolver)
            self._connection_path = exchange.ConnectionPath(self._session)
        return self._session

    @property
    def connection_path(self) -> exchange.ConnectionPath:
        """The connection send path on :attr:`session` (made with it)."""
        session = self.session
        assert self._connection_path is not None and self._connection_path.session is session
        return self._connection_path

    async def aclose(self) -> None:
        """Close the session and its connections."""
        if self._session is not None:
            await self._session.close()

    def prepare(self, dispatch: Dispatch) -> Prepared:
        """Build an attempt's request: open and substitute its secrets, build the headers sent
        and the copy recorded. Never raises for a missing secret: see :attr:`Prepared.refused`.
        """
        spec = dispatch.request
        for part in ("method", "url"):  # absent only from a row edited by hand (core/stored.py)
            if getattr(spec, part) is None:
                raise ValueError(f"the stored request has no {part}")
        headers = outbound_headers(dispatch)
        recorded: dict[str, Any] = {"method": spec.method, "url": spec.url,
                                    "headers": redact_credentials(headers), "body": spec.body}
        if dispatch.confirm_token:  # the one-time token is a credential: recorded redacted
            headers[CONFIRM_HEADER] = confirm_url(self.base_url, dispatch.confirm_token)
            recorded["headers"][CONFIRM_HEADER] = confirm_url(self.base_url, REDACTED)
        prepared = Prepared(dispatch, recorded)
        try:
            values = _open_secrets(self.keyring, dispatch) if dispatch.secret_names else {}
            prepared.secret_values = values
            prepared.url = substitute(spec.url, values)
            body = substitute(spec.body, values) if spec.body is not None else None
            prepared.content = body.encode() if body is not None else None
            prepared.headers = _resolve_headers(headers, values) if values else headers
            if dispatch.signing:
                prepared.signing_key = _open_signing_key(self.keyring, dispatch)
        except Refused as exc:
            prepared.refused = exc
            return prepared
        if self.send_path == "connection" and _in_loop():
            prepared.built = self.connection_path.build(
                spec.method, prepared.url, prepared.headers, prepared.content,
                signature_header=SIGNATURE_HEADER if dispatch.signing else None)
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
                signed = sign(prepared.signing_key, int(started_at.timestamp()),
                                   prepared.content or b"")
                wire = {**wire, SIGNATURE_HEADER: signed}
                recorded["headers"] = {**recorded["headers"], SIGNATURE_HEADER: signed}
                if prepared.built is not None:
                    exchange.sign(prepared.built, signed)
            await self._send(prepared, wire, result)
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
        connector = session.connector  # never None: make_session gives it one
        loop = asyncio.get_running_loop()
        timeout = aiohttp.ClientTimeout(total=None, connect=30, sock_connect=30)
        held: list[aiohttp.connector.Connection] = []

        async def acquire(url: yarl.URL) -> None:
            request = aiohttp.ClientRequest("GET", url, loop=loop, ssl=True)
            with contextlib.suppress(Exception):
                if connector is not None:
                    held.append(await connector.connect(request, [], timeout))

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

    def _timeouts(self, timeout: float) -> aiohttp.ClientTimeout:
        limits = self._limits.get(timeout)
        if limits is None:
            if len(self._limits) >= 1024:  # one per distinct job timeout: kept bounded
                self._limits.clear()
            limits = self._limits[timeout] = aiohttp.ClientTimeout(
                total=None, connect=timeout, sock_connect=timeout, sock_read=timeout)
        return limits

    async def _send(self, prepared: Prepared, headers: dict[str, str],
                    result: AttemptResult) -> None:
        dispatch = prepared.dispatch
        timeout = dispatch.timeout_seconds
        limits = self._timeouts(timeout)
        response = exchange.Response()
        with tracking_progress() as progress:
            try:
                async with asyncio.timeout(timeout):
                    if prepared.built is not None:
                        await self.connection_path.exchange(prepared.built, limits,
                                                            self.body_limit, response)
                    else:
                        await exchange.exchange_session(
                            self.session, dispatch.request.method, prepared.url, headers,
                            prepared.content, limits, self.body_limit, response)
                result.response_body = response.body
                result.truncated = response.truncated
            except Exception as exc:  # noqa: BLE001 - every failure becomes a recorded outcome
                result.error_class, result.error = classify_error(
                    exc, timeout, progress.phase, response.status is not None)
            if response.status is not None:
                result.response_status = response.status
                result.response_headers = _header_dict(response.raw_headers)
                result.retry_after = response.retry_after
