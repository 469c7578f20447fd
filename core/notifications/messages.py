"""What an alert says, independent of the channel: one message dict per alert.

A message is stored in the outbox row (JSON) and rendered per provider at send time by
:mod:`core.notifications.formatting`::

    {"event": "job.failed", "status": "down" | "up" | "info",
     "title": "Job \u201cbackup\u201d failed", "text": "one or two sentences",
     "subject": {"type": "job" | "monitor" | "channel", "id", "name"},
     "occurred_at": RFC 3339, "since": RFC 3339 | None,
     "facts": [{"name", "value"}, ...],            # ordered, short, human-readable
     "last_response": {...} | None, "last_ping": {...} | None,
     "links": {"job": "/v1/jobs/<id>", ...}}       # API paths; made absolute when sent

It says what happened, since when, the last response or ping, and links to the API resource
(the issue's rule for alert content).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from core.clock import rfc3339

BODY_SNIPPET = 300  # characters of a response or ping body quoted in a message

JOB_EVENTS = ("failed", "still_failing", "recovered", "broken", "skipped", "missed", "held",
              "too_long")
MONITOR_EVENTS = ("down", "up", "still_down")


def snippet(body: bytes | str | None, limit: int = BODY_SNIPPET) -> str | None:
    """The start of a body as text (invalid UTF-8 replaced), ``…`` when cut."""
    if body is None:
        return None
    text = body if isinstance(body, str) else bytes(body).decode("utf-8", "replace")
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "…"


def _duration(seconds: float) -> str:
    seconds = int(max(0, seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{v}{u}" for v, u in ((days, "d"), (hours, "h"), (minutes, "m")) if v]
    return " ".join(parts[:2]) or f"{secs}s"


def _response_line(last: dict[str, Any] | None) -> str:
    if not last:
        return "no response recorded"
    if last.get("status") is not None and last.get("error_class") not in (None, "http_status") \
            and last.get("error"):  # a 2xx that still failed: too short, unconfirmed ...
        return f"{last['error_class']}: {last['error']} (HTTP {last['status']})"
    if last.get("status") is not None:
        line = f"HTTP {last['status']}"
        if last.get("body"):
            line += f": {last['body']}"
        return line
    return f"{last.get('error_class') or 'error'}: {last.get('error') or 'no response'}"


def job_message(
    event: str, *, job_id: uuid.UUID, job_name: str, run_id: uuid.UUID,
    scheduled_for: datetime, attempts: int, consecutive_failures: int, since: datetime,
    last_response: dict[str, Any], now: datetime,
) -> dict[str, Any]:
    """The message for a job alert.

    Args:
        event: ``failed`` (the run failed after its last attempt and the streak reached
            ``alert_after_failures``), ``still_failing`` (re-alert) or ``recovered``.
        run_id: the run that failed (or, for ``recovered``, succeeded).
        scheduled_for: that run's slot (UTC).
        attempts: attempts the run made.
        consecutive_failures: failed runs in the streak (for ``recovered``: the streak that
            ended).
        since: the slot of the streak's first failed run (UTC).
        last_response: ``{"status", "body", "error_class", "error"}`` of the run's last
            attempt.
        now: the instant of the alert (UTC).
    """
    quoted = f"\u201c{job_name}\u201d"
    if event == "recovered":
        title = f"Job {quoted} recovered"
        text = (f"The run scheduled for {rfc3339(scheduled_for)} succeeded after "
                f"{consecutive_failures} failed run{'s' if consecutive_failures != 1 else ''} "
                f"(failing for {_duration((now - since).total_seconds())}).")
        facts = [("Failing since", rfc3339(since)), ("Recovered at", rfc3339(now))]
    else:
        title = (f"Job {quoted} is still failing" if event == "still_failing"
                 else f"Job {quoted} failed")
        text = (f"The run scheduled for {rfc3339(scheduled_for)} failed after {attempts} "
                f"attempt{'s' if attempts != 1 else ''}: {_response_line(last_response)}.")
        facts = [("Failing since", rfc3339(since)),
                 ("Consecutive failed runs", str(consecutive_failures))]
    facts.append(("Last response", _response_line(last_response)))
    return {
        "event": f"job.{event}", "status": "up" if event == "recovered" else "down",
        "title": title, "text": text,
        "subject": {"type": "job", "id": str(job_id), "name": job_name},
        "occurred_at": rfc3339(now), "since": rfc3339(since),
        "facts": [{"name": n, "value": v} for n, v in facts],
        "last_response": last_response, "last_ping": None,
        "links": {"job": f"/v1/jobs/{job_id}", "run": f"/v1/runs/{run_id}",
                  "runs": f"/v1/jobs/{job_id}/runs"},
    }


def job_slot_message(*, job_id: uuid.UUID, job_name: str, run_id: uuid.UUID,
                     reason: str, scheduled_for: datetime, why: str,
                     now: datetime) -> dict[str, Any]:
    """The message for a slot of a job that did not run, alerted because its ``alert_on``
    names ``reason`` (``skipped``: overlap policy; ``missed``: catch-up policy; ``held``:
    maintenance; docs/notifications.md, *Slots that did not run*). ``why`` is the run's
    recorded reason; ``scheduled_for`` the slot (UTC)."""
    quoted = f"\u201c{job_name}\u201d"
    slot = rfc3339(scheduled_for)
    return {
        "event": f"job.{reason}", "status": "down",
        "title": f"Job {quoted}: the slot of {slot} was {reason}",
        "text": f"The slot scheduled for {slot} did not run: {why}.",
        "subject": {"type": "job", "id": str(job_id), "name": job_name},
        "occurred_at": rfc3339(now), "since": slot,
        "facts": [
            {"name": "Slot", "value": slot}, {"name": "Reason", "value": why},
            {"name": "Rule", "value": f"alert_on: {reason}"}],
        "last_response": None, "last_ping": None,
        "links": {"job": f"/v1/jobs/{job_id}", "run": f"/v1/runs/{run_id}",
                  "runs": f"/v1/jobs/{job_id}/runs"},
    }


def job_overran_message(*, job_id: uuid.UUID, job_name: str, run_id: uuid.UUID,
                        scheduled_for: datetime, started_at: datetime, max_duration: int,
                        now: datetime) -> dict[str, Any]:
    """The message for a run still going past its job's ``max_duration`` (seconds), sent
    while it runs (:mod:`core.runs.bounds`): it started at ``started_at`` (UTC)."""
    quoted = f"\u201c{job_name}\u201d"
    slot = rfc3339(scheduled_for)
    return {
        "event": "job.too_long", "status": "down",
        "title": f"Job {quoted} is still running after {span(max_duration)}",
        "text": f"The run of {slot} started at {rfc3339(started_at)} is still going after "
                f"{span((now - started_at).total_seconds())}, expected at most "
                f"{span(max_duration)} (max_duration).",
        "subject": {"type": "job", "id": str(job_id), "name": job_name},
        "occurred_at": rfc3339(now), "since": rfc3339(started_at),
        "facts": [{"name": "Slot", "value": slot},
                  {"name": "Started at", "value": rfc3339(started_at)},
                  {"name": "Rule", "value": f"max_duration: {span(max_duration)}"}],
        "last_response": None, "last_ping": None,
        "links": {"job": f"/v1/jobs/{job_id}", "run": f"/v1/runs/{run_id}",
                  "runs": f"/v1/jobs/{job_id}/runs"},
    }


def job_broken_message(*, job_id: uuid.UUID, job_name: str, reason: str,
                       now: datetime) -> dict[str, Any]:
    """The message for a job the scheduler stopped firing because its stored definition no
    longer evaluates (``job.broken``, docs/api.md): ``reason`` says why; fixing the definition
    with ``PATCH /v1/jobs/{id}`` (or a resume, once it evaluates again) repairs it."""
    quoted = f"\u201c{job_name}\u201d"
    return {
        "event": "job.broken", "status": "down",
        "title": f"Job {quoted} is broken and no longer fires",
        "text": f"Its stored definition no longer evaluates: {reason}. Fix it with PATCH "
                f"/v1/jobs/{job_id} to make it fire again.",
        "subject": {"type": "job", "id": str(job_id), "name": job_name},
        "occurred_at": rfc3339(now), "since": rfc3339(now),
        "facts": [{"name": "Reason", "value": reason},
                  {"name": "Broken since", "value": rfc3339(now)}],
        "last_response": None, "last_ping": None,
        "links": {"job": f"/v1/jobs/{job_id}", "events": f"/v1/jobs/{job_id}/events"},
    }


def _ping_line(ping: dict[str, Any] | None) -> str:
    if not ping:
        return "never pinged"
    line = f"{ping.get('kind') or 'success'} ping at {ping.get('at') or 'an unknown time'}"
    if ping.get("body"):
        line += f": {snippet(ping['body'])}"
    return line


def span(seconds: float) -> str:
    """A length of time as people write it: ``4 s``, ``2 min``, ``1 h 30 min``, ``2 d 3 h``
    (two units at most, seconds only under a minute)."""
    seconds = int(max(0, seconds))
    if seconds < 60:
        return f"{seconds} s"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = [f"{v} {u}" for v, u in ((days, "d"), (hours, "h"), (minutes, "min")) if v]
    return " ".join(parts[:2])


def _at(value: Any) -> str:
    """An instant of an event's data (a ``datetime``, or RFC 3339 text read back)."""
    return str(rfc3339(value)) if isinstance(value, datetime) else str(value)


# reason of a monitor.down event -> (short label, the kind of lateness or failure)
DOWN_REASONS = {
    "fail": "reported a failure",
    "failure_keyword": "failure keyword in the ping body",
    "too_short": "run too short",
    "too_long": "run too long",
    "start_timeout": "run not finished within the grace period",
    "overdue": "late start: no ping in time",
    "missed": "missed slot: no ping in time",
}


def down_reason(data: dict[str, Any] | None) -> tuple[str, str] | None:
    """``(label, sentence)`` explaining a ``monitor.down`` event's data (``reason`` and its
    details, :func:`core.monitors.rules.time_transition` and :func:`core.monitors.rules.ping`),
    or ``None`` when there is none. The two lateness kinds read differently: ``overdue`` is a
    start (or ping) that did not come by its deadline, ``too_long`` a run that started and has
    not ended within ``max_duration``."""
    if not data or data.get("reason") not in DOWN_REASONS:
        return None
    reason = data["reason"]
    if reason == "fail":
        status = data.get("exit_status")
        sentence = "It reported a failure" + (
            f" (exit status {status})." if status not in (None, 0) else ".")
    elif reason == "failure_keyword":
        sentence = "Its ping's body contained one of the monitor's failure keywords."
    elif reason == "too_short":
        sentence = (f"The run finished in {span(data['duration_ms'] / 1000)}, expected at "
                    f"least {span(data['min_duration'])} (min_duration).")
    elif reason == "too_long":
        sentence = (f"The run started at {_at(data['started_at'])} is still going after "
                    f"{span(data['max_duration'])}, expected at most "
                    f"{span(data['max_duration'])} (max_duration).")
    elif reason == "start_timeout":
        sentence = (f"The run started at {_at(data['started_at'])} did not end by "
                    f"{_at(data['deadline'])} (the grace period).")
    else:  # overdue, missed
        sentence = (f"No ping arrived in time: expected at {_at(data.get('expected_at'))}, "
                    f"down at {_at(data.get('deadline'))} after the grace period.")
    failures = data.get("failures")
    if isinstance(failures, int) and failures > 1:  # failure tolerance (core/alerting.py)
        sentence += f" That is {failures} failures in a row (alert_after_failures)."
    return DOWN_REASONS[reason], sentence


def monitor_message(
    event: str, *, monitor_id: uuid.UUID, monitor_name: str, since: datetime,
    last_ping: dict[str, Any] | None, now: datetime, reason: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The message for a monitor alert.

    Args:
        event: ``down``, ``up`` or ``still_down``.
        since: for ``down``/``still_down`` when the monitor went down; for ``up`` when the
            outage began (UTC).
        last_ping: ``{"at": RFC 3339, "kind": "success"|"start"|"fail"|..., "body": str|None,
            ...}`` or ``None`` when never pinged (extra keys are kept as given).
        now: the instant of the alert (UTC).
        reason: the ``monitor.down`` event's data of a ``down`` alert (:func:`down_reason`).
    """
    quoted = f"\u201c{monitor_name}\u201d"
    outage = _duration((now - since).total_seconds())
    if event == "up":
        title = f"Monitor {quoted} is up"
        text = f"It is pinging again after being down for {outage}."
        facts = [("Down since", rfc3339(since)), ("Up at", rfc3339(now))]
    else:
        title = (f"Monitor {quoted} is still down" if event == "still_down"
                 else f"Monitor {quoted} is down")
        text = f"No ping arrived in time; it has been down for {outage}."
        facts = [("Down since", rfc3339(since))]
        explained = down_reason(reason) if event == "down" else None
        if explained is not None:
            text = explained[1]
            facts.append(("Reason", explained[0]))
    facts.append(("Last ping", _ping_line(last_ping)))
    ping = None if last_ping is None else {**last_ping, "body": snippet(last_ping.get("body"))}
    return {
        "event": f"monitor.{event}", "status": "up" if event == "up" else "down",
        "title": title, "text": text,
        "subject": {"type": "monitor", "id": str(monitor_id), "name": monitor_name},
        "occurred_at": rfc3339(now), "since": rfc3339(since),
        "facts": [{"name": n, "value": v} for n, v in facts],
        "last_response": None, "last_ping": ping,
        "links": {"monitor": f"/v1/monitors/{monitor_id}",
                  "pings": f"/v1/monitors/{monitor_id}/pings"},
    }


def test_message(channel_id: uuid.UUID, channel_name: str, now: datetime) -> dict[str, Any]:
    """The message ``POST /v1/channels/{id}/test`` sends."""
    return {
        "event": "channel.test", "status": "info",
        "title": "Test notification from cronledger",
        "text": f"Channel \u201c{channel_name}\u201d is set up: alerts will arrive here.",
        "subject": {"type": "channel", "id": str(channel_id), "name": channel_name},
        "occurred_at": rfc3339(now), "since": None,
        "facts": [], "last_response": None, "last_ping": None,
        "links": {"channel": f"/v1/channels/{channel_id}"},
    }


MAX_DEPENDENTS_NAMED = 10  # dependents named in a parent's message; the rest are counted


def with_dependents(message: dict[str, Any], event: str, dependents: list[dict[str, Any]]
                    ) -> dict[str, Any]:
    """A parent's message with the dependents whose alerts it holds
    (:mod:`core.notifications.dependencies`): the title says how many (``… is down; 3
    dependents also silent``, or on a recovery ``… is up; 3 dependents were held``), a fact
    names them, and ``dependents`` lists ``[{"id", "kind", "name"}]``. Unchanged without
    dependents."""
    if not dependents:
        return message
    n = len(dependents)
    noun = "dependent" if n == 1 else "dependents"
    recovered = event in ("up", "recovered")
    suffix = (f"{n} {noun} {'was' if n == 1 else 'were'} held: they alert now if still down"
              if recovered else f"{n} {noun} also silent")
    names = ", ".join(f"\u201c{d['name']}\u201d" for d in dependents[:MAX_DEPENDENTS_NAMED])
    if n > MAX_DEPENDENTS_NAMED:
        names += f" and {n - MAX_DEPENDENTS_NAMED} more"
    return {**message, "title": f"{message['title']}; {suffix}",
            "facts": [*message.get("facts", ()),
                      {"name": "Held dependents" if recovered else "Dependents also silent",
                       "value": names}],
            "dependents": [{"id": str(d["id"]), "kind": d["kind"], "name": d["name"]}
                           for d in dependents]}
