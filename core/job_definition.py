"""A job's stored definition as one frozen value, :class:`JobDefinition`: what the job stream's
state (:class:`core.jobs.state.JobState`) and the claim's row of a due job
(:class:`core.runs.claim.ClaimedJob`) both are, so that its fields are listed once; and its two
JSON objects as frozen values, :class:`Request` and :class:`RetryPolicy`.

The objects are read as stored, not checked: a definition was validated when it was written
(core/jobs/definition.py), and what a row edited by hand holds is reported, not raised, by
:func:`core.stored.job_problem`, which reads their :meth:`~Request.to_json` (docs/operations.md,
"Poison items"). ``to_json`` gives back the object a definition's event carries, key for key:
the payloads of the log do not change with the types (core/jobs/state.py folds them).

It lives outside ``core/jobs/`` because ``core/runs/`` reads it and ``core/jobs/`` imports
``core/runs/`` (no two packages import each other: tests/unit/test_imports.py); it imports
nothing of cronledger.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """A job's request (docs/api.md): ``method`` (upper case), ``url``, ``headers`` (name to
    value) and ``body`` (``None``: none); ``${secrets.NAME}`` placeholders unresolved."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: str | None

    @classmethod
    def from_json(cls, value: Any) -> Request:
        """The request in a stored object (a definition's, an event's or a ``jobs`` row's);
        never raises: a key missing is ``None`` (``headers``: none), anything else is kept as
        it is for :func:`core.stored.request_problem` to judge."""
        data = _object(value)
        return cls(method=data.get("method"), url=data.get("url"),  # type: ignore[arg-type] # as stored
                   headers=data.get("headers") or {}, body=data.get("body"))

    def to_json(self) -> dict[str, Any]:
        """The object as a definition carries it."""
        return {"method": self.method, "url": self.url, "headers": self.headers,
                "body": self.body}


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """A job's retry policy (docs/api.md): ``attempts`` in all (the first included),
    ``backoff`` (``exponential``, ``linear`` or ``fixed``), ``delay_seconds`` and
    ``max_delay_seconds`` (seconds; :mod:`core.backoff` reads them)."""

    attempts: int
    backoff: str
    delay_seconds: float
    max_delay_seconds: float

    @classmethod
    def from_json(cls, value: Any) -> RetryPolicy:
        """The policy in a stored object; never raises (as :meth:`Request.from_json`)."""
        data = _object(value)
        return cls(attempts=data.get("attempts"),  # type: ignore[arg-type] # as stored
                   backoff=data.get("backoff"),  # type: ignore[arg-type]
                   delay_seconds=data.get("delay_seconds"),  # type: ignore[arg-type]
                   max_delay_seconds=data.get("max_delay_seconds"))  # type: ignore[arg-type]

    def to_json(self) -> dict[str, Any]:
        """The object as a definition carries it (a key a row edited by hand lacks stays
        out: :mod:`core.backoff` has a default for each)."""
        fields = {"attempts": self.attempts, "backoff": self.backoff,
                  "delay_seconds": self.delay_seconds,
                  "max_delay_seconds": self.max_delay_seconds}
        return {key: value for key, value in fields.items() if value is not None}


def with_objects(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` (a row's or a fold's, by name) with ``request`` and ``retry`` read into their
    frozen values, in place; returned."""
    fields["request"] = Request.from_json(fields["request"])
    fields["retry"] = RetryPolicy.from_json(fields["retry"])
    return fields


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
    request: Request
    timeout_seconds: float
    retry: RetryPolicy
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
