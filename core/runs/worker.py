"""The worker: claim loop, bounded-concurrency dispatch, batched recording, graceful shutdown.

A :class:`core.services.base.Service`: :meth:`Worker.run_once` claims until a batch comes back
short; the base's ``run`` repeats it and otherwise sleeps until :meth:`Worker.next_deadline` (the
earliest ``due_at``, ``available_at`` or lease expiry, less the lookahead), woken early by
``NOTIFY cronledger_wakeup``. The worker's own parts hang on the base's hooks: ``on_start``
starts the record loop, ``on_stop`` waits for in-flight attempts and releases the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from datetime import datetime, timedelta

import psycopg

from core.clock import Clock
from core.config import Settings
from core.db import ConnectionPool, transaction
from core.queries import Q
from core.reasons import reason_of
from core.runs.claim import claim_due, claim_ready, mark_jobs_broken, next_wakeup
from core.runs.dispatch import AttemptResult, Dispatch, Prepared, Refused
from core.runs.executor import Executor
from core.runs.recorder import Recorder
from core.runs.registry import Registration, release_orphans
from core.services.base import Service
from core.services.quiet import QuietWindows

log = logging.getLogger("cronledger.worker")

WAKEUP_CHANNEL = "cronledger_wakeup"
RECORD_BATCH = 500
# Seconds between attempts to record a batch while the database is unreachable (the last
# repeats): short, so results are written within a fraction of a second of the database
# coming back (docs/operations.md, "Database outages").
RECORD_RETRY_DELAYS = (0.05, 0.1, 0.2, 0.5)
RECORD_RETRY_MAX = RECORD_RETRY_DELAYS[-1]
PRECONNECT_MARGIN = 0.005  # seconds before the slot at which opening connections stops
RECLAIM_POLL = 0.1  # seconds between claims of work left unclaimed inside the lookahead
# Seconds before a slot at which its gate's timer fires; the rest is waited out on the CPU. The
# event loop's timers are only as precise as its poll (whole milliseconds): released by the
# timer alone, a slot started 1-2 ms late (docs/benchmarks.md, "Released on time").
GATE_SPIN = 0.002


class Worker(Service):
    """Runs the scheduler for one process (a :class:`core.services.base.Service`: the base owns the
    loop, the wake-up, the stop and the error policy; the hooks below start and wind down the
    record loop).

    Args:
        pool: database pool (needs at least 3 connections: claims, recording, reads).
        dsn: used for the dedicated LISTEN connection.
        settings: concurrency, batch size, lease margin, shutdown grace.
        executor: sends the HTTP attempts.
        clock: the injected clock.
        lookahead: seconds ahead of a slot at which it may be claimed; the request is still sent
            at the slot, never before.
    """

    name = "worker"
    channel = WAKEUP_CHANNEL

    def __init__(self, pool: ConnectionPool, dsn: str, settings: Settings,
                 executor: Executor, clock: Clock, lookahead: float = 0.0) -> None:
        super().__init__(clock, dsn)
        self.pool, self.settings = pool, settings
        self.executor, self.lookahead = executor, lookahead
        self.recorder = Recorder(pool, worker_id=settings.worker_id,
                                 notify_max_attempts=settings.notify_max_attempts)
        self.limit = asyncio.Semaphore(settings.max_concurrency)
        self.inflight: dict[asyncio.Task[None], Dispatch] = {}
        self._preconnects: set[asyncio.Task[None]] = set()
        self._gates: dict[datetime, asyncio.Event] = {}  # slot -> released at the slot
        # slot -> the attempts claimed ahead of it so far, and the newest preconnect for them
        self._ahead: dict[datetime, tuple[list[Prepared], asyncio.Task[None]]] = {}
        self.quiet = QuietWindows()  # the bursts ahead, for the services sharing the loop
        self.results: asyncio.Queue[AttemptResult | None] = asyncio.Queue()  # None: stop
        # Results produced and not recorded yet (run id -> result), recording retries included.
        self.unrecorded: dict[uuid.UUID, AttemptResult] = {}
        self._db_back = asyncio.Event()  # set by a successful claim: cut recording backoff short
        self._recorder: asyncio.Task[None] | None = None  # the record loop, while run() runs
        # The worker's row of the registry while run() runs: the claims' fair share.
        self.registration = Registration(pool, settings.worker_id, clock, self.quiet,
                                         on_beat=self._look_for_orphans)
        # Look for runs leased to workers that do not hold them (release_orphans) at the next
        # pass: at start, after each registry beat, and when the pool saw the database go away.
        self._orphans_due = False
        self._interruptions = getattr(pool, "interruptions", 0)
        self._announced = False
        self._broken: list[tuple[uuid.UUID, str]] = []  # (job_id, reason) found by _prepare

    # -- dispatch ---------------------------------------------------------------------------
    async def _attempt(self, prepared: Prepared) -> None:
        if prepared.dispatch.fires_at > self.clock.now():  # claimed ahead: never send early
            await self._gate(prepared.dispatch.fires_at).wait()
        async with self.limit:
            if not prepared.dispatch.lease_covers(self.clock.now()):
                await self._lease_gone(prepared.dispatch)
                return
            result = await self.executor.transmit(prepared)
        self.unrecorded[result.dispatch.run_id] = result
        await self.results.put(result)

    async def _lease_gone(self, dispatch: Dispatch) -> None:
        """Do not send an attempt whose lease no longer covers it (the worker was frozen or
        starved past it: another worker may have sent the run already); give the rest of the
        lease up, so that a worker claims the run again at once with a lease of its own."""
        log.warning("run %s of job %s not sent: its lease (until %s) no longer covers an "
                    "attempt; released to be claimed again", dispatch.run_id, dispatch.job_id,
                    dispatch.lease_expires_at)
        with contextlib.suppress(psycopg.Error, OSError):
            await self._release([dispatch], quiet=True)

    def _gate(self, slot: datetime) -> asyncio.Event:
        """The event set at ``slot``: one timer per slot, however many attempts wait for it.

        With a timer per attempt, timers a few microseconds apart could land in different turns
        of the loop, and the responses to the first requests were then read before the rest
        were sent; released by one event, every attempt of the slot starts in the same turn.
        The timer fires :data:`GATE_SPIN` seconds early and :meth:`_open_gate` waits out the
        rest.
        """
        gate = self._gates.get(slot)
        if gate is None:
            gate = self._gates[slot] = asyncio.Event()
            delay = max(0.0, (slot - self.clock.now()).total_seconds() - GATE_SPIN)
            asyncio.get_running_loop().call_later(delay, self._open_gate, slot)
        return gate

    def _open_gate(self, slot: datetime, spin: bool = True) -> None:
        """Release the attempts waiting for ``slot``, never before the clock reaches it.

        Less than :data:`GATE_SPIN` early, it waits for the clock on the CPU, yielding it to
        any other process ready to run, for at most twice that long (an injected clock may not
        move). Earlier than that (the timer and the clock disagree), or when that wait ran out,
        it re-arms the timer instead.
        """
        early = (slot - self.clock.now()).total_seconds()
        if spin and 0 < early <= GATE_SPIN:
            give_up = time.monotonic() + 2 * GATE_SPIN
            while early > 0 and time.monotonic() < give_up:
                os.sched_yield()  # the core goes to any other process ready to run
                early = (slot - self.clock.now()).total_seconds()
        if early > 0:  # never early
            far = early > GATE_SPIN
            asyncio.get_running_loop().call_later(early - GATE_SPIN if far else early,
                                                  self._open_gate, slot, far)
            return
        gate = self._gates.pop(slot, None)
        self._ahead.pop(slot, None)
        if gate is not None:
            gate.set()

    def _start(self, dispatches: list[Dispatch]) -> None:
        """Build each attempt now and start it; the ones whose slot is still ahead (claimed
        during the lookahead) wait for it in memory while their connections are opened."""
        ahead: list[Prepared] = []
        now = self.clock.now()
        for dispatch in dispatches:
            prepared = self._prepare(dispatch)
            if dispatch.fires_at > now:
                ahead.append(prepared)
            task = asyncio.create_task(self._attempt(prepared))
            self.inflight[task] = dispatch
            task.add_done_callback(self._done)
        if ahead:
            self._preconnect(ahead)

    def _prepare(self, dispatch: Dispatch) -> Prepared:
        """:meth:`Executor.prepare`, isolated per attempt: a stored request that cannot be
        built (docs/operations.md, "Poison items") becomes a refused attempt, recorded as a
        final failure of class ``invalid_request``, and its job is marked broken."""
        try:
            return self.executor.prepare(dispatch)
        except Exception as exc:  # noqa: BLE001 - one bad row must not stop the claim loop
            log.exception("run %s of job %s: the request cannot be built", dispatch.run_id,
                          dispatch.job_id)
            reason = f"the stored request cannot be built: {reason_of(exc)}"
            self._broken.append((dispatch.job_id, reason))
            return Prepared(dispatch, {"method": None, "url": None, "headers": {}, "body": None},
                            refused=Refused("invalid_request", reason))

    async def _mark_broken(self) -> None:
        """Mark the jobs whose request could not be built broken (one transaction)."""
        if not self._broken:
            return
        async with transaction(self.pool) as conn:
            await mark_jobs_broken(conn, list(dict(self._broken).items()), self.clock.now(),
                                   f"worker:{self.settings.worker_id}",
                                   self.settings.notify_max_attempts)
        self._broken = []  # kept on a database error: the next claim round tries again

    def _preconnect(self, ahead: list[Prepared]) -> None:
        """Open the connections of attempts claimed ahead of their slot; give up just before
        the slot, so that connections still held are back in the pool when the attempts start
        (a cancellation is processed after the timers that fire with it). The burst is also
        announced in :attr:`quiet`, for the services that share this event loop.

        A big slot is claimed in several batches. Each batch's preconnect asks for every
        attempt claimed for the slot so far, after the previous one has put its connections
        back: asking for its own attempts alone, it found the previous batch's connections idle
        and took them, and the slot started with one batch's worth of connections where its
        concurrency needed more (docs/benchmarks.md, "Where the time goes at 1,000").
        """
        slot = min(p.dispatch.fires_at for p in ahead)
        seconds = (slot - self.clock.now()).total_seconds() - PRECONNECT_MARGIN
        self.quiet.hold(seconds + PRECONNECT_MARGIN, len(ahead))
        claimed, previous = self._ahead.get(slot, ([], None))
        claimed = [*claimed, *ahead]

        async def bounded() -> None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(seconds):
                    if previous is not None:
                        await asyncio.wait([previous])
                    await self.executor.preconnect(claimed)

        task = asyncio.create_task(bounded(), name="cronledger-preconnect")
        self._ahead[slot] = (claimed, task)
        self._preconnects.add(task)
        task.add_done_callback(self._preconnects.discard)

    def _done(self, task: asyncio.Task[None]) -> None:
        self.inflight.pop(task, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("attempt crashed", exc_info=task.exception())

    # -- recording --------------------------------------------------------------------------
    async def _record_loop(self) -> None:
        """Record results in batches until the ``None`` sentinel; never cancelled mid-batch.

        The one error policy of :mod:`core.services.base` for this inner task: database errors are
        retried by :meth:`_record`; any other exception is logged with its traceback and fails
        that batch only (its runs stay leased and are dispatched again when the leases
        expire, as after a crash); the loop goes on recording the next results.
        """
        done = False
        while not done:
            batch: list[AttemptResult] = []
            item = await self.results.get()
            # Off the send burst: the first answers of a slot come back while the rest of it
            # is still being sent; encoding and writing them then would delay those sends
            # (docs/benchmarks.md, "Where the time goes at 1,000"). They wait for the burst's
            # end and are recorded with whatever arrived meanwhile, in fewer batches.
            await self.quiet.wait()
            while item is not None:
                batch.append(item)
                if len(batch) >= RECORD_BATCH or self.results.empty():
                    break
                item = self.results.get_nowait()
            done = item is None
            if batch:
                try:
                    await self._record(batch)
                except Exception:  # noqa: BLE001 - results must keep being recorded
                    log.exception("recording %d results failed; their runs are dispatched "
                                  "again when their leases expire", len(batch))

    async def _record(self, batch: list[AttemptResult]) -> None:
        """Record ``batch``, retrying while the database is unreachable.

        The results stay in :attr:`unrecorded` (so the overlap check of the next claims sees
        their runs as finished, :meth:`finished_runs`) and are retried every
        :data:`RECORD_RETRY_DELAYS` step, at most :data:`RECORD_RETRY_MAX` seconds apart, and at
        once when a claim succeeds again. They are retried until recorded: a result whose lease
        has expired meanwhile is refused by the lease compare-and-set and logged by the
        recorder. Only a stopping worker gives up, after ``shutdown_grace_seconds``; those runs
        are then dispatched again when their leases expire.
        """
        loop = asyncio.get_running_loop()
        give_up_at: float | None = None
        step = 0
        try:
            while True:
                try:
                    await self.recorder.record(batch, self.clock)
                    return
                except (psycopg.Error, OSError) as exc:
                    if self.stopping.is_set():
                        give_up_at = give_up_at or (
                            loop.time() + self.settings.shutdown_grace_seconds)
                        if loop.time() >= give_up_at:
                            log.error("could not record %d results; their leases will expire "
                                      "and they will be dispatched again: %s", len(batch), exc)
                            return
                    delay = RECORD_RETRY_DELAYS[min(step, len(RECORD_RETRY_DELAYS) - 1)]
                    step += 1
                    if step == 1 or step % 20 == 0:
                        log.warning("recording %d results failed, retrying every %.2f s or "
                                    "as soon as a claim succeeds: %s", len(batch), delay, exc)
                    self._db_back.clear()
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(delay):
                            await self._db_back.wait()
        finally:
            for result in batch:
                if self.unrecorded.get(result.dispatch.run_id) is result:
                    del self.unrecorded[result.dispatch.run_id]

    def finished_runs(self) -> list[uuid.UUID]:
        """Runs whose last attempt ended with a final outcome (success, or a failure that will
        not be retried) but whose result is not recorded yet: no longer in flight for the
        overlap policy (docs/schedules.md, "Overlap")."""
        return [run_id for run_id, r in self.unrecorded.items()
                if r.ok or r.final or r.dispatch.attempt >= r.dispatch.max_attempts]

    async def settle(self) -> None:
        """Wait for every in-flight attempt, then record the results (tests, one-shot runs)."""
        while self.inflight:
            await asyncio.gather(*list(self.inflight), return_exceptions=True)
        await self.drain()

    async def drain(self) -> None:
        """Record every result already produced (tests call it instead of the record loop)."""
        batch = [r for r in (self.results.get_nowait() for _ in range(self.results.qsize())) if r]
        if batch:
            await self._record(batch)

    # -- claiming ---------------------------------------------------------------------------
    async def run_once(self, now: datetime | None = None) -> int:
        """Claim due slots and ready runs until batches come back short; start their attempts.

        Returns:
            The number of due rows and ready runs claimed.
        """
        s = self.settings
        total = 0
        while not self.stopping.is_set():
            if self._orphans_found():
                await self._release_orphans()
            # The clock, not an instant: claim_due reads it once it holds a connection, so a
            # wait for the pool (an outage) does not age the claim instant (docs/operations.md).
            at = now or self.clock
            claimed, dispatches = await claim_due(
                self.pool, at, limit=s.claim_batch, lookahead=self.lookahead,
                worker_id=s.worker_id, lease_margin=s.lease_margin_seconds,
                finished=self.finished_runs() if self.unrecorded else (),
                max_attempts=s.notify_max_attempts)
            self._start(dispatches)
            self._db_back.set()  # the database answers: recording retries go now
            ready = await claim_ready(self.pool, at, limit=s.claim_batch,
                                      worker_id=s.worker_id, lease_margin=s.lease_margin_seconds,
                                      mine=list(self.unrecorded))
            self._start(ready)
            await self._mark_broken()
            total += claimed + len(ready)
            if claimed < s.claim_batch and len(ready) < s.claim_batch \
                    and not self._orphans_found():  # the database went away meanwhile
                return total
            now = None
        return total

    def _look_for_orphans(self) -> None:
        self._orphans_due = True
        self.wake.set()

    def _orphans_found(self) -> bool:
        """Whether to look for orphan runs before the next claim (see ``_orphans_due``)."""
        interruptions = getattr(self.pool, "interruptions", 0)
        if interruptions != self._interruptions:
            self._interruptions = interruptions
            self._orphans_due = True
        return self._orphans_due

    def held_leases(self) -> list[uuid.UUID]:
        """The lease tokens of every attempt this worker has in memory: waiting for its slot,
        being sent, or sent and not recorded yet."""
        return [*(d.lease_token for d in self.inflight.values()),
                *(r.dispatch.lease_token for r in self.unrecorded.values())]

    async def _release_orphans(self) -> None:
        """:func:`core.runs.registry.release_orphans`, between claims (never during one)."""
        await release_orphans(self.pool, self.settings.worker_id, self.held_leases(),
                              self.clock.now())
        self._orphans_due = False

    async def next_deadline(self) -> datetime | None:
        """The earliest instant with work (``due_at``, ``available_at``, lease expiry), less the
        lookahead (seconds): claims of a slot start that long before it.

        Work inside the lookahead that a full claim round left unclaimed (a job whose run is
        still in flight, claimed only at its slot; rows another worker is claiming; the share
        of a worker that has not claimed it) is looked at again every :data:`RECLAIM_POLL`
        seconds until its instant, not in a busy loop.
        """
        wake_at = await next_wakeup(self.pool)
        if wake_at is None:
            return None
        ahead = wake_at - timedelta(seconds=self.lookahead)
        now = self.clock.now()
        if ahead <= now < wake_at:
            return min(wake_at, now + timedelta(seconds=RECLAIM_POLL))
        return ahead

    def on_listening(self) -> None:
        if not self._announced:
            log.info("worker %s started", self.settings.worker_id)
            self._announced = True

    async def on_start(self) -> None:
        await self.registration.start()
        self._orphans_due = True  # a previous process with this worker id may have left some
        self._recorder = asyncio.create_task(self._record_loop(), name="cronledger-record")

    async def on_stop(self) -> None:
        """Leave the registry, finish in-flight attempts (up to ``shutdown_grace_seconds``) and
        release the rest."""
        await self.registration.stop()
        if self._recorder is not None:
            await self._shutdown(self._recorder)
            self._recorder = None

    async def _shutdown(self, recorder: asyncio.Task[None]) -> None:
        for task in list(self._preconnects):
            task.cancel()
        pending = list(self.inflight)
        if pending:
            log.info("waiting up to %.0f s for %d in-flight attempts",
                     self.settings.shutdown_grace_seconds, len(pending))
            await asyncio.wait(pending, timeout=self.settings.shutdown_grace_seconds)
        unfinished = [self.inflight[t] for t in pending if not t.done()]
        for task in pending:
            task.cancel()
        await self.results.put(None)  # the record loop finishes what is queued, then stops
        await recorder
        if unfinished:
            await self._release(unfinished)

    async def _release(self, dispatches: list[Dispatch], quiet: bool = False) -> None:
        """Expire the leases of unfinished attempts so another worker takes them at once."""
        async with self.pool.connection() as conn:
            await conn.execute(Q["run_release_leases"], {
                "ids": [d.run_id for d in dispatches],
                "lease_tokens": [d.lease_token for d in dispatches],
                "now": self.clock.now()})
            await conn.execute(Q["event_notify_wakeup"], {"reason": "released"})
            await conn.commit()
        if not quiet:
            log.info("released %d unfinished runs", len(dispatches))
