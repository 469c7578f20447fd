"""Validation and normalisation of a monitor definition (the user-editable part of a monitor).

A definition is a plain dict with the fields of ``POST /v1/monitors``; :func:`normalize_definition`
fills defaults, checks every rule and returns the canonical form that events carry.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from core.alerting import normalize_channels, normalize_realert
from core.errors import FieldErrors, nul_errors
from core.monitors.slugs import slug_problem
from core.schedule import InvalidSchedule, Schedule, parse_schedule, schedule_text
from core.schedule.zones import load_zone
from core.tags import normalize_tags

METHODS = ("any", "post")
MAX_NAME = 200
MAX_GRACE_SECONDS = 366 * 86400
DEFAULT_GRACE_SECONDS = 300
DEFAULTS: dict[str, Any] = {
    "timezone": "UTC",
    "grace_seconds": DEFAULT_GRACE_SECONDS,
    "methods": "any",
    "manual_resume": False,
    "channels": (),
    "realert_every": None,
    "slug": None,
    "tags": (),
    "schedule_text": None,  # the words the schedule was written in (core/schedule/words.py)
}
DEFINITION_FIELDS = ("name", "schedule", "timezone", "grace_seconds", "methods", "manual_resume",
                     "channels", "realert_every", "slug", "tags", "schedule_text")
ONE_SHOT = "a monitor needs a repeating schedule: a period such as 1h or @every 10m, or cron"


def monitor_schedule(expression: str, timezone: str, anchor: datetime,
                     now: datetime | None = None) -> Schedule:
    """Parse a monitor's schedule: a period (``1h``, ``@every 90s``) or cron.

    Periods are measured from the last ping, so the anchor only matters to the engine's API.

    Raises:
        InvalidSchedule: malformed, a one-shot ``@at``, or an unknown zone.
    """
    schedule = parse_schedule(expression, timezone, anchor=anchor, now=now)
    if schedule.kind == "at":
        raise InvalidSchedule(ONE_SHOT)
    return schedule


@functools.lru_cache(maxsize=65536)
def cached_schedule(expression: str, timezone: str, anchor: datetime) -> Schedule:
    """:func:`monitor_schedule` of a stored (already validated) schedule, parsed once."""
    return monitor_schedule(expression, timezone, anchor)


def _check_zone(name: Any) -> str | None:
    try:
        load_zone(name)
    except InvalidSchedule as exc:
        return f"{exc}: use an IANA name such as Europe/Paris"
    return None


def normalize_definition(fields: dict[str, Any], *, now: datetime) -> dict[str, Any]:
    """Validate a complete monitor definition and return it in canonical form.

    Args:
        fields: ``name``, ``schedule`` and optionally ``timezone`` (IANA, default UTC),
            ``grace_seconds`` (1 s to 366 days, default 300), ``methods`` (``any`` | ``post``,
            default ``any``), ``manual_resume`` (default false), ``channels`` (channel ids to
            notify, at most 20; their team is checked by the command) and ``realert_every``
            (seconds or ``"1h"``-style, 60 s to 30 days, ``None``: no re-alerts; the rules of
            jobs' fields of the same names), ``slug`` (``[a-z0-9_-]``, 1 to 100 characters,
            ``None``: none; the command derives one from the name at creation,
            :mod:`core.monitors.slugs`) and ``tags`` (:mod:`core.tags`).
        now: the current instant (UTC).

    Returns:
        Every definition field (``channels`` as UUIDs, ``realert_every`` in seconds or
        ``None``, ``schedule`` canonical and ``schedule_text`` the words it was written in,
        or ``None``: :func:`core.schedule.schedule_text`), plus ``period_seconds`` (the
        period of an interval schedule, else ``None``).

    Raises:
        InvalidInput: listing every problem with its field path.
    """
    errors = FieldErrors()
    errors.items += nul_errors(fields)
    errors.raise_if_any()
    out: dict[str, Any] = {**DEFAULTS, **{k: v for k, v in fields.items() if v is not None}}
    name = out.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        errors.add("name", f"is required: 1 to {MAX_NAME} characters")
    grace = out["grace_seconds"]
    if isinstance(grace, bool) or not isinstance(grace, int) \
            or not 1 <= grace <= MAX_GRACE_SECONDS:
        errors.add("grace_seconds",
                   f"must be a whole number of seconds from 1 to {MAX_GRACE_SECONDS}")
    methods = out["methods"]
    if isinstance(methods, str) and methods.lower() in METHODS:
        out["methods"] = methods.lower()
    else:
        errors.add("methods", "must be any or post")
    if not isinstance(out["manual_resume"], bool):
        errors.add("manual_resume", "must be true or false")
    out["channels"] = normalize_channels(out["channels"], errors)
    out["realert_every"] = normalize_realert(out["realert_every"], errors)
    if out["slug"] is not None and (problem := slug_problem(out["slug"])):
        errors.add("slug", problem)
    out["tags"] = normalize_tags(out["tags"], errors)
    period = None
    schedule = out.get("schedule")
    zone_error = _check_zone(out["timezone"])
    if not isinstance(schedule, str) or not schedule.strip():
        errors.add("schedule", "is required")
    elif zone_error:
        errors.add("timezone", zone_error)
    else:
        out["schedule"] = schedule.strip()
        try:
            parsed = monitor_schedule(schedule, out["timezone"], now, now)
            period = parsed.interval_seconds
            out["schedule"] = parsed.expression
            out["schedule_text"] = schedule_text(parsed, fields.get("schedule_text"))
        except InvalidSchedule as exc:
            errors.add("schedule", str(exc))
    errors.raise_if_any()
    return {**{key: out[key] for key in DEFINITION_FIELDS}, "period_seconds": period}
