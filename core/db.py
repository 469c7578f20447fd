"""The one gateway to the driver: pools, transactions, and constraint-name error mapping.

Only this module and the SQL files know about psycopg's error classes; callers see
:mod:`core.errors` (procrastinate's connector / eventsourcing's datastore pattern).
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from typing import Any, TypeAlias, TypeVar

import psycopg
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool
from psycopg_pool.base import AttemptWithBackoff

from core.errors import (
    ConcurrencyConflict,
    Conflict,
    DomainError,
    FieldError,
    InvalidInput,
    NotFound,
)
from core.services.outage import connect_dsn

# The types of what a pool of :func:`open_pool` hands out: psycopg types a connection and its
# cursors by their row factory, and ours is ``dict_row`` (column name to value, each of its
# column's type in the statement's ``.sql`` file).
Connection: TypeAlias = psycopg.AsyncConnection[DictRow]
Cursor: TypeAlias = psycopg.AsyncCursor[DictRow]
# What a function that takes a pool is given: any pool of dict-row connections (a
# ``Pool[Connection]`` from :func:`open_pool` is one).
ConnectionPool: TypeAlias = AsyncConnectionPool[Connection]
# A pool's connection class, with the rows its row factory makes (core/monitors/ping.py's pool
# of tuple rows is the other one).
ConnT = TypeVar("ConnT", bound=psycopg.AsyncConnection[Any])

# Constraint name -> the domain error it means. Constraints are named in migrations/.
CONSTRAINT_ERRORS: dict[str, type[DomainError]] = {
    "events_stream_version_key": ConcurrencyConflict,
    "teams_name_key": Conflict,
    "channels_team_name_key": Conflict,
    "monitors_team_slug_key": Conflict,
    "jobs_team_name_key": Conflict,
    "status_pages_path_key": Conflict,
}
CONSTRAINT_DETAIL = {
    "events_stream_version_key": "the object was changed concurrently; read it again and retry",
    "teams_name_key": "a team with this name already exists",
    "channels_team_name_key": "the team already has a channel with this name",
    "monitors_team_slug_key": "the team already has a monitor with this slug",
    "jobs_team_name_key": "the team already has a job with this name (names are unique per "
                          "team): choose another name",
    "status_pages_path_key": "another status page has this path: choose another one",
}
# The field a constraint's error names (``errors`` of the 409), when it is one field's.
CONSTRAINT_FIELD = {
    "status_pages_path_key": ("path", "is taken by another status page"),
}


def _constraint_family(name: str) -> str:
    """The name a constraint is registered under: a daily leaf of the event log
    (``events_runs_p20261201_stream_version_key``, docs/storage.md) means what
    ``events_stream_version_key`` means."""
    if name.startswith("events_") and name.endswith("_stream_version_key"):
        return "events_stream_version_key"
    return name


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Re-raise integrity errors on known constraints as domain errors.

    Raises:
        DomainError: the subclass registered for the violated constraint.
        psycopg.Error: anything else, unchanged.
    """
    try:
        yield
    except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure) as exc:
        raise Conflict("a concurrent change got in the way; retry the request") from exc
    except psycopg.DataError as exc:
        # Values PostgreSQL cannot store (NUL characters in text, numbers out of range) are
        # the caller's input: report them, never a 500. The transaction is rolled back.
        reason = (exc.diag.message_primary if exc.diag else None) or str(exc).splitlines()[0]
        raise InvalidInput(f"a value cannot be stored: {reason}") from exc
    except psycopg.errors.IntegrityError as exc:
        name = _constraint_family(exc.diag.constraint_name or "")
        error_class = CONSTRAINT_ERRORS.get(name)
        if error_class is None:
            raise
        field = CONSTRAINT_FIELD.get(name)
        raise error_class(CONSTRAINT_DETAIL[name],
                          [FieldError(*field)] if field else None) from exc


# Reconnection after a database outage (docs/operations.md, "Database outages"): a failed
# connection attempt is retried after RECONNECT_INITIAL_DELAY seconds, doubling up to
# RECONNECT_MAX_DELAY, so a pool has connections again within that delay (plus the connection
# itself) of PostgreSQL accepting them. psycopg_pool's own backoff starts at 1 s and doubles
# without bound (8 s after a 20 s outage).
RECONNECT_INITIAL_DELAY = 0.05
RECONNECT_MAX_DELAY = 0.25

class _CappedBackoff(AttemptWithBackoff):
    """psycopg_pool's reconnection backoff, starting at and capped by our delays (seconds)."""

    INITIAL_DELAY = RECONNECT_INITIAL_DELAY
    delay: float  # seconds until the next attempt (psycopg_pool.pool.AttemptWithBackoff)

    def update_delay(self, now: float) -> None:
        super().update_delay(now)
        self.delay = min(self.delay, RECONNECT_MAX_DELAY)


# A connection back in the pool for less than this many seconds, whose socket has nothing to
# read, is handed out without a round trip (see Pool.getconn).
QUIET_CHECK_SECONDS = 1.0
CHECK_TIMEOUT_SECONDS = 1.0  # a round-trip check that takes longer finds the connection dead


class Pool(AsyncConnectionPool[ConnT]):
    """The one pool class of cronledger (:func:`open_pool` makes every pool): an
    :class:`AsyncConnectionPool` that never hands out a connection that died while idle, and
    reconnects at most :data:`RECONNECT_MAX_DELAY` seconds apart after a failure.

    **Dead idle connections.** After PostgreSQL restarts (or a standby is promoted, docs/
    operations.md, "High availability") every idle pooled connection is dead; psycopg_pool
    finds that out only when a request uses one, and that request fails (measured: one 503 per
    pooled connection for as long as they sat idle). :meth:`getconn` checks each connection
    as it leaves the pool and throws a dead one away (the pool makes a new one), taking the
    next at once: psycopg_pool's own ``check`` waits a backoff of 1 s, doubling, after each
    failed check, more than a request waits for a connection. The check costs no round trip
    for a connection back from use within :data:`QUIET_CHECK_SECONDS` whose socket has
    nothing to read (a server that ended the session has closed it, so it reads as EOF or a
    FATAL message); otherwise it is psycopg_pool's ``check_connection`` (an empty query),
    bounded by :data:`CHECK_TIMEOUT_SECONDS` and by what is left of the request's wait.

    **Reconnection.** psycopg_pool has no setting for its backoff: each connection slot's
    attempts share one ``AttemptWithBackoff``, created when the first attempt fails; this pool
    hands in a capped one instead (``reconnect_timeout`` still bounds how long it keeps trying;
    tests/integration/test_outage.py checks the delay, so a psycopg_pool upgrade that changes
    this hook fails there).
    """

    dead_connections = 0  # connections found dead on their way out, thrown away
    connect_error: str | None = None  # why the latest connection attempt failed; None: it did not
    # Connections found dead plus connection attempts failed: a change means the database went
    # away (restart, failover) since it was last read (the worker then looks for orphan runs).
    interruptions = 0

    async def _connect(self, timeout: float | None = None) -> ConnT:
        try:
            conn = await super()._connect(timeout)
        except Exception as exc:
            self.connect_error = " ".join(str(exc).split()) or type(exc).__name__
            self.interruptions += 1
            raise
        self.connect_error = None
        return conn

    async def _add_connection(self, attempt: AttemptWithBackoff | None,
                              growing: bool = False) -> None:
        if attempt is None:
            attempt = _CappedBackoff(timeout=self.reconnect_timeout)
        await super()._add_connection(attempt, growing)

    async def getconn(self, timeout: float | None = None) -> ConnT:
        """A live connection, waiting at most ``timeout`` (default the pool's) seconds in all.

        Raises:
            psycopg_pool.PoolTimeout: no live connection within the timeout.
        """
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            conn = await super().getconn(max(0.0, deadline - time.monotonic()))
            # the check never takes the request past its own wait
            bound = min(CHECK_TIMEOUT_SECONDS, max(0.05, deadline - time.monotonic()))
            if await _alive(conn, bound):
                return conn
            self.dead_connections += 1
            self.interruptions += 1
            await self.putconn(conn)  # broken: the pool closes it and makes a new one

    async def putconn(self, conn: ConnT) -> None:
        # an attribute of our own on psycopg's connection, read by _alive
        setattr(conn, "_cronledger_back_at", time.monotonic())  # noqa: B010
        await super().putconn(conn)


async def _alive(conn: psycopg.AsyncConnection[Any], timeout: float) -> bool:
    """Whether ``conn`` can serve a request (see :class:`Pool`), finding out within
    ``timeout`` seconds; a dead one is left BAD or closed."""
    pgconn = conn.pgconn
    if pgconn.status != psycopg.pq.ConnStatus.OK:
        return False
    back_at = getattr(conn, "_cronledger_back_at", None)
    try:
        poller = select.poll()  # not select(): descriptors above 1024 are common in a worker
        poller.register(pgconn.socket, select.POLLIN)
        readable = bool(poller.poll(0))
    except psycopg.OperationalError:  # no socket: closed
        return False
    except (OSError, ValueError):
        readable = True  # cannot tell: the round trip decides
    if not readable and back_at is not None and \
            time.monotonic() - back_at < QUIET_CHECK_SECONDS:
        return True
    try:
        async with asyncio.timeout(timeout):
            await AsyncConnectionPool.check_connection(conn)
    except (psycopg.Error, OSError, TimeoutError):
        if not conn.closed:
            await conn.close()  # a timed-out check leaves it mid-query: never reuse it
        return False
    return True


async def open_pool(dsn: str, *, min_size: int = 1, max_size: int = 10,
                    connection: dict[str, Any] | None = None, name: str = "cronledger",
                    **options: Any) -> Pool[Connection]:
    """Open a :class:`Pool` (the one place pools are made): dead idle connections are never
    handed out; after a database outage it reconnects within :data:`RECONNECT_MAX_DELAY`
    seconds of PostgreSQL accepting connections.

    Args:
        dsn: a libpq connection string or URI (several hosts included: core/dsn.py).
        min_size: connections kept open.
        max_size: upper bound on connections.
        connection: the connections' settings (``psycopg.AsyncConnection.connect``
            arguments); default: rows as dicts, transactions, no server-side prepared
            statements.
        name: the pool's name in psycopg_pool's logs.
        options: more ``AsyncConnectionPool`` arguments (the API passes ``timeout``,
            ``reconnect_timeout`` and ``configure``: see ``api/app.py``).

    Raises:
        psycopg_pool.PoolTimeout: when no connection can be made within 30 seconds.
    """
    pool = Pool[Connection](
        connect_dsn(dsn),  # a connect to a silent host gives up after a bounded time
        min_size=min_size,
        max_size=max_size,
        # No server-side prepared statements: they are session state, which a transaction
        # pooler (PgBouncer) would hand to another client (docs/operations.md, "PgBouncer").
        kwargs=connection or {"row_factory": dict_row, "autocommit": False,
                              "prepare_threshold": None},
        open=False,
        name=name,
        **options,
    )
    await pool.open(wait=True, timeout=30)
    return pool


@contextlib.asynccontextmanager
async def transaction(pool: ConnectionPool) -> AsyncIterator[Connection]:
    """Yield a connection inside one transaction, committed on success, with errors translated."""
    async with pool.connection() as conn:
        with translate_errors():
            async with conn.transaction():
                yield conn


_SETTLED = (psycopg.pq.TransactionStatus.IDLE, psycopg.pq.TransactionStatus.INTRANS,
            psycopg.pq.TransactionStatus.INERROR)


@contextlib.asynccontextmanager
async def single_read(pool: ConnectionPool) -> AsyncIterator[Connection]:
    """Yield a pooled connection in autocommit for ONE read-only statement: one round trip
    instead of three (a pooled connection otherwise opens a transaction with its own BEGIN and
    ends it with a COMMIT when it goes back, each waited for; a status page's fresh render made
    five reads, docs/benchmarks.md, "Status pages"). A single statement is atomic and reads one
    snapshot either way. Never for writes or for several statements that must agree: those take
    :func:`transaction`. The connection goes back to the pool as it came (not in autocommit)."""
    async with pool.connection() as conn:
        await conn.set_autocommit(True)
        try:
            yield conn
        finally:
            await _end_single_read(conn)


async def _end_single_read(conn: Connection) -> None:
    """Take ``conn`` out of autocommit again. One left mid-statement (a cancellation) or
    broken is left as it is: the pool closes a connection it gets back in either state."""
    status = conn.info.transaction_status
    if conn.closed or status not in _SETTLED:
        return
    try:
        if status != psycopg.pq.TransactionStatus.IDLE:  # a BEGIN sent by hand
            await conn.rollback()
        await conn.set_autocommit(False)
    except psycopg.Error:
        pass  # broken on the way: the pool closes it


def one_row(fetched: DictRow | None, statement: str) -> DictRow:
    """``fetched`` (a :data:`Cursor`'s ``fetchone()``) of a statement that returns a row
    whenever it succeeds (an aggregate, ``INSERT … RETURNING``, a row locked just before).

    Args:
        statement: the statement's name, for the error.

    Raises:
        RuntimeError: no row: the statement broke its promise (a bug, not bad input).
    """
    if fetched is None:
        raise RuntimeError(f"{statement} returned no row")
    return fetched


async def team_row(conn: Connection, query: str, what: str, row_id: uuid.UUID,
                   team_id: uuid.UUID) -> DictRow:
    """The row ``query`` returns for ``{"id": row_id, "team_id": team_id}`` on ``conn`` (inside
    the caller's transaction, e.g. a ``FOR UPDATE`` lock).

    Args:
        what: the object's name in the error message (``"job"``, ``"monitor"`` …).

    Raises:
        NotFound: no row: no such object for this team (or it was deleted).
    """
    cur = await conn.execute(query, {"id": row_id, "team_id": team_id})
    row = await cur.fetchone()
    if row is None:
        raise NotFound(f"{what} {row_id} not found")
    return row


async def fetch_team_row(pool: ConnectionPool, query: str, what: str, row_id: uuid.UUID,
                         team_id: uuid.UUID) -> DictRow:
    """:func:`team_row` on a connection of ``pool``.

    Raises:
        NotFound: no such object for this team (or it was deleted).
    """
    async with pool.connection() as conn:
        return await team_row(conn, query, what, row_id, team_id)


async def fetch_team_page(pool: ConnectionPool, query: str, team_id: uuid.UUID, *,
                          limit: int, after: tuple[datetime, uuid.UUID] | None
                          ) -> list[DictRow]:
    """A keyset page: ``query`` run with ``team_id``, ``limit`` and the ``(created_at, id)``
    of the last row of the previous page as ``after_created`` / ``after_id`` (``None`` for
    the first page)."""
    async with pool.connection() as conn:
        cur = await conn.execute(query, {
            "team_id": team_id, "limit": limit,
            "after_created": after[0] if after else None,
            "after_id": after[1] if after else None})
        return await cur.fetchall()
