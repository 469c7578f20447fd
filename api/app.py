"""The Litestar application: routes, dependencies, error mapping, OpenAPI at ``/schema``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme

from api.controllers.apikeys import ApiKeyController
from api.controllers.health import healthz, readyz
from api.controllers.jobs import JobController
from api.controllers.monitors import MonitorController
from api.controllers.runs import RunController
from api.deps import provide_actor, provide_clock, provide_pool
from api.errors import EXCEPTION_HANDLERS
from api.ping import ping_mount
from core.clock import Clock, SystemClock
from core.config import Settings, load_settings
from core.db import open_pool
from core.monitors.batcher import PingBatcher
from core.monitors.ping import open_ping_pool
from core.version import VERSION


def create_app(dsn: str, settings: Settings, clock: Clock | None = None) -> Litestar:
    """Build the API application; its lifespan opens and closes the database pool.

    Args:
        dsn: libpq DSN of a migrated database.
        settings: runtime settings.
        clock: the injected clock (tests pass a frozen one).
    """

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        app.state.pool = await open_pool(dsn, min_size=2, max_size=settings.db_pool_size)
        try:
            app.state.ping_pool = await open_ping_pool(
                dsn, size=settings.ping_pool_size,
                synchronous_commit=settings.ping_synchronous_commit)
            app.state.ping_batcher = PingBatcher(app.state.ping_pool)
            try:
                yield
            finally:
                await app.state.ping_pool.close()
        finally:
            await app.state.pool.close()

    app = Litestar(
        route_handlers=[JobController, RunController, ApiKeyController, MonitorController,
                        ping_mount, healthz, readyz],
        dependencies={
            "pool": Provide(provide_pool),
            "clock": Provide(provide_clock),
            "actor": Provide(provide_actor),
        },
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        lifespan=[lifespan],
        openapi_config=OpenAPIConfig(
            title="cronledger", version=VERSION, path="/schema",
            components=Components(security_schemes={
                "bearer": SecurityScheme(type="http", scheme="bearer")}),
            security=[{"bearer": []}],
        ),
        debug=False,
    )
    app.state.clock = clock or SystemClock()
    app.state.settings = settings
    return app


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
    return create_app(settings.database_url, settings)
