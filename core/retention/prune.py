"""One prune (docs/operations.md, "Retention"): drop the daily leaves past their kind's
horizon, a whole partition at a time, never a row of the log.

In one REPEATABLE READ transaction, holding the maintenance lock row and the projector's
checkpoint (the projector skips a locked checkpoint, so the read models stand still):

1. plan: the leaves past their horizon (:func:`core.retention.partitions.past_horizon`); a
   leaf of ``events`` holding an event the projector has not applied yet waits for a later pass;
2. keep each monitor's newest 100 pings readable: those in the doomed leaves are copied into
   ``monitor_pings_kept`` (not the log; its rows beyond the newest 100 are trimmed);
3. snapshot the projections (the inline ones and the read models) into schema
   ``cronledger_snapshots``, recording the transaction snapshot and the checkpoint
   (``retention_snapshots``): a rebuild starts from it and replays the kept tail
   (:mod:`core.projections.rebuild`); the previous snapshot is dropped;
4. ``DETACH`` and ``DROP`` the leaves, each waiting at most ``lock_timeout`` for its lock
   (otherwise everything rolls back and the next pass tries again: pings and claims never
   queue behind it for longer);
5. append ``log.pruned`` (stream ``log``, actor ``maintenance``) with, per kind, the partitions,
   the time range, the row counts and the first and last global positions dropped;

then ``ANALYZE`` the tables it changed.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from core.config import Settings
from core.events import NewEvent, append_events
from core.projections.projector import CHECKPOINT
from core.projections.projector import TABLES as READ_MODELS
from core.queries import Q
from core.retention.partitions import Leaf, day_start, leaves, past_horizon
from core.retention.policy import KEEP_PINGS, is_event_table, kinds

log = logging.getLogger("cronledger.retention")

# The projections a prune snapshots: the inline ones (their rows fold streams whose older
# events may be dropped) and the projector's read models.
INLINE = ("jobs", "due_jobs", "runs", "monitors")
SNAPSHOT_TABLES: tuple[str, ...] = (*INLINE, *READ_MODELS)
SNAPSHOT_SCHEMA = "cronledger_snapshots"
LOCK_ATTEMPTS = 10  # per leaf, each waiting at most the lock timeout
LOCK_RETRY_SECONDS = 0.2
SYSTEM_TEAM = uuid.UUID(int=0)  # the team of events no team owns (log.pruned)


@dataclass
class Planned:
    """A leaf to drop with what it holds (``rows``; for events also positions and times)."""

    leaf: Leaf
    kind: str
    rows: int
    first_position: int | None = None
    last_position: int | None = None


@dataclass
class PruneResult:
    """What a prune dropped (or, dry, would drop), and the leaves it had to leave for later."""

    planned: list[Planned] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    snapshot_id: int | None = None
    position: int | None = None  # of the log.pruned event

    def summary(self) -> dict[str, Any]:
        """Per kind: partitions, ``from``/``to`` (UTC, ISO 8601), rows, bytes, positions."""
        by_kind: dict[str, dict[str, Any]] = {}
        for p in self.planned:
            k = by_kind.setdefault(p.kind, {"partitions": [], "from": None, "to": None,
                                            "rows": 0, "bytes": 0, "first_position": None,
                                            "last_position": None})
            k["partitions"].append(p.leaf.name)
            start, end = day_start(p.leaf.day), p.leaf.end
            k["from"] = min(filter(None, (k["from"], start.isoformat())))
            k["to"] = max(filter(None, (k["to"], end.isoformat())))
            k["rows"] += p.rows
            k["bytes"] += p.leaf.bytes
            if p.first_position is not None:
                k["first_position"] = min(filter(None, (k["first_position"], p.first_position)))
                k["last_position"] = max(filter(None, (k["last_position"], p.last_position)))
        return by_kind


def _ident(*names: str) -> sql.Identifier:
    return sql.Identifier(*names)


def _template(query: str, **identifiers: sql.Composable) -> sql.Composed:
    return sql.SQL(query).format(**identifiers)  # type: ignore[arg-type]


def snapshot_copy(snapshot_id: int, table: str) -> sql.Identifier:
    """The copy of ``table`` in snapshot ``snapshot_id``: ``cronledger_snapshots.s<id>_<table>``."""
    return _ident(SNAPSHOT_SCHEMA, f"s{snapshot_id}_{table}")


async def _plan(conn: psycopg.AsyncConnection, settings: Settings, now: datetime,
                checkpoint: dict[str, Any] | None) -> PruneResult:
    result = PruneResult()
    all_kinds = kinds(settings)
    found = await leaves(conn, tuple(t for k in all_kinds for t in k.tables))
    for kind in all_kinds:
        for leaf in past_horizon(found, kind, now):
            if is_event_table(leaf.parent):
                cur = await conn.execute(_template(Q["retention_event_leaf_stats"],
                                                   table=_ident(leaf.name)), {
                    "tx_id": checkpoint["tx_id"] if checkpoint else "0",
                    "position": checkpoint["global_position"] if checkpoint else 0})
                stats = await cur.fetchone()
                if checkpoint is not None and not stats["covered"]:
                    result.waiting.append(leaf.name)
                    continue
                result.planned.append(Planned(leaf, kind.name, stats["events"],
                                              stats["first_position"], stats["last_position"]))
            else:
                cur = await conn.execute(_template(Q["retention_leaf_count"],
                                                   table=_ident(leaf.name)))
                result.planned.append(Planned(leaf, kind.name, (await cur.fetchone())["rows"]))
    return result


async def plan(pool: AsyncConnectionPool, settings: Settings, now: datetime) -> PruneResult:
    """What a prune at ``now`` would drop (``cronledger prune --dry-run``); changes nothing."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["projection_checkpoint_get"], {"name": CHECKPOINT})
        checkpoint = await cur.fetchone()
        result = await _plan(conn, settings, now, checkpoint)
        await conn.rollback()
    return result


async def prune(pool: AsyncConnectionPool, settings: Settings, now: datetime, *,
                lock_timeout: str = "50ms") -> PruneResult | None:
    """Prune what is past its horizon at ``now`` (UTC), as described above.

    Args:
        lock_timeout: how long each DETACH waits for its lock (a PostgreSQL interval).

    Returns:
        What was dropped (``planned`` empty: nothing was due), or ``None`` when another process
        holds the maintenance lock or a lock or serialization conflict deferred the prune.
    """
    try:
        async with pool.connection() as conn, conn.transaction():
            await conn.execute(Q["retention_repeatable_read"])
            cur = await conn.execute(Q["retention_lock_take"])
            if await cur.fetchone() is None:
                return None
            cur = await conn.execute(Q["retention_checkpoint_hold"], {"name": CHECKPOINT})
            checkpoint = await cur.fetchone()
            result = await _plan(conn, settings, now, checkpoint)
            if not result.planned:
                return result
            await _keep_pings(conn, [p.leaf for p in result.planned
                                     if p.leaf.parent == "events_pings"])
            result.snapshot_id = await _snapshot(conn, now, checkpoint)
            await conn.execute(Q["retention_lock_timeout"], {"timeout": lock_timeout})
            await _detach_and_drop(conn, [p.leaf for p in result.planned])
            [result.position] = await append_events(conn, [NewEvent(
                stream_type="log", stream_id=uuid.uuid4(), version=1, event_type="log.pruned",
                team_id=SYSTEM_TEAM, occurred_at=now,
                data={"kinds": result.summary(), "snapshot_id": result.snapshot_id,
                      "waiting": result.waiting},
                metadata={"actor": "maintenance"})])
    except (psycopg.errors.LockNotAvailable, psycopg.errors.SerializationFailure) as exc:
        log.warning("retention: prune deferred to the next pass: %s", str(exc).splitlines()[0])
        return None
    # After the commit: the DETACH's lock is gone, ANALYZE holds up no writer.
    async with pool.connection() as conn, conn.transaction():
        for table in sorted({p.leaf.parent for p in result.planned}):
            await conn.execute(_template(Q["retention_analyze"], table=_ident(table)))
    log.info("retention: pruned %d partitions (%s)", len(result.planned),
             ", ".join(f"{k}: {v['rows']} rows" for k, v in result.summary().items()))
    return result


async def _detach_and_drop(conn: psycopg.AsyncConnection, doomed: list[Leaf]) -> None:
    """Lock every parent and leaf of ``doomed`` first, then DETACH and DROP them.

    A lock not granted within the lock timeout releases all of them (a savepoint) and is tried
    again after :data:`LOCK_RETRY_SECONDS`, at most :data:`LOCK_ATTEMPTS` times: each wait
    holds the writers queued behind it for one lock timeout at most, and the prune never holds
    one table while waiting for another that a ping or a claim holds.

    Raises:
        psycopg.errors.LockNotAvailable: the last attempt timed out too.
    """
    tables = sql.SQL(", ").join(_ident(t) for t in dict.fromkeys(
        [*(leaf.parent for leaf in doomed), *(leaf.name for leaf in doomed)]))
    for attempt in range(LOCK_ATTEMPTS):
        try:
            async with conn.transaction():  # a savepoint
                await conn.execute(_template(Q["retention_lock_leaves"], tables=tables))
                for leaf in doomed:
                    await conn.execute(_template(Q["retention_detach"],
                                                 parent=_ident(leaf.parent),
                                                 leaf=_ident(leaf.name)))
                    await conn.execute(_template(Q["retention_drop"], leaf=_ident(leaf.name)))
            return
        except psycopg.errors.LockNotAvailable:
            if attempt == LOCK_ATTEMPTS - 1:
                cur = await conn.execute(Q["retention_lock_holders"], {
                    "parent": doomed[0].parent, "leaf": doomed[0].name})
                log.warning("retention: %s stays locked by %s", doomed[0].name,
                            [tuple(r.values()) for r in await cur.fetchall()])
                raise
            await asyncio.sleep(LOCK_RETRY_SECONDS)


async def _keep_pings(conn: psycopg.AsyncConnection, doomed: list[Leaf]) -> None:
    for leaf in doomed:
        await conn.execute(_template(Q["retention_pings_keep"], table=_ident(leaf.name)),
                           {"keep": KEEP_PINGS})
    if doomed:
        await conn.execute(Q["retention_pings_kept_trim"], {"keep": KEEP_PINGS})


async def _snapshot(conn: psycopg.AsyncConnection, now: datetime,
                    checkpoint: dict[str, Any] | None) -> int:
    cur = await conn.execute(Q["retention_snapshot_insert"], {
        "now": now, "tx_id": checkpoint["tx_id"] if checkpoint else "0",
        "position": checkpoint["global_position"] if checkpoint else 0,
        "applied": checkpoint["events_applied"] if checkpoint else 0,
        "tables": list(SNAPSHOT_TABLES)})
    snapshot_id = (await cur.fetchone())["id"]
    for table in SNAPSHOT_TABLES:
        await conn.execute(_template(Q["retention_snapshot_copy"],
                                     copy=snapshot_copy(snapshot_id, table),
                                     table=_ident(table)))
    cur = await conn.execute(Q["retention_snapshots_older"], {"id": snapshot_id})
    for old in await cur.fetchall():
        for table in old["tables"]:
            await conn.execute(_template(Q["retention_snapshot_drop_copy"],
                                         copy=snapshot_copy(old["id"], table)))
        await conn.execute(Q["retention_snapshot_delete"], {"id": old["id"]})
    return snapshot_id

