"""The daily leaves of the history tables (migration 0013): list them, create them ahead, and
find the ones past their kind's horizon.

A leaf ``<table>_pYYYYMMDD`` holds ``[day, day + 1)`` in UTC of its table's partition column
(:data:`core.retention.policy.PARTITION_COLUMN`). Rows outside every leaf land in the table's
``_default`` partition, which is never pruned; a leaf whose range already has rows in the
default is not created (PostgreSQL refuses it) and is reported instead.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

import psycopg
from psycopg import sql

from core.db import Connection, one_row
from core.queries import Q
from core.retention.policy import PARTITION_COLUMN, Kind

log = logging.getLogger("cronledger.retention")


@dataclass(frozen=True)
class Leaf:
    """One daily partition: its parent table, name, UTC day and size in bytes."""

    parent: str
    name: str
    day: date
    bytes: int

    @property
    def end(self) -> datetime:
        """The exclusive upper bound of the leaf's range (UTC midnight after ``day``)."""
        return day_start(self.day + timedelta(days=1))


def day_start(day: date) -> datetime:
    """UTC midnight at the start of ``day``."""
    return datetime.combine(day, time(), tzinfo=UTC)


async def leaves(conn: Connection, tables: tuple[str, ...]) -> list[Leaf]:
    """The daily leaves of ``tables``, oldest first per table."""
    cur = await conn.execute(Q["retention_partitions"], {"parents": list(tables)})
    return [Leaf(r["parent"], r["leaf"], datetime.strptime(r["leaf"][-8:], "%Y%m%d").date(),
                 r["bytes"]) for r in await cur.fetchall()]


def past_horizon(all_leaves: list[Leaf], kind: Kind, now: datetime) -> list[Leaf]:
    """The leaves of ``kind`` whose whole day ended more than ``kind.days`` before ``now``."""
    horizon = now - timedelta(days=kind.days)
    return [leaf for leaf in all_leaves if leaf.parent in kind.tables and leaf.end <= horizon]


async def create_ahead(conn: Connection, now: datetime, ahead_days: int
                       ) -> list[str]:
    """Create the leaves of every history table from yesterday to ``ahead_days`` after ``now``'s
    UTC day, in the caller's transaction; returns the names created.

    A leaf whose range has rows in its table's default partition is skipped with a warning
    (each attempt is in a savepoint, so the others still go ahead).
    """
    today = now.astimezone(UTC).date()
    created = []
    for parent, column in PARTITION_COLUMN.items():
        for offset in range(-1, ahead_days + 1):
            day = today + timedelta(days=offset)
            name = f"{parent}_p{day:%Y%m%d}"
            start, end = day_start(day), day_start(day + timedelta(days=1))
            query = sql.SQL(Q["retention_default_has_rows"]).format(
                table=sql.Identifier(f"{parent}_default"), column=sql.Identifier(column))
            cur = await conn.execute(query, {"start": start, "end": end})
            if one_row(await cur.fetchone(), "retention_default_has_rows")["found"]:
                log.warning("retention: %s not created: %s holds rows of that day", name,
                            f"{parent}_default")
                continue
            try:
                async with conn.transaction():  # a savepoint
                    cur = await conn.execute(Q["retention_partition_create"],
                                             {"parent": parent, "day": day})
                    if one_row(await cur.fetchone(), "retention_partition_create")["created"]:
                        created.append(name)
            except (psycopg.errors.CheckViolation, psycopg.errors.LockNotAvailable) as exc:
                log.warning("retention: %s not created this time: %s", name,
                            str(exc).splitlines()[0])
    return created
