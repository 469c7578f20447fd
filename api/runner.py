"""Process runners for ``cronledger serve``, ``api`` and ``worker``.

``serve`` runs the API and the background services in one event loop. Signals: SIGINT and
SIGTERM set a shutdown flag through the event loop (uvicorn's own signal capture is disabled,
because after a graceful shutdown it re-raises SIGTERM with the default handler, which would kill
the process before the embedded PostgreSQL is stopped).

uvicorn's proxy-header rewriting is off: the one place that reads ``X-Forwarded-For`` is the
ping route (``api/ping.py``), which applies uvicorn's rules itself with
``CRONLEDGER_TRUSTED_PROXIES`` (``core/http/proxies.py``) and needs the real peer address to decide
and as its fallback, not whatever text a client put in the header.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import uvicorn

from core.channels.sealing import AesGcmSealer
from core.clock import SystemClock
from core.config import Settings
from core.crypto import KeyRing
from core.db import open_pool
from core.http.clients import make_client
from core.maintenance.release import MaintenanceRelease
from core.monitors.checker import Checker
from core.notifications.delivery import Delivery
from core.notifications.lookup import KeyRingSecrets
from core.notifications.notifier import Notifier
from core.projections.projector import Projector
from core.retention.maintenance import Maintenance
from core.runs.confirm import ConfirmTimeouts
from core.runs.executor import Executor
from core.runs.worker import Worker
from core.services.base import Service as BackgroundService
from core.services.health import Heartbeat, ServicesHealth, heartbeat_path
from core.services.heap import freeze_long_lived
from core.services.outage import connect_dsn
from core.services.tasks import cancel_and_wait

log = logging.getLogger("cronledger")

# uvicorn's httptools protocol with the ping fast path (api/ping_protocol.py), named so that
# this module does not import the web stack for a worker process
PING_PROTOCOL = "api.ping_protocol:PingProtocol"
STOP_MARGIN_SECONDS = 10.0  # beyond the drain time (CRONLEDGER_SHUTDOWN_GRACE) before a cancel
CANCEL_WAIT_SECONDS = 5.0  # for a cancelled service's task to end



class _Server(uvicorn.Server):
    """uvicorn without its signal capture: the runner owns the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _on_signals(loop: asyncio.AbstractEventLoop, callback: Callable[[], object]) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, callback)


class ServiceFailed(RuntimeError):
    """A background service (or the API server) ended while no stop was requested; the
    process logged it and exits non-zero (docs/operations.md, "Supervision")."""


@dataclass(frozen=True)
class Service:
    """A supervised background task: ``run()`` until ``stop()`` is called. The six built-in
    services are :class:`core.services.base.Service` subclasses; tests add plain ones."""

    name: str
    run: Callable[[], Coroutine[Any, Any, None]]
    stop: Callable[[], None]

    @classmethod
    def of(cls, service: BackgroundService) -> Service:
        """The supervised entry of a :class:`core.services.base.Service` (name, run and stop)."""
        return cls(service.name, service.run, service.stop)


async def _stopped_within(tasks: dict[asyncio.Task[None], Service], seconds: float) -> None:
    """Wait up to ``seconds`` for the stopped services' tasks to end; cancel any still running.

    A stop is bounded (docs/operations.md, "Leases, crashes and shutdown"): a service that has
    not ended after its drain time is logged with where it is waiting (its task's stack),
    cancelled (again until it ends: :func:`core.services.tasks.cancel_and_wait`) for at most
    :data:`CANCEL_WAIT_SECONDS` more, so a stuck connection never keeps the process alive.
    """
    _, pending = await asyncio.wait(tasks, timeout=seconds)
    for task in pending:
        where = io.StringIO()
        task.print_stack(file=where)
        log.error("background service %s did not stop within %.0f s; cancelling it. %s",
                  tasks[task].name, seconds, where.getvalue().rstrip())
    await asyncio.gather(*(cancel_and_wait(task, CANCEL_WAIT_SECONDS) for task in pending))


async def _run_services(dsn: str, settings: Settings, stop: asyncio.Event, *,
                        extra: Sequence[Service] = (),
                        health: ServicesHealth | None = None) -> None:
    """Run the background services until ``stop`` is set, then shut them down gracefully.

    Supervision: if any service task ends (returns or raises) while ``stop`` is not set, one
    error line names it with its exception, the other services are stopped as usual, and
    :class:`ServiceFailed` is raised. Meanwhile a :class:`core.services.health.Heartbeat` keeps the
    heartbeat file fresh while every task runs and the database answers.

    Args:
        extra: more services to run and watch alongside the built-in ones (tests).
        health: told what each heartbeat found (the API of the same process reports it).

    Raises:
        ServiceFailed: a service ended unexpectedly.
    """
    pool = await open_pool(dsn, min_size=2, max_size=max(4, settings.db_pool_size))
    # direct, never through a pooler; a silent host gives up after connect_timeout
    listen_dsn = connect_dsn(settings.listen_database_url or dsn)
    client = make_client(settings.max_concurrency,
                         block_private_targets=settings.block_private_targets)
    clock = SystemClock()
    keyring = KeyRing.from_sources(settings.secret_key, settings.secret_key_file)
    executor = Executor(clock, settings.response_body_limit, keyring,
                        max_connections=settings.max_concurrency,
                        block_private_targets=settings.block_private_targets,
                        base_url=settings.base_url, send_path=settings.send_path)
    worker = Worker(pool, listen_dsn, settings, executor, clock,
                    lookahead=settings.claim_lookahead_seconds)
    notifier = Notifier(pool, listen_dsn, settings, Delivery(client, settings, clock),
                        AesGcmSealer(keyring), KeyRingSecrets(keyring), clock)
    checker = Checker(pool, listen_dsn, clock, checker_id=settings.worker_id,
                      notify_max_attempts=settings.notify_max_attempts)
    projector = Projector(pool, listen_dsn, clock, batch_size=settings.projector_batch,
                          interval=settings.projector_interval_seconds, quiet=worker.quiet)
    confirm = ConfirmTimeouts(pool, listen_dsn, clock,
                              notify_max_attempts=settings.notify_max_attempts)
    release = MaintenanceRelease(pool, listen_dsn, clock,
                                 notify_max_attempts=settings.notify_max_attempts)
    maintenance = Maintenance(pool, settings, clock)
    services = [*(Service.of(s) for s in (worker, notifier, checker, projector, confirm,
                                          release, maintenance)), *extra]
    freeze_long_lived()  # a full collection in a slot's burst delays it (docs/benchmarks.md)
    tasks: dict[asyncio.Task[None], Service] = {
        asyncio.create_task(s.run(), name=f"cronledger-{s.name}"): s for s in services}
    heartbeat = Heartbeat(heartbeat_path(), pool, clock, health=health)
    beat = asyncio.create_task(heartbeat.run(list(tasks)),
                               name="cronledger-heartbeat")
    stopped = asyncio.create_task(stop.wait())
    failure: ServiceFailed | None = None
    reported: asyncio.Task[None] | None = None
    try:
        done, _ = await asyncio.wait([stopped, *tasks], return_when=asyncio.FIRST_COMPLETED)
        ended = [t for t in tasks if t in done]
        if ended and not stop.is_set():
            task = ended[0]
            exc = None if task.cancelled() else task.exception()
            what = f"raised {exc!r}" if exc is not None else (
                "was cancelled" if task.cancelled() else "returned")
            log.error("background service %s ended unexpectedly (%s); stopping the process",
                      tasks[task].name, what, exc_info=exc)
            failure = ServiceFailed(f"background service {tasks[task].name} {what}")
            reported = task
    finally:
        stopped.cancel()
        if not await cancel_and_wait(beat, CANCEL_WAIT_SECONDS):
            log.error("the heartbeat task did not end within %.0f s of its cancellation",
                      CANCEL_WAIT_SECONDS)
        for service in services:
            service.stop()
        await _stopped_within(tasks, settings.shutdown_grace_seconds + STOP_MARGIN_SECONDS)
        for task, service in tasks.items():
            result = None if task.cancelled() else task.exception()
            if result is not None and task is not reported:
                log.error("background service %s failed while stopping: %r", service.name,
                          result, exc_info=result)
        await executor.aclose()
        await client.aclose()
        await pool.close()
    if failure is not None:
        raise failure


async def serve(dsn: str, settings: Settings, *, with_api: bool, with_services: bool,
                extra: Sequence[Service] = (),
                on_ready: Callable[[], Awaitable[None]] | None = None) -> None:
    """Run the API and/or the background services until SIGINT or SIGTERM.

    Args:
        extra: more background services to run and watch (tests).
        on_ready: called once the API accepts connections (``serve``'s sign-in link); an
            error in it is logged, never fatal.

    Raises:
        ServiceFailed: a background service or the API server ended while no stop was
            requested (logged; ``cronledger`` then exits with status 1).
        SystemExit: the API could not start.
    """
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    server: _Server | None = None
    health = ServicesHealth() if with_services else None
    if with_api:
        from api.app import create_app  # a worker process does not need the web stack

        config = uvicorn.Config(create_app(dsn, settings, freeze_after_startup=True,
                                           services_health=health),
                                host=settings.host, port=settings.port, log_level="info",
                                lifespan="on", access_log=False, proxy_headers=False,
                                http=PING_PROTOCOL,  # answers plain pings without ASGI
                                log_config=None)  # our logging setup
        server = _Server(config)

    def request_stop() -> None:
        if not stop.is_set():
            log.info("shutting down")
        stop.set()
        if server is not None:
            server.should_exit = True

    _on_signals(loop, request_stop)
    tasks = []
    if with_services:
        tasks.append(asyncio.create_task(_run_services(dsn, settings, stop, extra=extra,
                                                       health=health)))
    if server is not None:
        tasks.append(asyncio.create_task(server.serve()))
    ready = (asyncio.create_task(_when_started(server, on_ready))
             if server is not None and on_ready is not None else None)
    done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    if ready is not None:
        ready.cancel()
    unexpected = not stop.is_set()  # no signal: a part ended on its own
    request_stop()  # one part ended (or failed to start): stop the rest too
    await asyncio.gather(*tasks, return_exceptions=True)
    for task in done:
        failure = task.exception()
        if failure is not None:
            raise failure
    if server is not None and not server.started:
        raise SystemExit(f"the API could not start on {settings.host}:{settings.port}")
    if unexpected:
        log.error("the API server stopped unexpectedly; stopping the process")
        raise ServiceFailed("the API server stopped unexpectedly")


async def _when_started(server: _Server, on_ready: Callable[[], Awaitable[None]]) -> None:
    """Call ``on_ready`` once uvicorn has bound its socket (``server.started``)."""
    while not server.started:
        await asyncio.sleep(0.05)  # uvicorn offers no start-up event to wait on
    try:
        await on_ready()
    except Exception:
        log.exception("the start-up hook failed")


def serve_api_workers(dsn: str, settings: Settings, workers: int) -> None:
    """Run the API in ``workers`` uvicorn processes sharing one listening socket.

    The worker processes build the app from the environment (``api.app:app_from_env``), so
    ``DATABASE_URL``, the listen address and the secret key file are set for them; migrations
    have already run.
    uvicorn's supervisor owns the signals: SIGINT or SIGTERM stop the workers gracefully, then
    this returns.
    """
    os.environ.update(DATABASE_URL=dsn, CRONLEDGER_HOST=settings.host,
                      CRONLEDGER_PORT=str(settings.port))  # --host/--port, for the workers too
    if settings.secret_key_file:  # the embedded mode's key file, chosen by the parent
        os.environ["CRONLEDGER_SECRET_KEY_FILE"] = settings.secret_key_file
    uvicorn.run("api.app:app_from_env", factory=True, host=settings.host, port=settings.port,
                workers=workers, lifespan="on", access_log=False, log_level="info",
                proxy_headers=False, http=PING_PROTOCOL)
