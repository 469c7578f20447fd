"""The Litestar application: routes, dependencies, error mapping, OpenAPI at ``/schema``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme
from litestar.routes import HTTPRoute

from api.bodies import strict_json_body
from api.controllers.advice import AdviceController
from api.controllers.alerts import AlertController
from api.controllers.apikeys import ApiKeyController
from api.controllers.apply import ApplyController
from api.controllers.channels import ChannelController, NotificationController
from api.controllers.checks import badge, own_team_metrics, team_metrics
from api.controllers.health import healthz, metrics, readyz
from api.controllers.jobs import JobController
from api.controllers.ledger import LedgerController
from api.controllers.maintenance import MaintenanceController
from api.controllers.monitors import MonitorController
from api.controllers.reports import ReportController
from api.controllers.runs import RunController
from api.controllers.schedules import parse as parse_schedule_route
from api.controllers.schedules import peaks, preview
from api.controllers.secrets import SecretController
from api.controllers.statuspages import StatusPageController
from api.controllers.teams import TeamController
from api.deps import (
    NotifyKit,
    provide_actor,
    provide_clock,
    provide_keyring,
    provide_notify,
    provide_pool,
    provide_read_pool,
)
from api.errors import EXCEPTION_HANDLERS
from api.hc.routes import v3_router
from api.openapi import complete_document
from api.ping import ping_mount
from api.swagger import assets_router, render_plugins
from api.ui import template_config, ui_router
from api.ui.auth import provide_viewer
from api.ui.live import LiveChanges
from core.channels.sealing import AesGcmSealer, Sealer
from core.clock import Clock, SystemClock
from core.config import Settings, load_settings
from core.crypto import KeyRing
from core.db import Connection, open_pool
from core.events import warm_event_plans
from core.http.clients import make_client
from core.monitors.batcher import PingBatcher
from core.monitors.ping import open_ping_pool
from core.notifications.delivery import Delivery
from core.notifications.lookup import KeyRingSecrets, SecretLookup
from core.services.health import ServicesHealth
from core.services.heap import freeze_long_lived
from core.services.outage import OutageLog, connect_dsn
from core.statuspages.cache import PageCache
from core.version import VERSION

log = logging.getLogger("cronledger.api")


def create_app(dsn: str, settings: Settings, clock: Clock | None = None, *,
               sealer: Sealer | None = None, secrets: SecretLookup | None = None,
               freeze_after_startup: bool = False,
               services_health: ServicesHealth | None = None) -> Litestar:
    """Build the API application; its lifespan opens and closes the database pool and the
    HTTP client of channel tests.

    Args:
        dsn: libpq DSN of a migrated database.
        settings: runtime settings.
        clock: the injected clock (tests pass a frozen one).
        sealer: encrypts channel secrets (default: the server's key ring).
        secrets: team-secret lookup for channel tests (default: the secrets store).
        freeze_after_startup: exempt what start-up allocated from garbage collection
            (:func:`core.services.heap.freeze_long_lived`); for server processes, not for tests.
        services_health: the background services of the same process (``cronledger serve``),
            whose heartbeat ``/readyz`` reports.
    """
    clock = clock or SystemClock()
    dsn = connect_dsn(dsn)  # a connect to a silent host gives up after 2 s
    outage = OutageLog(log, clock)

    async def connected(_: object) -> None:
        outage.up()  # a new connection: the database is back if it was away

    async def connected_warm(conn: Connection) -> None:
        outage.up()
        # the overview's first read, planned before a request needs it (best effort, bounded)
        await warm_event_plans(conn)

    # While PostgreSQL is unreachable a request waits at most db_wait_seconds for a connection,
    # then is answered 503 (api/errors.py). A failed reconnection is given up after a second
    # instead of retried with the pool's growing backoff, so that the next request asks for a
    # new connection at once: requests drive reconnecting, and the first one after PostgreSQL
    # is back is served (docs/operations.md, "Database outages").
    pool_options: dict[str, Any] = {"timeout": settings.db_wait_seconds, "reconnect_timeout": 1.0,
                    "configure": connected}

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        app.state.pool = await open_pool(dsn, min_size=2, max_size=settings.db_pool_size,
                                         **{**pool_options, "configure": connected_warm})
        app.state.read_pool = app.state.pool
        if settings.read_database_url:
            app.state.read_pool = await open_pool(
                connect_dsn(settings.read_database_url), min_size=1,
                max_size=settings.db_pool_size, **pool_options)
        if not settings.metrics_token:
            log.info("/metrics is public: set CRONLEDGER_METRICS_TOKEN to require a token")
        client = make_client(20, block_private_targets=settings.block_private_targets)
        ring = app.state.keyring
        app.state.notify = NotifyKit(sealer or AesGcmSealer(ring), secrets or KeyRingSecrets(ring),
                                     Delivery(client, settings, clock))
        try:
            app.state.ping_pool = await open_ping_pool(
                dsn, size=settings.ping_pool_size,
                synchronous_commit=settings.ping_synchronous_commit, **pool_options)
            app.state.ping_batcher = PingBatcher(
                app.state.ping_pool, notify_max_attempts=settings.notify_max_attempts)
            # the live regions' one listening connection, direct (never through a pooler)
            app.state.live = LiveChanges(connect_dsn(settings.listen_database_url or dsn))
            if freeze_after_startup:
                freeze_long_lived()
            try:
                yield
            finally:
                await app.state.live.close()
                await app.state.ping_pool.close()
        finally:
            await client.aclose()
            if app.state.read_pool is not app.state.pool:
                await app.state.read_pool.close()
            await app.state.pool.close()

    app = Litestar(
        route_handlers=[JobController, RunController, SecretController, ApiKeyController,
                        ChannelController, NotificationController, MonitorController,
                        ReportController, ping_mount, preview, peaks, healthz, readyz, metrics,
                        TeamController, badge, team_metrics, own_team_metrics, v3_router,
                        MaintenanceController, parse_schedule_route, LedgerController,
                        AdviceController, ApplyController, AlertController,
                        StatusPageController, ui_router(), assets_router()],
        dependencies={
            "pool": Provide(provide_pool),
            "read_pool": Provide(provide_read_pool),
            "clock": Provide(provide_clock),
            "actor": Provide(provide_actor),
            "keyring": Provide(provide_keyring),
            "notify": Provide(provide_notify),
            "viewer": Provide(provide_viewer),
        },
        template_config=template_config(),  # the dashboard (api/ui/)
        # handlers typed by their exception (a narrower parameter than Litestar's mapping says)
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        before_request=strict_json_body,
        lifespan=[lifespan],
        openapi_config=OpenAPIConfig(
            title="cronledger", version=VERSION, path="/schema",
            components=Components(security_schemes={
                "bearer": SecurityScheme(type="http", scheme="bearer")}),
            security=[{"bearer": []}],
            render_plugins=render_plugins(),  # local assets, no CDN (api/swagger.py)
        ),
        debug=False,
    )
    _fix_options_allow(app)
    complete_document(app.openapi_schema)  # error answers, ping and health routes
    app.state.clock = clock
    app.state.services_health = services_health
    app.state.status_cache = PageCache()  # the public status pages' bodies
    app.state.outage = outage
    app.state.settings = settings
    app.state.keyring = KeyRing.from_sources(settings.secret_key, settings.secret_key_file)
    return app


def _fix_options_allow(app: Litestar) -> None:
    """Make the automatic ``OPTIONS`` answer list every method of its path.

    Litestar 2 builds that answer from the route object of the first handler registered on a
    path and keeps it when later handlers replace the route, so ``Allow`` misses their
    methods (litestar-org/litestar#4169, fixed in Litestar 3). Each stale route object is given
    the methods of the route that serves the path.
    """
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or "OPTIONS" not in route.route_handler_map:
            continue
        handler = route.route_handler_map["OPTIONS"][0]
        for cell in getattr(handler.fn, "__closure__", None) or ():
            stale = cell.cell_contents
            if isinstance(stale, HTTPRoute) and stale is not route:
                stale.methods = route.methods


def app_from_env() -> Litestar:
    """The application for ``DATABASE_URL`` and the ``CRONLEDGER_*`` settings of the environment.

    An import-string factory (``api.app:app_from_env``) for uvicorn's worker processes, which
    cannot receive a built application: ``cronledger api --workers N`` sets ``DATABASE_URL`` (also
    when it started the embedded server) and migrates before the workers start.

    Raises:
        RuntimeError: ``DATABASE_URL`` is not set.
        ConfigError: a ``CRONLEDGER_*`` variable is unusable.
    """
    settings = load_settings()
    if not settings.database_url:
        raise RuntimeError("DATABASE_URL must be set for the API worker processes")
    return create_app(settings.database_url, settings, freeze_after_startup=True)
