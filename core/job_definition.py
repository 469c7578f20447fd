"""A job's stored definition as one frozen value, :class:`JobDefinition`: what the job stream's
state (:class:`core.jobs.state.JobState`) and the claim's row of a due job
(:class:`core.runs.claim.ClaimedJob`) both are, so that its fields are listed once.

It lives outside ``core/jobs/`` because ``core/runs/`` reads it and ``core/jobs/`` imports
``core/runs/`` (no two packages import each other: tests/unit/test_imports.py); it imports
nothing of cronledger.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class JobDefinition:
    """The definition columns of a ``jobs`` row, as stored (checked when written; whether they
    still evaluate is :func:`core.stored.job_problem`'s question).

    They are the user-editable fields (``core/jobs/definition.py``, ``DEFINITION_FIELDS``)
    in their row form: ``confirm`` is kept as ``confirm_timeout_seconds`` (``None``: no
    confirmation, docs/ledger.md); and ``secret_names``, the ``${secrets.NAME}`` names the
    request uses (derived from it, so that claims know without parsing which jobs need
    secrets). ``timeout_seconds`` is in seconds; ``min_duration``, ``max_duration``,
    ``spread`` and ``realert_every`` (failures) as docs/api.md says.
    """

    name: str
    schedule: str
    timezone: str
    request: dict[str, Any]
    timeout_seconds: float
    retry: dict[str, Any]
    overlap: str
    catchup: str
    success_statuses: list[int] | None
    channels: list[uuid.UUID]
    alert_after_failures: int
    realert_every: int | None
    alert_on: list[str]
    depends_on: list[uuid.UUID]
    min_duration: int | None
    max_duration: int | None
    recover_after_successes: int
    spread: int | None
    tags: list[str]
    schedule_text: str | None
    confirm_timeout_seconds: int | None
    secret_names: list[str]
