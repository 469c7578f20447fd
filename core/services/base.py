"""One base for the background services (worker, checker, notifier, projector).

In the spirit of River's start-stop and ``run_once`` maintenance services: a subclass says what
one pass does (:meth:`Service.run_once`) and when the next pass is due
(:meth:`Service.next_deadline`); the base owns the loop, the LISTEN wake-up
(:mod:`core.services.listen`), the sleep until the deadline, graceful stop and the one error policy
(docs/services.md):

* A failure of one item (a job, monitor, notification or event) is isolated inside the
  subclass's ``run_once`` (docs/operations.md, "Poison items"); it never reaches the base.
* A database error (``psycopg.Error`` or ``OSError``: an outage, a lost connection) is logged
  once at WARNING, without traceback, when the first pass fails, and once at INFO when a pass
  succeeds again; the pass is retried after :class:`core.backoff.LoopRetry` delays (0.05 s
  doubling to 0.25 s), so work resumes within a second of PostgreSQL coming back
  (docs/operations.md, "Database outages").
* Any other exception is logged at ERROR with its traceback on every occurrence, counted in
  :attr:`Service.unexpected_errors`, and the pass is retried after
  :attr:`Service.unexpected_retry_seconds`, forever: the loop never ends silently and never
  ends on its own. Only a task that really ends (a bug in the base, a cancelled task) is seen
  by the supervisor in ``api/runner.py``, which then stops the process with a non-zero exit.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import logging
from datetime import datetime
from typing import Any

import psycopg

from core.backoff import LOOP_RETRY_INITIAL, LOOP_RETRY_MAX, LoopRetry
from core.clock import Clock
from core.services.listen import listening
from core.services.outage import unavailable_reason

MAX_IDLE_SLEEP = 60.0  # seconds: re-check at least this often, in case a NOTIFY was lost
UNEXPECTED_RETRY_SECONDS = 5.0  # seconds before a pass that raised a non-database error reruns


def database_error(exc: BaseException) -> str | None:
    """A one-line reason when ``exc`` is a database error the loop retries shortly, else ``None``.

    Database errors are ``psycopg.Error`` (the pool's ``PoolTimeout`` included) and ``OSError``;
    the reason is :func:`core.services.outage.unavailable_reason`'s when it classifies ``exc`` as
    "the database cannot serve now", else the exception's text.
    """
    if not isinstance(exc, psycopg.Error | OSError):
        return None
    return unavailable_reason(exc) or " ".join(str(exc).split())[:300] or type(exc).__name__


class Service(abc.ABC):
    """A background loop: :meth:`run` until :meth:`stop`; one pass is :meth:`run_once`.

    Args:
        clock: the injected clock (deadlines are compared with ``clock.now()``, UTC).
        dsn: libpq DSN of the LISTEN connection; ``None``: no LISTEN (tests driving the
            service by hand, or polling only).

    Class attributes:
        name: the service's name in logs and task names (``cronledger.<name>`` logger).
        channel: the NOTIFY channel that wakes it, or ``None``.
        max_idle_sleep: longest sleep between passes (seconds).
        unexpected_retry_seconds: pause after a pass that raised a non-database error.
    """

    name: str = "service"
    channel: str | None = None
    max_idle_sleep: float = MAX_IDLE_SLEEP
    unexpected_retry_seconds: float = UNEXPECTED_RETRY_SECONDS

    def __init__(self, clock: Clock, dsn: str | None) -> None:
        self.clock, self.dsn = clock, dsn
        self.wake = asyncio.Event()  # set by NOTIFY, stop() or a test: cuts the sleep short
        self.stopping = asyncio.Event()
        self.log = logging.getLogger(f"cronledger.{self.name}")
        self.unexpected_errors = 0  # non-database errors since start (never reset)
        self._retry = LoopRetry()
        self._outage: str | None = None  # the reason logged for the current database outage

    # -- what a subclass provides -----------------------------------------------------------
    @abc.abstractmethod
    async def run_once(self, now: datetime | None = None) -> Any:
        """One pass: handle what is due at ``now`` (UTC; default the clock's). Per-item
        failures are isolated here; database errors propagate to :meth:`run`."""

    @abc.abstractmethod
    async def next_deadline(self) -> datetime | None:
        """The instant (UTC) the next pass is due, or ``None``: sleep :attr:`max_idle_sleep`.
        Called after each successful pass; an instant not after now means "at once"."""

    async def on_start(self) -> None:
        """Called once by :meth:`run` before the first pass (start inner tasks)."""
        return  # a hook: nothing by default

    async def on_stop(self) -> None:
        """Called once by :meth:`run` on the way out, even after a cancellation (drain)."""
        return  # a hook: nothing by default

    def on_listening(self) -> None:
        """Called after each successful LISTEN (a start-up log line)."""
        return  # a hook: nothing by default

    # -- the loop ---------------------------------------------------------------------------
    async def run(self) -> None:
        """Run passes until :meth:`stop`, under the module's error policy; never returns early.

        The wake event is cleared *before* each pass, never after: a NOTIFY or a :meth:`stop`
        arriving while a pass runs or the next deadline is read must cut the following sleep
        short, not be forgotten (a stop requested during a claim round used to wait out the
        whole idle sleep).
        """
        await self.on_start()
        try:
            async with listening(self.dsn, self.channel, self.wake, self.name,
                                 self.on_listening):
                while not self.stopping.is_set():
                    await self.step()
        finally:
            await self.on_stop()

    async def step(self) -> None:
        """One turn of :meth:`run`: a pass, then the sleep until the next deadline; an error
        is logged and followed by its retry pause instead (the error policy)."""
        try:
            self.wake.clear()
            await self.run_once()
            self._recovered()
            await self.sleep_until(await self.next_deadline())
        except Exception as exc:  # noqa: BLE001 - the one error policy: log, back off, retry
            await self._failed(exc)

    async def sleep_until(self, deadline: datetime | None) -> None:
        """Sleep until ``deadline`` (UTC), at most :attr:`max_idle_sleep` seconds, or until
        :attr:`wake` is set; returns at once when stopping or when the deadline has passed."""
        timeout = self.max_idle_sleep
        if deadline is not None:
            timeout = min(timeout, (deadline - self.clock.now()).total_seconds())
        if timeout > 0 and not self.stopping.is_set():
            await self._wait(self.wake, timeout)
        else:
            await asyncio.sleep(0)  # one turn of the event loop: a pass that never awaits
            # (nothing due, all in memory) must not starve the other tasks

    def stop(self) -> None:
        """Stop after the current pass; :meth:`run` then calls :meth:`on_stop` and returns."""
        self.stopping.set()
        self.wake.set()

    # -- the error policy -------------------------------------------------------------------
    async def _failed(self, exc: Exception) -> None:
        reason = database_error(exc)
        if reason is not None:
            delay = self._retry.next_delay()
            if self._outage is None:
                self.log.warning("%s: database error, retrying every %.2f-%.2f s until a pass "
                                 "succeeds: %s", self.name, LOOP_RETRY_INITIAL, LOOP_RETRY_MAX,
                                 reason)
                self._outage = reason
        else:
            self.unexpected_errors += 1
            delay = self.unexpected_retry_seconds
            self.log.error("%s: pass failed (%d unexpected errors so far), retrying in %.1f s",
                           self.name, self.unexpected_errors, delay, exc_info=exc)
        await self._wait(self.stopping, delay)

    def _recovered(self) -> None:
        self._retry.reset()
        if self._outage is not None:
            self.log.info("%s: database reachable again, resuming", self.name)
            self._outage = None

    @staticmethod
    async def _wait(event: asyncio.Event, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await event.wait()
