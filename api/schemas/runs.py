"""Bodies of a job's runs (``/v1/jobs/{id}/runs``, ``/v1/runs/{id}``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from msgspec import Struct

from api.schemas.common import page_of


class Run(Struct):
    id: uuid.UUID
    job_id: uuid.UUID
    scheduled_for: datetime
    trigger: str
    status: str
    attempt: int
    max_attempts: int
    available_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    lateness_ms: int | None
    duration_ms: int | None
    response_status: int | None
    error_class: str | None
    error: str | None
    reason: str | None
    created_at: datetime
    # Fire-and-confirm (docs/ledger.md); null for jobs without ``confirm``.
    # ``confirmation``: succeeded | failed | unconfirmed once decided.
    confirm_deadline_at: datetime | None = None
    confirmed_at: datetime | None = None
    confirmation: str | None = None
    confirm_exit_status: int | None = None


class Attempt(Struct):
    """One HTTP attempt: the request as recorded (secrets as placeholders), the response
    (``status``, ``headers``, ``body``, ``body_encoding`` utf-8|base64, ``truncated``) or
    ``None`` when none arrived, and the error class and message of a failure."""

    attempt: int
    started_at: datetime
    finished_at: datetime
    duration_ms: int
    lateness_ms: int | None
    worker_id: str | None
    request: dict[str, Any]
    response: dict[str, Any] | None
    error_class: str | None
    error: str | None


class RunDetail(Run):
    attempts: list[Attempt] = []


RunPage = page_of(Run)
