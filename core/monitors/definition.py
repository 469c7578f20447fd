"""Validation and normalisation of a monitor definition (the user-editable part of a monitor).

A definition is a plain dict with the fields of ``POST /v1/monitors``; :func:`normalize_definition`
fills defaults, checks every rule and returns the canonical form that events carry.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from core.alerting import (
    normalize_channels,
    normalize_depends_on,
    normalize_realert,
    normalize_run_bounds,
    normalize_threshold,
)
from core.durations import SPACE
from core.errors import FieldErrors, nul_errors
from core.monitors.slugs import slug_problem
from core.schedule import InvalidSchedule, Schedule, parse_schedule, schedule_text
from core.schedule.zones import load_zone
from core.tags import normalize_tags

METHODS = ("any", "post")
MAX_NAME = 200
MAX_GRACE_SECONDS = 366 * 86400
DEFAULT_GRACE_SECONDS = 300
KEYWORD_FIELDS = ("start_keywords", "success_keywords", "failure_keywords")
MAX_KEYWORDS = 20  # per list
MAX_KEYWORD = 200  # characters, healthchecks' whole *_kw field
KEYWORD_PATTERN = f"^[^,\\x00{SPACE}](?:[^,\\x00]*[^,\\x00{SPACE}])?$"
"""A keyword (:func:`normalize_keywords`) as a JSON Schema pattern: no comma, no white space
at either end, no NUL (:func:`core.errors.nul_errors`)."""
DEFAULTS: dict[str, Any] = {
    "timezone": "UTC",
    "grace_seconds": DEFAULT_GRACE_SECONDS,
    "methods": "any",
    "manual_resume": False,
    "channels": (),
    "realert_every": None,
    "slug": None,
    "tags": (),
    "schedule_text": None,  # the words the schedule was written in (core/schedule/words/)
    "min_duration": None,  # run-time bounds in seconds (core/monitors/rules.py)
    "max_duration": None,
    "start_keywords": (),  # keywords in ping bodies (core/monitors/rules.py, keyword_action)
    "success_keywords": (),
    "failure_keywords": (),
    "alert_after_failures": 1,  # failure tolerance (core/alerting.py, tolerate)
    "recover_after_successes": 1,
    "depends_on": (),  # parents whose outage holds its alerts (core/dependencies.py)
}
TOLERANCE_FIELDS = ("alert_after_failures", "recover_after_successes")
DEFINITION_FIELDS = ("name", "schedule", "timezone", "grace_seconds", "methods", "manual_resume",
                     "channels", "realert_every", "slug", "tags", "schedule_text",
                     "min_duration", "max_duration", *KEYWORD_FIELDS, *TOLERANCE_FIELDS,
                     "depends_on")
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


def normalize_keywords(value: Any, field: str, errors: FieldErrors) -> list[str]:
    """A keyword list (``start_keywords`` …): ``None`` or a list of at most
    :data:`MAX_KEYWORDS` strings of 1 to :data:`MAX_KEYWORD` characters, kept exactly as given
    (matching is case-sensitive, as healthchecks'), duplicates dropped. A keyword may not
    contain a comma nor start or end with white space: healthchecks' ``*_kw`` fields are
    comma-separated and stripped, and ``/api/v3`` answers these lists in that form."""
    if value is None:
        return []
    if not isinstance(value, list | tuple) or len(value) > MAX_KEYWORDS:
        errors.add(field, f"must be a list of at most {MAX_KEYWORDS} keywords")
        return []
    out: list[str] = []
    for n, word in enumerate(value):
        if not isinstance(word, str) or not 1 <= len(word) <= MAX_KEYWORD or "," in word \
                or word != word.strip():
            errors.add(f"{field}[{n}]", f"must be 1 to {MAX_KEYWORD} characters, without a "
                                        "comma or white space at either end")
        elif word not in out:
            out.append(word)
    return out


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
            :mod:`core.monitors.slugs`), ``tags`` (:mod:`core.tags`) and the run-time
            bounds ``min_duration`` / ``max_duration``
            (:func:`core.alerting.normalize_run_bounds`), the
            keyword lists ``start_keywords``, ``success_keywords``, ``failure_keywords``
            (:func:`normalize_keywords`), and the failure tolerance ``alert_after_failures``
            (alert after this many failed pings or missed slots in a row) and
            ``recover_after_successes`` (say ``up`` after this many good pings in a row), each
            1 to 1000, default 1 (:func:`core.alerting.tolerate`, shared with jobs), and
            ``depends_on`` (:func:`core.alerting.normalize_depends_on`; that the ids are the
            team's and make no cycle is the command's check).
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
    _check_basics(out, errors)
    out["channels"] = normalize_channels(out["channels"], errors)
    out["realert_every"] = normalize_realert(out["realert_every"], errors)
    if out["slug"] is not None and (problem := slug_problem(out["slug"])):
        errors.add("slug", problem)
    out["tags"] = normalize_tags(out["tags"], errors)
    normalize_run_bounds(out, errors)
    for key in KEYWORD_FIELDS:
        out[key] = normalize_keywords(out[key], key, errors)
    for key in TOLERANCE_FIELDS:
        out[key] = normalize_threshold(out[key], key, errors)
    out["depends_on"] = normalize_depends_on(out["depends_on"], errors)
    period = _schedule(out, fields.get("schedule_text"), now, errors)
    errors.raise_if_any()
    return {**{key: out[key] for key in DEFINITION_FIELDS}, "period_seconds": period}


def _check_basics(out: dict[str, Any], errors: FieldErrors) -> None:
    """``name``, ``grace_seconds``, ``methods`` (lowered in ``out``) and ``manual_resume``."""
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


def _schedule(out: dict[str, Any], words: Any, now: datetime,
              errors: FieldErrors) -> float | None:
    """Check ``schedule`` in ``timezone`` and put it in canonical form in ``out`` (with
    ``schedule_text``, from ``words``: the text it was written in); returns the period in
    seconds of an interval schedule, else ``None``."""
    schedule = out.get("schedule")
    zone_error = _check_zone(out["timezone"])
    if not isinstance(schedule, str) or not schedule.strip():
        errors.add("schedule", "is required")
        return None
    if zone_error:
        errors.add("timezone", zone_error)
        return None
    out["schedule"] = schedule.strip()
    try:
        parsed = monitor_schedule(schedule, out["timezone"], now, now)
        out["schedule"] = parsed.expression
        out["schedule_text"] = schedule_text(parsed, words)
    except InvalidSchedule as exc:
        errors.add("schedule", str(exc))
        return None
    return parsed.interval_seconds
