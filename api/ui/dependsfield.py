"""The forms' **Depends on** field: the parents of a job or monitor (``depends_on``,
docs/notifications.md, *Dependencies*) written as names, one per line, and back.

A line is the name of one of the team's live monitors or jobs; a name that is both a
monitor's and a job's is written ``monitor: NAME`` or ``job: NAME``. Only names become ids
here; every rule (the subject itself, a cycle, at most 20) is the core's
(:func:`core.dependencies.check_depends_on`), and its messages on ``depends_on.<i>`` are shown
at the field. A parent's id pasted as a line is taken as it is (the API's own form).
"""

from __future__ import annotations

import uuid
from typing import Any

from core.dependencies import parent_names, parents_by_name
from core.errors import FieldError

KINDS = ("monitor", "job")


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.replace("\r\n", "\n").split("\n") if line.strip()]


def _split(line: str) -> tuple[str | None, str]:
    """``("monitor", name)`` for ``monitor: name``, else ``(None, line)``."""
    head, sep, rest = line.partition(":")
    if sep and head.strip().lower() in KINDS and rest.strip():
        return head.strip().lower(), rest.strip()
    return None, line


async def parse_parents(pool: Any, team_id: uuid.UUID, text: str
                        ) -> tuple[list[Any], list[FieldError]]:
    """The ``depends_on`` list of the field's ``text`` (ids, in its order) and the problems of
    the lines that name no one parent (unknown, or both a monitor's and a job's name)."""
    lines = _lines(text)
    wanted = [_split(line) for line in lines]
    rows = await parents_by_name(pool, team_id, [name for _, name in wanted])
    found: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        found.setdefault(row["name"], []).append(row)
    ids: list[Any] = []
    errors: list[FieldError] = []
    for line, (kind, name) in zip(lines, wanted, strict=True):
        matches = [r for r in found.get(name, []) if kind is None or r["kind"] == kind]
        if len(matches) == 1:
            ids.append(matches[0]["id"])
        elif matches:
            errors.append(FieldError("depends_on", f"{name!r} is both a monitor and a job: "
                                                   f"write monitor: {name} or job: {name}"))
        else:
            try:
                ids.append(uuid.UUID(line))
            except ValueError:
                errors.append(FieldError("depends_on", f"no {kind or 'monitor or job'} named "
                                                       f"{name!r} in this team"))
    return ids, errors


async def parents_text(pool: Any, team_id: uuid.UUID, ids: list[Any]) -> str:
    """The field's text of a stored ``depends_on``: a name per line (``kind: name`` where the
    name is both a monitor's and a job's), an id no longer known as itself."""
    named = await parent_names(pool, team_id, [uuid.UUID(str(i)) for i in ids])
    rows = await parents_by_name(pool, team_id, [r["name"] for r in named.values()])
    kinds: dict[str, int] = {}
    for row in rows:
        kinds[row["name"]] = kinds.get(row["name"], 0) + 1
    lines = []
    for parent in ids:
        known = named.get(uuid.UUID(str(parent)))
        if known is None:
            lines.append(str(parent))
        elif kinds.get(known["name"], 0) > 1:
            lines.append(f"{known['kind']}: {known['name']}")
        else:
            lines.append(known["name"])
    return "\n".join(lines)


async def named_parents(pool: Any, team_id: uuid.UUID, ids: list[Any]) -> list[dict[str, Any]]:
    """What a page shows of a stored ``depends_on``: ``{"id", "kind", "name"}`` in its order
    (``kind`` ``None`` and the id as name for one no longer known)."""
    named = await parent_names(pool, team_id, [uuid.UUID(str(i)) for i in ids])
    return [dict(named[uuid.UUID(str(i))]) if uuid.UUID(str(i)) in named
            else {"id": str(i), "kind": None, "name": str(i)} for i in ids]
