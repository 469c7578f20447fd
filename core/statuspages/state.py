"""A status page's state: the frozen :class:`PageState`, its ``status_pages`` row, and its
fold (:func:`evolve`).

The row is what the page's ``status_page`` stream left; :mod:`core.statuspages.commands`
locks it, asks :mod:`core.statuspages.decide` and appends (:mod:`core.streams`). The sealed
key's columns (``key_id``, ``nonce``, ``ciphertext``) are in the row and the state but in no
event: a fold keeps them, a new key clears them and the command sets the new ones.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.coerce import instant


@dataclass(frozen=True, slots=True, kw_only=True)
class PageState:
    """A status page as its row holds it: the definition of
    :func:`core.statuspages.definition.normalize_page`, ``key_hash`` (SHA-256 of the public
    key) and the key sealed (``None``: not kept), the stream ``version``, when it was created
    and last changed (UTC), and whether it was ``deleted`` (then it has no row)."""

    id: uuid.UUID
    team_id: uuid.UUID
    title: str
    tags: list[str]
    components: list[uuid.UUID]
    names: dict[str, str]
    path: str | None
    key_hash: bytes
    key_id: str | None = None
    nonce: bytes | None = None
    ciphertext: bytes | None = None
    version: int
    created_at: datetime
    updated_at: datetime
    deleted: bool = False

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> PageState:
        """The state in a ``status_pages`` row (``status_page_lock``)."""
        values = {f: row[f] for f in _FIELDS if f != "deleted"}
        for key in ("key_hash", "nonce", "ciphertext"):
            values[key] = None if values[key] is None else bytes(values[key])
        values["components"] = list(values["components"])
        return cls(**values)

    def definition(self) -> dict[str, Any]:
        """The definition fields (``FIELDS`` of :mod:`core.statuspages.definition`)."""
        return {"title": self.title, "tags": list(self.tags),
                "components": list(self.components), "names": dict(self.names),
                "path": self.path}

    def upsert_params(self) -> dict[str, Any]:
        """The parameters of ``status_page_upsert`` (core/sql/status_pages.sql)."""
        return {**{f: getattr(self, f) for f in _FIELDS if f != "deleted"},
                "names": json.dumps(self.names)}


_FIELDS = tuple(f.name for f in dataclasses.fields(PageState))


def definition_of(data: Mapping[str, Any]) -> dict[str, Any]:
    """Definition fields as an event carries them (ids as text) in the canonical form of
    :func:`core.statuspages.definition.normalize_page`."""
    out = {k: v for k, v in data.items() if k in ("title", "tags", "components", "names",
                                                   "path")}
    if "components" in out:
        out["components"] = [uuid.UUID(str(i)) for i in out["components"]]
    return out


def evolve(state: PageState | None, event: Mapping[str, Any]) -> PageState:
    """Apply one event (a row of ``events`` or an equivalent dict) to ``state``.

    Raises:
        ValueError: a stream not starting with ``status_page.created``, an unknown event type.
    """
    kind, data = event["event_type"], event["data"]
    at, version = instant(event["occurred_at"]), event["stream_version"]
    if kind == "status_page.created":
        if state is not None:
            raise ValueError("status_page.created on an existing page")
        return PageState(id=event["stream_id"], team_id=event["team_id"], version=version,
                         key_hash=bytes.fromhex(data["key_hash"]), created_at=at,
                         updated_at=at, **definition_of(data))
    if state is None:
        raise ValueError(f"{kind} before status_page.created")
    if kind == "status_page.updated":
        changes = data["changes"]
        state = dataclasses.replace(state, **definition_of(changes), version=version,
                                    updated_at=at)
        if "key_hash" in changes:  # a new key: the old sealed one must never be shown
            state = dataclasses.replace(state, key_hash=bytes.fromhex(changes["key_hash"]),
                                        key_id=None, nonce=None, ciphertext=None)
        return state
    if kind == "status_page.deleted":
        return dataclasses.replace(state, deleted=True, version=version, updated_at=at)
    raise ValueError(f"unknown status page event {kind!r}")
