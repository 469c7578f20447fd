"""A "pool" of one connection that is already inside a transaction.

The job, monitor and channel commands each run in ``core.db.transaction(pool)``. Handed a
:class:`BoundPool`, they all run on the apply's connection, and their transactions become
savepoints of the apply's one transaction (psycopg nests ``conn.transaction()`` as
``SAVEPOINT``): every change of an apply commits together, or none does (docs/config.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from core.db import Connection


class BoundPool:
    """Quacks like :class:`psycopg_pool.AsyncConnectionPool` for :func:`core.db.transaction`
    and the commands: ``connection()`` yields the bound connection, never closes it."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    @contextlib.asynccontextmanager
    async def connection(self, timeout: float | None = None,
                         **_: Any) -> AsyncIterator[Connection]:
        yield self._conn
