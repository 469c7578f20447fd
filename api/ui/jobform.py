"""The job form: HTML form fields to the fields of ``POST /v1/jobs`` and back.

Only the shapes of a form are handled here (text to numbers, ``Name: value`` lines to a headers
object, comma lists to lists, the tags text to a list (:mod:`api.ui.tagfield`), a blank
confirmation timeout to no ``confirm``); every rule about the values is
:mod:`core.jobs.definition`'s, and its messages are shown next to the fields
(:func:`errors_by_field`). A text that is not a number is passed on as text, so the message
is the API's own ("must be a number").
"""

from __future__ import annotations

from typing import Any

from api.deps import is_digits
from api.ui.channelform import channel_ids, channel_items
from api.ui.tagfield import parse_tags, tags_text
from core.errors import FieldError
from core.jobs.definition import DEFAULT_RETRY, DEFAULTS
from core.schedule.spread import spell

FIELDS = (  # the form's field names, dotted as in the API's error messages
    "name", "schedule", "timezone", "request.method", "request.url", "request.headers",
    "request.body", "timeout_seconds", "retry.attempts", "retry.backoff",
    "retry.delay_seconds", "retry.max_delay_seconds", "overlap", "catchup",
    "success_statuses", "channels", "alert_after_failures", "realert_every", "signing_secret",
    "tags", "confirm.timeout_seconds", "alert_on", "depends_on", "more_channels",
    "recover_after_successes", "min_duration", "max_duration", "spread",
)


def _number(text: str) -> Any:
    """``int`` or ``float`` of ``text``, else ``text`` itself (the core's check reports it);
    only ASCII text is read (``int`` reads "١٢" as 12)."""
    if not text.isascii():
        return text
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def reasons(value: Any) -> list[str]:
    """The ``alert_on`` reasons a form sent: one per checked box (a list, or one text); the
    core checks them (:func:`core.jobs.definition.normalize_alert_on`)."""
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)] if value else []


def _text(form: dict[str, Any], name: str) -> str:
    """A form field's text (absent: ``""``), its line ends as ``\\n``."""
    return str(form.get(name) or "").replace("\r\n", "\n")


def _headers(text: str, errors: list[FieldError]) -> dict[str, str]:
    """``request.headers``: one ``Name: value`` a line (blank lines skipped; a line without a
    colon is a problem in ``errors``)."""
    headers: dict[str, str] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        name, sep, value = line.partition(":")
        if not sep:
            errors.append(FieldError("request.headers",
                                     f"line {number}: write one header per line as Name: value"))
            continue
        headers[name.strip()] = value.strip()
    return headers


def parse(form: dict[str, Any], *, editing: bool) -> tuple[dict[str, Any], list[FieldError]]:
    """The API fields of a submitted job form, and the shape problems found on the way.

    Args:
        editing: an edit form (a blank signing secret keeps the current one; ``paused`` is not
            part of it, Pause/Resume are).
    """
    errors: list[FieldError] = []

    def text(name: str) -> str:
        return _text(form, name)

    headers = _headers(text("request.headers"), errors)
    statuses: list[Any] | None = None
    if text("success_statuses").strip():
        statuses = [_number(s.strip()) for s in text("success_statuses").split(",") if s.strip()]
    channels, problems = channel_ids(form.get("channels"))
    errors.extend(problems)
    realert = text("realert_every").strip()
    confirm = text("confirm.timeout_seconds").strip()
    fields: dict[str, Any] = {
        "name": text("name"),
        "schedule": text("schedule"),
        "timezone": text("timezone").strip() or DEFAULTS["timezone"],
        "request": {"method": text("request.method") or "GET", "url": text("request.url").strip(),
                    "headers": headers, "body": text("request.body") or None},
        "timeout_seconds": _number(text("timeout_seconds").strip()),
        "retry": {key: _number(text(f"retry.{key}").strip()) if key != "backoff"
                  else text("retry.backoff") for key in DEFAULT_RETRY},
        "overlap": text("overlap") or DEFAULTS["overlap"],
        "catchup": text("catchup") or DEFAULTS["catchup"],
        "success_statuses": statuses,
        "channels": channels,
        "alert_after_failures": _number(text("alert_after_failures").strip()),
        "realert_every": (_number(realert) if is_digits(realert) else realert) or None,
        "tags": parse_tags(text("tags")),
        "confirm": {"timeout_seconds": _number(confirm)} if confirm else None,
        "alert_on": reasons(form.get("alert_on")),
        # blank: the API's default (a tolerance of 1, no run-time bound, no spread); "90s"-style
        # text is passed on as typed (core/alerting.py:normalize_run_bounds and
        # core/schedule/spread.py:normalize_spread read it)
        **{key: _number(value) if (value := text(key).strip()) else None
           for key in ("recover_after_successes", "min_duration", "max_duration", "spread")},
    }
    secret = text("signing_secret")
    if secret:
        fields["signing_secret"] = secret
    elif not editing:
        fields["signing_secret"] = None
    if not editing:
        fields["paused"] = form.get("paused") in ("on", "true", "1")
    return fields, errors


def values_of(job: dict[str, Any] | None) -> dict[str, Any]:
    """The form's initial texts: a stored job's definition, or the defaults of a new job."""
    if job is None:
        job = {"name": "", "schedule": "", "request": {"method": "GET", "url": "", "headers": {},
                                                       "body": None},
               "retry": DEFAULT_RETRY, "success_statuses": None, "channels": [],
               "realert_every": None, "tags": [], "confirm": None, "alert_on": [],
               "depends_on": [], "recover_after_successes": 1, "min_duration": None,
               "max_duration": None, "spread": None,
               "timeout_seconds": DEFAULTS["timeout_seconds"],
               "alert_after_failures": DEFAULTS["alert_after_failures"], **{
                   k: DEFAULTS[k] for k in ("timezone", "overlap", "catchup")}}
    request = job["request"] if isinstance(job["request"], dict) else {}
    retry = job["retry"] if isinstance(job["retry"], dict) else DEFAULT_RETRY

    def num(value: Any) -> str:
        return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)

    confirm: dict[str, Any] = job["confirm"] if isinstance(job.get("confirm"), dict) else {}
    return {  # a schedule written in words is edited as its words, so a save keeps them
        "name": job["name"], "schedule": job.get("schedule_text") or job["schedule"],
        "timezone": job["timezone"],
        "request.method": request.get("method", "GET"), "request.url": request.get("url", ""),
        "request.headers": "\n".join(f"{k}: {v}" for k, v in
                                     (request.get("headers") or {}).items()),
        "request.body": request.get("body") or "",
        "timeout_seconds": num(job["timeout_seconds"]),
        **{f"retry.{k}": num(retry.get(k)) if k != "backoff" else str(retry.get(k, ""))
           for k in DEFAULT_RETRY},
        "overlap": job["overlap"], "catchup": job["catchup"],
        "success_statuses": ", ".join(str(s) for s in job["success_statuses"] or []),
        "channels": [str(c) for c in job["channels"] or []],
        "alert_after_failures": num(job["alert_after_failures"]),
        "realert_every": num(job["realert_every"]), "signing_secret": "",
        "tags": tags_text(job.get("tags")), "confirm.timeout_seconds": num(confirm.get(
            "timeout_seconds")),
        "alert_on": [str(r) for r in job.get("alert_on") or []],
        "depends_on": "",  # names, filled by the page (api/ui/dependsfield.py)
        "more_channels": "",
        **{key: num(job.get(key)) for key in ("recover_after_successes", "min_duration",
                                              "max_duration")},
        "spread": spell(job["spread"]) if job.get("spread") else "",
    }


def form_texts(form: dict[str, Any]) -> dict[str, Any]:
    """A submitted form's texts, to show it again with its errors (``channels``: the ids
    checked)."""
    texts: dict[str, Any] = {name: str(form.get(name) or "") for name in FIELDS}
    texts["channels"] = [c.strip() for c in channel_items(form.get("channels")) if c.strip()]
    texts["alert_on"] = reasons(form.get("alert_on"))
    return texts


def errors_by_field(errors: list[FieldError]) -> tuple[dict[str, list[str]], list[str]]:
    """``({form field: [messages]}, [messages of no form field])``: an error on
    ``request.headers.X-Foo`` is shown at ``request.headers`` as ``X-Foo: <message>``; one on
    ``depends_on.<i>`` at ``depends_on`` as the message alone (it names the parent, and the
    field's lines are names, not positions), as the monitor form shows it."""
    by_field: dict[str, list[str]] = {}
    other: list[str] = []
    for error in errors:
        target = next((name for name in FIELDS if error.field == name
                       or error.field.startswith((name + ".", name + "["))), None)
        if target is None and error.field == "retry":
            target = "retry.attempts"
        if target is None:
            other.append(f"{error.field}: {error.message}")
            continue
        rest = error.field[len(target):].removeprefix(".")
        if target == "depends_on" and rest.isdigit():
            rest = ""
        by_field.setdefault(target, []).append(f"{rest}: {error.message}" if rest
                                               else error.message)
    return by_field, other
