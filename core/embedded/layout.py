"""Names, defaults and environment variables of the embedded data folder.

Layout of ``$CRONLEDGER_DATA_DIR`` (default ``./.cronledger``; "The data folder" in
docs/operations.md)::

    pgdata/               the PostgreSQL cluster (ordinary user only)
    pgdata.location       root only: path of the real cluster under /var/lib/cronledger
                          (whose pgbin/ holds the verified copies of the PostgreSQL binaries)
    embedded.lock         flock(2) lock serialising start/stop between processes
    embedded-owners.json  live handles using the server (reference count)
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR_ENV = "CRONLEDGER_DATA_DIR"
"""Environment variable naming the embedded data folder."""
DEFAULT_DATA_DIR = ".cronledger"
"""Data folder used when ``$CRONLEDGER_DATA_DIR`` is unset (relative to the working dir)."""
ROOT_BASE_DIR_ENV = "CRONLEDGER_EMBEDDED_ROOT_DIR"
"""Environment variable overriding where a root run keeps its clusters."""
DEFAULT_ROOT_BASE_DIR = Path("/var/lib/cronledger")
"""Where a root run keeps its clusters (one sub-folder per data dir) by default."""
DATABASE_NAME = "cronledger"
"""Database created in the embedded cluster and named by the DSN."""
SUPERUSER = "postgres"
"""Superuser created by initdb; trust authentication, so no password."""

PGDATA_NAME = "pgdata"
PGBIN_NAME = "pgbin"
"""Root only: folder of the root base dir holding verified copies of the bundled binaries."""
POINTER_NAME = "pgdata.location"
LOCK_NAME = "embedded.lock"
OWNERS_NAME = "embedded-owners.json"


def default_data_dir() -> Path:
    """Return the embedded data folder: ``$CRONLEDGER_DATA_DIR`` or ``./.cronledger``.

    Returns:
        The folder as an absolute path with symlinks resolved (``~`` expanded). It is not
        created.
    """
    raw = os.environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR
    return Path(raw).expanduser().resolve()
