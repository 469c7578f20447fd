"""The plan of an apply (docs/config.md, "`cronledger apply`"): for each object of the
document, and for each object of the team the document no longer names, what applying would
do. Pure.

An object is compared in its canonical form (what the kind's ``normalize_*`` returns, with
channels by name): fields are compared by value, tables key by key, so the diff names the
innermost field that differs (``request.headers.Authorization``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

ACTIONS = ("create", "update", "delete", "unchanged")
SYMBOLS = {"create": "+", "update": "~", "delete": "-", "unchanged": "="}
SEALED = "[sealed]"  # a sealed value is never shown, old or new
SEALED_CHANGED = "[sealed, changed]"


@dataclass(frozen=True)
class FieldDiff:
    """One field that differs: ``old`` / ``new`` are ``None`` when the field is absent."""

    field: str
    old: Any
    new: Any


@dataclass
class Change:
    """What the apply does to one object.

    Attributes:
        kind: ``job``, ``monitor`` or ``channel``.
        name: the object's identity in the file: a job's or channel's name, a monitor's slug.
        action: one of :data:`ACTIONS`.
        diffs: the fields that change (``update``; for ``create`` every field set).
        id: the object's id (existing objects; filled in for created ones once applied).
        index: its position among the document's objects of its kind (``None``: delete).
        desired: the canonical fields to write (create / update).
        extra: what the apply reports once: ``ping_url`` of a created monitor,
            ``signing_secret`` of a created webhook channel whose secret was generated,
            ``run_id`` of a run queued by ``run_on_start``.
    """

    kind: str
    name: str
    action: str
    diffs: list[FieldDiff] = field(default_factory=list)
    id: uuid.UUID | None = None
    index: int | None = None
    desired: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def diff_fields(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[FieldDiff]:
    """The fields whose values differ between ``old`` and ``new``, recursing into tables that
    both sides have, in ``new``'s key order then ``old``'s removed keys."""
    out: list[FieldDiff] = []
    for key in [*new, *(k for k in old if k not in new)]:
        path = f"{prefix}{key}"
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += diff_fields(a, b, f"{path}.")
        elif a != b:
            out.append(FieldDiff(path, a, b))
    return out


def plan_kind(kind: str, desired: list[tuple[str, dict[str, Any]]],
              current: dict[str, tuple[uuid.UUID, dict[str, Any]]], *,
              prune: bool) -> list[Change]:
    """The changes for one kind.

    Args:
        kind: ``job``, ``monitor`` or ``channel``.
        desired: ``(name, canonical fields)`` in document order.
        current: the team's live objects of that kind by name: ``(id, canonical fields)``.
        prune: plan a ``delete`` for each current object the document does not name.

    Returns:
        One change per desired object, in document order, then the deletes by name.
    """
    changes = []
    for index, (name, fields) in enumerate(desired):
        if name not in current:
            changes.append(Change(kind, name, "create", diff_fields({}, fields), index=index,
                                  desired=fields))
            continue
        object_id, now = current[name]
        diffs = diff_fields(now, fields)
        changes.append(Change(kind, name, "update" if diffs else "unchanged", diffs, object_id,
                              index, fields))
    if prune:
        named = {name for name, _ in desired}
        changes += [Change(kind, name, "delete", id=current[name][0])
                    for name in sorted(current) if name not in named]
    return changes


def _show(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, str):
        return value if value in (SEALED, SEALED_CHANGED) else repr(value)
    return repr(value)


def plan_lines(changes: list[dict[str, Any]]) -> list[str]:
    """The plan as text, one line per object and one indented line per changed field:
    ``+ create job "backup"``, ``    schedule: '0 3 * * *' -> '0 4 * * *'``.

    Args:
        changes: the API's view of the changes (``kind``, ``name``, ``action``, ``changes``
            as ``[{"field", "old", "new"}]``), which is what the CLI receives.
    """
    lines = []
    for change in changes:
        action = change["action"]
        lines.append(f"{SYMBOLS[action]} {action} {change['kind']} {change['name']!r}")
        if action == "update":
            lines += [f"    {d['field']}: {_show(d['old'])} -> {_show(d['new'])}"
                      for d in change["changes"]]
    return lines
