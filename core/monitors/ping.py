"""Recording heartbeat pings: the healthchecks.io ping API's rules, one database round trip.

``/ping/<token>`` (success), ``/start``, ``/fail``, ``/log`` and ``/<exit status>`` (0 is a
success, 1-255 a failure). The token is the credential: 64 lowercase hex characters, looked up
by its SHA-256. ``/ping/<ping-key>/<slug>`` and the same suffixes name the monitor by the team's
ping key (looked up by its SHA-256, :mod:`core.teams`) and the monitor's slug instead: the
statement resolves the pair to the monitor's token hash, and everything else is the same
(healthchecks' ``hc/api/tests/test_ping_by_slug.py``). :func:`record_pings` runs the single
``monitor_ping_batch`` statement (a call of the PL/pgSQL function of that name, which each
server process plans once: migration 0021) on an autocommit connection: one round trip and one
commit for any number of pings, applied per monitor in the given order under the monitor's row lock
(so concurrent batches serialise on a monitor and each sees the state the previous one left).
:class:`core.monitors.batcher.PingBatcher` gathers the pings arriving while a statement is in
flight into the next one.

Alerts: a ping that takes a monitor with channels down (``/fail``) or back up must queue its
alert in the transaction of its ``monitor.down`` / ``monitor.up`` event (the outbox rule of
:mod:`core.notifications.outbox`), where its failures and good pings are counted too (the
failure tolerance, :mod:`core.monitors.tolerance`); a down monitor that comes back, with
channels or not, releases the alerts of its dependents it held in that transaction too
(:mod:`core.notifications.released`). The statement leaves those monitors
alone and says so (``deferred``); only their pings are then recorded again, by the same
statement, in an explicit transaction that also queues the alerts. Ordinary pings (a monitor
without channels, or one that is up and gets a success, start or log ping) stay one
statement.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, TypeAlias, cast

import msgspec
import psycopg
from psycopg import AsyncRawCursor
from psycopg.rows import TupleRow, dict_row, tuple_row
from psycopg_pool import AsyncConnectionPool

from core.clock import rfc3339
from core.db import Connection, open_pool
from core.maintenance.queries import held_alerts
from core.monitors.rules import ping_outcome
from core.monitors.slugs import SLUG_PATTERN
from core.monitors.tolerance import LockedMonitor, count
from core.notifications.outbox import DEFAULT_MAX_ATTEMPTS
from core.notifications.released import release_dependents
from core.queries import Q
from core.teams import PING_KEY_PATTERN
from core.tokens import token_hash

# The ping pool's connections (:func:`open_ping_pool`): raw cursors, rows as tuples.
PingConnection: TypeAlias = psycopg.AsyncConnection[TupleRow]
PingPool: TypeAlias = AsyncConnectionPool[PingConnection]

MAX_BODY_BYTES = 10 * 1024 * 1024  # larger request bodies are refused (413)
MAX_EXIT_STATUS = 255
MAX_USER_AGENT = 300
MAX_REMOTE_ADDR = 100
TOKEN_PATTERN = "[0-9a-f]{64}"  # a ping token (the OpenAPI document uses it too)
_TOKEN = re.compile(TOKEN_PATTERN)
_EXIT_STATUS = re.compile(r"[0-9]+")  # any length: too large is a 400, as in healthchecks
_PING_KEY = re.compile(PING_KEY_PATTERN)
_SLUG = re.compile(SLUG_PATTERN)


def native_placeholders(statement: str) -> tuple[str, tuple[str, ...]]:
    """``%(name)s`` placeholders rewritten as PostgreSQL's ``$n`` and the names in ``$n`` order.

    The ping statement is run by a raw cursor, which sends it as is: psycopg then neither
    parses nor rewrites it on every call.
    """
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match.group(1) not in names:
            names.append(match.group(1))
        return f"${names.index(match.group(1)) + 1}"

    return _PLACEHOLDER.sub(number, statement), tuple(names)


_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
_encode = msgspec.json.Encoder().encode  # bytes as base64, datetimes as RFC 3339
PING_STATEMENT, PING_PARAMS = native_placeholders(Q["monitor_ping_batch"])


class BadPing(ValueError):
    """A ping to a well-formed token with an unusable part (exit status, rid): HTTP 400."""


@dataclass(frozen=True, slots=True)
class Ping:
    """One received ping, already validated.

    Attributes:
        token: the 64-hex token from the URL (``""`` for a slug ping).
        kind: ``success``, ``start``, ``fail`` or ``log`` (the monitor may turn it into
            ``ignored``).
        method: HTTP method (``GET``, ``POST``, ``HEAD``).
        exit_status: 0-255 when the URL ended with an exit status.
        rid: the run id of ``?rid=``, pairing a start with its end.
        remote_addr: the client address (first ``X-Forwarded-For`` entry when present).
        user_agent: ``User-Agent``, at most 300 characters.
        body: the body, truncated to the configured limit (``None`` when there was none).
        body_size: the body's full size in bytes.
        ping_key: the team's ping key of a slug ping (``None`` for a token ping).
        slug: the monitor's slug of a slug ping.
    """

    token: str
    kind: str
    method: str
    exit_status: int | None = None
    rid: uuid.UUID | None = None
    remote_addr: str | None = None
    user_agent: str | None = None
    body: bytes | None = None
    body_size: int = 0
    ping_key: str | None = None
    slug: str | None = None

    @property
    def key(self) -> str:
        """What names the monitor in this process: the token, or ``<ping key>/<slug>``."""
        return self.token or f"{self.ping_key}/{self.slug}"


class Target(NamedTuple):
    """The monitor and action a ping URL names: ``token`` (``""`` for a slug URL) or
    ``ping_key`` and ``slug``; ``kind`` ``success`` | ``start`` | ``fail`` | ``log``."""

    token: str
    kind: str
    exit_status: int | None
    ping_key: str | None = None
    slug: str | None = None


def parse_action(action: str | None) -> tuple[str, int | None] | None:
    """``(kind, exit_status)`` of the path segment after a token (``None``: none, a success);
    ``None`` when it names no ping route.

    Raises:
        BadPing: an exit status above 255.
    """
    return ("success", None) if action is None else _action(action)


def _action(action: str) -> tuple[str, int | None] | None:
    if action in ("start", "fail", "log"):
        return action, None
    if not _EXIT_STATUS.fullmatch(action):
        return None
    status = int(action) if len(action) <= 9 else MAX_EXIT_STATUS + 1
    if status > MAX_EXIT_STATUS:
        shown = action if len(action) <= 20 else f"{action[:20]}…"
        raise BadPing(f"invalid exit status {shown}: use 0 to {MAX_EXIT_STATUS}")
    return ("success" if status == 0 else "fail"), status


def parse_target(path: str) -> Target | None:
    """The :class:`Target` of the part of the path after ``/ping/``.

    Args:
        path: ``"<token>"``, ``"<token>/start"``, ``"<token>/3"``, or ``"<ping key>/<slug>"``
            with the same suffixes (``"<ping key>/<slug>/fail"``); slashes around it are
            ignored, so a trailing slash is accepted. A ping key is never 64 hex characters
            (:func:`core.teams.new_ping_key`), so the two forms cannot be confused.

    Returns:
        ``None`` when the path names no ping route or the token, key or slug is malformed (a
        404, like an unknown token).

    Raises:
        BadPing: an exit status above 255.
    """
    parts = path.strip("/").split("/")
    if _TOKEN.fullmatch(parts[0]):
        if len(parts) == 1:
            return Target(parts[0], "success", None)
        action = _action(parts[1]) if len(parts) == 2 else None
        return None if action is None else Target(parts[0], *action)
    if not 2 <= len(parts) <= 3 or not _PING_KEY.fullmatch(parts[0]) \
            or not _SLUG.fullmatch(parts[1]):
        return None
    action = ("success", None) if len(parts) == 2 else _action(parts[2])
    return None if action is None else Target("", *action, ping_key=parts[0], slug=parts[1])


# healthchecks' ``is_valid_uuid_string`` (hc/lib/string.py): the hyphenated form, any case;
# the OpenAPI document types ``rid`` as ``format: uuid``, which is this form too.
_RID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


def parse_rid(value: str | None) -> uuid.UUID | None:
    """The ``?rid=`` run id: ``None`` when the parameter is absent (not when it is empty).

    Raises:
        BadPing: anything but a hyphenated UUID, the empty string included (healthchecks'
            ``ping`` view answers these 400 "invalid uuid format").
    """
    if value is None:
        return None
    if not _RID.fullmatch(value):
        raise BadPing("invalid uuid format: rid must be a UUID "
                      "(such as 3fa85f64-5717-4562-b3fc-2c963f66afa6)")
    return uuid.UUID(value)


def clean_text(value: str | None, limit: int) -> str | None:
    """Header text made storable: NUL removed (PostgreSQL text cannot hold it), capped."""
    if not value:
        return None
    return value.replace("\x00", "")[:limit] or None


async def open_ping_pool(dsn: str, *, size: int, synchronous_commit: bool = True,
                         **options: Any) -> PingPool:
    """A pool for :func:`record_ping`: autocommit connections returning tuples.

    Args:
        dsn: libpq DSN.
        size: connections kept open (a ping holds one for a single statement).
        synchronous_commit: ``False`` acknowledges a ping before its commit record is flushed
            to disk (PostgreSQL's ``synchronous_commit = off``, for these connections only): a
            PostgreSQL crash - not an application crash - can lose the pings of the last few
            hundred milliseconds, never corrupt or reorder anything.
        options: more ``AsyncConnectionPool`` arguments (the API passes ``timeout``,
            ``reconnect_timeout`` and ``configure``: see ``api/app.py``).

    Raises:
        psycopg_pool.PoolTimeout: when no connection can be made within 30 seconds.
    """
    kwargs: dict[str, object] = {"row_factory": tuple_row, "autocommit": True,
                                 "cursor_factory": AsyncRawCursor,
                                 "prepare_threshold": None}  # pooler-safe, as core/db.py
    if not synchronous_commit:
        kwargs["options"] = "-c synchronous_commit=off"
    pool = await open_pool(dsn, min_size=size, max_size=size, connection=kwargs,
                           name="cronledger-pings", **options)
    # open_pool types its connections by its default row factory; these have tuple_row (kwargs)
    return cast("PingPool", pool)


def ping_batch_params(pings: Sequence[tuple[Ping, datetime]], defer: bool = True
                      ) -> dict[str, Any]:
    """The parameters of ``monitor_ping_batch`` for ``pings`` (in arrival order)."""
    return {"defer": defer, "pings": _encode([
        {"i": n, "h": token_hash(ping.token) if ping.token else None,
         "pk": token_hash(ping.ping_key) if ping.ping_key else None, "sl": ping.slug,
         "k": ping.kind, "m": ping.method, "r": ping.rid,
         "t": at, "x": ping.exit_status, "a": ping.remote_addr, "u": ping.user_agent,
         "b": ping.body, "s": ping.body_size}
        for n, (ping, at) in enumerate(pings, start=1)]).decode()}


def _last_ping(ping: Ping, at: datetime) -> dict[str, Any]:
    return {"at": rfc3339(at), "kind": ping.kind, "exit_status": ping.exit_status,
            "method": ping.method, "body": ping.body}


def _down_reason(ping: Ping, action: str, duration_ms: int | None, min_duration: int | None
                 ) -> dict[str, Any]:
    """The ``monitor.down`` data of a ping of effective ``action`` that took a monitor down
    (:func:`core.monitors.rules.ping`): a success can only do so as a run shorter than
    ``min_duration`` (:func:`core.monitors.rules.too_short`), a failure is the ping's own or
    the body's (a failure keyword)."""
    if action == "success":
        return {"reason": "too_short", "duration_ms": duration_ms, "min_duration": min_duration}
    return {"reason": "fail" if ping.kind == "fail" else "failure_keyword",
            "exit_status": ping.exit_status}


class PingResult(NamedTuple):
    """A row of ``monitor_ping_batch`` (core/sql/monitors.sql), one per ping of the batch.

    Attributes:
        pos: the ping's position in the batch (from 1).
        status: the monitor's status after the ping; ``None``: no live monitor has its token
            (nothing was written for it).
        woke: whether the checker was woken (its ``alert_at`` moved earlier).
        deferred: left to :func:`_record_alerting` (a notifying monitor whose status changes).
        token_hash: the monitor's token hash (how a slug ping resolved, too).
        duration_ms: the run the ping closed, in milliseconds, when it closed one.
        action: the ping's effective action (:func:`core.monitors.rules.effective_action`).
    """

    pos: int
    status: str | None
    woke: bool
    deferred: bool
    token_hash: bytes | None
    duration_ms: int | None
    action: str | None


async def _record_alerting(conn: Connection, pings: Sequence[tuple[Ping, datetime]],
                           keys: Sequence[bytes], max_attempts: int) -> list[str | None]:
    """Record pings of monitors that notify or are down, count the failures and good pings of
    those that notify, queue the alerts they raise, and release the alerts a monitor that
    comes back held of its dependents (:func:`core.notifications.released.
    release_dependents`), in one transaction (``conn`` is a dict-row connection, not in a
    transaction; ``keys``: each ping's monitor token hash, as the first statement resolved it).

    What counts is :func:`core.monitors.rules.ping_outcome`, and when it alerts the failure
    tolerance says (:func:`core.monitors.tolerance.count`; with the default thresholds
    healthchecks' rule, :func:`core.monitors.rules.alert_for`: down, and up after down).
    """
    hashes = sorted(set(keys))
    async with conn.transaction():
        cur = await conn.execute(Q["monitor_lock_for_ping_alerts"], {"hashes": hashes})
        monitors = {m.ping_token_hash: m
                    for m in map(LockedMonitor.from_row, await cur.fetchall())}
        cur = await conn.execute(Q["monitor_ping_batch"], ping_batch_params(pings, defer=False))
        results = [PingResult(**row) for row in await cur.fetchall()]
        statuses = [result.status for result in results]
        status_of = {key: monitor.status for key, monitor in monitors.items()}
        for (ping, at), key, result in zip(pings, keys, results, strict=True):
            status = result.status
            if status is None or key not in monitors:
                continue
            before, status_of[key] = status_of[key], status
            action = result.action or ""  # set on every ping a monitor took
            outcome = ping_outcome(action, status)
            monitor = monitors[key]
            if outcome is not None and monitor.channels:
                reason = _down_reason(ping, action, result.duration_ms,
                                      monitor.min_duration) if outcome == "failure" else None
                await count(conn, monitor, outcome, at,
                            status_before=before, slot_at=at, reason=reason,
                            last_ping=_last_ping(ping, at),
                            down_since=monitor.down_since, max_attempts=max_attempts)
            if before == "down" and status != "down":  # back: the holds it made may end
                await release_dependents(conn, [monitor.id], at, hold=held_alerts,
                                         max_attempts=max_attempts)
    return statuses


async def record_pings(pool: PingPool, pings: Sequence[tuple[Ping, datetime]],
                       max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> list[str | None]:
    """Record ``pings`` (each with its arrival instant, UTC) in one statement and one commit.

    Args:
        pool: a pool from :func:`open_ping_pool` (autocommit: the statement is its own
            transaction, so there is no separate COMMIT round trip).
        pings: in arrival order; several may target one monitor.
        max_attempts: delivery attempts of the alerts the pings cause.

    Returns:
        For each ping, the monitor's status after it, or ``None`` when no live monitor has its
        token (nothing was written for it).

    Raises:
        psycopg.Error: the database failed (the caller answers 503; the client retries).
    """
    params = ping_batch_params(pings)
    async with pool.connection() as conn:
        cur = await conn.execute(PING_STATEMENT, [params[name] for name in PING_PARAMS])
        rows = [PingResult._make(row) for row in await cur.fetchall()]
        statuses: list[str | None] = [row.status for row in rows]
        deferred = [n for n, row in enumerate(rows) if row.deferred]
        if deferred:
            # Rare: a monitor that notifies goes down or may come back up. The ping pool's
            # connections are raw and autocommit; the outbox helpers want dict rows.
            # The same connection, typed by the row factory it has until `finally`.
            dict_conn = cast(Connection, conn)
            dict_conn.cursor_factory, dict_conn.row_factory = psycopg.AsyncCursor, dict_row
            try:
                again = await _record_alerting(dict_conn, [pings[n] for n in deferred],
                                               [rows[n].token_hash or b"" for n in deferred],
                                               max_attempts)
            finally:
                conn.cursor_factory, conn.row_factory = AsyncRawCursor, tuple_row
            for n, status in zip(deferred, again, strict=True):
                statuses[n] = status
    return statuses


async def record_ping(pool: PingPool, ping: Ping, now: datetime) -> str | None:
    """Record one ping at ``now`` (UTC): :func:`record_pings` with a batch of one."""
    [status] = await record_pings(pool, [(ping, now)])
    return status
