"""``cronledger prune [--dry-run]`` and ``cronledger db-size`` (docs/operations.md,
"Retention")."""

from __future__ import annotations

import asyncio
from typing import Any

from core.clock import SystemClock
from core.config import Settings
from core.db import open_pool
from core.retention import prune as pruning
from core.retention.size import sizes


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def prune(dsn: str, settings: Settings, *, dry_run: bool) -> int:
    """Print, per kind, the partitions that go (or would go) and their rows; exit 0, or 1 when
    another process held the maintenance lock or a lock conflict deferred the prune."""

    async def run() -> pruning.PruneResult | None:
        pool = await open_pool(dsn, min_size=1, max_size=2)
        try:
            now = SystemClock().now()
            if dry_run:
                return await pruning.plan(pool, settings, now)
            return await pruning.prune(pool, settings, now)
        finally:
            await pool.close()

    result = asyncio.run(run())
    if result is None:
        print("cronledger: another process is pruning or holds a lock; try again")
        return 1
    verb = "would drop" if dry_run else "dropped"
    summary = result.summary()
    if not summary and not any(result.deleted.values()):
        print("nothing is past its retention")
    for kind, k in summary.items():
        print(f"{kind}: {verb} {len(k['partitions'])} partitions, {k['rows']} rows, "
              f"{_mb(k['bytes'])}, {k['from']} .. {k['to']}")
    for leaf in result.waiting:
        print(f"{leaf}: waits for the projector to apply its events")
    for leaf in result.deferred:
        print(f"{leaf}: its locks were not granted; the next pass tries again")
    verb = "would delete" if dry_run else "deleted"
    for table, rows in result.deleted.items():
        if rows:
            print(f"{table}: {verb} {rows} rows")
    return 0


def db_size(dsn: str) -> int:
    """Print the size of each table family with its kind, largest first, and the total."""

    async def run() -> tuple[list[dict[str, Any]], int]:
        pool = await open_pool(dsn, min_size=1, max_size=1)
        try:
            return await sizes(pool)
        finally:
            await pool.close()

    rows, total = asyncio.run(run())
    print(f"{'table':32} {'kind':18} {'tables':>6} {'size':>12}")
    for r in rows:
        print(f"{r['family']!s:32} {r['kind']!s:18} {r['tables']:>6} {_mb(int(r['bytes'])):>12}")
    print(f"{'database':32} {'':18} {'':>6} {_mb(total):>12}")
    return 0
