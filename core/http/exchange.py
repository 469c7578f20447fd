"""One request and its response, on the session's connection pool: the two send paths of job
attempts (:mod:`core.runs.executor`, ``CRONLEDGER_SEND_PATH``; docs/benchmarks.md, "CPU per
request sent").

- ``session``: ``aiohttp.ClientSession.request``, the response read with ``iter_chunked``.
- ``connection``: the request is built ahead (:func:`build`, when the attempt is prepared:
  aiohttp's ``ClientRequest`` makes the headers, so they are the bytes the session would write)
  and at the slot :func:`exchange_connection` takes a connection from the session's connector,
  writes those bytes on its transport and reads the answer from the connection's own protocol
  (aiohttp's ``ResponseHandler``: its parser, limits, decompression and read timer). What it
  leaves out is the session's per-request objects: the request and response objects, the
  timeout and context managers, the cookie jar, redirects handling and middlewares, about
  two thirds of a send's CPU.

Both paths share everything that decides an outcome: the connector (DNS with the guarded
resolver, the connection limit, keep-alive, TLS with verification, the same exceptions for a
failed connection), the trace hooks (phases, the literal-address guard), the parser (header
limits, ``Content-Encoding``, ``ServerDisconnectedError``, payload errors) and the session's
one retry of an idempotent request whose kept-alive connection was closed under it
(RFC 9112, 9.3.1.1). A request the connection path does not build the same way (a proxy, a
``Content-Length`` or ``Transfer-Encoding`` header of the job's own that disagrees with the
body, ``Expect: 100-continue``, credentials in the URL, a header aiohttp refuses) is sent on
the session path: :func:`build` returns ``None`` for it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import yarl
from aiohttp import hdrs
from aiohttp.client import IDEMPOTENT_METHODS
from aiohttp.client_exceptions import ClientConnectionResetError
from aiohttp.helpers import EMPTY_BODY_METHODS
from aiohttp.http import SERVER_SOFTWARE
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.http_writer import _serialize_headers
from aiohttp.tracing import Trace
from multidict import CIMultiDict, CIMultiDictProxy

SEND_PATHS = ("connection", "session")
# The path of an executor made without one (CRONLEDGER_SEND_PATH unset).
DEFAULT_SEND_PATH = "connection"
RESPONSE_CHUNK = 16384
# httpx sent no Content-Type unless the job set one; aiohttp would add application/octet-stream.
NO_CONTENT_TYPE = frozenset({"Content-Type"})
ORIGINS_KEPT = 4096  # origins' requests kept for the connector's pool keys, then made again
_PLACEHOLDER = "t=0,v1=0"  # the signature's place among the headers until it is computed
_TOKEN = re.compile(r"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")  # a method aiohttp accepts (RFC 9110 token)


@dataclass
class Response:
    """What came back, filled as it arrives (``status`` is set once the headers are read, so a
    failure while reading the body knows the headers had come).

    ``raw_headers`` as received (name, value) in bytes; ``body`` at most the cap given, decoded
    per ``Content-Encoding``; ``truncated`` when the body was longer than the cap.
    """

    status: int | None = None
    raw_headers: Sequence[tuple[bytes, bytes]] = ()
    retry_after: str | None = None
    body: bytes = b""
    truncated: bool = False


@dataclass
class Built:
    """A request built ahead for the connection path (:meth:`ConnectionPath.build`): the bytes
    to write (the status line and headers, then the body) and the origin's request, which the
    connector is asked for a connection with."""

    method: str
    url: yarl.URL
    origin: aiohttp.ClientRequest
    headers: dict[str, str]
    head: bytes = field(repr=False)
    body: bytes = field(repr=False)
    signature_at: tuple[bytes, bytes] | None = field(default=None, repr=False)


def request_headers(method: str, url: yarl.URL, headers: Mapping[str, str],
                    body: bytes | None) -> dict[str, str] | None:
    """The headers ``session.request`` writes for a request of ``method`` to ``url`` with
    ``headers`` and ``body`` (no cookies, no auth, no Content-Type of its own), in order, or
    ``None`` for a request whose headers it would build otherwise (``Expect``,
    ``Transfer-Encoding``, a ``Content-Length`` that disagrees with the body).

    The rules are aiohttp's, step by step: ``ClientSession._prepare_headers`` (the last of
    several spellings of one name, at the first one's place), ``ClientRequest.update_headers``
    (``Host`` first, replaced in place by the job's), ``update_auto_headers`` (``Accept``,
    ``Accept-Encoding``, ``User-Agent`` unless given), ``update_body_from_data``
    (``Content-Length``). tests/integration/test_send_wire.py compares the bytes both paths
    write.
    """
    merged: dict[str, tuple[str, str]] = {}
    for name, value in headers.items():
        merged[name.lower()] = (name, value)
    if "expect" in merged or "transfer-encoding" in merged:
        return None
    host = url.host_port_subcomponent
    if host is None:
        return None
    out: dict[str, tuple[str, str]] = {"host": (hdrs.HOST, host)}
    out.update(merged)
    for name, value in (*aiohttp.ClientRequest.DEFAULT_HEADERS.items(),
                        (hdrs.USER_AGENT, SERVER_SOFTWARE)):
        out.setdefault(name.lower(), (name, value))
    given = out.get("content-length")
    if body is None:
        if method not in aiohttp.ClientRequest.GET_METHODS and given is None:
            out["content-length"] = (hdrs.CONTENT_LENGTH, "0")
    elif given is None:
        out["content-length"] = (hdrs.CONTENT_LENGTH, str(len(body)))
    elif given[1] != str(len(body)):
        return None
    return dict(out.values())


def sign(built: Built, value: str) -> None:
    """Give the signature header of ``built`` its value (set at send time)."""
    if built.signature_at is not None:
        before, after = built.signature_at
        built.head = before + value.encode("latin-1") + after


class ConnectionPath:
    """The connection path on ``session`` (made by :func:`core.http.clients.make_session`):
    :meth:`build` ahead of the slot, :meth:`exchange` at it. Create it in the running loop."""

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self.session = session
        # The session's trace hooks (phases, the literal-address guard), made once: the hooks
        # keep their state in core.http.clients' context variable, not in aiohttp's
        # per-request context.
        configs = session.trace_configs
        self.traces = [Trace(session, config, config.trace_config_ctx()) for config in configs]
        self.on_start = [trace for trace, config in zip(self.traces, configs, strict=True)
                         if config.on_request_start]
        self._origins: dict[tuple[str, str, int | None], aiohttp.ClientRequest] = {}

    def build(self, method: str, url: str, headers: Mapping[str, str], content: bytes | None,
              *, signature_header: str | None = None) -> Built | None:
        """Build a request as ``session.request`` would write it; ``signature_header``: a
        header whose value is given at send time (:func:`sign`), placed where the session path
        puts it (after ``headers``).

        Returns:
            ``None`` when the request is one the connection path leaves to the session (see
            the module's docstring).
        """
        try:
            target = yarl.URL(url)
            if target.scheme not in ("http", "https") or not target.raw_host or \
                    target.raw_user or target.raw_password or \
                    not _TOKEN.fullmatch(method) or method.upper() == hdrs.METH_CONNECT:
                return None
            method = method.upper()
            wire = dict(headers)
            if signature_header is not None:
                wire[signature_header] = _PLACEHOLDER
            final = request_headers(method, target, wire, content)
            if final is None:
                return None
            status_line = f"{method} {target.raw_path_qs} HTTP/1.1"
            head = _serialize_headers(status_line, final)  # type: ignore[arg-type]  # a dict will do
            built = Built(method, target, self._origin(target), final, head, content or b"")
            if signature_header is not None:
                line = f"\r\n{signature_header}: {_PLACEHOLDER}\r\n".encode()
                at = head.index(line) + len(line) - len(_PLACEHOLDER) - 2
                built.signature_at = (head[:at], head[at + len(_PLACEHOLDER):])
            return built
        except Exception:  # noqa: BLE001 - the session path sends it and reports its own error
            return None

    def _origin(self, url: yarl.URL) -> aiohttp.ClientRequest:
        """A request to ``url``'s origin, what the connector keys its pool with (one per
        origin, made once)."""
        key = (url.scheme, url.raw_host or "", url.port)
        origin = self._origins.get(key)
        if origin is None:
            if len(self._origins) >= ORIGINS_KEPT:  # bounded: a million jobs, a million hosts
                self._origins.clear()
            origin = self._origins[key] = aiohttp.ClientRequest(
                "GET", url.origin(), loop=asyncio.get_running_loop(), ssl=True)
        return origin

    async def exchange(self, built: Built, limits: aiohttp.ClientTimeout, body_limit: int,
                       response: Response) -> None:
        """Send ``built`` on a connection of the session's connector and read the answer into
        ``response`` (the body up to ``body_limit`` bytes; past it, reading stops and the
        connection is closed). The caller bounds the whole exchange with the attempt's
        deadline; ``limits`` gives the connect timeout, as on the session path.

        Raises:
            What the session path raises for the same fault (``aiohttp.ClientError``
            subclasses, ``BlockedTarget`` from the guard, ``TimeoutError`` from the timers).
        """
        for trace in self.on_start:
            await trace.send_request_start(built.method, built.url, CIMultiDict(built.headers))
        retry = built.method in IDEMPOTENT_METHODS
        while True:
            try:
                connection, message, payload = await self._start(built, limits)
                break
            except (aiohttp.ConnectionTimeoutError, aiohttp.ClientConnectorError,
                    aiohttp.ClientConnectorCertificateError, aiohttp.ClientConnectorSSLError):
                raise  # a connection that could not be made is not tried again
            except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError):
                if not retry:  # RFC 9112, 9.3.1.1: once, for an idempotent request
                    raise
                retry = False
            except aiohttp.ClientError:
                raise
            except OSError as exc:
                if exc.errno is None and isinstance(exc, TimeoutError):
                    raise
                raise aiohttp.ClientOSError(*exc.args) from exc
        try:
            response.status = message.code
            response.raw_headers = message.raw_headers
            response.retry_after = message.headers.get(hdrs.RETRY_AFTER)
            kept = bytearray()
            async for chunk in payload.iter_chunked(RESPONSE_CHUNK):
                room = body_limit - len(kept)
                if room > 0:
                    kept.extend(chunk[:room])
                if len(chunk) > room:
                    response.truncated = True
                    break
            response.body = bytes(kept)
        except BaseException:
            connection.close()
            raise
        if response.truncated:
            connection.close()  # the rest is not read; the connection is dropped
        else:
            connection.release()  # back to the pool unless the protocol says it must close

    async def _start(self, built: Built, limits: aiohttp.ClientTimeout) -> tuple[Any, Any, Any]:
        """Connect, write the request, read the response's head: aiohttp's
        ``ClientSession._request`` (``_connect_and_send_request``), ``ClientRequest.send`` and
        ``ClientResponse.start``, without their objects."""
        session = self.session
        connector = session.connector
        assert connector is not None  # make_session gives every session one
        try:
            connection = await connector.connect(built.origin, traces=self.traces,
                                                 timeout=limits)
        except TimeoutError as exc:
            raise aiohttp.ConnectionTimeoutError(
                f"Connection timeout to host {built.url}") from exc
        try:
            protocol = connection.protocol
            assert protocol is not None
            protocol.set_response_params(
                skip_payload=built.method in EMPTY_BODY_METHODS, read_until_eof=True,
                # No per-read timer: the caller's deadline, of the same length, started first
                # and so always ends first (the session path's timer never fires either).
                auto_decompress=True, read_timeout=None,
                read_bufsize=session._read_bufsize,  # the session's own settings
                timeout_ceil_threshold=connector._timeout_ceil_threshold,
                max_line_size=session._max_line_size, max_field_size=session._max_field_size,
                max_headers=session._max_headers)
            transport = protocol.transport
            if transport is None or transport.is_closing():
                raise ClientConnectionResetError("Cannot write to closing transport")
            transport.write(built.head + built.body if built.body else built.head)
            while True:
                try:
                    message, payload = await protocol.read()
                except HttpProcessingError as exc:
                    info = aiohttp.RequestInfo(built.url, built.method,
                                               CIMultiDictProxy(CIMultiDict(built.headers)))
                    raise aiohttp.ClientResponseError(
                        info, (), status=exc.code, message=exc.message,
                        headers=exc.headers) from exc
                if message.code < 100 or message.code > 199 or message.code == 101:
                    return connection, message, payload
        except BaseException:
            connection.close()
            raise


async def exchange_session(session: aiohttp.ClientSession, method: str, url: str,
                           headers: Mapping[str, str], content: bytes | None,
                           limits: aiohttp.ClientTimeout, body_limit: int,
                           response: Response) -> None:
    """Send a request with ``session.request`` and read the answer into ``response``, as
    :func:`exchange_connection` does (the same cap, the same errors)."""
    async with session.request(method, url, headers=headers, data=content,
                               allow_redirects=False, timeout=limits,
                               skip_auto_headers=NO_CONTENT_TYPE) as answer:
        response.status = answer.status
        response.raw_headers = answer.raw_headers
        response.retry_after = answer.headers.get(hdrs.RETRY_AFTER)
        kept = bytearray()
        async for chunk in answer.content.iter_chunked(RESPONSE_CHUNK):
            room = body_limit - len(kept)
            if room > 0:
                kept.extend(chunk[:room])
            if len(chunk) > room:
                response.truncated = True
                answer.close()  # the rest is not read; the connection is dropped
                break
        response.body = bytes(kept)
