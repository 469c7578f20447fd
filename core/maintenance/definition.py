"""Validation of a maintenance window definition (the body of ``POST /v1/maintenance``).

A window is one-off (``from``, ``to``: UTC instants, ``to`` after ``from``, at most
:data:`MAX_ONE_OFF_SECONDS` long) or recurring (``schedule`` in the job schedule grammar,
docs/schedules.md, evaluated in ``timezone``, each occurrence lasting ``duration_seconds``,
1 s to :data:`MAX_DURATION_SECONDS`). It covers ``jobs`` and ``monitors`` (ids of the team)
and ``tags`` (names); all three empty means the whole team. ``suppress`` is ``alerts`` (the
default) or ``runs``.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from core.durations import parse_duration
from core.errors import FieldErrors, nul_errors
from core.schedule import InvalidSchedule, parse_schedule
from core.schedule.zones import valid_zone
from core.tags import normalize_tags

SUPPRESS = ("alerts", "runs")
MAX_DURATION_SECONDS = 7 * 86400
MAX_ONE_OFF_SECONDS = 366 * 86400
MIN_SNOOZE_SECONDS = 60
MAX_SNOOZE_SECONDS = 30 * 86400
MAX_TARGETS = 100  # ids per list, tags
MAX_COMMENT = 500
MIN_YEAR, MAX_YEAR = 1970, 2399  # the schedule engine's range (core/schedule/model.py)
FIELDS = ("from", "to", "schedule", "timezone", "duration_seconds", "jobs", "monitors", "tags",
          "suppress", "comment")


def _instant(value: Any, field: str, errors: FieldErrors) -> datetime | None:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            errors.add(field, "must be an RFC 3339 instant")
            return None
    if not isinstance(value, datetime) or value.tzinfo is None:
        errors.add(field, "must be an RFC 3339 instant with an offset")
        return None
    if not MIN_YEAR < value.year < MAX_YEAR:
        errors.add(field, f"must be between the years {MIN_YEAR} and {MAX_YEAR}")
        return None
    return value.astimezone(UTC)


def _ids(value: Any, field: str, errors: FieldErrors) -> list[uuid.UUID]:
    if value is None:
        return []
    if not isinstance(value, list | tuple) or len(value) > MAX_TARGETS:
        errors.add(field, f"must be a list of at most {MAX_TARGETS} ids")
        return []
    out: list[uuid.UUID] = []
    for i, item in enumerate(value):
        try:
            out.append(item if isinstance(item, uuid.UUID) else uuid.UUID(str(item)))
        except ValueError:
            errors.add(f"{field}.{i}", "must be a UUID")
    return list(dict.fromkeys(out))


def _one_off(fields: dict[str, Any], errors: FieldErrors) -> dict[str, Any]:
    """``from`` and ``to`` of a one-off window (``to`` after ``from``, at most
    :data:`MAX_ONE_OFF_SECONDS` later); a recurring window's keys are refused."""
    start = _instant(fields.get("from"), "from", errors)
    end = _instant(fields.get("to"), "to", errors)
    if start and end:
        if end <= start:
            errors.add("to", "must be after from")
        elif end - start > timedelta(seconds=MAX_ONE_OFF_SECONDS):
            errors.add("to", f"a one-off window lasts at most {MAX_ONE_OFF_SECONDS} s")
    for name in ("duration_seconds", "timezone"):
        if fields.get(name) is not None:
            errors.add(name, "only for a recurring window (with schedule)")
    return {"from": start, "to": end}


def _recurring(fields: dict[str, Any], anchor: datetime, errors: FieldErrors
               ) -> dict[str, Any]:
    """``schedule``, ``timezone`` (default UTC) and ``duration_seconds`` of a recurring
    window: a schedule that evaluates in that zone, anchored at ``anchor``."""
    zone = fields.get("timezone") or "UTC"
    duration = parse_duration(fields.get("duration_seconds"))
    if duration is None or not 1 <= duration <= MAX_DURATION_SECONDS:
        errors.add("duration_seconds", f"is required: 1 to {MAX_DURATION_SECONDS} seconds")
    if not isinstance(zone, str) or not valid_zone(zone):
        errors.add("timezone", f"unknown time zone {zone!r}: use an IANA name")
    elif not isinstance(fields["schedule"], str) or not fields["schedule"].strip():
        errors.add("schedule", "must be a schedule (docs/schedules.md)")
    else:
        try:
            parse_schedule(fields["schedule"], zone, anchor=anchor)
        except InvalidSchedule as exc:
            errors.add("schedule", str(exc))
    return {"schedule": str(fields["schedule"]).strip(), "timezone": zone,
            "duration_seconds": duration}


def _scope(fields: dict[str, Any], errors: FieldErrors) -> dict[str, Any]:
    """What the window covers and does: ``jobs``, ``monitors``, ``tags``, ``suppress``
    (default ``alerts``) and its ``comment``."""
    out = {"jobs": _ids(fields.get("jobs"), "jobs", errors),
           "monitors": _ids(fields.get("monitors"), "monitors", errors),
           "tags": normalize_tags(fields.get("tags"), errors),  # the rule of core/tags.py
           "suppress": fields.get("suppress") or "alerts"}
    if out["suppress"] not in SUPPRESS:
        errors.add("suppress", f"must be one of {', '.join(SUPPRESS)}")
    comment = fields.get("comment")
    if comment is not None and (not isinstance(comment, str) or len(comment) > MAX_COMMENT):
        errors.add("comment", f"must be at most {MAX_COMMENT} characters")
    out["comment"] = comment
    return out


def normalize_window(fields: dict[str, Any], *, anchor: datetime) -> dict[str, Any]:
    """Validate a complete window definition; return it in canonical form (every key of
    :data:`FIELDS`, instants tz-aware UTC, ids as UUIDs, absent kind's keys ``None``).

    Args:
        anchor: the instant interval schedules are anchored to (the window's creation, UTC).

    Raises:
        InvalidInput: listing every problem with its field.
    """
    errors = FieldErrors()
    errors.items += nul_errors(fields)
    errors.raise_if_any()
    out: dict[str, Any] = dict.fromkeys(FIELDS)
    one_off = fields.get("from") is not None or fields.get("to") is not None
    recurring = fields.get("schedule") is not None
    if one_off == recurring:
        errors.add("from", "give either from and to (one-off) or schedule and "
                           "duration_seconds (recurring)")
    elif one_off:
        out.update(_one_off(fields, errors))
    else:
        out.update(_recurring(fields, anchor, errors))
    out.update(_scope(fields, errors))
    errors.raise_if_any()
    return out


def snooze_seconds(value: Any) -> int:
    """Seconds of a snooze's ``for`` (``"30m"``, ``"2h"``, ``"1d"`` or seconds), 60 s to
    :data:`MAX_SNOOZE_SECONDS`.

    Raises:
        InvalidInput: anything else.
    """
    seconds = parse_duration(value)
    if seconds is None or not MIN_SNOOZE_SECONDS <= seconds <= MAX_SNOOZE_SECONDS:
        errors = FieldErrors()
        errors.add("for", f"must be a duration like 30m, 2h or 1d, from 1 minute to "
                          f"{MAX_SNOOZE_SECONDS // 86400} days")
        errors.raise_if_any()
    assert seconds is not None
    return seconds
