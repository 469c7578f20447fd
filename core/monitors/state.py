"""The monitor aggregate's state, folded from its event stream.

The ``monitors`` projection row is :func:`fold` over the monitor's stream (a frozen
:class:`MonitorState`), plus the derived ``next_expected_at`` and ``alert_at``
(:func:`core.monitors.rules.timing`). The rules themselves
(what a ping does, what time does) are in :mod:`core.monitors.rules`; this module only folds the
events they produced. Commands write the folded state; the ping statement and the checker write
the same fields in SQL, and a test replays the stream and compares it with the row.

Event types and payloads:
    ``monitor.created``        ``{definition fields… (channels, realert_every since 0005),
                               "period_seconds", "status": "new",
                               "ping_token_hash": hex}``
    ``monitor.updated``        ``{"changes": {field: new value, …}}``
    ``monitor.paused``, ``monitor.resumed``, ``monitor.deleted``   ``{}``
    ``monitor.token_rotated``  ``{"ping_token_hash": hex}``
    ``monitor.pinged``         ``{"kind": success|start|fail|log|ignored, "method", "rid",
                               "exit_status", "body_size", "remote_addr", "user_agent",
                               "duration_ms", "requested"}`` (``requested`` since 0023:
                               the kind the URL asked for, before keywords or
                               ``ignored``) (its body, if any, is in
                               ``monitor_ping_bodies`` at the event's stream version)
    ``monitor.up``             ``{"previous_status", "reason": "ping"|"on_time"}``
    ``monitor.late``           ``{"previous_status", "expected_at", "deadline"}``
    ``monitor.down``           ``{"previous_status", "reason": "fail"|"too_short"|"overdue"|
                               "start_timeout"|"too_long", …}`` (core/monitors/rules.py)
    ``monitor.broken``         ``{"reason"}``: the checker could not evaluate it (its stored
                               schedule no longer evaluates, or deciding it raised); sets
                               ``broken_at``/``broken_reason``; not checked until repaired
    ``monitor.repaired``       ``{"previous_reason"}``: a PATCH or resume made it evaluate
                               again; clears them (docs/api.md)
"""

from __future__ import annotations

import dataclasses
import operator
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core import streams
from core.coerce import instant, uuid_of
from core.monitors.definition import DEFAULTS, DEFINITION_FIELDS, KEYWORD_FIELDS, TOLERANCE_FIELDS
from core.monitors.rules import ping_fields
from core.rows import field_values

STATUS_AFTER = {
    "monitor.up": "up",
    "monitor.late": "late",
    "monitor.down": "down",
    "monitor.paused": "paused",
    "monitor.resumed": "new",
    "monitor.deleted": "deleted",
}
_CLEARS_START = ("monitor.paused", "monitor.resumed", "monitor.deleted")


@dataclass(frozen=True, slots=True, kw_only=True)
class MonitorState:
    """A monitor as its stream leaves it: the columns of its ``monitors`` row.

    Built by :func:`evolve` (the fold) or :meth:`from_row` (a locked ``monitors`` row).
    Instants are UTC; ``grace_seconds``, ``min_duration``, ``max_duration``,
    ``realert_every`` and ``period_seconds`` (``None``: a cron schedule) in seconds;
    ``alert_after_failures`` and ``recover_after_successes`` counts (the failure tolerance).
    ``next_expected_at`` and ``alert_at`` are not folded: they are derived at an instant
    (:func:`core.monitors.rules.timing`), ``None`` until then.
    """

    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    schedule: str
    timezone: str
    period_seconds: float | None
    grace_seconds: int
    methods: str
    manual_resume: bool
    channels: list[uuid.UUID]
    realert_every: int | None
    slug: str | None
    tags: list[str]
    schedule_text: str | None
    min_duration: int | None
    max_duration: int | None
    start_keywords: list[str]
    success_keywords: list[str]
    failure_keywords: list[str]
    alert_after_failures: int
    recover_after_successes: int
    depends_on: list[uuid.UUID]
    ping_token_hash: bytes | None
    status: str
    last_ping_at: datetime | None
    last_start_at: datetime | None
    last_start_rid: uuid.UUID | None
    last_duration_ms: int | None
    created_at: datetime
    updated_at: datetime
    broken_at: datetime | None
    broken_reason: str | None
    version: int
    next_expected_at: datetime | None = None
    alert_at: datetime | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> MonitorState:
        """The state in a ``monitors`` row (``monitor_lock``; extra columns are ignored)."""
        return cls(**field_values(cls, row, present_only=True))

    def definition(self) -> dict[str, Any]:
        """The user-editable fields (``DEFINITION_FIELDS``), as a definition dict."""
        return {key: getattr(self, key) for key in DEFINITION_FIELDS}

    def as_row(self) -> dict[str, Any]:
        """The ``monitors`` row's columns (the fields, by name): the parameters of
        ``monitor_upsert``."""
        return {f: getattr(self, f) for f in _FIELDS}

    def replaced(self, **changes: Any) -> MonitorState:
        """``dataclasses.replace(self, **changes)``, the same state, without its generic
        per-field ``__init__`` (the fold and the replay call it once or twice per ping; a
        tenth of the time, docs/benchmarks.md, *Advice*). Every field is copied by its slot,
        then ``changes`` set by name.

        Raises:
            TypeError: a name in ``changes`` that is not a field (as ``replace`` does).
        """
        if not changes.keys() <= _FIELD_SET:
            unknown = sorted(changes.keys() - _FIELD_SET)
            raise TypeError(f"MonitorState has no field {unknown[0]!r}")
        new: MonitorState = object.__new__(MonitorState)
        for put, value in zip(_PUTS, _VALUES(self), strict=True):
            put(new, value)
        for name, value in changes.items():
            _PUT_OF[name](new, value)
        return new


_FIELDS = tuple(f.name for f in dataclasses.fields(MonitorState))
_FIELD_SET = frozenset(_FIELDS)
_PUT_OF = {name: getattr(MonitorState, name).__set__ for name in _FIELDS}  # by its slot
_PUTS = tuple(_PUT_OF[name] for name in _FIELDS)
_VALUES = operator.attrgetter(*_FIELDS)


def _normalized(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` of a state with the lists in the row's form, unknown keys left out."""
    fields.setdefault("broken_at", None)
    fields.setdefault("broken_reason", None)
    fields["channels"] = [c if isinstance(c, uuid.UUID) else uuid.UUID(c)
                          for c in fields.get("channels") or ()]
    fields["tags"] = list(fields.get("tags") or ())  # slug and tags came with migration 0009
    for key in KEYWORD_FIELDS:  # migration 0023
        fields[key] = list(fields.get(key) or ())
    for key in TOLERANCE_FIELDS:  # migration 0027
        if fields.get(key) is None:
            fields[key] = DEFAULTS[key]
    fields["depends_on"] = [p if isinstance(p, uuid.UUID) else uuid.UUID(p)  # 0031
                            for p in fields.get("depends_on") or ()]
    fields.setdefault("slug", None)
    return {k: v for k, v in fields.items() if k in _FIELDS}


def evolve(state: MonitorState | None, event: Mapping[str, Any]) -> MonitorState:
    """Apply one event (a row of ``events`` or an equivalent dict) to ``state``.

    Args:
        state: the state before the event, ``None`` before ``monitor.created``.
        event: needs ``event_type``, ``data``, ``stream_id``, ``team_id``, ``stream_version``
            and ``occurred_at``.

    Raises:
        ValueError: for an event that cannot apply (a stream not starting with
            ``monitor.created``, an unknown event type).
    """
    kind, data = event["event_type"], event["data"]
    at = instant(event["occurred_at"])
    if kind == "monitor.created":
        if state is not None:
            raise ValueError("monitor.created on an existing monitor")
        # channels and realert_every came later (migration 0005): older streams lack them
        new = {key: data.get(key) for key in (*DEFINITION_FIELDS, "period_seconds")}
        new.update(
            id=event["stream_id"], team_id=event["team_id"], status=data["status"],
            ping_token_hash=bytes.fromhex(data["ping_token_hash"]), last_ping_at=None,
            last_start_at=None, last_start_rid=None, last_duration_ms=None, created_at=at,
            broken_at=None, broken_reason=None)
    elif state is None:
        raise ValueError(f"{kind} before monitor.created")
    elif kind == "monitor.updated":
        new = {**state.as_row(), **data["changes"]}
    elif kind == "monitor.token_rotated":
        new = {**state.as_row(), "ping_token_hash": bytes.fromhex(data["ping_token_hash"])}
    elif kind == "monitor.pinged":
        return state.replaced(**ping_fields(state, data["kind"], uuid_of(data.get("rid")), at,
                                            data.get("duration_ms")),
                              version=event["stream_version"], updated_at=at)
    elif kind == "monitor.broken":
        new = {**state.as_row(), "broken_at": at, "broken_reason": data["reason"]}
    elif kind == "monitor.repaired":
        new = {**state.as_row(), "broken_at": None, "broken_reason": None}
    elif kind in STATUS_AFTER:
        new = {**state.as_row(), "status": STATUS_AFTER[kind]}
        if kind in _CLEARS_START:
            new.update(last_start_at=None, last_start_rid=None)
        if kind == "monitor.deleted":
            new["ping_token_hash"] = None
    else:
        raise ValueError(f"unknown monitor event {kind!r}")
    new["version"] = event["stream_version"]
    new["updated_at"] = at
    return MonitorState(**_normalized(new))


def fold(events: Iterable[Mapping[str, Any]]) -> MonitorState | None:
    """The state after all ``events`` of one monitor stream, in version order (``None`` if
    empty): :func:`core.streams.fold` with :func:`evolve`."""
    return streams.fold(evolve, events)
