"""The DSN of the embedded server: built from its socket folder, or read from a running one.

The embedded server listens on a Unix socket only, as the trusted superuser ``postgres``;
its DSN is a libpq URI naming that socket folder and port. Converting a DSN between the forms
psycopg and SQLAlchemy accept is :mod:`core.dsn`'s job, for any server.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from urllib.parse import quote

from core.embedded.layout import (
    DATABASE_NAME,
    PGDATA_NAME,
    POINTER_NAME,
    SUPERUSER,
    default_data_dir,
)
from core.embedded.pidfiles import PidFile, postmaster_alive

logger = logging.getLogger("cronledger.embedded")


def read_dsn(data_dir: str | os.PathLike[str] | None = None) -> str | None:
    """Return the DSN of a server currently running for ``data_dir``, else ``None``.

    Meant for ``cronledger db-url``: it reads the cluster's ``postmaster.pid`` (written by
    PostgreSQL itself, so it is also right after the owning process was killed), checks that
    the postmaster is alive and ready, and builds the DSN from the socket folder and port it
    records. It never starts anything, never imports the package and never logs at a level
    above DEBUG.

    Args:
        data_dir: The cronledger data folder; ``None`` means :func:`default_data_dir`.

    Returns:
        A libpq URI such as ``postgresql://postgres@/cronledger?host=/abs/socket/dir&port=5432``
        or ``None`` when no ready server runs for that folder or its files are unreadable
        (e.g. a root-owned cluster read by another user).
    """
    folder = default_data_dir() if data_dir is None else Path(data_dir).expanduser().resolve()
    try:
        pointer = folder / POINTER_NAME
        if pointer.is_file():
            pgdata = Path(pointer.read_text(encoding="utf-8").strip())
            if not pgdata.is_absolute():
                return None
        else:
            pgdata = folder / PGDATA_NAME
        info = PidFile.read(pgdata)
    except OSError as exc:
        logger.debug("read_dsn(%s): cannot read cluster files: %s", folder, exc)
        return None
    if info is None or info.status != "ready" or info.socket_dir is None:
        return None
    if not postmaster_alive(info.pid):
        return None
    return build_dsn(info.socket_dir, info.port)


def build_dsn(
    socket_dir: str | os.PathLike[str], port: int = 5432, database: str = DATABASE_NAME
) -> str:
    """Build a libpq URI for a Unix-socket server.

    Args:
        socket_dir: Absolute folder holding ``.s.PGSQL.<port>``.
        port: Port number naming the socket file (no TCP is used).
        database: Database name.

    Returns:
        ``postgresql://postgres@/<database>?host=<socket_dir>&port=<port>``. The path is
        percent-encoded only where needed (``/`` stays as is), so an ordinary path yields no
        ``%`` (convenient for alembic's configparser, where ``%`` must be doubled).

    Raises:
        ValueError: ``socket_dir`` is relative or contains a comma (libpq and SQLAlchemy read
            a comma in ``host`` as a list of hosts).
    """
    text = os.fspath(socket_dir)
    if not os.path.isabs(text):
        raise ValueError(f"socket_dir must be absolute, got {text!r}")
    if "," in text:
        raise ValueError(f"socket_dir must not contain a comma: {text!r}")
    return (
        f"postgresql://{SUPERUSER}@/{quote(database, safe='')}"
        f"?host={quote(text, safe='/')}&port={int(port)}"
    )
