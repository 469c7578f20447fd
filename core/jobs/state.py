"""The job aggregate's state, folded from its event stream: a frozen :class:`JobState`.

The ``jobs`` projection row is exactly :func:`fold` over the job's stream
(:meth:`JobState.as_row`): the commands write the folded state, and a test replays the stream
and compares it with the row.

Event types and payloads:
    ``job.created``   ``{definition fields…, "status": "active"|"paused", "anchor_at",
                      "signing": bool}``
    ``job.updated``   ``{"changes": {field: new value, …}}``
                      (with ``anchor_at`` when the schedule changed; ``"signing": true`` each
                      time a signing secret is set or replaced, ``false`` when removed)

The signing secret itself is never in an event (it is stored encrypted in
``job_signing_secrets``). ``secret_names`` (the ``${secrets.NAME}`` names the request uses) is
derived from the request on every event, so claims know without parsing which jobs need secrets.
    ``job.paused``, ``job.resumed``, ``job.completed``, ``job.deleted``  ``{}``
    ``job.broken``    ``{"reason": str}``: the stored definition no longer evaluates (appended
                      by a worker, actor ``worker:<id>``); sets ``broken_at`` (the event's
                      ``occurred_at``) and ``broken_reason``; the job is not claimed while set
    ``job.repaired``  ``{"previous_reason": str}``: a PATCH or resume made it evaluate again;
                      clears ``broken_at`` and ``broken_reason`` (docs/api.md)
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core import streams
from core.coerce import instant
from core.events import to_json
from core.job_definition import JobDefinition, with_objects
from core.jobs.definition import DEFAULTS, DEFINITION_FIELDS
from core.rows import field_values
from core.secrets import placeholder_names

STATUS_AFTER = {
    "job.paused": "paused",
    "job.resumed": "active",
    "job.completed": "completed",
    "job.deleted": "deleted",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class JobState(JobDefinition):
    """A job as its stream leaves it: the columns of its ``jobs`` row, its definition
    (:class:`~core.job_definition.JobDefinition`) and the stream's own.

    Built by :func:`evolve` (the fold) or :meth:`from_row` (a locked ``jobs`` row); written
    back with :meth:`upsert_params`. Instants are UTC.
    """

    id: uuid.UUID
    team_id: uuid.UUID
    status: str
    anchor_at: datetime
    created_at: datetime
    updated_at: datetime
    signing: bool
    broken_at: datetime | None
    broken_reason: str | None
    version: int

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> JobState:
        """The state in a ``jobs`` row (``job_lock``; extra columns are ignored)."""
        return cls(**with_objects(field_values(cls, row)))

    @property
    def confirm(self) -> dict[str, Any] | None:
        """The definition's ``confirm`` object, rebuilt from its column."""
        seconds = self.confirm_timeout_seconds
        return None if seconds is None else {"timeout_seconds": seconds}

    def definition(self) -> dict[str, Any]:
        """The user-editable fields (``DEFINITION_FIELDS``), as a definition dict (``request``
        and ``retry`` as their JSON objects)."""
        return {**{key: getattr(self, key) for key in DEFINITION_FIELDS},
                "request": self.request.to_json(), "retry": self.retry.to_json()}

    def as_row(self) -> dict[str, Any]:
        """The ``jobs`` row's columns (the fields, by name; ``request`` and ``retry`` as
        their JSON objects, as the events carry them)."""
        return {**{f: getattr(self, f) for f in _FIELDS}, "request": self.request.to_json(),
                "retry": self.retry.to_json()}

    def upsert_params(self) -> dict[str, Any]:
        """The parameters of ``job_upsert`` (core/sql/jobs.sql)."""
        row = self.as_row()
        return {**row, "request": to_json(row["request"]), "retry": to_json(row["retry"])}


_FIELDS = tuple(f.name for f in dataclasses.fields(JobState))


def _derived(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` (of a state) with what the row derives from the definition."""
    if "confirm" in fields:  # the row keeps confirm.timeout_seconds as a column
        fields["confirm_timeout_seconds"] = (fields.pop("confirm") or {}).get("timeout_seconds")
    fields["tags"] = list(fields.get("tags") or ())  # tags came with migration 0009
    fields["alert_on"] = list(fields.get("alert_on") or ())  # and alert_on with 0030
    fields["depends_on"] = [p if isinstance(p, uuid.UUID) else uuid.UUID(p)  # 0031
                            for p in fields.get("depends_on") or ()]
    fields.setdefault("min_duration", None)  # run-time bounds with 0033
    fields.setdefault("max_duration", None)
    if fields.get("recover_after_successes") is None:  # with 0034
        fields["recover_after_successes"] = 1
    fields.setdefault("spread", None)  # with 0038
    fields["secret_names"] = placeholder_names(fields["request"])
    fields["channels"] = [c if isinstance(c, uuid.UUID) else uuid.UUID(c)
                          for c in fields["channels"] or ()]
    return with_objects({k: v for k, v in fields.items() if k in _FIELDS})


def evolve(state: JobState | None, event: Mapping[str, Any]) -> JobState:
    """Apply one event (a row of ``events`` or an equivalent dict) to ``state``.

    Args:
        state: the state before the event, ``None`` before ``job.created``.
        event: needs ``event_type``, ``data``, ``stream_id``, ``team_id``, ``stream_version``
            and ``occurred_at``.

    Raises:
        ValueError: for an event that cannot apply (a stream not starting with ``job.created``,
            an unknown event type).
    """
    kind, data = event["event_type"], event["data"]
    occurred_at = instant(event["occurred_at"])
    if kind == "job.created":
        if state is not None:
            raise ValueError("job.created on an existing job")
        # Fields added after the first release default for events written before them.
        new = {key: data[key] if key in data else DEFAULTS[key] for key in DEFINITION_FIELDS}
        new.update(id=event["stream_id"], team_id=event["team_id"], status=data["status"],
                   anchor_at=instant(data["anchor_at"]), created_at=occurred_at,
                   signing=bool(data.get("signing", False)), broken_at=None,
                   broken_reason=None)
    elif state is None:
        raise ValueError(f"{kind} before job.created")
    elif kind == "job.updated":
        new = {**state.as_row(), **data["changes"]}
        if "anchor_at" in data["changes"]:
            new["anchor_at"] = instant(data["changes"]["anchor_at"])
    elif kind in STATUS_AFTER:
        new = {**state.as_row(), "status": STATUS_AFTER[kind]}
    elif kind == "job.broken":
        new = {**state.as_row(), "broken_at": occurred_at, "broken_reason": data["reason"]}
    elif kind == "job.repaired":
        new = {**state.as_row(), "broken_at": None, "broken_reason": None}
    else:
        raise ValueError(f"unknown job event {kind!r}")
    new.setdefault("confirm_timeout_seconds", None)
    new["version"] = event["stream_version"]
    new["updated_at"] = occurred_at
    return JobState(**_derived(new))


def fold(events: Iterable[Mapping[str, Any]]) -> JobState | None:
    """The state after all ``events`` of one job stream, in version order (``None`` if
    empty): :func:`core.streams.fold` with :func:`evolve`."""
    return streams.fold(evolve, events)
