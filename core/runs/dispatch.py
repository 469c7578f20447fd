"""What the claim hands the executor and the executor hands the recorder (docs/architecture.md,
"A run").

:class:`Dispatch` is one claimed attempt of a run (built by :mod:`core.runs.claim`),
:class:`Prepared` the same attempt built ahead of its slot
(:meth:`core.runs.executor.Executor.prepare`), :class:`AttemptResult` what happened when it was sent
(recorded by :mod:`core.runs.recorder`), :class:`Refused` why an attempt was not sent. Times
are tz-aware UTC.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from core.crypto import Sealed
from core.http.exchange import Built
from core.job_definition import Request, RetryPolicy

# Failures that another attempt cannot fix without a configuration change: not retried.
# ``invalid_request``: the stored request could not be built (core/runs/worker.py, Worker._prepare).
FINAL_ERROR_CLASSES = ("secret", "blocked", "invalid_request")


@dataclass(frozen=True)
class Dispatch:
    """One claimed attempt of a run, ready to send.

    Attributes:
        run_id: the run; also the ``Idempotency-Key``.
        scheduled_for: the slot (UTC): the run's identity.
        attempt: 1-based attempt number.
        lease_token: proves this worker still owns the run when recording.
        request: the job's request (placeholders unresolved).
        timeout_seconds: bound on the whole attempt.
        retry: the job's retry policy.
        success_statuses: accepted statuses, or ``None`` for any 2xx.
        secret_names: the ``${secrets.NAME}`` names the request uses.
        signing: the job has a signing secret.
        secrets: sealed values of ``secret_names`` found at claim time (missing names absent).
        signing_key: the sealed signing secret, when ``signing``.
        due_at: when this attempt became due (slot, retry time or lease expiry; UTC); the
            attempt's own lateness is measured from it. ``None`` means ``scheduled_for``.
        confirm_timeout_seconds: the job's ``confirm.timeout_seconds`` (``None``: a 2xx is the
            outcome; docs/ledger.md).
        confirm_token: the attempt's one-time confirmation token (in memory only; its hash is
            in ``run_confirmations``), set by :func:`core.runs.confirm.issue_tokens`.
        min_duration: the job's ``min_duration`` in seconds (``None``: no bound): a successful
            attempt shorter than it is a failure (:func:`core.runs.bounds.too_short`).
        lease_expires_at: when the lease taken by the claim ends (UTC; the claim's instant
            plus the timeout and the lease margin): an attempt that could not finish before
            it is not sent (:meth:`lease_covers`). ``None``: not known (tests).
        fire_at: when the slot fires, the slot plus the job's spread offset
            (core/schedule/spread.py); ``None``: at the slot. Never sent before it
            (:attr:`fires_at`); the run's lateness is measured from it.
    """

    run_id: uuid.UUID
    job_id: uuid.UUID
    team_id: uuid.UUID
    scheduled_for: datetime
    trigger: str
    attempt: int
    max_attempts: int
    lease_token: uuid.UUID
    version: int
    request: Request
    timeout_seconds: float
    retry: RetryPolicy
    success_statuses: tuple[int, ...] | None = None
    secret_names: tuple[str, ...] = ()
    signing: bool = False
    secrets: Mapping[str, Sealed] = field(default_factory=dict, repr=False)
    signing_key: Sealed | None = field(default=None, repr=False)
    due_at: datetime | None = None
    confirm_timeout_seconds: int | None = None
    confirm_token: str | None = field(default=None, repr=False)
    lease_expires_at: datetime | None = None
    min_duration: int | None = None
    fire_at: datetime | None = None

    @property
    def fires_at(self) -> datetime:
        """When the attempt may be sent at the earliest and the run's lateness starts: the
        fire time (UTC; the slot when the job has no spread)."""
        return self.fire_at or self.scheduled_for

    def lease_covers(self, now: datetime) -> bool:
        """Whether the lease still covers a whole attempt started at ``now`` (UTC): sent
        later, the exchange could outlive the lease while another worker sends the run again
        (a worker frozen past its lease, docs/operations.md, "High availability")."""
        if self.lease_expires_at is None:
            return True
        return now + timedelta(seconds=self.timeout_seconds) < self.lease_expires_at


@dataclass
class AttemptResult:
    """What happened to one attempt. Times are UTC; ``duration_ms`` is wall time of the attempt.

    ``request`` is the request as recorded (placeholders kept, credentials redacted).
    """

    dispatch: Dispatch
    started_at: datetime
    finished_at: datetime
    duration_ms: int
    request: dict[str, Any]
    response_status: int | None = None
    response_headers: dict[str, str] | None = None
    response_body: bytes | None = None
    truncated: bool = False
    error_class: str | None = None
    error: str | None = None
    retry_after: str | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.error_class is None

    @property
    def final(self) -> bool:
        """A failure that retrying cannot fix (see :data:`FINAL_ERROR_CLASSES`)."""
        return self.error_class in FINAL_ERROR_CLASSES

    @property
    def lateness_ms(self) -> int:
        """Start of this attempt minus the fire time (the slot plus the job's spread offset),
        in milliseconds (never negative): the run's lateness when this is its first recorded
        attempt."""
        late = (self.started_at - self.dispatch.fires_at) / timedelta(milliseconds=1)
        return max(0, round(late))

    @property
    def attempt_lateness_ms(self) -> int:
        """Start of this attempt minus the instant it became due, in milliseconds (>= 0)."""
        due = self.dispatch.due_at or self.dispatch.fires_at
        return max(0, round((self.started_at - due) / timedelta(milliseconds=1)))


class Refused(Exception):
    """The attempt was not sent; ``error_class`` says why (``secret``, ``blocked``)."""

    def __init__(self, error_class: str, message: str) -> None:
        super().__init__(message)
        self.error_class = error_class


@dataclass
class Prepared:
    """An attempt built ahead of its slot by :meth:`Executor.prepare`.

    Attributes:
        dispatch: the attempt.
        recorded: the request as it will be recorded (placeholders kept, credentials redacted).
        url: the URL to send, secrets resolved.
        headers: the headers to send, secrets resolved (the signature is added at send time).
        content: the body bytes, or ``None``.
        refused: set when the attempt must not be sent (a secret is missing or undecryptable);
            :meth:`Executor.transmit` records it as a failure without sending anything.
        secret_values: the opened ``${secrets.NAME}`` values, scrubbed from what is recorded.
        signing_key: the opened signing secret (the signature needs the send time).
        built: the request built ahead for the ``connection`` send path
            (:meth:`core.http.exchange.ConnectionPath.build`), or ``None`` (sent on the
            session path).
    """

    dispatch: Dispatch
    recorded: dict[str, Any]
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    content: bytes | None = field(default=None, repr=False)
    refused: Refused | None = None
    secret_values: dict[str, str] = field(default_factory=dict, repr=False)
    signing_key: bytes | None = field(default=None, repr=False)
    built: Built | None = field(default=None, repr=False)
