"""The ping fast path: uvicorn's HTTP protocol, answering the common ping requests itself.

A ping through the ASGI stack costs the API process about 0.1 ms of CPU besides its share of
the statement: a scope, a task and a request-response cycle per request, the ASGI messages
and two writes per answer (docs/benchmarks.md, *Where a ping's CPU goes*), against 0.02 ms
for the ping route itself. :class:`PingProtocol` is uvicorn's own httptools protocol with
one change: when the headers of a request are complete and the request is a plain ping, it
queues the ping with :meth:`core.monitors.batcher.PingBatcher.submit` from the parser's
callbacks and writes the answer in one write from the batch's completion, with no task and
no ASGI call. Everything else, on the same connection and port, goes to the ASGI app as
before, and so do the pings it does not take.

A plain ping, taken here: ``GET``, ``POST`` or ``HEAD`` on ``/ping/<rest>`` or
``/v1/ping/<rest>`` where ``<rest>`` is a token or ping key and slug URL with an optional
action (:func:`core.monitors.ping.parse_target`, in plain ASCII without escapes, empty
segments or ``run/``), a query without ``create`` and with a valid ``rid`` if any, no
``Expect: 100-continue``, no ``Transfer-Encoding``, a body of at most
:data:`FAST_BODY_MAX` bytes by its ``Content-Length``, no request of the connection still
unanswered (pipelining keeps uvicorn's order), and no ``limit_concurrency``. Each is recorded
and answered as :func:`api.ping.ping_endpoint` would (the same :func:`api.ping.answer_headers`,
:func:`api.ping.remote_addr` and :func:`api.ping.failure_answer`): 200, 404 for an unknown
token, 503 when the database is away; the answer is written only after the batch's commit,
as before. ``tests/integration/test_ping_protocol.py`` compares the bytes of both paths'
answers and the recorded pings for each kind of request, and for failed batches. One answer
differs by construction: an exception that is neither a domain error nor the database's (a
bug) is a ``text/plain`` 500 that closes the connection here, where the route lets
Litestar's error handling answer it; both log it.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import parse_qsl

import httptools
from litestar import Litestar
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from api.ping import METHODS, answer_headers, failure_answer, read_headers, remote_addr
from core.monitors.ping import (
    MAX_USER_AGENT,
    BadPing,
    Ping,
    Target,
    clean_text,
    parse_rid,
    parse_target,
)

log = logging.getLogger("cronledger.api.ping")

FAST_BODY_MAX = 64 * 1024  # bytes: larger bodies (and chunked ones) take the ASGI route
_SEGMENT = rb"[A-Za-z0-9_.~-]+"
_FAST_PATH = re.compile(rb"/(?:v1/)?ping/(" + _SEGMENT + rb"(?:/" + _SEGMENT + rb"){0,2})/?")
_METHODS = frozenset(method.encode() for method in METHODS)


class _Message:
    """What uvicorn's protocol calls on a request cycle's ``message_event`` (nothing to wake
    here: the fast path has no task waiting for the body)."""

    __slots__ = ()

    def set(self) -> None:
        pass


_NO_EVENT = _Message()


class _FastPing:
    """One plain ping on its way: the body as it arrives, then the batch's answer.

    It stands in uvicorn's protocol as the connection's current request cycle, with the
    attributes the protocol reads and sets on one (``response_complete``, ``disconnected``,
    ``keep_alive``, ``message_event``), so a request pipelined behind it waits in uvicorn's
    queue and a graceful shutdown waits for its answer.
    """

    __slots__ = ("protocol", "context", "target", "rid", "method", "agent", "forwarded",
                 "keep_alive", "body", "response_complete", "disconnected")

    message_event = _NO_EVENT

    def __init__(self, protocol: PingProtocol, context: _Context, target: Target, rid: Any,
                 method: str, agent: str | None, forwarded: str | None,
                 keep_alive: bool) -> None:
        self.protocol = protocol
        self.context = context
        self.target = target
        self.rid = rid
        self.method = method
        self.agent = agent
        self.forwarded = forwarded
        self.keep_alive = keep_alive
        self.body = bytearray()
        self.response_complete = False
        self.disconnected = False

    def start(self) -> None:
        """The request is complete: queue its ping (the answer comes from :meth:`_answered`)."""
        context, target = self.context, self.target
        body = bytes(self.body[:context.body_limit]) if self.body else b""
        client = self.protocol.client
        ping = Ping(token=target.token, kind=target.kind, method=self.method,
                    exit_status=target.exit_status, rid=self.rid,
                    remote_addr=remote_addr(client[0] if client else None, self.forwarded,
                                            context.trusted_proxies),
                    user_agent=clean_text(self.agent, MAX_USER_AGENT), body=body or None,
                    body_size=len(self.body), ping_key=target.ping_key, slug=target.slug)
        self.body = bytearray()
        context.batcher.submit(ping, context.clock.now()).add_done_callback(self._answered)

    def _answered(self, answer: Any) -> None:
        if answer.cancelled():  # the batcher's task was cancelled: the process is stopping
            self.protocol.transport.close()
            return
        exc = answer.exception()
        if exc is None:
            found = answer.result() is not None
            self._reply(200 if found else 404, b"OK" if found else b"not found")
            return
        failed = failure_answer(self.context.state, exc)
        if failed is None:
            log.error("ping could not be recorded", exc_info=exc)
            self._reply(500, b"Internal Server Error", ((b"connection", b"close"),))
        else:
            self._reply(*failed)

    def _reply(self, status: int, text: bytes,
               extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
        """Write the answer as uvicorn's cycle would write the ping route's (one write)."""
        protocol = self.protocol
        if self.disconnected:
            return
        self.response_complete = True
        content = [STATUS_LINE[status]]
        for name, value in (*protocol.server_state.default_headers,
                            *answer_headers(text, self.context.limit_header, extra)):
            content += (name, b": ", value, b"\r\n")
        if any(name == b"connection" for name, _ in extra):
            self.keep_alive = False
        elif not self.keep_alive:
            content.append(b"connection: close\r\n")
        content.append(b"\r\n")
        if self.method != "HEAD":
            content.append(text)
        protocol.transport.write(b"".join(content))
        if not self.keep_alive:
            protocol.transport.close()
        protocol.on_response_complete()


class _Context:
    """What every plain ping of one server needs from its Litestar app, read once: the app's
    state (for :func:`api.ping.failure_answer`), its batcher and clock, and the settings the
    answer and the ping use (``Ping-Body-Limit``, the trusted proxies)."""

    __slots__ = ("state", "batcher", "clock", "body_limit", "limit_header", "trusted_proxies")

    def __init__(self, state: Any) -> None:
        settings = state.settings
        self.state = state
        self.batcher = state.ping_batcher
        self.clock = state.clock
        self.body_limit: int = settings.ping_body_limit
        self.limit_header = str(self.body_limit).encode()
        self.trusted_proxies: str = settings.trusted_proxies


def _litestar(app: Any) -> Litestar | None:
    """The Litestar app inside uvicorn's loaded app (uvicorn may wrap it in middleware)."""
    for _ in range(8):
        if isinstance(app, Litestar):
            return app
        app = getattr(app, "app", None)
    return None


def _context(app: Litestar | None) -> _Context | None:
    """The plain pings' :class:`_Context` of ``app``, once its lifespan has started the
    batcher (``None`` before: its pings go to the route, which waits for the start-up)."""
    state = app.state if app is not None else None
    if state is None or getattr(state, "ping_batcher", None) is None:
        return None
    return _Context(state)


def _read_target(parser: httptools.HttpRequestParser, raw_url: bytes
                 ) -> tuple[str, Target, Any] | None:
    """``(method, target, rid)`` of a plain ping's request line, else ``None`` (another
    method or route, an upgrade, ``run/``, escapes, ``?create``, or a malformed part the
    route answers 400). The query is read as the route reads it (:func:`api.ping.ping_endpoint`:
    blank values kept, the last of repeated names wins)."""
    method = parser.get_method()
    if method not in _METHODS or parser.should_upgrade():
        return None
    url = httptools.parse_url(raw_url)
    match = _FAST_PATH.fullmatch(url.path)
    if match is None or match.group(1).startswith(b"run/"):
        return None
    try:
        target = parse_target(match.group(1).decode("ascii"))
        query = url.query
        params = dict(parse_qsl(query.decode("latin-1"), keep_blank_values=True)) \
            if query else {}
        rid = parse_rid(params.get("rid"))
    except BadPing:
        return None  # a 400, answered by the route
    if target is None or "create" in params:
        return None
    return method.decode("ascii"), target, rid


def _read_plain_headers(headers: list[tuple[bytes, bytes]]
                        ) -> tuple[str | None, str | None] | None:
    """``(user agent, forwarded-for)`` when the headers allow a plain ping (no
    ``Transfer-Encoding``, a numeric ``Content-Length`` of at most :data:`FAST_BODY_MAX`),
    else ``None``."""
    if any(name == b"transfer-encoding" for name, _ in headers):
        return None
    declared, agent, forwarded = read_headers(headers)
    if declared is None and any(name == b"content-length" for name, _ in headers):
        return None  # a length that is not a number: the route's rule
    if declared is not None and declared > FAST_BODY_MAX:
        return None
    return agent, forwarded


class PingProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the ping fast path (module docstring).

    Given to uvicorn as its ``http`` protocol class (``uvicorn.Config(http=PingProtocol)``,
    or ``"api.ping_protocol:PingProtocol"``), by :mod:`api.runner`. One instance per
    connection; the Litestar app is found once per connection and its :class:`_Context`
    once its lifespan has started, not per ping.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._litestar = _litestar(self.app)
        self._context: _Context | None = None

    def on_headers_complete(self) -> None:
        fast = self._plain_ping()
        if fast is None:
            super().on_headers_complete()
        else:
            self.cycle = fast  # type: ignore[assignment]  # ours answers in its place

    def on_body(self, body: bytes) -> None:
        cycle: object = self.cycle  # uvicorn's cycle, or ours (on_headers_complete)
        if type(cycle) is _FastPing:
            cycle.body += body  # at most FAST_BODY_MAX: the parser keeps to Content-Length
        else:
            super().on_body(body)

    def on_message_complete(self) -> None:
        cycle: object = self.cycle
        if type(cycle) is _FastPing:
            cycle.start()
        else:
            super().on_message_complete()

    def _plain_ping(self) -> _FastPing | None:
        """The ping this request is, when it is a plain one (module docstring)."""
        context = self._context
        if context is None:
            context = self._context = _context(self._litestar)
            if context is None:
                return None  # not started yet
        if not self._may_answer():
            return None
        request = _read_target(self.parser, self.url)
        if request is None:
            return None
        headers = _read_plain_headers(self.headers)
        if headers is None:
            return None
        method, target, rid = request
        agent, forwarded = headers
        parser = self.parser
        keep_alive = parser.get_http_version() != "1.0" and parser.should_keep_alive()
        return _FastPing(self, context, target, rid, method, agent, forwarded, keep_alive)

    def _may_answer(self) -> bool:
        """Whether this connection lets the fast path answer now: no request before it still
        unanswered (uvicorn keeps pipelined answers in order), no ``Expect: 100-continue``,
        no ``limit_concurrency``."""
        cycle = self.cycle
        return (cycle is None or cycle.response_complete) and not self.expect_100_continue \
            and self.limit_concurrency is None
