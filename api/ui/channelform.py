"""The channel form: HTML form fields to the fields of ``POST /v1/channels`` (or a ``PATCH``)
and back, for every kind (:data:`core.channels.definition.KINDS`).

Only shapes are handled here: the kind's own fields are taken (the others' are ignored, so a
form that shows every kind's fields without JavaScript still sends one kind), recipients split
at commas and spaces, the SMTP fields grouped; every rule and message is
:mod:`core.channels.definition`'s. On an edit a blank URL or signing secret keeps the stored
one (they are sealed and never shown again).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any

from api.deps import is_digits
from core.channels.definition import KIND_FIELDS, SMTP_FIELDS
from core.channels.queries import channel_names, channels_by_name, list_channels
from core.errors import FieldError

URL_KINDS = ("webhook", "slack", "discord")
FIELDS = ("name", "kind", "url", "signing_secret", "chat_id", "token_secret", "to",
          *(f"smtp.{k}" for k in SMTP_FIELDS))
_RECIPIENTS = re.compile(r"[\s,;]+")


def _text(form: dict[str, Any], name: str) -> str:
    return str(form.get(name) or "").strip()


def _smtp(form: dict[str, Any]) -> dict[str, Any] | None:
    given = {k: _text(form, f"smtp.{k}") for k in SMTP_FIELDS}
    if not any(given.values()):
        return None
    smtp: dict[str, Any] = {k: v for k, v in given.items() if v}
    if "port" in smtp and is_digits(smtp["port"]):
        smtp["port"] = int(smtp["port"])  # anything else is passed on for the core's message
    smtp.setdefault("host", "")
    return smtp


def parse(form: dict[str, Any], kind: str, *, editing: bool) -> dict[str, Any]:
    """The API fields of a submitted form for a channel of ``kind``.

    Args:
        editing: a ``PATCH`` (no ``kind``; a blank URL or signing secret keeps the stored one;
            blank SMTP fields remove the SMTP settings).
    """
    fields: dict[str, Any] = {"name": str(form.get("name") or "")}
    if not editing:
        fields["kind"] = kind
    allowed = KIND_FIELDS.get(kind, ())
    if "url" in allowed and (_text(form, "url") or not editing):
        fields["url"] = _text(form, "url")
    if "signing_secret" in allowed and _text(form, "signing_secret"):
        fields["signing_secret"] = _text(form, "signing_secret")
    for name in ("chat_id", "token_secret"):
        if name in allowed:
            fields[name] = _text(form, name)
    if "to" in allowed:
        recipients = [r for r in _RECIPIENTS.split(_text(form, "to")) if r]
        fields["to"] = recipients[0] if len(recipients) == 1 else recipients
        fields["smtp"] = _smtp(form)
    return fields


def values_of(channel: dict[str, Any]) -> dict[str, str]:
    """The edit form's texts of a channel (:func:`core.channels.queries.channel_view`); its
    sealed URL and signing secret are never among them."""
    smtp = channel.get("smtp") or {}
    to = channel.get("to") or []
    values = {"name": channel["name"], "kind": channel["kind"],
              "chat_id": str(channel.get("chat_id") or ""),
              "token_secret": str(channel.get("token_secret") or ""),
              "to": ", ".join(to) if isinstance(to, list) else str(to)}
    for key in SMTP_FIELDS:
        value = smtp.get(key)
        values[f"smtp.{key}"] = "" if value is None else str(value)
    return values


def form_texts(form: dict[str, Any]) -> dict[str, str]:
    """A submitted form's texts, to show it again with its messages (secrets left out)."""
    return {name: _text(form, name) for name in FIELDS
            if name not in ("url", "signing_secret")}


def errors_by_field(errors: list[FieldError]) -> dict[str, str]:
    """``{form field: message}``: ``to.2`` at ``to``, ``smtp.port`` at its own field."""
    placed: dict[str, str] = {}
    for error in errors:
        field = error.field
        if field.startswith("to."):
            field = "to"
        elif field not in FIELDS:
            field = field.split(".")[0]
        placed[field] = f"{placed[field]}; {error.message}" if field in placed else error.message
    return placed


def channel_items(value: Any) -> list[str]:
    """The channel ids a form sent: one per checked box (a list), or a comma-separated text."""
    if isinstance(value, list):
        return [str(v) for v in value]
    return str(value or "").replace("\n", ",").split(",")


def channel_ids(value: Any) -> tuple[list[uuid.UUID], list[FieldError]]:
    """The channel ids of a form's ``channels`` (:func:`channel_items`) and the problems of
    those that are not ids."""
    ids: list[uuid.UUID] = []
    errors: list[FieldError] = []
    for item in channel_items(value):
        if item.strip():
            try:
                ids.append(uuid.UUID(item.strip()))
            except ValueError:
                errors.append(FieldError("channels", f"{item.strip()[:40]!r} is not a channel"))
    return ids, errors


CHOICES = 200  # channels offered by a job's or monitor's form


@dataclass(frozen=True)
class Choices:
    """What a job's or monitor's channel picker offers: ``items`` (``{"id", "name", "kind"}``)
    and whether the team has more channels than it lists (``more``: the form then takes
    others by name, :func:`more_channels`)."""

    items: list[dict[str, Any]]
    more: bool


async def channel_choices(pool: Any, actor: Any, selected: list[str]) -> Choices:
    """The channels a job or monitor form offers, by name: the team's first :data:`CHOICES`
    live channels (creation order) and, after them, each selected id that is not among them,
    named if it is a live channel of the team (``name`` ``None``: deleted or unknown), so that
    saving the form keeps it as it was."""
    rows = await list_channels(pool, actor, limit=CHOICES + 1, after=None)
    choices = [{"id": str(r["id"]), "name": r["name"], "kind": r["kind"]}
               for r in rows[:CHOICES]]
    known = {c["id"] for c in choices}
    rest = [c for c in dict.fromkeys(selected) if c not in known]
    names = await channel_names(pool, actor, [uuid.UUID(c) for c in rest if _is_uuid(c)])
    for c in rest:
        row = names.get(uuid.UUID(c)) if _is_uuid(c) else None
        if row is not None and row["live"]:
            choices.append({"id": c, "name": row["name"], "kind": row["kind"]})
        else:
            choices.append({"id": c, "name": None, "kind": ""})
    return Choices(choices, len(rows) > CHOICES)


async def more_channels(pool: Any, actor: Any, text: str
                        ) -> tuple[list[uuid.UUID], list[FieldError]]:
    """The channels a form names beyond the :data:`CHOICES` it lists (the ``more_channels``
    field: names, one per line): their ids, and a problem for each name that is no live
    channel of the team."""
    names = [n.strip() for n in text.replace("\r\n", "\n").split("\n") if n.strip()]
    found = await channels_by_name(pool, actor, names)
    return ([found[n] for n in names if n in found],
            [FieldError("channels", f"no channel named {n!r} in this team")
             for n in names if n not in found])


async def named_channels(pool: Any, actor: Any, ids: list[Any]) -> list[dict[str, Any]]:
    """What a job's or monitor's page shows of the channels it lists, in its order:
    ``{"id", "name", "live"}`` (a deleted or unknown one named as such)."""
    names = await channel_names(pool, actor, [uuid.UUID(str(c)) for c in ids
                                              if _is_uuid(str(c))])
    out = []
    for c in ids:
        row = names.get(uuid.UUID(str(c))) if _is_uuid(str(c)) else None
        live = bool(row is not None and row["live"])
        out.append({"id": str(c), "name": row["name"] if row is not None and live
                    else "a deleted channel", "live": live})
    return out


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True
