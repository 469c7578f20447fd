"""Validation and normalisation of a job definition (the user-editable part of a job).

A definition is a plain dict with the fields of ``POST /v1/jobs``; :func:`normalize_definition`
fills defaults, checks every rule and returns the canonical form that events carry.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from core.alerting import (
    normalize_channels,
    normalize_depends_on,
    normalize_realert,
    normalize_run_bounds,
    normalize_threshold,
)
from core.errors import FieldErrors, nul_errors
from core.http.urls import url_problem
from core.schedule import InvalidSchedule, Schedule, parse_schedule, schedule_text
from core.schedule.spread import normalize_spread
from core.schedule.zones import valid_zone
from core.secrets import PLACEHOLDER, check_signing_secret, has_malformed_placeholder
from core.tags import normalize_tags

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
OVERLAP_POLICIES = ("skip", "allow", "queue")
CATCHUP_POLICIES = ("latest", "skip", "all")
BACKOFFS = ("exponential", "linear", "fixed")
# The slots that did not run a job can alert for (``alert_on``, docs/notifications.md):
# skipped by the overlap policy, missed beyond the catch-up policy, held by maintenance.
ALERT_ON = ("skipped", "missed", "held")

MAX_NAME = 200
MAX_URL = 2048
MAX_HEADERS = 50
MAX_HEADER_NAME = 256
MAX_HEADER_VALUE = 8192
HEADER_VALUE_PATTERN = r"^[^\r\n\x00]*$"  # no CR, LF (header injection) or NUL
_HEADER_VALUE = re.compile(HEADER_VALUE_PATTERN)
MAX_BODY = 256 * 1024  # characters of request.body (code points, as JSON Schema counts)
MIN_TIMEOUT_SECONDS = 0.001
MAX_TIMEOUT_SECONDS = 900.0
MAX_ATTEMPTS = 10
MAX_DELAY_SECONDS = 86400
MIN_STATUS, MAX_STATUS = 100, 599  # a success_statuses entry
MAX_SUCCESS_STATUSES = 100
DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_METHOD = "GET"  # of a job's request

DEFAULT_RETRY: dict[str, Any] = {"attempts": 1, "backoff": "exponential",
                                 "delay_seconds": 10.0, "max_delay_seconds": 300.0}
DEFAULTS: dict[str, Any] = {
    "timezone": "UTC",
    "timeout_seconds": DEFAULT_TIMEOUT_SECONDS,
    "overlap": "skip",
    "catchup": "latest",
    "success_statuses": None,  # None: any 2xx is a success
    "channels": (),
    "alert_after_failures": 1,
    "realert_every": None,
    "alert_on": (),  # no alert for slots that did not run
    "depends_on": (),  # parents whose outage holds its alerts (core/dependencies.py)
    "min_duration": None,  # run-time bounds in seconds (core/runs/bounds.py)
    "max_duration": None,
    "recover_after_successes": 1,  # failure tolerance (core/alerting.py, tolerate)
    "tags": (),
    "confirm": None,  # None: a 2xx is the outcome (docs/ledger.md, fire-and-confirm)
    "schedule_text": None,  # the words the schedule was written in (core/schedule/words/)
    "spread": None,  # seconds: each slot fires at an offset inside it (core/schedule/spread.py)
}
DEFINITION_FIELDS = ("name", "schedule", "timezone", "request", "timeout_seconds", "retry",
                     "overlap", "catchup", "success_statuses", "channels",
                     "alert_after_failures", "realert_every", "tags", "confirm", "schedule_text",
                     "alert_on", "depends_on", "min_duration", "max_duration",
                     "recover_after_successes", "spread")
MIN_CONFIRM_SECONDS = 1
MAX_CONFIRM_SECONDS = 7 * 86400

HEADER_NAME_PATTERN = r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$"  # RFC 9110 field-name token
_TOKEN = re.compile(HEADER_NAME_PATTERN)
# Set by the executor: these are always ours and may not be overridden by a job.
RESERVED_HEADERS = ("idempotency-key", "x-cronledger-job-id", "x-cronledger-scheduled-for",
                    "x-cronledger-attempt", "x-cronledger-signature",
                    "x-cronledger-confirm-url", "host", "content-length",
                    "transfer-encoding")


_MALFORMED = ("has a malformed secret placeholder: write ${secrets.NAME}, NAME being 1 to 100 "
              "of A-Z a-z 0-9 _ . -")


def _literal_userinfo(url: str) -> bool:
    """Whether the URL's user-info holds anything but secret placeholders (it would be stored
    and shown in plaintext in the job, its events and its runs)."""
    netloc = urlsplit(url).netloc
    if "@" not in netloc:
        return False
    userinfo = netloc.rpartition("@")[0]
    return bool(PLACEHOLDER.sub("", userinfo).replace(":", ""))


def _check_url(url: Any, errors: FieldErrors) -> None:
    if not isinstance(url, str) or not url:
        errors.add("request.url", "is required and must be a string")
        return
    if len(url) > MAX_URL:
        errors.add("request.url", f"must be at most {MAX_URL} characters")
        return
    # Secret placeholders are resolved at send time; parse the URL with a stand-in value.
    problem = url_problem(PLACEHOLDER.sub("x", url))
    if problem:
        errors.add("request.url", problem)
    elif any(c.isspace() or ord(c) < 32 for c in url):
        errors.add("request.url", "must not contain spaces or control characters")
    elif has_malformed_placeholder(url):
        errors.add("request.url", _MALFORMED)
    elif _literal_userinfo(url):
        errors.add("request.url", "must not carry literal credentials (user:password@): use "
                                  "secret placeholders, e.g. https://${secrets.USER}:"
                                  "${secrets.PASSWORD}@host/, or an Authorization header")


def _check_headers(headers: Any, errors: FieldErrors) -> dict[str, str]:
    if headers is None:
        return {}
    if not isinstance(headers, dict):
        errors.add("request.headers", "must be an object of header names to string values")
        return {}
    if len(headers) > MAX_HEADERS:
        errors.add("request.headers", f"must have at most {MAX_HEADERS} headers")
        return {}
    for name, value in headers.items():
        path = f"request.headers.{name}"
        if not isinstance(name, str) or not _TOKEN.match(name) or len(name) > MAX_HEADER_NAME:
            errors.add(path, "is not a valid header name")
        elif name.lower() in RESERVED_HEADERS:
            errors.add(path, "is set by cronledger and cannot be overridden")
        elif not isinstance(value, str):
            errors.add(path, "must be a string")
        elif len(value) > MAX_HEADER_VALUE:
            errors.add(path, f"must be at most {MAX_HEADER_VALUE} characters")
        elif not _HEADER_VALUE.fullmatch(value):
            errors.add(path, "must not contain CR, LF or NUL")
        elif has_malformed_placeholder(value):
            errors.add(path, _MALFORMED)
    return dict(headers)


def _normalize_request(request: Any, errors: FieldErrors) -> dict[str, Any]:
    if not isinstance(request, dict):
        errors.add("request", "is required: an object with at least a url")
        return {}
    unknown = set(request) - {"method", "url", "headers", "body"}
    for key in sorted(unknown):
        errors.add(f"request.{key}", "is not a known field")
    method = request.get("method")
    method = DEFAULT_METHOD if method in (None, "") else method
    if not isinstance(method, str) or method.upper() not in METHODS:
        errors.add("request.method", f"must be one of {', '.join(METHODS)}")
        method = DEFAULT_METHOD
    _check_url(request.get("url"), errors)
    headers = _check_headers(request.get("headers"), errors)
    body = request.get("body")
    if body is not None:
        if not isinstance(body, str):
            errors.add("request.body", "must be a string (send JSON as text)")
        elif len(body) > MAX_BODY:  # characters (code points), as JSON Schema's maxLength
            errors.add("request.body", f"must be at most {MAX_BODY} characters")
        elif has_malformed_placeholder(body):
            errors.add("request.body", _MALFORMED)
    return {"method": method.upper(), "url": request.get("url"), "headers": headers, "body": body}


def _number(value: Any, field: str, low: float, high: float, errors: FieldErrors) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        errors.add(field, "must be a number")
        return low
    if not low <= value <= high:
        errors.add(field, f"must be between {low:g} and {high:g}")
    return float(value)


def _normalize_retry(retry: Any, errors: FieldErrors) -> dict[str, Any]:
    if retry is None:
        return dict(DEFAULT_RETRY)
    if not isinstance(retry, dict):
        errors.add("retry", "must be an object")
        return dict(DEFAULT_RETRY)
    merged = {**DEFAULT_RETRY, **retry}
    for key in sorted(set(retry) - set(DEFAULT_RETRY)):
        errors.add(f"retry.{key}", "is not a known field")
    attempts = merged["attempts"]
    if isinstance(attempts, bool) or not isinstance(attempts, int) \
            or not 1 <= attempts <= MAX_ATTEMPTS:
        errors.add("retry.attempts", f"must be an integer between 1 and {MAX_ATTEMPTS}")
    backoff = merged["backoff"]
    if not isinstance(backoff, str):
        errors.add("retry.backoff", "must be a string")
    elif backoff not in BACKOFFS:
        merged["backoff"] = "fixed"  # unknown names fall back to fixed, as in 0cron
    delay = _number(merged["delay_seconds"], "retry.delay_seconds", 0, MAX_DELAY_SECONDS, errors)
    max_delay = _number(merged["max_delay_seconds"], "retry.max_delay_seconds", 0,
                        MAX_DELAY_SECONDS, errors)
    merged["delay_seconds"], merged["max_delay_seconds"] = delay, max_delay
    return merged


def _normalize_statuses(value: Any, errors: FieldErrors) -> list[int] | None:
    """``success_statuses``: ``None`` (any 2xx) or a non-empty list of codes 100..599, returned
    sorted and without duplicates."""
    if value is None:
        return None
    if not isinstance(value, list) or not value or len(value) > MAX_SUCCESS_STATUSES:
        errors.add("success_statuses",
                   f"must be a list of 1 to {MAX_SUCCESS_STATUSES} HTTP status codes, or null")
        return None
    if any(isinstance(v, bool) or not isinstance(v, int) or not MIN_STATUS <= v <= MAX_STATUS
           for v in value):
        errors.add("success_statuses",
                   f"every status must be an integer from {MIN_STATUS} to {MAX_STATUS}")
        return None
    return sorted(set(value))


def _normalize_alerting(out: dict[str, Any], errors: FieldErrors) -> None:
    out["channels"] = normalize_channels(out["channels"], errors)
    for key in ("alert_after_failures", "recover_after_successes"):
        out[key] = normalize_threshold(out[key], key, errors)
    out["realert_every"] = normalize_realert(out["realert_every"], errors)
    out["alert_on"] = normalize_alert_on(out["alert_on"], errors)
    out["depends_on"] = normalize_depends_on(out["depends_on"], errors)


def normalize_alert_on(value: Any, errors: FieldErrors) -> list[str]:
    """``alert_on``: a list of distinct reasons from :data:`ALERT_ON` (``[]``: no alert for
    slots that did not run), returned in the order of :data:`ALERT_ON`. Anything else (not a
    list, an unknown reason, one given twice) is an error on ``alert_on``."""
    if not isinstance(value, list | tuple) or any(not isinstance(v, str) for v in value):
        errors.add("alert_on", f"must be a list of reasons among {', '.join(ALERT_ON)}")
        return []
    unknown = [v for v in value if v not in ALERT_ON]
    if unknown:
        errors.add("alert_on", f"unknown reason {unknown[0]!r}: use {', '.join(ALERT_ON)}")
        return []
    if len(set(value)) != len(value):
        errors.add("alert_on", "names a reason twice")
        return []
    return [reason for reason in ALERT_ON if reason in value]


def normalize_confirm(value: Any, errors: FieldErrors) -> dict[str, int] | None:
    """``confirm``: ``None`` (no confirmation) or ``{"timeout_seconds": N}``, N whole seconds
    from :data:`MIN_CONFIRM_SECONDS` to :data:`MAX_CONFIRM_SECONDS`."""
    if value is None:
        return None
    seconds = value.get("timeout_seconds") if isinstance(value, dict) else None
    if (not isinstance(value, dict) or set(value) != {"timeout_seconds"}
            or isinstance(seconds, bool) or not isinstance(seconds, int | float)
            or seconds != int(seconds)
            or not MIN_CONFIRM_SECONDS <= seconds <= MAX_CONFIRM_SECONDS):
        errors.add("confirm.timeout_seconds", f"is required: whole seconds from "
                   f"{MIN_CONFIRM_SECONDS} to {MAX_CONFIRM_SECONDS}")
        return None
    return {"timeout_seconds": int(seconds)}


def normalize_definition(
    fields: dict[str, Any], *, anchor: datetime, now: datetime
) -> dict[str, Any]:
    """Validate a complete job definition and return it in canonical form.

    Args:
        fields: the definition fields (``name``, ``schedule``, ``timezone``, ``request``,
            ``timeout_seconds``, ``retry``, ``overlap``, ``catchup``, ``success_statuses``,
            ``channels`` (ids),
            ``alert_after_failures``, ``realert_every`` (seconds or ``"1h"``-style, ``None``
            for off), ``alert_on`` (:func:`normalize_alert_on`), ``depends_on``
            (:func:`core.alerting.normalize_depends_on`), ``recover_after_successes`` (once
            ``failed`` was said, ``recovered`` after this many good runs in a row, 1 to 1000,
            default 1: :func:`core.alerting.tolerate`), ``min_duration`` / ``max_duration``
            (:func:`core.alerting.normalize_run_bounds`: a successful attempt shorter than
            the minimum fails, a run still going past the maximum alerts; core/runs/bounds.py)),
            ``spread`` (:func:`core.schedule.spread.normalize_spread`: seconds, each slot fires
            at the job's offset inside that window, at most the schedule's shortest interval));
            missing optional fields take their defaults. ``schedule`` may be a phrase in
            words: the definition holds its canonical form and ``schedule_text`` the words
            (:func:`core.schedule.schedule_text`, which also keeps a stored definition's words
            across a merge). A ``signing_secret`` in ``fields`` is
            validated too, but never part of the returned definition (it is write-only and
            stored encrypted apart from the events).
        anchor: the instant intervals are anchored to (UTC).
        now: the current instant (UTC), used to reject one-shot schedules in the past.

    Returns:
        The canonical definition: every field present, request method upper-cased,
        ``channels`` as a list of UUIDs, ``realert_every`` in seconds or ``None``.

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
    out["request"] = _normalize_request(fields.get("request"), errors)
    out["timeout_seconds"] = _number(out["timeout_seconds"], "timeout_seconds",
                                     MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS, errors)
    out["retry"] = _normalize_retry(fields.get("retry"), errors)
    out["success_statuses"] = _normalize_statuses(fields.get("success_statuses"), errors)
    if fields.get("signing_secret") is not None:
        problem = check_signing_secret(fields["signing_secret"])
        if problem:
            errors.add("signing_secret", problem)
    if out["overlap"] not in OVERLAP_POLICIES:
        errors.add("overlap", f"must be one of {', '.join(OVERLAP_POLICIES)}")
    if out["catchup"] not in CATCHUP_POLICIES:
        errors.add("catchup", f"must be one of {', '.join(CATCHUP_POLICIES)}")
    _normalize_alerting(out, errors)
    normalize_run_bounds(out, errors)
    out["tags"] = normalize_tags(out["tags"], errors)  # core/tags.py
    out["confirm"] = normalize_confirm(fields.get("confirm"), errors)
    if out["confirm"] is not None and out["min_duration"] is not None:
        errors.add("min_duration", "cannot be set on a fire-and-confirm job: its 2xx comes at "
                                   "once by design (use max_duration, or confirm's timeout)")
    schedule = out.get("schedule")
    parsed: Schedule | None = None
    if not isinstance(schedule, str) or not schedule.strip():
        errors.add("schedule", "is required")
    elif not valid_zone(out["timezone"]):
        errors.add("timezone", f"unknown time zone {out['timezone']!r}: use an IANA name")
    else:
        out["schedule"] = schedule.strip()
        try:
            parsed = parse_schedule(schedule, out["timezone"], anchor=anchor, now=now)
            out["schedule"] = parsed.expression
            out["schedule_text"] = schedule_text(parsed, fields.get("schedule_text"))
        except InvalidSchedule as exc:
            errors.add("schedule", str(exc))
    out["spread"] = normalize_spread(out["spread"], parsed, now, errors)
    errors.raise_if_any()
    return {key: out[key] for key in DEFINITION_FIELDS}


def normalize_alert_rules(fields: dict[str, Any],
                          current: dict[str, Any] | None = None) -> dict[str, Any]:
    """Validate the alert rules alone (``alert_after_failures``, ``realert_every``,
    ``alert_on``, ``min_duration``, ``max_duration``: the rules of :func:`normalize_definition`),
    for a proposal that changes nothing else (the what-if replay, docs/ledger.md), the bounds
    merged with ``current``'s (the job's definition) so that their order is checked: returns
    the given ones in canonical form.

    Raises:
        InvalidInput: listing each problem on its field.
    """
    errors = FieldErrors()
    bounds = {k: (current or {}).get(k) for k in ("min_duration", "max_duration")}
    out = {"channels": [], "alert_after_failures": 1, "realert_every": None, "alert_on": [],
           "depends_on": [], "recover_after_successes": 1, **bounds, **fields}
    _normalize_alerting(out, errors)
    normalize_run_bounds(out, errors)
    out["depends_on"] = normalize_depends_on(out["depends_on"], errors)
    errors.raise_if_any()
    return {key: out[key] for key in fields}
