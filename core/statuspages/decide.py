"""What a status page command decides, without the database: from the page's state (its
locked ``status_pages`` row) and the command (:class:`CreatePage`, :class:`UpdatePage`,
:class:`DeletePage`), the events to append.

Pure functions of their arguments, tested without PostgreSQL
(``tests/unit/test_status_pages.py``); :mod:`core.statuspages.commands` locks the row, asks
here, checks the ids named against the team's jobs and monitors (in the database), mints and
seals keys, and appends what was decided (:mod:`core.streams`). Events carry the key's
SHA-256 (hex), never the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.statuspages.definition import FIELDS, normalize_page
from core.statuspages.state import PageState
from core.streams import Change, Decision, event_data


@dataclass(frozen=True, slots=True)
class CreatePage:
    """``POST /v1/status-pages``: ``fields`` (:mod:`core.statuspages.definition`) and the
    SHA-256 of the key minted for it."""

    fields: Mapping[str, Any]
    key_hash: bytes


@dataclass(frozen=True, slots=True)
class UpdatePage:
    """``PATCH /v1/status-pages/{id}``: the fields given replace the stored ones (``tags``
    replaces ``components`` and the reverse; ``path: None`` clears it); ``key_hash``: the
    SHA-256 of a key minted to replace the current one (``None``: keep it)."""

    fields: Mapping[str, Any]
    key_hash: bytes | None = None


@dataclass(frozen=True, slots=True)
class DeletePage:
    """``DELETE /v1/status-pages/{id}``."""


def decide_create(command: CreatePage) -> Decision:
    """A new page: ``status_page.created`` with its definition and key hash.

    Raises:
        InvalidInput: the definition is not acceptable.
    """
    definition = normalize_page(dict(command.fields))
    return Decision(definition, [("status_page.created", {
        **event_data(definition), "key_hash": command.key_hash.hex()})])


def decide_update(before: PageState, command: UpdatePage) -> Decision:
    """Change the fields given and/or the key: ``status_page.updated`` with the changed
    fields (``key_hash`` among them for a new key); nothing when nothing changes. Without
    fields (a key's rotation) the stored definition is kept as it is, unchecked.

    Raises:
        InvalidInput: the resulting definition is not acceptable.
    """
    current = before.definition()
    given = {k: v for k, v in command.fields.items() if k in FIELDS}
    if "tags" in given and "components" not in given:
        given["components"] = []
    if "components" in given and "tags" not in given:
        given["tags"] = []
    if "components" in command.fields and "names" not in given:
        # The stored display names of components the change drops go with them (a name of
        # a since-deleted component, hidden from every read, never blocks it: issue 32).
        listed = given["components"]
        kept = {str(c) for c in listed} if isinstance(listed, list | tuple) else set()
        given["names"] = {k: v for k, v in current["names"].items() if k in kept}
    # A bare rotation re-checks nothing: a stored field refused by a later rule (a path of a
    # key's form, a blank title) never stops a leaked key from being replaced.
    definition = normalize_page({**current, **given}) if given else current
    changes = event_data({k: v for k, v in definition.items() if v != current[k]})
    if command.key_hash is not None:
        changes["key_hash"] = command.key_hash.hex()
    return Decision(definition, [("status_page.updated", {"changes": changes})]
                    if changes else [])


def decide_delete(before: PageState, command: DeletePage) -> list[Change]:
    """``status_page.deleted``: the row goes, the stream stays."""
    return [("status_page.deleted", {})]
