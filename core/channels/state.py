"""A channel's state: the frozen :class:`ChannelState`, its ``channels`` row.

The row is what the channel's ``channel`` stream left (the events carry the redacted view,
never a secret); :mod:`core.channels.commands` reads it locked and writes it back with the
event.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelState:
    """A channel as its ``channels`` row holds it: the public ``config`` (the fields but
    ``name`` and ``kind``) and the secret fields sealed (``sealed`` under ``key_id``,
    :mod:`core.channels.sealing`)."""

    id: uuid.UUID
    team_id: uuid.UUID
    name: str
    kind: str
    config: dict[str, Any]
    key_id: str | None
    sealed: bytes | None
    version: int
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ChannelState:
        """The state in a ``channels`` row (``channel_lock``)."""
        return cls(**{f: row[f] for f in _FIELDS})

    def as_row(self) -> dict[str, Any]:
        """The row's columns, by name (what :func:`core.channels.sealing.unseal_channel` reads)."""
        return {f: getattr(self, f) for f in _FIELDS}


_FIELDS = tuple(f.name for f in dataclasses.fields(ChannelState))
