"""Why did this page me: an alert explained from the log (``GET /v1/alerts/{id}/explain``,
docs/notifications.md, *Alerts and why*).

Everything comes from what was recorded: the alert's record (what the rule said, kept as its
``rule``: a monitor's ``monitor.down`` data, a job's streak and threshold), the subject's
definition folded from its stream's definition events up to the alert's instant
(:func:`core.history.as_of.definition_as_of`: the zone and grace in force then, not now),
the subject's events up to it (a monitor's pings and status flips) or a job's runs, and
whether a maintenance window held it.
"""

from __future__ import annotations

import uuid
from typing import Any

from core.actor import Actor
from core.alerts.queries import get_alert
from core.coerce import instant
from core.db import ConnectionPool
from core.errors import Gone, NotFound
from core.history.as_of import definition_as_of
from core.history.streams import JOB, MONITOR
from core.jobs.definition import ALERT_ON
from core.notifications.messages import down_reason
from core.queries import Q
from core.schedule.zones import load_zone

AROUND = 20  # events or runs listed up to the alert
DEFINITION_KEYS = {
    "monitor": ("name", "schedule", "timezone", "grace_seconds", "min_duration",
                "max_duration", "start_keywords", "success_keywords", "failure_keywords",
                "alert_after_failures", "recover_after_successes", "realert_every",
                "channels", "depends_on"),
    "job": ("name", "schedule", "timezone", "overlap", "catchup", "alert_after_failures",
            "realert_every", "alert_on", "channels", "depends_on", "min_duration",
            "max_duration"),
}
JOB_TEXT = {
    "alert_after_failures": "{consecutive_failures} run(s) in a row failed after their last "
                            "attempt, reaching alert_after_failures ({alert_after_failures}).",
    "realert_every": "It kept failing, and realert_every ({realert_every} s) had passed since "
                     "the last alert.",
    "succeeded": "A run succeeded after {consecutive_failures} failed run(s) that alerted.",
    "broken": "The scheduler stopped firing it: {broken_reason}",
    "max_duration": "The run of {scheduled_for} started at {started_at} was still going at "
                    "{deadline}, past max_duration ({max_duration} s).",
    # a slot that did not run, alerted by the job's alert_on (core/runs/claim.py)
    **{f"alert_on: {kind}": "The slot of {scheduled_for} was " + kind + " ({why}), and "
       "alert_on names " + kind + "." for kind in ALERT_ON},
}


def rule_text(subject_type: str, event: str, rule: dict[str, Any]) -> str:
    """The sentence saying why the rule fired (a monitor's ``down`` as its message says it,
    :func:`core.notifications.messages.down_reason`)."""
    if subject_type == "monitor":
        if event == "down":
            explained = down_reason(rule)
            return explained[1] if explained else "It went down."
        if event == "up":
            return "A ping brought it back up after the alert" + (
                "." if rule.get("reason") == "ping" else f" ({rule.get('reason')}).")
        return f"It was still down, and realert_every ({rule.get('realert_every')} s) passed."
    template = JOB_TEXT.get(str(rule.get("reason")))
    try:
        return template.format(**rule) if template else f"The job {event}."
    except (KeyError, IndexError):
        return f"The job {event}."


def dependency_text(rule: dict[str, Any]) -> str:
    """What the dependencies did to the alert, as a sentence to append (``""``: nothing):
    held because parents in ``depends_on`` were down, or sent when they came back
    (docs/notifications.md, *Dependencies*)."""
    if rule.get("held_by"):
        down = [p for p in rule.get("dependencies") or () if p.get("down")]
        names = ", ".join(f"{p.get('kind')} {p.get('name')!r}" for p in down) or "a parent"
        return (f" It was held, not sent: {names} (depends_on) "
                f"{'was' if len(down) < 2 else 'were'} down.")
    if rule.get("released_from"):
        return (f" It had been held while its parents were down (alert "
                f"{rule['released_from']}) and was sent when they came back.")
    return ""


def expected_slot(rule: dict[str, Any], definition: dict[str, Any] | None
                  ) -> dict[str, Any] | None:
    """The slot the alert is about, and the zone it was computed in: ``{"slot" (UTC),
    "local" (in the zone, with its offset), "timezone", "grace_seconds", "deadline"}``, from
    the rule's ``expected_at`` (a late or missed slot) or ``scheduled_for`` (a job's run);
    ``None`` when the alert is about no slot (a failed ping)."""
    slot = instant(rule.get("expected_at") or rule.get("scheduled_for"))
    if slot is None or definition is None:
        return None
    zone = definition.get("timezone") or "UTC"
    try:
        local = slot.astimezone(load_zone(zone)).isoformat()
    except Exception:  # noqa: BLE001 - a zone tzdata no longer knows: UTC only
        local = None
    return {"slot": slot, "local": local, "timezone": zone,
            "grace_seconds": definition.get("grace_seconds"),
            "deadline": instant(rule.get("deadline"))}


async def _around(pool: ConnectionPool, actor: Actor, alert: dict[str, Any]
                  ) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        if alert["subject_type"] == "job":
            cur = await conn.execute(Q["alert_job_runs"], {
                "job_id": alert["subject_id"], "at": alert["created_at"], "limit": AROUND})
            return [{"at": r["scheduled_for"], "kind": "run", "id": r["id"],
                     "status": r["status"], "attempt": r["attempt"],
                     "finished_at": r["finished_at"], "response_status": r["response_status"],
                     "error_class": r["error_class"], "reason": r["reason"]}
                    for r in reversed(await cur.fetchall())]
        cur = await conn.execute(Q["alert_subject_events"], {
            "subject_id": alert["subject_id"], "team_id": actor.team_id,
            "at": alert["created_at"], "limit": AROUND})
        return [{"at": r["occurred_at"], "kind": r["event_type"], "version": r["stream_version"],
                 "data": r["data"]} for r in reversed(await cur.fetchall())]


async def explain_alert(pool: ConnectionPool, actor: Actor, alert_id: uuid.UUID
                        ) -> dict[str, Any]:
    """The explanation of one alert: ``{"alert", "rule": {"name", "reason", "text", "data"},
    "definition" (as of the alert, ``None`` if it no longer folds), "expected"
    (:func:`expected_slot`), "around" (the subject's latest events, or a job's runs, up to
    the alert, oldest first), "maintenance": {"held", "until"}, "dependencies":
    {"considered" (each parent's state at the alert), "held_by" (the parents down that held
    it), "released_from" (the held alert it sends, when the parents came back)}}``.

    Raises:
        NotFound: no such alert for this team.
    """
    alert = await get_alert(pool, actor, alert_id)
    kind = MONITOR if alert["subject_type"] == "monitor" else JOB
    try:
        state = await definition_as_of(pool, actor, kind, alert["subject_id"],
                                       alert["created_at"])
        definition = {k: state.get(k) for k in DEFINITION_KEYS[alert["subject_type"]]}
    except (NotFound, Gone):
        definition = None
    rule = alert["rule"] or {}
    return {
        "alert": alert,
        "rule": {"name": f"{alert['subject_type']}.{alert['event']}",
                 "reason": rule.get("reason"),
                 "text": rule_text(alert["subject_type"], alert["event"], rule)
                 + dependency_text(rule),
                 "data": rule},
        "definition": definition,
        "expected": expected_slot(rule, definition),
        "around": await _around(pool, actor, alert),
        "maintenance": {"held": alert["held_until"] is not None,
                        "until": alert["held_until"]},
        "dependencies": {"considered": list(rule.get("dependencies") or ()),
                         "held_by": rule.get("held_by"),
                         "released_from": rule.get("released_from")},
    }
