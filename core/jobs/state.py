"""The job aggregate's state, folded from its event stream.

The ``jobs`` projection row is exactly :func:`fold` over the job's stream: the commands write
the folded state, and a test replays the stream and compares it with the row.

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

import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from core import streams
from core.jobs.definition import DEFAULTS, DEFINITION_FIELDS
from core.secrets import placeholder_names

STATUS_AFTER = {
    "job.paused": "paused",
    "job.resumed": "active",
    "job.completed": "completed",
    "job.deleted": "deleted",
}


def _instant(value: Any) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def evolve(state: dict[str, Any] | None, event: dict[str, Any]) -> dict[str, Any]:
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
    occurred_at = _instant(event["occurred_at"])
    if kind == "job.created":
        if state is not None:
            raise ValueError("job.created on an existing job")
        # Fields added after the first release default for events written before them.
        new = {key: data[key] if key in data else DEFAULTS[key] for key in DEFINITION_FIELDS}
        new.update(id=event["stream_id"], team_id=event["team_id"], status=data["status"],
                   anchor_at=_instant(data["anchor_at"]), created_at=occurred_at,
                   signing=bool(data.get("signing", False)), broken_at=None,
                   broken_reason=None)
    elif state is None:
        raise ValueError(f"{kind} before job.created")
    elif kind == "job.updated":
        new = {**state, **data["changes"]}
        if "anchor_at" in data["changes"]:
            new["anchor_at"] = _instant(data["changes"]["anchor_at"])
    elif kind in STATUS_AFTER:
        new = {**state, "status": STATUS_AFTER[kind]}
    elif kind == "job.broken":
        new = {**state, "broken_at": occurred_at, "broken_reason": data["reason"]}
    elif kind == "job.repaired":
        new = {**state, "broken_at": None, "broken_reason": None}
    else:
        raise ValueError(f"unknown job event {kind!r}")
    new.setdefault("broken_at", None)
    new.setdefault("broken_reason", None)
    new["tags"] = list(new.get("tags") or ())  # tags came with migration 0009
    new["secret_names"] = placeholder_names(new["request"])
    # The row keeps confirm.timeout_seconds as a column (reads rebuild the object).
    if "confirm" in new:
        new["confirm_timeout_seconds"] = (new.pop("confirm") or {}).get("timeout_seconds")
    new.setdefault("confirm_timeout_seconds", None)
    new["channels"] = [c if isinstance(c, uuid.UUID) else uuid.UUID(c)
                       for c in new["channels"] or ()]
    new["version"] = event["stream_version"]
    new["updated_at"] = occurred_at
    return new


def fold(events: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The state after all ``events`` of one job stream, in version order (``None`` if
    empty): :func:`core.streams.fold` with :func:`evolve`."""
    return streams.fold(evolve, events)
