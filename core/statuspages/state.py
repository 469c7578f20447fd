"""A status page's state: the frozen :class:`PageState`, its ``status_pages`` row.

The row is what the page's ``status_page`` stream left (:mod:`core.statuspages.commands`
reads it locked, decides and writes it back with the event); the sealed key columns are not
part of the state (they are never in an event).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class PageState:
    """A status page as its row holds it: the definition of
    :func:`core.statuspages.definition.normalize_page`, ``key_hash`` (SHA-256 of the public
    key), the stream ``version`` and when it was created and last changed (UTC)."""

    id: uuid.UUID
    team_id: uuid.UUID
    title: str
    tags: list[str]
    components: list[uuid.UUID]
    names: dict[str, str]
    path: str | None
    key_hash: bytes
    version: int
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> PageState:
        """The state in a ``status_pages`` row."""
        values = {f: row[f] for f in _FIELDS}
        values["key_hash"] = bytes(values["key_hash"])
        values["components"] = list(values["components"])
        return cls(**values)

    def definition(self) -> dict[str, Any]:
        """The definition fields (``FIELDS`` of :mod:`core.statuspages.definition`)."""
        return {"title": self.title, "tags": list(self.tags),
                "components": list(self.components), "names": dict(self.names),
                "path": self.path}

    def with_definition(self, definition: Mapping[str, Any]) -> PageState:
        """This page with the definition fields of ``definition``."""
        return dataclasses.replace(self, **{k: definition[k] for k in
                                            ("title", "tags", "components", "names", "path")})

    def row_params(self) -> dict[str, Any]:
        """The parameters of ``status_page_upsert`` (core/sql/status_pages.sql), without the
        sealed key's columns."""
        return {f: getattr(self, f) for f in _FIELDS}


_FIELDS = tuple(f.name for f in dataclasses.fields(PageState))
