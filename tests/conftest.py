"""Fixtures: a real PostgreSQL (``DATABASE_URL``, else the embedded one), migrated once.

Isolation: API tests share one migrated database and isolate by team (every query is
team-scoped); scheduler tests, which claim across teams, get their own database cloned from a
migrated template.

The application, the database driver and the services are imported inside the fixtures that
use them, not here: tests/unit uses none of these fixtures, and importing them cost every unit
run about two seconds before its first test.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from litestar.testing import AsyncTestClient

    from core.channels.sealing import AesGcmSealer
    from core.clock import FrozenClock
    from core.config import Settings
    from core.db import ConnectionPool
    from core.monitors.checker import Checker
    from core.monitors.ping import PingPool
    from core.runs.worker import Worker
    from tests.sink import Sink
    from tests.teams import Team

RUN = uuid.uuid4().hex[:8]
# Modules whose tests need the PostgreSQL server itself - a proxy in front of it, a restart,
# more clusters, the embedded server's own processes: marked ``dbserver``, so that .ci/run
# runs them again the way a new user does (a 0700 clone as root, no DATABASE_URL: the
# embedded server, which listens on a Unix socket only).
DBSERVER_HELPERS = ("tests.dbproxy", "tests.proxy", "tests.clusters", "tests.servers",
                    "core.embedded")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    sources: dict[str, bool] = {}
    for item in items:
        path = str(item.path)
        if path not in sources:
            text = item.path.read_text() if item.path.suffix == ".py" else ""
            sources[path] = any(f"from {name} import" in text or f"import {name}" in text
                                for name in DBSERVER_HELPERS)
        if sources[path]:
            item.add_marker(pytest.mark.dbserver)
# A fixed test key (base64 of 32 bytes): the suite's secrets are encrypted with it.
TEST_SECRET_KEY = "Y3JvbmxlZGdlci10ZXN0LWtleS0wMDAwMDAwMDAwMDA="


def with_dbname(dsn: str, name: str) -> str:
    """``dsn`` pointing at database ``name``."""
    from psycopg.conninfo import make_conninfo

    return make_conninfo(dsn, dbname=name)


def _create_database(admin: str, name: str, template: str | None = None) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin, autocommit=True) as conn:
        query = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template:
            query += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
        conn.execute(query)


def _drop_database(admin: str, name: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(name)))


@pytest.fixture(scope="session")
def server_dsn() -> Iterator[str]:
    """DSN of the PostgreSQL server used by the suite (its own database untouched).

    When the embedded server cannot start, the run stops with one paragraph saying why and
    what to do (exit status 4), not with a traceback in every test.
    """
    from core.embedded import EmbeddedPostgresError, start_failure_message
    from tests.embedded_server import server_dsn as embedded_server_dsn

    with contextlib.ExitStack() as stack:
        try:
            dsn = stack.enter_context(embedded_server_dsn("cronledger-test-"))
        except EmbeddedPostgresError as exc:
            pytest.exit(start_failure_message(exc, None), returncode=pytest.ExitCode.USAGE_ERROR)
        yield dsn


@pytest.fixture(scope="session")
def template_db(server_dsn: str) -> Iterator[str]:
    """Name of a migrated template database."""
    from core.migrate import upgrade

    name = f"cronledger_tpl_{RUN}"
    _create_database(server_dsn, name)
    upgrade(with_dbname(server_dsn, name))
    yield name
    _drop_database(server_dsn, name)


@pytest.fixture(scope="session")
def shared_dsn(server_dsn: str, template_db: str) -> Iterator[str]:
    """A migrated database shared by the API tests (isolated by team)."""
    name = f"cronledger_shared_{RUN}"
    _create_database(server_dsn, name, template_db)
    yield with_dbname(server_dsn, name)
    _drop_database(server_dsn, name)


@pytest.fixture
def fresh_dsn(server_dsn: str, template_db: str) -> Iterator[str]:
    """A migrated database of this test's own, cloned from the template."""
    name = f"cronledger_t_{uuid.uuid4().hex[:12]}"
    _create_database(server_dsn, name, template_db)
    yield with_dbname(server_dsn, name)
    _drop_database(server_dsn, name)


@pytest.fixture
async def pool(shared_dsn: str) -> AsyncIterator[ConnectionPool]:
    from core.db import open_pool

    p = await open_pool(shared_dsn, min_size=1, max_size=5)
    yield p
    await p.close()


@pytest.fixture
async def fresh_pool(fresh_dsn: str) -> AsyncIterator[ConnectionPool]:
    from core.db import open_pool

    p = await open_pool(fresh_dsn, min_size=1, max_size=10)
    yield p
    await p.close()


@pytest.fixture
def settings() -> Settings:
    from core.config import Settings

    return Settings(database_url=None, claim_batch=100, max_concurrency=50,
                    shutdown_grace_seconds=5, lease_margin_seconds=5,
                    secret_key=TEST_SECRET_KEY)


@pytest.fixture
def clock() -> FrozenClock:
    from core.clock import FrozenClock

    return FrozenClock(datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC))


async def _client(dsn: str, settings: Settings, clock: object) -> AsyncIterator[AsyncTestClient]:
    from litestar.testing import AsyncTestClient

    from api.app import create_app

    app = create_app(dsn, settings, clock)  # type: ignore[arg-type]
    async with AsyncTestClient(app=app, raise_server_exceptions=False) as client:
        yield client


@pytest.fixture
async def api(shared_dsn: str, settings: Settings) -> AsyncIterator[AsyncTestClient]:
    """The API on the shared database, with the real clock."""
    from core.clock import SystemClock

    async for client in _client(shared_dsn, settings, SystemClock()):
        yield client


@pytest.fixture
async def frozen_api(shared_dsn: str, settings: Settings,
                     clock: FrozenClock) -> AsyncIterator[AsyncTestClient]:
    """The API on the shared database, with the ``clock`` fixture as its clock."""
    async for client in _client(shared_dsn, settings, clock):
        yield client


@pytest.fixture
async def team(pool: ConnectionPool) -> Team:
    """A new team with a write key and a read key (see tests/teams.py)."""
    from tests.teams import new_team

    return await new_team(pool)


@pytest.fixture
async def sink() -> AsyncIterator[Sink]:
    """A real local HTTP server recording every request (see tests/sink.py)."""
    from tests.sink import Sink

    async with Sink() as s:
        yield s


@pytest.fixture
async def worker(fresh_pool: ConnectionPool, fresh_dsn: str, settings: Settings,
                 clock: FrozenClock) -> AsyncIterator[Worker]:
    """A worker (id ``test-worker``) on the frozen clock and a fresh database; in-flight
    attempts are settled and its HTTP session closed afterwards."""
    from tests.helpers import make_worker

    w = make_worker(fresh_pool, fresh_dsn, settings, clock)
    yield w
    await w.settle()
    await w.executor.aclose()


@pytest.fixture
async def ping_pool(fresh_dsn: str) -> AsyncIterator[PingPool]:
    """The API's ping pool (autocommit, raw statements) on the fresh database, 4 connections."""
    from core.monitors.ping import open_ping_pool

    p = await open_ping_pool(fresh_dsn, size=4)
    yield p
    await p.close()


@pytest.fixture
def checker(fresh_pool: ConnectionPool, fresh_dsn: str, clock: FrozenClock) -> Checker:
    """A checker on the frozen clock, claiming 10 monitors per batch."""
    from core.monitors.checker import Checker

    return Checker(fresh_pool, fresh_dsn, clock, batch=10)


@pytest.fixture
def sealer() -> AesGcmSealer:
    """Seals channel secrets with a random key."""
    from core.channels.sealing import AesGcmSealer

    return AesGcmSealer.random()
