"""Alembic environment: raw-SQL migrations run through SQLAlchemy's psycopg 3 dialect.

SQLAlchemy never sees a URL of ours: its engine gets each connection from psycopg, made with
the libpq connection string itself (``core/migrate.py:engine``), so a DSN with several hosts and
``target_session_attrs`` migrates the host that is primary now (docs/operations.md, "High
availability").
"""

from __future__ import annotations

import os

from alembic import context

from core.migrate import engine

config = context.config


def _dsn() -> str:
    dsn = config.attributes.get("dsn") or os.environ.get("DATABASE_URL")
    if not dsn:
        raise RuntimeError("no database URL: set DATABASE_URL or run `cronledger migrate`")
    return dsn


def run_migrations_offline() -> None:
    context.configure(dialect_name="postgresql", literal_binds=True,
                      transaction_per_migration=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connectable = engine(_dsn())
    try:
        with connectable.connect() as connection:
            context.configure(connection=connection, transaction_per_migration=True)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        connectable.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
