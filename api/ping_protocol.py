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

    __slots__ = ("protocol", "state", "target", "rid", "method", "agent", "forwarded",
                 "keep_alive", "body", "response_complete", "disconnected")

    message_event = _NO_EVENT

    def __init__(self, protocol: PingProtocol, state: Any, target: Target, rid: Any,
                 method: str, agent: str | None, forwarded: str | None,
                 keep_alive: bool) -> None:
        self.protocol = protocol
        self.state = state
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
        state, target = self.state, self.target
        settings = state.settings
        limit = settings.ping_body_limit
        body = bytes(self.body[:limit]) if self.body else b""
        client = self.protocol.client
        ping = Ping(token=target.token, kind=target.kind, method=self.method,
                    exit_status=target.exit_status, rid=self.rid,
                    remote_addr=remote_addr(client[0] if client else None, self.forwarded,
                                            settings.trusted_proxies),
                    user_agent=clean_text(self.agent, MAX_USER_AGENT), body=body or None,
                    body_size=len(self.body), ping_key=target.ping_key, slug=target.slug)
        self.body = bytearray()
        state.ping_batcher.submit(ping, state.clock.now()).add_done_callback(self._answered)

    def _answered(self, answer: Any) -> None:
        if answer.cancelled():  # the batcher's task was cancelled: the process is stopping
            self.protocol.transport.close()
            return
        exc = answer.exception()
        if exc is None:
            found = answer.result() is not None
            self._reply(200 if found else 404, b"OK" if found else b"not found")
            return
        failed = failure_answer(self.state, exc)
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
        limit = str(self.state.settings.ping_body_limit).encode()
        content = [STATUS_LINE[status]]
        for name, value in (*protocol.server_state.default_headers,
                            *answer_headers(text, limit, extra)):
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


def _litestar(app: Any) -> Litestar | None:
    """The Litestar app inside uvicorn's loaded app (uvicorn may wrap it in middleware)."""
    for _ in range(8):
        if isinstance(app, Litestar):
            return app
        app = getattr(app, "app", None)
    return None


class PingProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the ping fast path (module docstring).

    Given to uvicorn as its ``http`` protocol class (``uvicorn.Config(http=PingProtocol)``,
    or ``"api.ping_protocol:PingProtocol"``), by :mod:`api.runner`.
    """

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
        cycle = self.cycle
        if (cycle is not None and not cycle.response_complete) or self.expect_100_continue \
                or self.limit_concurrency is not None:
            return None
        app = _litestar(self.app)
        state = app.state if app is not None else None
        if state is None or getattr(state, "ping_batcher", None) is None:
            return None  # not started yet
        parser = self.parser
        method = parser.get_method()
        if method not in _METHODS or parser.should_upgrade():
            return None
        url = httptools.parse_url(self.url)
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
        if any(name == b"transfer-encoding" for name, _ in self.headers):
            return None
        declared, agent, forwarded = read_headers(self.headers)
        if declared is None and any(name == b"content-length" for name, _ in self.headers):
            return None  # a length that is not a number: the route's rule
        if declared is not None and declared > FAST_BODY_MAX:
            return None
        keep_alive = parser.get_http_version() != "1.0" and parser.should_keep_alive()
        return _FastPing(self, state, target, rid, method.decode("ascii"), agent, forwarded,
                         keep_alive)
