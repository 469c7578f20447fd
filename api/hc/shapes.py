"""healthchecks' v3 shapes of checks (monitors), pings, flips and channels, and the
translation of a create/update body to a monitor definition (healthchecks' docs,
*Management API*, and ``hc/api/views.py``: the field names, defaults and limits).

A check is a monitor. ``timeout`` (seconds) is a period schedule ``@every <n>s``; ``schedule``
and ``tz`` any other schedule, read by :func:`core.schedule.parse_schedule` as every schedule
is (cron, systemd calendar events as healthchecks' ``oncalendar`` kind, words) and answered as
it was given. ``tags`` is one space-separated string, ``methods`` ``""`` (any) or
``"POST"``, ``channels`` ``"*"`` (all of the team's channels), ``""`` (none) or ids joined by
commas. ``start_kw``, ``success_kw``, ``failure_kw`` with ``filter_http_body`` are the
monitor's keyword lists (``start_keywords`` …, docs/heartbeats.md, *Keywords in ping
bodies*), joined by commas: a create or update with ``filter_http_body: true`` sets the lists
from the ``*_kw`` it gives (split at commas and stripped, healthchecks' ``match_keywords``),
``false`` clears them; ``*_kw`` without it are accepted and ignored, and
``filter_default_fail: true`` (not supported) is refused. ``desc``, ``subject`` and the
e-mail filters have no cronledger counterpart: they are accepted, ignored and answered empty.
Status: ``new``, ``up``, ``grace`` (cronledger's ``late``), ``down``, ``paused``, and (v1
only) ``started`` for an up monitor with a pending start.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from core.errors import FieldErrors, invalid
from core.metrics import unique_key
from core.monitors.definition import KEYWORD_FIELDS, cached_schedule
from core.tags import split_tags

MIN_SECONDS, MAX_SECONDS = 60, 31_536_000  # timeout and grace, healthchecks' limits
# healthchecks' Spec (hc/api/views.py): name, schedule and slug at most 100 characters
# ("json validation error: name is too long", 400), the *_kw fields at most 200.
MAX_TEXT = {"name": 100, "schedule": 100, "slug": 100, "start_kw": 200, "success_kw": 200,
            "failure_kw": 200, "subject": 200, "subject_fail": 200}
DEFAULT_TIMEOUT, DEFAULT_GRACE = 86_400, 3_600
UNIQUE_FIELDS = ("name", "slug", "tags", "timeout", "grace")
# The fields of healthchecks' ``Spec`` (hc/api/views.py), which refuses ``null`` in any of them.
SPEC_FIELDS = ("channels", "desc", "failure_kw", "filter_subject", "filter_body",
               "filter_http_body", "filter_default_fail", "grace", "manual_resume", "methods",
               "name", "schedule", "slug", "start_kw", "subject", "subject_fail", "success_kw",
               "tags", "timeout", "tz", "unique")
_STATUS = {"late": "grace"}


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat(timespec="seconds")


def timeout_of(monitor: dict[str, Any]) -> int | None:
    """The period of a period monitor in whole seconds (``None`` for cron)."""
    try:
        schedule = cached_schedule(monitor["schedule"], monitor["timezone"],
                                   monitor["created_at"])
    except Exception:  # noqa: BLE001 - a stored schedule that no longer evaluates
        return None
    period = schedule.interval_seconds
    return None if period is None else int(period)


def check_view(monitor: dict[str, Any], n_pings: int, base: str, *, read_only: bool,
               token: str | None = None, version: int = 3) -> dict[str, Any]:
    """The check of ``monitor`` (a row of ``monitor_get`` / ``monitor_list``) in API ``version``
    1, 2 or 3. As healthchecks' ``Check.to_dict`` (``hc/api/models.py``): ``status`` is
    ``started`` for an up check with a pending start only in v1 (v2 and v3 answer ``up`` and
    ``started: true``), and the URLs name the request's version.

    ``ping_url`` is the token URL (``token``: the monitor's current token, kept sealed,
    docs/heartbeats.md, *The ping URL*), ``""`` when the server could not keep it (no secret
    key: only the answer that created the check carries it).
    """
    status = _STATUS.get(monitor["status"], monitor["status"])
    started = monitor["last_start_at"] is not None
    if status == "up" and started and version == 1:
        status = "started"
    check: dict[str, Any] = {
        "name": monitor["name"], "slug": monitor.get("slug") or "",
        "tags": " ".join(monitor.get("tags") or ()), "desc": "",
        "grace": monitor["grace_seconds"], "n_pings": n_pings, "status": status,
        "started": started, "last_ping": _iso(monitor["last_ping_at"]),
        "next_ping": _iso(monitor["next_expected_at"]),
        "manual_resume": monitor["manual_resume"],
        "methods": "POST" if monitor["methods"] == "post" else "", "subject": "",
        "subject_fail": "", "start_kw": ",".join(monitor.get("start_keywords") or ()),
        "success_kw": ",".join(monitor.get("success_keywords") or ()),
        "failure_kw": ",".join(monitor.get("failure_keywords") or ()),
        "filter_subject": False, "filter_body": False,
        "filter_http_body": any(monitor.get(k) for k in KEYWORD_FIELDS),
        "filter_default_fail": False,
    }
    if monitor["last_duration_ms"]:  # as to_dict: only when the check has a last duration
        check["last_duration"] = monitor["last_duration_ms"] // 1000
    timeout = timeout_of(monitor)
    if timeout is not None:
        check["timeout"] = timeout
    else:
        # The schedule as it was given (healthchecks answers its own text): the words or
        # the calendar event or the cron line, never a translation of them.
        check["schedule"] = monitor.get("schedule_text") or monitor["schedule"]
        check["tz"] = monitor["timezone"]
    if read_only:
        check["unique_key"] = unique_key(monitor["id"])
        return check
    update = f"{base}/api/v{version}/checks/{monitor['id']}"
    check.update(uuid=str(monitor["id"]), ping_url=f"{base}/ping/{token}" if token else "",
                 update_url=update, pause_url=f"{update}/pause", resume_url=f"{update}/resume",
                 channels=",".join(str(c) for c in monitor["channels"]))
    return check


def _seconds(body: dict[str, Any], name: str, errors: FieldErrors) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) \
            or not MIN_SECONDS <= value <= MAX_SECONDS:
        errors.add(name, f"must be a whole number of seconds from {MIN_SECONDS} to "
                         f"{MAX_SECONDS}")
        return None
    return value


def _text(body: dict[str, Any], name: str, errors: FieldErrors) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        errors.add(name, "must be a string")
        return None
    if value is not None and len(value) > MAX_TEXT.get(name, len(value)):
        errors.add(name, f"is too long: at most {MAX_TEXT[name]} characters, as healthchecks")
        return None
    return value


def definition_fields(body: Any, all_channels: list[uuid.UUID], *,
                      creating: bool) -> dict[str, Any]:
    """Monitor definition fields from a v3 create (``creating``: defaults filled in) or
    update body (only what it gives).

    Raises:
        InvalidInput: the body is not an object, a field of healthchecks' ``Spec`` is
            ``null`` (healthchecks refuses it: "json validation error"), or a field has the
            wrong type or range.
    """
    if not isinstance(body, dict):
        raise invalid("body", "must be a JSON object")
    errors = FieldErrors()
    for key in SPEC_FIELDS:  # healthchecks' Spec.check_nulls: null is no field's value
        if key in body and body[key] is None:
            errors.add(key, "must not be null: give a value or leave the field out")
    errors.raise_if_any()
    for ignored in ("desc", "subject", "subject_fail"):  # kept nowhere, checked as its Spec
        _text(body, ignored, errors)
    fields: dict[str, Any] = {}
    _naming(body, fields, errors, creating)
    _timing(body, fields, errors, creating)
    _delivery(body, fields, errors, all_channels)
    _keywords(body, fields, errors)
    unique = body.get("unique", [])
    if not isinstance(unique, list) or any(u not in UNIQUE_FIELDS for u in unique):
        errors.add("unique", f"must be a list of {', '.join(UNIQUE_FIELDS)}")
    errors.raise_if_any()
    return fields


def _naming(body: dict[str, Any], fields: dict[str, Any], errors: FieldErrors,
            creating: bool) -> None:
    """``name``, ``slug`` and ``tags`` into ``fields`` (a created check without a name is
    named by its slug, or ``unnamed``)."""
    name = _text(body, "name", errors)
    if name is not None:
        fields["name"] = name
    slug = _text(body, "slug", errors)
    if slug is not None:
        fields["slug"] = slug or None
    if name is None and creating:  # healthchecks names it ""; a monitor needs a name
        fields["name"] = slug or "unnamed"
    tags = _text(body, "tags", errors)
    if tags is not None:
        fields["tags"] = split_tags(tags)


def _timing(body: dict[str, Any], fields: dict[str, Any], errors: FieldErrors,
            creating: bool) -> None:
    """``timeout``, ``grace``, ``schedule`` and ``tz`` into ``fields`` (a created check
    without a schedule pings every ``timeout``, default :data:`DEFAULT_TIMEOUT`)."""
    timeout = _seconds(body, "timeout", errors)
    grace = _seconds(body, "grace", errors)
    schedule, tz = _text(body, "schedule", errors), _text(body, "tz", errors)
    if tz == "":  # healthchecks' check_tz: "" is not among its time zones
        errors.add("tz", "is not a valid timezone")
    if schedule is not None:
        fields["schedule"], fields["timezone"] = schedule, tz or "UTC"
    elif timeout is not None or creating:
        fields["schedule"] = f"@every {timeout or DEFAULT_TIMEOUT}s"
        fields["timezone"] = tz or "UTC"
    elif tz is not None:  # healthchecks checks tz with or without a schedule
        fields["timezone"] = tz
    if grace is not None or creating:
        fields["grace_seconds"] = grace or DEFAULT_GRACE


def _delivery(body: dict[str, Any], fields: dict[str, Any], errors: FieldErrors,
              all_channels: list[uuid.UUID]) -> None:
    """``methods``, ``manual_resume`` and ``channels`` into ``fields``."""
    methods = _text(body, "methods", errors)
    if methods is not None:
        if methods.upper() not in ("", "POST"):
            errors.add("methods", 'must be "" or "POST"')
        fields["methods"] = "post" if methods.upper() == "POST" else "any"
    if "manual_resume" in body:
        if not isinstance(body["manual_resume"], bool):
            errors.add("manual_resume", "must be true or false")
        fields["manual_resume"] = body["manual_resume"]
    channels = _text(body, "channels", errors)
    if channels is not None:
        fields["channels"] = _channels(channels, all_channels, errors)


KW_FIELDS = {"start_kw": "start_keywords", "success_kw": "success_keywords",
             "failure_kw": "failure_keywords"}


def _keywords(body: dict[str, Any], fields: dict[str, Any], errors: FieldErrors) -> None:
    """The keyword lists of ``filter_http_body`` and the ``*_kw`` strings (module docstring)."""
    texts = {name: _text(body, name, errors) for name in KW_FIELDS}
    if body.get("filter_default_fail") not in (None, False):
        errors.add("filter_default_fail", "is not supported: a body without a keyword is "
                                          "ignored, as healthchecks does without it")
    flag = body.get("filter_http_body")
    if flag is None:
        return
    if not isinstance(flag, bool):
        errors.add("filter_http_body", "must be true or false")
        return
    for name, key in KW_FIELDS.items():
        if not flag:
            fields[key] = []
        elif (text := texts[name]) is not None:
            fields[key] = [w for w in (p.strip() for p in text.split(",")) if w]


def _channels(text: str, all_channels: list[uuid.UUID], errors: FieldErrors) -> list[Any]:
    if text == "*":
        return list(all_channels)
    ids = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        try:
            ids.append(uuid.UUID(part))
        except ValueError:
            errors.add("channels", f"{part[:40]!r} is not a channel id")
    return ids


def matches(monitor: dict[str, Any], body: dict[str, Any], fields: dict[str, Any],
            unique: list[str]) -> bool:
    """Whether an existing monitor is the one a create with ``unique`` names, as healthchecks'
    ``_lookup`` (``hc/api/views.py``) decides: a field listed in ``unique`` but absent from
    the ``body`` matches no check (a new one is created); otherwise every listed field equals
    the request's (``fields``, from :func:`definition_fields`). ``tags`` are compared as
    healthchecks compares its tags string, in order ("db prod" is not "prod db"); runs of
    spaces and repeated tags count once, as cronledger keeps tags (docs/healthchecks.md)."""
    if any(body.get(name) is None for name in unique):
        return False
    for name in unique:
        if name == "name" and monitor["name"] != fields.get("name"):
            return False
        if name == "slug" and (monitor.get("slug") or None) != fields.get("slug"):
            return False
        if name == "tags" and list(monitor.get("tags") or ()) != list(
                dict.fromkeys(fields.get("tags", []))):
            return False
        if name == "timeout" and f"@every {timeout_of(monitor)}s" != fields.get("schedule"):
            return False
        if name == "grace" and monitor["grace_seconds"] != fields.get("grace_seconds"):
            return False
    return True


PING_TYPES = {"ignored": "ign"}


def ping_view(row: dict[str, Any], n: int, check_url: str) -> dict[str, Any]:
    """One ping as healthchecks' ``Ping.to_dict`` (``hc/api/models.py``): ``n`` its number
    (1 for the first), ``rid`` its run id or ``None``, ``body_url``
    (``<check_url>/pings/<n>/body``) when it has a stored body, else ``None``, ``duration``
    (seconds, ``total_seconds()`` of the milliseconds kept) for the end of a started run;
    ``date`` is ``created.isoformat()`` there, microseconds kept (a check's instants are
    healthchecks' ``isostring``, to the second)."""
    view: dict[str, Any] = {
        "type": PING_TYPES.get(row["kind"], row["kind"]), "date": row["received_at"].isoformat(),
        "n": n, "scheme": "http", "remote_addr": row["remote_addr"] or "",
        "method": row["method"], "ua": row["user_agent"] or "",
        "rid": str(row["rid"]) if row["rid"] is not None else None,
        "body_url": f"{check_url}/pings/{n}/body" if row["body_size"] else None,
    }
    if row["duration_ms"] is not None:
        view["duration"] = row["duration_ms"] / 1000
    return view
