"""Rebuild of the ``runs`` inline projection: each row is a fold over its run stream
(:func:`core.runs.state.evolve`, a frozen :class:`core.runs.state.RunState` per run).

Not derived from the log, and so carried over from the rows being replaced (see
:mod:`core.rebuild`): the lease of a running run (``lease_token``,
``lease_expires_at``, a transient claim) and ``run_attempts`` (each attempt's full request and
response, which the log does not hold).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.db import Connection
from core.projections.common import Skipped
from core.queries import Q
from core.reasons import reason_of
from core.runs.state import COLUMNS, RunState, evolve

TABLES = ("runs",)
FLUSH_EVERY = 5000


async def write(conn: Connection, runs: list[RunState]) -> None:
    """COPY ``runs`` into the ``runs`` table (:data:`core.runs.state.COLUMNS`)."""
    async with conn.cursor() as cur, cur.copy(Q["rebuild_runs_copy"]) as copy:
        for run in runs:
            await copy.write_row([getattr(run, c) for c in COLUMNS])


async def rebuild(conn: Connection, skipped: Skipped | None = None,
                  base: dict[Any, dict[str, Any]] | None = None,
                  snapshot: str | None = None, since: datetime | None = None) -> int:
    """Write ``runs`` from the log into the (emptied) table; returns the number of runs
    written (from ``base`` and from events).

    Finished runs receive no further events, so they are written as soon as they finish and
    only unfinished runs stay in memory. An event that cannot be folded (a poison payload) is
    left out and appended to ``skipped`` as ``(global_position, reason)``.

    After a prune (``snapshot``: its ``pg_snapshot`` text; ``base``: the prune snapshot's copy
    of ``runs``, the rows created before ``since``) the events replayed are those after the
    snapshot and those at or after ``since`` (UTC): a run of ``base`` resumes from its row
    (events up to its version are already in it), a run not in ``base`` is folded from its
    first event; a stream whose first event is gone and that has no row in ``base`` is a run
    the prune deleted (docs/operations.md, "Retention") and is left out.
    """
    open_runs: dict[Any, RunState] = {}
    finished: list[RunState] = []
    folded: dict[Any, int] = {}  # run -> version already in its row (from base)
    for run_id, row in (base or {}).items():
        folded[run_id] = row["version"]
        state = RunState.from_row(row)
        if state.finished:
            finished.append(state)
        else:
            open_runs[run_id] = state
    total = 0
    async with conn.cursor(name="cronledger_rebuild_runs") as cur:
        cur.itersize = 5000
        await cur.execute(Q["rebuild_run_events"], {"snapshot": snapshot, "since": since})
        async for event in cur:
            if event["stream_version"] <= folded.get(event["stream_id"], 0):
                continue  # already in the snapshot's row
            before = open_runs.pop(event["stream_id"], None)
            if before is None and snapshot is not None and event["stream_version"] != 1:
                continue  # a run the prune deleted (its start is gone)
            try:
                run = evolve(before, event)
            except Exception as exc:  # noqa: BLE001 - a poison event must not stop the rebuild
                if before is not None:
                    open_runs[event["stream_id"]] = before
                if skipped is not None:
                    skipped.append((event["global_position"], reason_of(exc)))
                continue
            if run.finished:
                finished.append(run)
            else:
                open_runs[run.id] = run
            if len(finished) >= FLUSH_EVERY:
                await write(conn, finished)
                total += len(finished)
                finished = []
    runs = finished + list(open_runs.values())
    await write(conn, runs)
    return total + len(runs)
