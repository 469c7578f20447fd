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
from api.controllers.reports import ReportController
from api.controllers.runs import RunController
from api.deps import provide_actor, provide_clock, provide_pool
from api.errors import EXCEPTION_HANDLERS
from core.clock import Clock, SystemClock
from core.config import Settings
from core.db import open_pool
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
            yield
        finally:
            await app.state.pool.close()

    app = Litestar(
        route_handlers=[JobController, RunController, ApiKeyController, ReportController,
                        healthz, readyz],
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


