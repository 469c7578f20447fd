"""Fire-and-confirm (docs/ledger.md): a job with ``confirm: {"timeout_seconds": N}``
is not done when its endpoint answers 2xx, but when the endpoint (or the work it started)
pings the attempt's confirmation URL, ``<public url>/ping/run/<token>`` (``/fail`` or
``/<exit status>`` like a monitor ping). No ping within N seconds: the run fails with
``error_class: "unconfirmed"`` and alerts like any failed run.

The life of a confirmation:

1. **Issue.** Each claimed attempt of such a job gets a fresh random token
   (:func:`issue_tokens`, in the claim's transaction); only its SHA-256 is stored
   (``run_confirmations``), the token travels in memory to the executor, which sends it in
   ``X-Cronledger-Confirm-URL`` and records it as ``[redacted]``.
2. **Arm.** The recorder turns a 2xx into ``awaiting_confirmation`` (event
   ``run.awaiting_confirmation`` with ``confirm_deadline_at``) and starts the deadline
   (:func:`arm`). A confirmation that arrived before the 2xx was recorded is applied at once.
3. **Confirm.** :func:`confirm` (the ``/ping/run/...`` route, :mod:`api.ping`): the token is
   looked up by hash and used once; the run becomes ``succeeded`` or ``failed`` (error class
   ``reported_failure``), ``duration_ms`` the time from the send to the confirmation, and the
   event carries ``confirmation: {"at", "outcome", "exit_status"}``.
4. **Time out.** :class:`ConfirmTimeouts`, a background service on the injected clock, fails
   the runs whose deadline passed (state in PostgreSQL: a restart loses nothing). It also
   says, while they run, the runs going past their job's ``max_duration``
   (:mod:`core.runs.bounds`).

The token, like the lease, is a transient claim and not in the log; the outcome is.
"""

from __future__ import annotations

import logging
import secrets
import uuid
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Literal

from core.clock import Clock, Instant, read_now
from core.db import Connection, ConnectionPool, transaction
from core.events import NewEvent, append_events
from core.maintenance.queries import held_alerts
from core.notifications.job_alerts import FinalRun, record_job_outcomes
from core.notifications.outbox import DEFAULT_MAX_ATTEMPTS
from core.queries import Q
from core.runs import events as run_events
from core.runs.bounds import alert_overruns, next_overrun_at
from core.runs.dispatch import Dispatch
from core.runs.state import RunRow
from core.services.base import Service
from core.tokens import token_hash

log = logging.getLogger("cronledger.confirm")

HEADER = "X-Cronledger-Confirm-URL"
PATH = "/ping/run/"
TOKEN_PATTERN = "[A-Za-z0-9_-]{43}"  # secrets.token_urlsafe(32)
CHANNEL = "cronledger_confirm"  # the channel of run_confirm_notify
UNCONFIRMED = "unconfirmed"
REPORTED_FAILURE = "reported_failure"
BATCH = 100


def confirm_url(base_url: str, token: str) -> str:
    """The URL an attempt sends in :data:`HEADER`."""
    return f"{base_url.rstrip('/')}{PATH}{token}"


async def issue_tokens(conn: Connection,
                       dispatches: list[Dispatch]) -> list[Dispatch]:
    """Give each dispatch of a job asking for confirmation a fresh token (its hash stored in
    the caller's transaction, replacing the run's previous one); the others unchanged."""
    needy = [d for d in dispatches if d.confirm_timeout_seconds]
    if not needy:
        return dispatches
    tokens = {d.run_id: secrets.token_urlsafe(32) for d in needy}
    await conn.execute(Q["run_confirm_issue"], {
        "run_ids": [d.run_id for d in needy], "team_ids": [d.team_id for d in needy],
        "attempts": [d.attempt for d in needy],
        "hashes": [token_hash(tokens[d.run_id]) for d in needy],
        "timeouts": [d.confirm_timeout_seconds for d in needy]})
    return [replace(d, confirm_token=tokens[d.run_id]) if d.run_id in tokens else d
            for d in dispatches]


def deadline(now: datetime, timeout_seconds: int) -> datetime:
    """When a run put in ``awaiting_confirmation`` at ``now`` times out (UTC)."""
    return now + timedelta(seconds=timeout_seconds)


async def arm(conn: Connection, run_ids: list[uuid.UUID], now: datetime,
              max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> int:
    """Start the deadlines of runs just put in ``awaiting_confirmation`` (the recorder's
    transaction); apply the confirmations that came first. Returns how many were."""
    if not run_ids:
        return 0
    cur = await conn.execute(Q["run_confirm_arm"], {"run_ids": run_ids, "now": now})
    early = [row["run_id"] for row in await cur.fetchall() if row["confirmed"]]
    await conn.execute(Q["run_confirm_notify"])
    if early:
        cur = await conn.execute(Q["run_confirm_outcomes"], {"run_ids": early})
        await _finish(conn, {row["run_id"]: (row["outcome"], row["exit_status"])
                             for row in await cur.fetchall()}, now, max_attempts)
    return len(early)


def _final_fields(outcome: str, exit_status: int | None) -> tuple[str, str | None, str | None]:
    """``(status, error_class, error)`` of a run whose confirmation said ``outcome``."""
    if outcome == "succeeded":
        return "succeeded", None, None
    if outcome == UNCONFIRMED:
        return "failed", UNCONFIRMED, "the confirmation URL was not pinged before the timeout"
    said = f" (exit status {exit_status})" if exit_status is not None else ""
    return "failed", REPORTED_FAILURE, f"the confirmation reported a failure{said}"


def _recorded(row: RunRow, outcome: str, exit_status: int | None,
              now: datetime) -> NewEvent:
    """``run.succeeded`` or ``run.failed`` of a run ``run_confirm_finish`` just finished,
    with its ``confirmation``."""
    # An awaiting run has sent its attempt: the statement returns its start and duration.
    assert row.started_at is not None and row.duration_ms is not None
    status: Literal["succeeded", "failed"] = "succeeded" if row.status == "succeeded" \
        else "failed"
    event = run_events.attempt_recorded(
        status, row.id, row.team_id, row.version, now, job_id=row.job_id,
        scheduled_for=row.scheduled_for, trigger=row.trigger, attempt=row.attempt,
        started_at=row.started_at, duration_ms=row.duration_ms, lateness_ms=row.lateness_ms,
        response_status=row.response_status, error_class=row.error_class, error=row.error,
        finished_at=now, metadata={"actor": "confirm"})
    return replace(event, data={**event.data, "confirmation": {
        "at": row.confirmed_at, "outcome": outcome, "exit_status": exit_status}})


async def _finish(conn: Connection,
                  outcomes: dict[uuid.UUID, tuple[str, int | None]], now: datetime,
                  max_attempts: int) -> list[RunRow]:
    """Write the final state of awaiting runs (``outcomes``: run id -> (outcome, exit
    status)), append their ``run.succeeded`` / ``run.failed`` events and run the job alert
    rules, in the caller's transaction. Returns the rows written."""
    ids = list(outcomes)
    fields = [_final_fields(*outcomes[i]) for i in ids]
    cur = await conn.execute(Q["run_confirm_finish"], {
        "run_ids": ids, "statuses": [f[0] for f in fields],
        "error_classes": [f[1] for f in fields], "errors": [f[2] for f in fields], "now": now})
    rows = [RunRow.from_row(row) for row in await cur.fetchall()]
    await append_events(conn, [_recorded(row, *outcomes[row.id], now) for row in rows])
    finals = [FinalRun(job_id=row.job_id, team_id=row.team_id, run_id=row.id,
                       status=row.status, was_failing=row.was_failing,
                       scheduled_for=row.scheduled_for, attempts=row.attempt,
                       finished_at=now,
                       last_response={"status": row.response_status, "body": None,
                                      "error_class": row.error_class, "error": row.error})
              for row in rows if row.status == "failed" or row.was_failing]
    if finals:
        await record_job_outcomes(conn, finals, now, max_attempts, held_alerts)
    return rows


async def confirm(pool: ConnectionPool, token: str, *, failed: bool,
                  exit_status: int | None, now: datetime,
                  max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> str | None:
    """Apply a ping of a confirmation URL.

    Args:
        failed: ``/fail`` or a non-zero exit status.
        exit_status: the status given in the path, if any.

    Returns:
        The run's new status (``succeeded`` | ``failed``), ``running`` when the attempt's 2xx
        is not recorded yet (the confirmation is kept and applied then), or ``None``: no such
        token, or it was used already, or its run is over (a 404 for the caller).
    """
    outcome = "failed" if failed else "succeeded"
    async with transaction(pool) as conn:
        cur = await conn.execute(Q["run_confirm_lookup"], {"hash": token_hash(token)})
        found = await cur.fetchone()
        if found is None:
            return None
        run_id, status = found["run_id"], found["status"]  # the token's run, both locked
        if status not in ("running", "awaiting_confirmation"):
            return None
        await conn.execute(Q["run_confirm_record"], {
            "run_id": run_id, "now": now, "outcome": outcome, "exit_status": exit_status})
        if status == "running":
            return "running"
        await _finish(conn, {run_id: (outcome, exit_status)}, now, max_attempts)
        return "failed" if failed else "succeeded"


async def expire_due(pool: ConnectionPool, now: Instant, *, limit: int = BATCH,
                     max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> int:
    """Fail (``unconfirmed``) up to ``limit`` awaiting runs whose deadline is at or before
    ``now`` (UTC, or the clock read once connected); returns how many."""
    async with transaction(pool) as conn:
        now = read_now(now)
        cur = await conn.execute(Q["run_confirm_expire"], {"now": now, "limit": limit})
        ids = [row["run_id"] for row in await cur.fetchall()]
        if not ids:
            return 0
        rows = await _finish(conn, dict.fromkeys(ids, (UNCONFIRMED, None)), now, max_attempts)
    log.info("%d run(s) failed unconfirmed", len(rows))
    return len(rows)


class ConfirmTimeouts(Service):
    """The confirmation timeout service of one process (part of ``serve`` and ``worker``).

    Args:
        pool: database pool.
        dsn: for the LISTEN connection (``None``: no LISTEN, tests).
        clock: the injected clock.
        notify_max_attempts: delivery attempts of the alerts it queues.
    """

    name = "confirm"
    channel = CHANNEL

    def __init__(self, pool: ConnectionPool, dsn: str | None, clock: Clock, *,
                 notify_max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> None:
        super().__init__(clock, dsn)
        self.pool = pool
        self.max_attempts = notify_max_attempts

    async def run_once(self, now: datetime | None = None) -> int:
        """Expire until a batch comes back short, then say the runs going past their
        ``max_duration`` (:func:`core.runs.bounds.alert_overruns`); returns how many runs
        failed unconfirmed."""
        total = 0
        while not self.stopping.is_set():
            n = await expire_due(self.pool, now or self.clock, max_attempts=self.max_attempts)
            total += n
            if n < BATCH:
                break
        while not self.stopping.is_set():
            async with transaction(self.pool) as conn:
                n = await alert_overruns(conn, read_now(now or self.clock), limit=BATCH,
                                         hold=held_alerts, max_attempts=self.max_attempts)
            if n < BATCH:
                break
        return total

    async def next_deadline(self) -> datetime | None:
        """The earliest pending confirmation deadline or ``max_duration`` of a run still
        going (UTC), ``None`` when none."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(Q["run_confirm_next_deadline"])
            row = await cur.fetchone()
            overrun = await next_overrun_at(conn)
        deadlines = [at for at in (row["at"] if row else None, overrun) if at is not None]
        return min(deadlines) if deadlines else None
