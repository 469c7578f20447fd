"""Schema migrations (alembic, raw SQL in ``migrations/``), run under an advisory lock."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg

from core.db import Connection, one_row
from core.queries import Q

# alembic and SQLAlchemy are imported where they are used, not here: the API imports this module
# for the readiness check (current_revision, a plain query), and importing the two took about a
# second and a half of every process's start (the unit tests' included).
if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy import Engine

ROOT = Path(__file__).resolve().parent.parent
MIGRATION_LOCK = 0x63726F6E  # pg_advisory_lock key: concurrent starts migrate one at a time


def alembic_config(dsn: str) -> Config:
    """An alembic ``Config`` for ``dsn`` using the repository's ``alembic.ini``; the DSN travels
    in ``config.attributes["dsn"]`` (read by ``migrations/env.py``), never as a URL."""
    from alembic.config import Config

    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.attributes["dsn"] = dsn
    return config


def engine(dsn: str) -> Engine:
    """A SQLAlchemy engine (alembic's) whose connections psycopg makes from ``dsn`` itself.

    A SQLAlchemy URL cannot hold what libpq accepts (several ``host:port`` pairs), so the URL
    only names the dialect and the ``creator`` connects: every libpq option, the hosts and
    ``target_session_attrs`` included, is used as given (docs/operations.md, "High
    availability"), with :func:`core.services.outage.connect_dsn`'s connect timeout.
    """
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    from core.services.outage import connect_dsn

    conninfo = connect_dsn(dsn)
    return create_engine("postgresql+psycopg://", poolclass=NullPool,
                         creator=lambda: psycopg.connect(conninfo))


def upgrade(dsn: str, revision: str = "head") -> None:
    """Migrate the database at ``dsn`` up to ``revision``, serialised by an advisory lock.

    Raises:
        psycopg.OperationalError: the database cannot be reached.
    """
    from alembic import command

    from core.services.outage import connect_dsn

    with psycopg.connect(connect_dsn(dsn), autocommit=True) as conn:
        conn.execute(Q["migration_lock"], {"key": MIGRATION_LOCK})
        try:
            command.upgrade(alembic_config(dsn), revision)
        finally:
            conn.execute(Q["migration_unlock"], {"key": MIGRATION_LOCK})


def downgrade(dsn: str, revision: str = "base") -> None:
    """Migrate the database at ``dsn`` down to ``revision`` (used by the round-trip test)."""
    from alembic import command

    command.downgrade(alembic_config(dsn), revision)


@functools.cache
def head_revision() -> str:
    """The newest revision in ``migrations/``."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config("postgresql://unused/"))
    return script.get_current_head() or ""


async def current_revision(conn: Connection) -> str | None:
    """The revision the database is at, or ``None`` before the first migration."""
    cur = await conn.execute(
        Q["migration_version"]
        if await _has_version_table(conn) else Q["migration_version_none"])
    row = await cur.fetchone()
    if row is None:
        return None
    version: str = row["version_num"]  # alembic: varchar
    return version


async def _has_version_table(conn: Connection) -> bool:
    cur = await conn.execute(Q["migration_version_table_exists"])
    row = one_row(await cur.fetchone(), "migration_version_table_exists")
    return bool(row["present"])
