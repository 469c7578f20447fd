"""A team's current definitions as a declarative document that applies as a no-op
(docs/config.md, "`cronledger export`").

Monitors are keyed by slug: one whose slug is not the one its name gives carries it, and one
without a slug is left out (:data:`SLUG_NOTE`).

Fields at their default are left out (applying restores the default, which they have); jobs and
monitors list their channels by name. Sealed values cannot be exported: a channel's ``url`` and
``signing_secret`` and a job's ``signing_secret`` are left out, and an absent sealed field is
kept as stored by apply (:mod:`core.declarative.apply`), so the round trip changes nothing.
"""

from __future__ import annotations

from typing import Any

from core.actor import Actor
from core.channels.definition import SECRET_FIELDS
from core.db import ConnectionPool
from core.declarative.apply import (
    MONITOR_PINNED,
    TeamState,
    current_channel,
    current_job,
    current_monitor,
    load_team,
    pinned_schedule,
)
from core.jobs import definition as jobdef
from core.monitors import definition as mondef
from core.monitors.slugs import slugify

SEALED_NOTE = ("Sealed values are not exported: a channel's url and signing_secret and a job's "
               "signing_secret are kept as stored while absent; to set one, write "
               "url = \"${secrets.NAME}\" (docs/config.md).")
SLUG_NOTE = ("Monitors are matched by slug (given, or made from the name); a monitor without a "
             "slug is neither exported nor changed by apply: give it one to manage it here.")


def _without_defaults(fields: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in fields.items():
        if key in defaults and (value == defaults[key] or (not value and not defaults[key])):
            continue
        if value is None or value == [] or value == {}:
            continue
        out[key] = value
    return out


def _job(fields: dict[str, Any]) -> dict[str, Any]:
    request = dict(fields["request"])
    request = {"url": request["url"],
               **({"method": request["method"]} if request["method"] != jobdef.DEFAULT_METHOD
                  else {}),
               **({"headers": request["headers"]} if request.get("headers") else {}),
               **({"body": request["body"]} if request.get("body") is not None else {})}
    retry = {k: v for k, v in fields["retry"].items() if jobdef.DEFAULT_RETRY.get(k) != v}
    rest = _without_defaults(fields, {**jobdef.DEFAULTS, "enabled": True})
    out = {"name": fields["name"], "schedule": fields["schedule"], **{
        k: v for k, v in rest.items() if k not in ("name", "schedule", "request", "retry")}}
    if out.get("depends_on"):  # ids as text: TOML has no UUID
        out["depends_on"] = [str(p) for p in out["depends_on"]]
    out["request"] = request
    if retry:
        out["retry"] = retry
    return out


def _monitor(fields: dict[str, Any]) -> dict[str, Any]:
    """A monitor, with its ``slug`` (its identity in a file) unless its name gives it."""
    rest = _without_defaults(fields, {**mondef.DEFAULTS, "enabled": True})
    if rest.get("slug") == slugify(fields["name"]):
        del rest["slug"]
    if rest.get("depends_on"):  # ids as text: TOML has no UUID
        rest["depends_on"] = [str(p) for p in rest["depends_on"]]
    return {"name": fields["name"], "schedule": fields["schedule"],
            **{k: v for k, v in rest.items() if k not in ("name", "schedule")}}


def _channel(fields: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in fields.items():
        if key in SECRET_FIELDS or value is None:
            continue
        out[key] = {k: v for k, v in value.items() if v is not None} \
            if isinstance(value, dict) else value
    return out


def document_of(state: TeamState) -> dict[str, list[dict[str, Any]]]:
    """The document of ``state``: ``{"channels", "monitors", "jobs"}``, in creation order,
    without ``None`` values (TOML has no null)."""
    names = state.channel_names()
    return {
        "channels": [_channel(current_channel(row)) for row in state.channels.values()],
        "monitors": [_monitor(_pinned(current_monitor(row, names), row["created_at"],
                                      MONITOR_PINNED)) for row in state.monitors.values()],
        "jobs": [_job(_pinned(current_job(row, names), row["anchor_at"]))
                 for row in state.jobs.values()],
    }


def _pinned(fields: dict[str, Any], anchor: Any,
            kinds: tuple[str, ...] = ("interval", "days")) -> dict[str, Any]:
    """An anchored schedule (an interval, a calendar period) with its anchor named, so that
    the document applied anywhere, at any time, fires at the same instants (apply reads it
    back as the stored schedule: :func:`core.declarative.apply.pinned_schedule`)."""
    return {**fields, "schedule": pinned_schedule(fields["schedule"], fields["timezone"],
                                                  anchor, kinds)}


async def export_document(pool: ConnectionPool, actor: Actor
                          ) -> dict[str, list[dict[str, Any]]]:
    """The current definitions of the team of ``actor`` (:func:`document_of`)."""
    async with pool.connection() as conn:
        return document_of(await load_team(conn, actor.team_id))
