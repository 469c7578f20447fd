"""The heartbeat of a process's background services (``serve``, ``worker``; docs/operations.md,
"Supervision and health checks").

A ``worker`` container serves no HTTP, so its health check reads a file instead: while the
services run, :class:`Heartbeat` rewrites the file every ``interval`` seconds, but only when
every service task is still running **and** a ``SELECT 1`` on the pool succeeded within
``db_timeout`` seconds. ``cronledger health`` (:func:`check_heartbeat`) then exits 0 only while
the file is fresh (docs/operations.md, "Supervision and health checks"). A dead loop or an
unreachable database stops the rewrites, so the file goes stale and the check fails after
``max_age`` seconds.

File content: one line, ``<RFC 3339 instant of the beat> <pid>``; the instant is the injected
clock's, and the check compares it with its own clock (not the file's mtime), so tests run on a
frozen clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from core.clock import Clock, rfc3339
from core.queries import Q

log = logging.getLogger("cronledger.health")

HEARTBEAT_ENV = "CRONLEDGER_HEARTBEAT_FILE"
HEARTBEAT_NAME = "cronledger-heartbeat"
DEFAULT_INTERVAL = 10.0  # seconds between beats
# seconds between beats while the last one failed: ``/readyz`` of ``serve`` reads what the last
# beat found, so after an outage it must not wait a whole ``DEFAULT_INTERVAL`` to see the
# database back (measured: 503 for up to 10 s after PostgreSQL answered again)
RETRY_INTERVAL = 1.0
DEFAULT_MAX_AGE = 60.0  # seconds after which ``cronledger health`` calls the file stale
DB_TIMEOUT = 5.0  # seconds a ``SELECT 1`` may take to count as "the database answered"


def heartbeat_path(env: Mapping[str, str] | None = None) -> Path:
    """``CRONLEDGER_HEARTBEAT_FILE``, else ``cronledger-heartbeat`` in ``$XDG_RUNTIME_DIR``,
    else in the temporary directory (``/tmp`` in the image)."""
    env = os.environ if env is None else env
    if env.get(HEARTBEAT_ENV):
        return Path(env[HEARTBEAT_ENV])
    return Path(env.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()) / HEARTBEAT_NAME


def write_heartbeat(path: Path, now: datetime) -> None:
    """Replace ``path`` atomically with a beat at ``now`` (UTC)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(f"{rfc3339(now)} {os.getpid()}\n")
    os.replace(tmp, path)


def check_heartbeat(path: Path, now: datetime, max_age: float = DEFAULT_MAX_AGE) -> str | None:
    """Why the heartbeat at ``path`` is not healthy at ``now``, or ``None`` when it is fresh
    (written at most ``max_age`` seconds before ``now``)."""
    try:
        text = path.read_text()
    except OSError as exc:
        return f"no heartbeat file {path}: {exc.strerror or exc}"
    try:
        beat = datetime.fromisoformat(text.split()[0].replace("Z", "+00:00"))
    except (IndexError, ValueError):
        return f"heartbeat file {path} is not readable: {text[:80]!r}"
    age = (now - beat).total_seconds()
    if age > max_age:
        return (f"heartbeat is {age:.0f} s old (more than {max_age:.0f} s): a background "
                "service stopped or the database has not answered")
    return None


class ServicesHealth:
    """What the last heartbeat found about this process's background services, for ``/readyz``
    of ``cronledger serve`` (API and services in one process): ``problem`` is ``None`` while
    they run and reach the database, else why not (since ``since``, UTC).

    The services have a pool of their own: the API's connections answering says nothing about
    whether the worker can claim (measured: 42 s without a delivery while ``/readyz`` said
    ready), so readiness asks this too (docs/operations.md, "Supervision and health checks").
    """

    def __init__(self) -> None:
        self.problem: str | None = None
        self.since: datetime | None = None

    def report(self, problem: str | None, now: datetime) -> None:
        if problem is None:
            self.since = None
        elif self.problem is None:
            self.since = now
        self.problem = problem


class Heartbeat:
    """Writes the heartbeat file while ``tasks`` all run and the database answers.

    Args:
        path: the file (see :func:`heartbeat_path`).
        pool: the services' pool; each beat runs ``SELECT 1`` on it.
        clock: the injected clock (the instant written).
        interval: seconds between beats.
        retry_interval: seconds between beats while the last one failed (at most
            ``interval``), so recovery is seen within about that long.
        db_timeout: seconds the ``SELECT 1`` may take.
        health: told what each beat found (``/readyz`` of ``serve`` reads it).
    """

    # any pool: a beat reads no row (core.db's aliases are not imported: core.db imports
    # core.services)
    def __init__(self, path: Path, pool: AsyncConnectionPool[AsyncConnection[Any]],
                 clock: Clock, *,
                 interval: float = DEFAULT_INTERVAL, retry_interval: float = RETRY_INTERVAL,
                 db_timeout: float = DB_TIMEOUT,
                 health: ServicesHealth | None = None) -> None:
        self.path, self.pool, self.clock = path, pool, clock
        self.interval, self.db_timeout = interval, db_timeout
        self.retry_interval = min(retry_interval, interval)
        self.health = health or ServicesHealth()
        self._warned = False

    async def beat(self, tasks: Sequence[asyncio.Task[object]]) -> bool:
        """One beat: write the file if every task runs and ``SELECT 1`` answers in time.

        Returns:
            Whether the file was written.
        """
        dead = [t.get_name() for t in tasks if t.done()]
        problem = f"services ended: {', '.join(dead)}" if dead else None
        if problem is None:
            try:
                async with asyncio.timeout(self.db_timeout):
                    async with self.pool.connection(timeout=self.db_timeout) as conn:
                        await conn.execute(Q["database_probe"])
            except Exception as exc:  # noqa: BLE001 - any failure means "not reached"
                reason = " ".join(str(exc).split()) or type(exc).__name__
                tried = getattr(self.pool, "connect_error", None)  # core.db.Pool's
                if tried:
                    reason = f"no connection within {self.db_timeout:g} s ({tried})"
                problem = f"the background services cannot reach the database: {reason}"
        self.health.report(problem, self.clock.now())
        if problem is not None:
            if not self._warned:
                log.warning("heartbeat not written: %s", problem)
                self._warned = True
            return False
        try:
            write_heartbeat(self.path, self.clock.now())
        except OSError as exc:
            log.warning("cannot write the heartbeat file %s: %s", self.path, exc)
            return False
        self._warned = False
        return True

    async def run(self, tasks: Sequence[asyncio.Task[object]]) -> None:
        """Beat every ``interval`` seconds (every ``retry_interval`` seconds while the last beat
        failed) until cancelled; the file is removed on the way out, so a stopped process is
        never reported healthy."""
        try:
            while True:
                written = await self.beat(tasks)
                await asyncio.sleep(self.interval if written else self.retry_interval)
        finally:
            with contextlib.suppress(OSError):
                self.path.unlink()
