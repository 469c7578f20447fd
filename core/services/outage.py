"""Database outages: telling "PostgreSQL cannot be reached" from a query error, waiting for it at
start-up, and logging an outage once instead of once per request.

What the processes do while PostgreSQL is down or full is described in
``docs/operations.md`` (section "Database outages").
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from core.clock import Clock
from core.queries import Q

T = TypeVar("T")
DriverError = psycopg.Error  # what the API's error mapper hands to unavailable_reason

CONNECT_TIMEOUT_SECONDS = 2  # libpq's minimum: a value of 1 is read as 2
MAX_START_DELAY_SECONDS = 5.0  # longest pause between two start-up attempts
FIRST_START_DELAY_SECONDS = 0.5

# SQLSTATEs that mean "not now" rather than "wrong query": connection exceptions (class 08),
# insufficient resources (class 53: 53300 too many connections, 53100 disk full), and the
# server shutting down, crashing or still starting (57P01-57P03).
_UNAVAILABLE_CLASSES = ("08", "53")
_UNAVAILABLE_STATES = ("57P01", "57P02", "57P03")
# A connection attempt that the server itself refused carries no SQLSTATE in psycopg, only
# libpq's text ("... failed: FATAL:  sorry, too many clients already"). These refusals are
# temporary; any other FATAL at connect (wrong password, no such database or role) is a
# configuration error that waiting does not fix.
_TEMPORARY_FATAL = ("too many clients", "remaining connection slots are reserved",
                    "the database system is starting up", "the database system is shutting down",
                    "the database system is in recovery mode",
                    "the database system is not yet accepting connections",
                    "the database system is not accepting connections",
                    "terminating connection due to administrator command")


def unavailable_reason(exc: BaseException) -> str | None:
    """A one-line reason when ``exc`` means the database cannot serve us now, else ``None``.

    "Cannot serve now" is: no pool connection within its timeout (``psycopg_pool.PoolTimeout``,
    which subclasses ``psycopg.OperationalError``), the pool closed or overfull, a connection
    that could not be made or broke (an ``OperationalError`` without SQLSTATE), and the
    SQLSTATEs above. A query error (bad SQL, constraint, statement timeout) is ``None``.
    An exception wrapping one (SQLAlchemy's, during migrations) is looked through via
    ``__cause__``.
    """
    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 5:
        if isinstance(current, psycopg.OperationalError):
            return _classify(current)
        current = current.__cause__ or getattr(current, "orig", None)
        seen += 1
    return None


def _classify(exc: psycopg.OperationalError) -> str | None:
    text = " ".join(str(exc).split())[:300] or type(exc).__name__
    state = exc.sqlstate
    if state is not None:
        if state[:2] in _UNAVAILABLE_CLASSES or state in _UNAVAILABLE_STATES:
            return f"{text} (SQLSTATE {state})"
        return None
    if "FATAL:" in text:
        lowered = text.lower()
        return text if any(phrase in lowered for phrase in _TEMPORARY_FATAL) else None
    return text


def connect_dsn(dsn: str, connect_timeout: int = CONNECT_TIMEOUT_SECONDS) -> str:
    """``dsn`` with libpq's ``connect_timeout`` (seconds) unless the DSN or ``PGCONNECT_TIMEOUT``
    already sets one: without it a connection to a host that accepts and never answers hangs
    (psycopg's default is 130 s).

    Raises:
        psycopg.ProgrammingError: ``dsn`` is not a valid connection string.
    """
    from core.dsn import libpq_dsn

    dsn = libpq_dsn(dsn)
    if "connect_timeout" in conninfo_to_dict(dsn) or os.environ.get("PGCONNECT_TIMEOUT"):
        return dsn
    conninfo: str = make_conninfo(dsn, connect_timeout=connect_timeout)
    return conninfo


def describe(dsn: str) -> str:
    """``host:port/dbname`` of ``dsn`` for log lines (never the password); several hosts are
    listed each with its port, ``h1:5432,h2:5433/db``."""
    from core.dsn import libpq_dsn

    try:
        params = conninfo_to_dict(libpq_dsn(dsn))
    except psycopg.Error:
        return "the configured database"
    hosts = str(params.get("host") or os.environ.get("PGHOST") or "localhost").split(",")
    ports = str(params.get("port") or os.environ.get("PGPORT") or "5432").split(",")
    if len(ports) != len(hosts):
        ports = [ports[0]] * len(hosts)
    where = ",".join(f"{host or 'localhost'}:{port or '5432'}"
                     for host, port in zip(hosts, ports, strict=True))
    return f"{where}/{params.get('dbname') or params.get('user') or ''}"


def start_delays(first: float = FIRST_START_DELAY_SECONDS,
                 cap: float = MAX_START_DELAY_SECONDS) -> Callable[[int], float]:
    """The pause (seconds) after failed start-up attempt ``n`` (1-based): ``first``, doubling,
    at most ``cap`` (0.5, 1, 2, 4, 5, 5 … by default)."""
    return lambda n: min(cap, first * 2 ** min(n - 1, 16))


def wait_for_database(action: Callable[[], T], dsn: str, log: logging.Logger, *,
                      sleep: Callable[[float], None] = time.sleep,
                      monotonic: Callable[[], float] = time.monotonic,
                      delays: Callable[[int], float] | None = None,
                      remind_every: float = 30.0) -> T:
    """Run ``action`` (e.g. connect and migrate) until it does not fail for want of a database.

    A failure that :func:`unavailable_reason` classifies as an outage (refused, unreachable,
    timed out, "too many clients", starting up) is logged - the first one as a WARNING line
    ``waiting for PostgreSQL at host:port/db: <reason>; retrying in N s``, then an INFO reminder
    at most every ``remind_every`` seconds - and retried after :func:`start_delays` (capped
    exponential backoff, at most 5 s). Any other exception propagates at once.

    Args:
        action: what needs the database; called again after each outage failure.
        dsn: only for the log lines (``host:port/db``).
        sleep, monotonic: injected for tests (seconds).

    Returns:
        what ``action`` returned.
    """
    delays = delays or start_delays()
    attempt = 0
    started = reminded = monotonic()
    while True:
        try:
            result = action()
        except Exception as exc:
            reason = unavailable_reason(exc)
            if reason is None:
                raise
            attempt += 1
            delay = delays(attempt)
            now = monotonic()
            if attempt == 1:
                log.warning("waiting for PostgreSQL at %s: %s; retrying in %.1f s",
                            describe(dsn), reason, delay)
            elif now - reminded >= remind_every:
                reminded = now
                log.info("still waiting for PostgreSQL at %s after %.0f s: %s",
                         describe(dsn), now - started, reason)
            sleep(delay)
            continue
        if attempt:
            log.info("PostgreSQL at %s is reachable after %.1f s of waiting", describe(dsn),
                     monotonic() - started)
        return result


def probe(dsn: str) -> None:
    """Connect to ``dsn`` (with :func:`connect_dsn`'s timeout) and run ``SELECT 1``.

    Raises:
        psycopg.OperationalError: the database cannot be reached (or refuses the connection).
    """
    with psycopg.connect(connect_dsn(dsn), autocommit=True) as conn:
        conn.execute(Q["database_probe"])


class OutageLog:
    """Edge-triggered logging of a database outage seen by request handlers.

    :meth:`down` logs one WARNING when the database first fails (later failures are only
    counted); :meth:`up` logs one INFO line when it serves again, with the outage's length and
    how many requests were answered 503. Neither raises or blocks.

    Args:
        log: the logger of the lines.
        clock: the injected clock (for the outage's length).
    """

    def __init__(self, log: logging.Logger, clock: Clock) -> None:
        self.log = log
        self.clock = clock
        self.since: datetime | None = None
        self.refused = 0

    @property
    def active(self) -> bool:
        """Whether an outage is being reported (``down`` seen, ``up`` not yet)."""
        return self.since is not None

    def down(self, reason: str) -> None:
        """One request could not reach the database because of ``reason``."""
        self.refused += 1
        if self.since is None:
            self.since = self.clock.now()
            self.log.warning("database unreachable: %s; answering 503 with Retry-After until "
                             "it is back", reason)

    def up(self) -> None:
        """The database served a connection again (a no-op outside an outage)."""
        if self.since is None:
            return
        seconds = (self.clock.now() - self.since).total_seconds()
        self.log.info("database reachable again after %.1f s; %d requests were answered 503",
                      seconds, self.refused)
        self.since = None
        self.refused = 0
