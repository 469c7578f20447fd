"""``/ping/...`` and ``/v1/ping/...``: the healthchecks-compatible ping API, as raw ASGI.

No authentication (the token is the credential), no dependency injection, no JSON: the route is
hit by every cron job on every run, so it is a plain ASGI app mounted in Litestar that parses the
path, reads at most 10 MiB of body, and records the ping with one database statement, shared
with the pings that arrive at the same time (:class:`core.monitors.batcher.PingBatcher`).

Answers are ``text/plain`` like healthchecks': ``200 OK`` (empty for HEAD) with a
``Ping-Body-Limit`` header and ``Cache-Control: no-cache``; ``404 not found`` for an unknown,
malformed or deleted token (or ping key and slug); ``201 Created`` when ``?create=1`` created
the monitor of a slug URL (:mod:`core.monitors.provision`), ``403`` with the reason when the
team is at its monitor limit;
``400`` for an exit status above 255 or a malformed ``rid``; ``405`` for other methods; ``413``
for a body over 10 MiB; ``503`` with ``Retry-After`` when the database is unavailable, within
``CRONLEDGER_DB_WAIT_SECONDS`` (``curl --retry`` retries it). A ping answered 503 because no
connection could be had was not recorded and never will be (see
:class:`core.monitors.batcher.PingBatcher`). No input produces a 500.

``/ping/run/<token>[/fail|/<exit status>]`` is a run's confirmation URL (fire-and-confirm,
docs/ledger.md), answered the same way by :func:`_confirm`.

These statuses and texts are the ping protocol's own answers, so they are set here; every
``application/problem+json`` answer (all other routes) is built by :mod:`api.errors`, whose
``Retry-After`` delay this route shares.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast
from urllib.parse import parse_qsl

import psycopg
from litestar import asgi
from litestar.types import (
    HTTPResponseBodyEvent,
    HTTPResponseStartEvent,
    HTTPScope,
    Receive,
    Scope,
    Send,
)
from psycopg_pool import PoolTimeout

from api.errors import RETRY_AFTER_SECONDS
from core.errors import DomainError
from core.http.proxies import trusted_proxies
from core.monitors.ping import (
    MAX_BODY_BYTES,
    MAX_REMOTE_ADDR,
    MAX_USER_AGENT,
    BadPing,
    Ping,
    clean_text,
    parse_action,
    parse_rid,
    parse_target,
)
from core.monitors.provision import provision
from core.runs.confirm import TOKEN_PATTERN as CONFIRM_TOKEN_PATTERN
from core.runs.confirm import confirm as confirm_run
from core.services.outage import unavailable_reason

log = logging.getLogger("cronledger.api.ping")

METHODS = ("GET", "POST", "HEAD")
_TEXT = (b"content-type", b"text/plain; charset=utf-8")
_CORS = (b"access-control-allow-origin", b"*")
_NO_CACHE = (b"cache-control", b"no-cache")
_RETRY = ((b"retry-after", str(RETRY_AFTER_SECONDS).encode()),)


class _Disconnected(Exception):
    """The client went away before the request was read: nothing is recorded."""


class _TooLarge(Exception):
    pass


def answer_headers(text: bytes, limit: bytes,
                   extra: tuple[tuple[bytes, bytes], ...] = ()) -> list[tuple[bytes, bytes]]:
    """The headers of every ping answer whose body is ``text`` (``limit``: the
    ``Ping-Body-Limit`` value), shared with :mod:`api.ping_protocol`."""
    return [_TEXT, (b"content-length", str(len(text)).encode()),
            (b"ping-body-limit", limit), _CORS, _NO_CACHE, *extra]


def failure_answer(state: Any, exc: BaseException) -> tuple[int, bytes, tuple[
        tuple[bytes, bytes], ...]] | None:
    """``(status, text, extra headers)`` answering a ping whose recording raised ``exc``
    (``DomainError``: its status; the database unavailable: 503 with ``Retry-After``, the
    outage noted once); ``None`` for any other exception (not ours to answer)."""
    if isinstance(exc, DomainError):  # MonitorLimit: 403; a bad CRONLEDGER_PING_CREATE_*: 422
        return exc.status, exc.detail.encode(), ()
    if not isinstance(exc, (psycopg.Error, PoolTimeout, OSError)):
        return None
    reason = unavailable_reason(exc)
    if reason is None:
        log.error("ping could not be recorded", exc_info=exc)
    else:
        state.outage.down(reason)  # one warning per outage, no traceback
    return 503, b"service unavailable, retry", _RETRY


async def _reply(send: Send, status: int, text: bytes, *, head: bool, limit: bytes,
                 extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    start: HTTPResponseStartEvent = {"type": "http.response.start", "status": status,
                                     "headers": answer_headers(text, limit, extra)}
    await send(start)
    # more_body left out: ASGI's default (false), which Litestar's TypedDict makes a key
    await send(cast("HTTPResponseBodyEvent", {"type": "http.response.body",
                                              "body": b"" if head else text}))


def read_headers(headers: Iterable[tuple[bytes, bytes]]) -> tuple[int | None, str | None,
                                                                    str | None]:
    """``(content length, user agent, forwarded-for)`` from the raw headers (lower-case
    names; several ``X-Forwarded-For`` headers are joined with commas, as uvicorn does)."""
    length = agent = forwarded = None
    for name, value in headers:
        if name == b"content-length":
            length = int(value) if value.isdigit() else None
        elif name == b"user-agent":
            agent = value.decode("latin-1")
        elif name == b"x-forwarded-for":
            text = value.decode("latin-1")
            forwarded = f"{forwarded},{text}" if forwarded else text
    return length, agent, forwarded


def _remote_addr(scope: Scope, forwarded: str | None, trusted: str) -> str | None:
    client = scope.get("client")
    return remote_addr(client[0] if client else None, forwarded, trusted)


def remote_addr(peer: str | None, forwarded: str | None, trusted: str) -> str | None:
    """The client address: from ``X-Forwarded-For`` only when the ``peer`` is one of the
    trusted proxies ``trusted`` (``CRONLEDGER_TRUSTED_PROXIES``, uvicorn's rules:
    :class:`core.http.proxies.TrustedProxies`), else the peer address."""
    address = trusted_proxies(trusted).client(peer, forwarded) if forwarded else peer
    return clean_text(address, MAX_REMOTE_ADDR) if address else None


async def _read_body(receive: Receive, declared: int | None, keep: int) -> tuple[bytes, int]:
    """``(first keep bytes, full size)``; refuses more than 10 MiB without buffering it."""
    if declared is not None and declared > MAX_BODY_BYTES:
        raise _TooLarge
    kept: list[bytes] = []
    size = kept_size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk = cast(bytes, message.get("body", b""))  # an http.request message
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _TooLarge
        if kept_size < keep and chunk:
            part = chunk[:keep - kept_size]
            kept.append(part)
            kept_size += len(part)
        if not message.get("more_body", False):
            return b"".join(kept), size


CONFIRM_PREFIX = "run/"
_CONFIRM_TOKEN = re.compile(CONFIRM_TOKEN_PATTERN)


async def _confirm(scope: Scope, reply: Any) -> None:
    """``/ping/run/<token>[/fail|/<exit status>]``: a run's confirmation URL
    (:func:`core.runs.confirm.confirm`). ``200 OK`` once; ``404`` for an unknown, used or
    expired token; ``400`` for ``/start``, ``/log`` or an exit status above 255; ``503`` when
    the database is unavailable. The body is not read."""
    state = scope["app"].state
    parts = scope["path"].strip("/").split("/")[1:]
    try:
        action = parse_action(parts[1]) if len(parts) == 2 else \
            parse_action(None) if len(parts) == 1 else None
    except BadPing as exc:
        await reply(400, str(exc).encode())
        return
    if action is None or not _CONFIRM_TOKEN.fullmatch(parts[0]):
        await reply(404, b"not found")
        return
    kind, exit_status = action
    if kind not in ("success", "fail"):
        await reply(400, b"a confirmation is a success, /fail or an exit status")
        return
    try:
        status = await confirm_run(state.pool, parts[0], failed=kind == "fail",
                                   exit_status=exit_status, now=state.clock.now(),
                                   max_attempts=state.settings.notify_max_attempts)
    except (psycopg.Error, PoolTimeout, OSError, DomainError) as exc:
        reason = None if isinstance(exc, DomainError) else unavailable_reason(exc)
        if reason is None:
            log.warning("confirmation could not be recorded: %s", exc)
        else:
            state.outage.down(reason)
        await reply(503, b"service unavailable, retry", extra=_RETRY)
        return
    await reply(404 if status is None else 200, b"not found" if status is None else b"OK")


async def ping_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    """The ASGI app behind ``/ping`` and ``/v1/ping`` (scope ``path`` is the part after it)."""
    state = scope["app"].state
    limit = state.settings.ping_body_limit
    method = cast("HTTPScope", scope)["method"]  # mounted for HTTP only
    reply = functools.partial(_reply, send, head=method == "HEAD", limit=str(limit).encode())
    if method not in METHODS:
        await reply(405, b"method not allowed", extra=((b"allow", b"GET, POST, HEAD"),))
        return
    if scope["path"].lstrip("/").startswith(CONFIRM_PREFIX):
        await _confirm(scope, reply)
        return
    try:
        target = parse_target(scope["path"])
        query = scope.get("query_string", b"").decode("latin-1")
        # Blank values kept: ``?rid=`` is a run id that is not a UUID (400), not an absent one.
        params = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
        rid = parse_rid(params.get("rid"))
    except BadPing as exc:
        await reply(400, str(exc).encode())
        return
    if target is None:
        await reply(404, b"not found")
        return
    declared, agent, forwarded = read_headers(scope["headers"])
    try:
        body, size = await _read_body(receive, declared, limit)
    except _Disconnected:
        return  # the client went away before sending its ping: nothing is recorded
    except _TooLarge:
        await reply(413, b"payload too large: the limit is 10 MiB",
                    extra=((b"connection", b"close"),))
        return
    ping = Ping(token=target.token, kind=target.kind, method=method,
                exit_status=target.exit_status, rid=rid,
                remote_addr=_remote_addr(scope, forwarded, state.settings.trusted_proxies),
                user_agent=clean_text(agent, MAX_USER_AGENT), body=body or None,
                body_size=size, ping_key=target.ping_key, slug=target.slug)
    created = False
    try:
        now = state.clock.now()
        status = await state.ping_batcher.record(ping, now)
        if status is None and ping.slug and params.get("create") == "1":
            created = await _provision(state, ping, now)
            status = await state.ping_batcher.record(ping, now)
    except (DomainError, psycopg.Error, PoolTimeout, OSError) as exc:
        failed = failure_answer(state, exc)
        assert failed is not None  # one of the kinds failure_answer answers
        await reply(failed[0], failed[1], extra=failed[2])
        return
    if status is None:
        await reply(404, b"not found")
    else:
        await reply(201 if created else 200, b"Created" if created else b"OK")


async def _provision(state: Any, ping: Ping, now: datetime) -> bool:
    """Create the monitor of a ``?create=1`` slug ping; whether this ping created it."""
    settings = state.settings
    assert ping.ping_key is not None and ping.slug is not None
    monitor_id = await provision(state.pool, ping.ping_key, ping.slug,
                                 schedule=settings.ping_create_schedule,
                                 grace_seconds=settings.ping_create_grace_seconds,
                                 limit=settings.team_monitor_limit, now=now,
                                 keyring=getattr(state, "keyring", None))
    return monitor_id is not None


ping_mount = asgi(["/ping", "/v1/ping"], is_mount=True, name="ping",
                  copy_scope=False)(ping_endpoint)
