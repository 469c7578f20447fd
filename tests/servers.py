"""Where a PostgreSQL server of the suite listens, TCP or Unix socket alike.

``DATABASE_URL`` servers listen on TCP (``host=127.0.0.1 port=5432``); the embedded server
listens only on a Unix socket (``host=/path/to/folder port=N``, the socket file being
``/path/to/folder/.s.PGSQL.N``). Helpers that open their own connection to the server (the
database proxy of tests/dbproxy.py, the dead host of a multi-host DSN) ask here instead of
assuming a TCP host.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

from psycopg.conninfo import conninfo_to_dict

from tests.processes import free_port

__all__ = ["ServerAddress", "dead_host", "free_port", "server_address"]


@dataclass(frozen=True)
class ServerAddress:
    """A server's one address: ``path`` (a Unix socket file) or ``host`` and ``port`` (TCP)."""

    host: str | None = None
    port: int | None = None
    path: str | None = None

    @property
    def is_unix(self) -> bool:
        return self.path is not None


def server_address(dsn: str) -> ServerAddress:
    """The address libpq connects to for ``dsn``'s first host (libpq's defaults: host from
    ``PGHOST`` or ``localhost``, port from ``PGPORT`` or 5432; a host starting with ``/`` is a
    socket folder)."""
    params = conninfo_to_dict(dsn)
    host = (params.get("host") or os.environ.get("PGHOST") or "localhost").split(",")[0]
    port = int(str(params.get("port") or os.environ.get("PGPORT") or 5432).split(",")[0])
    if host.startswith("/"):
        return ServerAddress(path=os.path.join(host, f".s.PGSQL.{port}"), port=port)
    return ServerAddress(host=host, port=port)


def dead_host(dsn: str, folder: Path) -> tuple[str, int]:
    """A ``(host, port)`` of the same kind as ``dsn``'s server where nothing listens: a free
    TCP port on 127.0.0.1, or an empty socket folder under ``folder`` (made here)."""
    if server_address(dsn).is_unix:
        empty = folder / "dead-socket"
        empty.mkdir(exist_ok=True)
        return str(empty), 5432
    return "127.0.0.1", free_port()


def connectable(address: ServerAddress) -> bool:
    """Whether something accepts a connection at ``address`` now."""
    family = socket.AF_UNIX if address.is_unix else socket.AF_INET
    target = address.path if address.is_unix else (address.host, address.port)
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        try:
            sock.connect(target)  # type: ignore[arg-type]
        except OSError:
            return False
    return True
