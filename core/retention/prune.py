"""One prune (docs/operations.md, "Retention"): drop the daily leaves past their kind's
horizon, a whole partition at a time, never a row of the log.

Holding the maintenance lock row for the whole prune (on a connection of its own), in steps
that each commit on their own:

1. **the snapshot transaction** (REPEATABLE READ, holding the projector's checkpoint: the
   projector skips a locked checkpoint, so the read models stand still):

   a. plan: the leaves past their horizon (:func:`core.retention.partitions.past_horizon`); a
      leaf of ``events`` holding an event the projector has not applied yet waits for a later
      pass;
   b. delete the projection rows past their horizon (docs/operations.md, "Retention"): each
      job's finished ``runs`` rows whose events are past the runs horizon except its newest
      :data:`~core.retention.policy.KEEP_RUNS` (with their ``run_attempts`` and confirmations),
      and the hourly statistics buckets past the runs horizon;
   c. snapshot the projections (the inline ones and the read models) into schema
      ``cronledger_snapshots``, recording the transaction snapshot and the checkpoint
      (``retention_snapshots``): a rebuild starts from it and replays the kept tail
      (:mod:`core.rebuild`); the previous snapshot is dropped;

2. **each leaf in its own short transaction** (:func:`_drop_leaf`): a pings leaf first copies
   its pings that are among their monitor's newest 100 into ``monitor_pings_kept`` (not the
   log); then ``LOCK`` parent and leaf, ``DETACH``, ``DROP``, each attempt waiting at most
   ``lock_timeout`` (20 ms). A leaf whose locks are never granted stays (``deferred``; the next
   pass tries again). That is safe: the snapshot covers the events up to its checkpoint and a
   rebuild replays the tail after it, whether a leaf is gone or not; only the ping copies are
   tied to their leaf, so they share its transaction. Kept pings beyond the newest 100 are
   trimmed after;
3. the outbox's finished ``notifications`` past the deliveries horizon, in batches;
4. append ``log.pruned`` (stream ``log``, actor ``maintenance``) with, per kind, the partitions
   really dropped, the time range, the row counts and the first and last global positions,
   the leaves left (``waiting``, ``deferred``) and the projection rows deleted (``deleted``);

then ``VACUUM (ANALYZE)`` the projections it deleted rows from (their space reusable at once,
not when autovacuum comes by), ``ANALYZE`` the partitioned tables it dropped leaves of and
``VACUUM`` the system catalogs its DDL churned (where the role may).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from psycopg import sql

from core.config import Settings
from core.db import Connection, ConnectionPool, one_row
from core.events import NewEvent, append_events
from core.projections.projector import CHECKPOINT
from core.projections.projector import TABLES as READ_MODELS
from core.queries import Q
from core.retention.partitions import Leaf, day_start, leaves, past_horizon
from core.retention.policy import (
    KEEP_PINGS,
    KEEP_RUNS,
    NOTIFICATIONS_BATCH,
    horizon,
    is_event_table,
    kinds,
)

log = logging.getLogger("cronledger.retention")

# The projections a prune snapshots: the inline ones (their rows fold streams whose older
# events may be dropped) and the projector's read models.
INLINE = ("jobs", "due_jobs", "runs", "monitors")
SNAPSHOT_TABLES: tuple[str, ...] = (*INLINE, *READ_MODELS)
SNAPSHOT_SCHEMA = "cronledger_snapshots"
LOCK_TIMEOUT = "20ms"  # each attempt at a leaf's locks waits at most this long
LOCK_ATTEMPTS = 25  # per leaf
LOCK_RETRY_SECONDS = 0.1
NO_RUNS_DROPPED = datetime(1970, 1, 1, tzinfo=UTC)  # runs_before when no run event ever went
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
    """What a prune dropped and deleted (or, dry, would), and the leaves it left for later:
    ``waiting`` for the projector, ``deferred`` for their locks."""

    planned: list[Planned] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)  # planned, but its locks never granted
    deleted: dict[str, int] = field(default_factory=dict)  # projection table -> rows
    seconds: dict[str, float] = field(default_factory=dict)  # step -> wall time
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
    return sql.SQL(query).format(**identifiers)


def snapshot_copy(snapshot_id: int, table: str) -> sql.Identifier:
    """The copy of ``table`` in snapshot ``snapshot_id``: ``cronledger_snapshots.s<id>_<table>``."""
    return _ident(SNAPSHOT_SCHEMA, f"s{snapshot_id}_{table}")


async def _plan(conn: Connection, settings: Settings, now: datetime,
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
                stats = one_row(await cur.fetchone(), "retention_event_leaf_stats")
                if checkpoint is not None and not stats["covered"]:
                    result.waiting.append(leaf.name)
                    continue
                result.planned.append(Planned(leaf, kind.name, stats["events"],
                                              stats["first_position"], stats["last_position"]))
            else:
                cur = await conn.execute(_template(Q["retention_leaf_count"],
                                                   table=_ident(leaf.name)))
                rows: int = one_row(await cur.fetchone(), "retention_leaf_count")["rows"]
                result.planned.append(Planned(leaf, kind.name, rows))
    return result


async def _count(conn: Connection, settings: Settings, now: datetime,
                 result: PruneResult) -> None:
    """Fill ``result.deleted`` with what the deletions would remove (the dry run): the very
    statements of the prune, in the caller's transaction, which :func:`plan` rolls back (one
    rule, not a second copy of it for counting)."""
    await _delete_projection_rows(conn, _runs_before(settings, now, result), result)


async def _delete_projection_rows(conn: Connection, before: datetime,
                                  result: PruneResult) -> None:
    """Delete the finished runs rows and the hourly buckets past the runs horizon ``before``
    (UTC), in the caller's transaction; the counts go to ``result.deleted``."""
    cur = await conn.execute(Q["retention_runs_delete"], {"before": before, "keep": KEEP_RUNS})
    result.deleted.update(one_row(await cur.fetchone(), "retention_runs_delete"))
    cur = await conn.execute(Q["retention_hourly_delete"], {"before": before})
    result.deleted.update(one_row(await cur.fetchone(), "retention_hourly_delete"))


def _runs_before(settings: Settings, now: datetime, result: PruneResult) -> datetime:
    """The runs horizon for the rows deleted: UTC midnight ``retention_runs_days`` ago, or the
    start of the oldest leaf of ``events_runs`` left waiting for the projector, if earlier
    (a run with an event there keeps its row)."""
    before = horizon(settings.retention_runs_days, now)
    for name in result.waiting:
        if name.startswith("events_runs_p"):
            waiting = day_start(datetime.strptime(name[-8:], "%Y%m%d").date())
            before = min(before, waiting)
    return before


async def plan(pool: ConnectionPool, settings: Settings, now: datetime) -> PruneResult:
    """What a prune at ``now`` would drop and delete (``cronledger prune --dry-run``); changes
    nothing."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["projection_checkpoint_get"], {"name": CHECKPOINT})
        checkpoint = await cur.fetchone()
        result = await _plan(conn, settings, now, checkpoint)
        if result.planned:  # the rows tied to the runs horizon go with dropped partitions
            await _count(conn, settings, now, result)
        cur = await conn.execute(Q["retention_notifications_count"], {
            "before": horizon(settings.retention_deliveries_days, now)})
        result.deleted.update(one_row(await cur.fetchone(), "retention_notifications_count"))
        await conn.rollback()
    return result


async def prune(pool: ConnectionPool, settings: Settings, now: datetime, *,
                lock_timeout: str = LOCK_TIMEOUT) -> PruneResult | None:
    """Prune what is past its horizon at ``now`` (UTC), as described above.

    The maintenance lock row is held, on a connection of its own, for the whole prune (the
    snapshot transaction, each leaf's transaction, the deletions and ``log.pruned``).

    Args:
        lock_timeout: how long each attempt at a leaf's locks waits (a PostgreSQL interval).

    Returns:
        What was dropped and deleted (``planned`` empty: no partition was dropped; leaves whose
        locks were not granted are in ``deferred``), or ``None`` when another process holds the
        maintenance lock or a serialization conflict deferred the whole prune.
    """
    async with pool.connection() as holder, holder.transaction():
        cur = await holder.execute(Q["retention_lock_take"])
        if await cur.fetchone() is None:
            return None
        started = time.perf_counter()
        try:
            result = await _snapshot_transaction(pool, settings, now)
        except psycopg.errors.SerializationFailure as exc:
            log.warning("retention: prune deferred to the next pass: %s",
                        str(exc).splitlines()[0])
            return None
        result.seconds["snapshot"] = time.perf_counter() - started
        started = time.perf_counter()
        if result.planned:
            await _drop_leaves(pool, result, lock_timeout)
        result.seconds["drop"] = time.perf_counter() - started
        started = time.perf_counter()
        await _delete_notifications(pool, settings, now, result)
        result.seconds["outbox"] = time.perf_counter() - started
        if result.snapshot_id is not None or any(result.deleted.values()):
            async with pool.connection() as conn, conn.transaction():
                [result.position] = await append_events(conn, [NewEvent(
                    stream_type="log", stream_id=uuid.uuid4(), version=1,
                    event_type="log.pruned", team_id=SYSTEM_TEAM, occurred_at=now,
                    data={"kinds": result.summary(), "snapshot_id": result.snapshot_id,
                          "waiting": result.waiting, "deferred": result.deferred,
                          "deleted": result.deleted},
                    metadata={"actor": "maintenance"})])
    # After the commits: ANALYZE holds up no writer; VACUUM (not FULL: no lock a writer waits
    # for) makes the deleted rows' space reusable now, not when autovacuum comes by.
    started = time.perf_counter()
    deleted_from = {t for t, n in result.deleted.items() if n} - {"run_attempts"}
    analyzed = ({p.leaf.parent for p in result.planned} | {
        t for t, n in result.deleted.items() if n}) - deleted_from
    async with pool.connection() as conn:
        await conn.set_autocommit(True)
        try:
            for table in sorted(deleted_from):
                await conn.execute(_template(Q["retention_vacuum"], table=_ident(table)))
            for table in sorted(analyzed):
                await conn.execute(_template(Q["retention_analyze"], table=_ident(table)))
            if result.planned or result.snapshot_id is not None:
                await conn.execute(Q["retention_vacuum_catalog"])
        finally:
            await conn.set_autocommit(False)
    result.seconds["vacuum"] = time.perf_counter() - started
    if result.planned or any(result.deleted.values()):
        log.info("retention: pruned %d partitions (%s), deleted %s", len(result.planned),
                 ", ".join(f"{k}: {v['rows']} rows" for k, v in result.summary().items()),
                 result.deleted)
    return result


async def _snapshot_transaction(pool: ConnectionPool, settings: Settings, now: datetime
                                ) -> PruneResult:
    """Steps 1-3: plan, delete the projection rows past their horizon, snapshot; committed."""
    async with pool.connection() as conn, conn.transaction():
        await conn.execute(Q["retention_repeatable_read"])
        cur = await conn.execute(Q["retention_checkpoint_hold"], {"name": CHECKPOINT})
        checkpoint = await cur.fetchone()
        result = await _plan(conn, settings, now, checkpoint)
        if not result.planned:
            return result
        await _delete_projection_rows(conn, _runs_before(settings, now, result), result)
        result.snapshot_id = await _snapshot(conn, now, checkpoint, result)
    return result


async def _drop_leaves(pool: ConnectionPool, result: PruneResult, lock_timeout: str
                       ) -> None:
    """Step 4: each leaf in its own transaction, pings first (their newest copied in the same
    transaction), a day's ping bodies only once that day's pings leaf is gone; ``planned``
    keeps the leaves dropped, ``deferred`` gets the others."""
    order = {"events_pings": 0, "monitor_ping_bodies": 1}
    dropped: list[Planned] = []
    ping_days_kept = {datetime.strptime(name[-8:], "%Y%m%d").date()
                      for name in result.waiting if name.startswith("events_pings_p")}
    for p in sorted(result.planned, key=lambda p: (order.get(p.leaf.parent, 2), p.leaf.name)):
        if p.leaf.parent == "monitor_ping_bodies" and p.leaf.day in ping_days_kept:
            result.deferred.append(p.leaf.name)
            continue
        if await _drop_leaf(pool, p.leaf, lock_timeout):
            dropped.append(p)
        else:
            result.deferred.append(p.leaf.name)
            if p.leaf.parent == "events_pings":
                ping_days_kept.add(p.leaf.day)
    result.planned = dropped
    if any(p.leaf.parent == "events_pings" for p in dropped):
        async with pool.connection() as conn, conn.transaction():
            await conn.execute(Q["retention_pings_kept_trim"], {"keep": KEEP_PINGS})


async def _drop_leaf(pool: ConnectionPool, leaf: Leaf, lock_timeout: str) -> bool:
    """DETACH and DROP ``leaf`` in one short transaction (a pings leaf: after copying its pings
    that are among their monitor's newest 100 into ``monitor_pings_kept``, in the same
    transaction, so a leaf that stays keeps its pings once).

    The parent and the leaf are locked in one ``LOCK TABLE`` first; a lock not granted within
    ``lock_timeout`` releases both (a savepoint) and is tried again after
    :data:`LOCK_RETRY_SECONDS`, at most :data:`LOCK_ATTEMPTS` times: each wait holds the
    writers queued behind it for one lock timeout at most, and the prune never holds one table
    while waiting for another that a ping or a claim holds.

    Returns:
        Whether the leaf was dropped (``False``: its locks were never granted; it stays, and
        the next pass tries again).
    """
    async with pool.connection() as conn, conn.transaction():
        await conn.execute(Q["retention_lock_timeout"], {"timeout": lock_timeout})
        if leaf.parent == "events_pings":
            await conn.execute(_template(Q["retention_pings_keep"], table=_ident(leaf.name)),
                               {"keep": KEEP_PINGS})
        for attempt in range(LOCK_ATTEMPTS):
            try:
                async with conn.transaction():  # a savepoint
                    await conn.execute(_template(Q["retention_lock_leaves"],
                                                 parent=_ident(leaf.parent),
                                                 leaf=_ident(leaf.name)))
                    await conn.execute(_template(Q["retention_detach"],
                                                 parent=_ident(leaf.parent),
                                                 leaf=_ident(leaf.name)))
                    await conn.execute(_template(Q["retention_drop"], leaf=_ident(leaf.name)))
                return True
            except psycopg.errors.LockNotAvailable:
                if attempt < LOCK_ATTEMPTS - 1:
                    await asyncio.sleep(LOCK_RETRY_SECONDS)
        cur = await conn.execute(Q["retention_lock_holders"], {"parent": leaf.parent,
                                                               "leaf": leaf.name})
        log.warning("retention: %s stays, locked by %s", leaf.name,
                    [tuple(r.values()) for r in await cur.fetchall()])
        raise psycopg.Rollback  # the pings copied go too; the transaction block swallows it
    return False


async def _delete_notifications(pool: ConnectionPool, settings: Settings, now: datetime,
                                result: PruneResult) -> None:
    """The outbox's finished rows past the deliveries horizon, a batch per transaction; the
    dashboard's sign-in links expired a day ago."""
    before, total = horizon(settings.retention_deliveries_days, now), 0
    while True:
        async with pool.connection() as conn, conn.transaction():
            cur = await conn.execute(Q["retention_notifications_delete"], {
                "before": before, "batch": NOTIFICATIONS_BATCH})
            total += cur.rowcount
        if cur.rowcount < NOTIFICATIONS_BATCH:
            break
    result.deleted["notifications"] = total
    async with pool.connection() as conn, conn.transaction():
        cur = await conn.execute(Q["retention_signin_tokens_delete"], {
            "before": now - timedelta(days=1)})
        result.deleted["ui_signin_tokens"] = cur.rowcount


async def _snapshot(conn: Connection, now: datetime,
                    checkpoint: dict[str, Any] | None, result: PruneResult) -> int:
    """Copy the projections; of ``runs`` only the rows created before the end of the newest
    leaf of ``events_runs`` dropped so far or in this prune (the others' events are all in
    the log, and a rebuild replays them). Drops the previous snapshot."""
    cur = await conn.execute(Q["retention_runs_dropped_before"], {"team_id": SYSTEM_TEAM})
    dropped = one_row(await cur.fetchone(), "retention_runs_dropped_before")
    runs_before = max([dropped["before"] or NO_RUNS_DROPPED, *(
        p.leaf.end for p in result.planned if p.leaf.parent == "events_runs")])
    cur = await conn.execute(Q["retention_snapshot_insert"], {
        "now": now, "tx_id": checkpoint["tx_id"] if checkpoint else "0",
        "position": checkpoint["global_position"] if checkpoint else 0,
        "applied": checkpoint["events_applied"] if checkpoint else 0,
        "tables": list(SNAPSHOT_TABLES), "runs_before": runs_before})
    snapshot_id: int = one_row(await cur.fetchone(),
                               "retention_snapshot_insert")["id"]  # retention_snapshots.id: bigint
    for table in SNAPSHOT_TABLES:
        if table == "runs":
            await conn.execute(_template(Q["retention_snapshot_copy_runs"],
                                         copy=snapshot_copy(snapshot_id, table)),
                               {"before": runs_before})
            continue
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

