"""A channel's state: the frozen :class:`ChannelState`, its ``channels`` row, and its fold.

The row is what the channel's ``channel`` stream left (:func:`evolve`) with what no event
carries: the events hold the redacted view, never a secret, so the sealed secrets
(``key_id``, ``sealed``) and the redacted form of a secret field in ``config`` (a URL's scheme
and host) come from the command (:mod:`core.channels.commands`, ``amend`` of
:func:`core.streams.append`). :mod:`core.channels.commands` reads the row locked, decides
(:mod:`core.channels.decide`) and writes it back with the event.

Event types and payloads: ``channel.created`` ``{"name", "kind", "config"}``,
``channel.updated`` ``{"changes": {field: new value or "[redacted]", …}}``, ``channel.tested``
(the outcome of a test send, :mod:`core.notifications.probe`; it changes nothing but the
version) and ``channel.deleted`` ``{}``.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.channels.definition import SECRET_FIELDS
from core.coerce import instant
from core.rows import field_values


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelState:
    """A channel as its ``channels`` row holds it: the public ``config`` (the fields but
    ``name`` and ``kind``) and the secret fields sealed (``sealed`` under ``key_id``,
    :mod:`core.channels.sealing`). Instants are UTC; ``deleted_at`` is set by
    ``channel.deleted`` (a locked row is live: ``None``)."""

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
    deleted_at: datetime | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ChannelState:
        """The state in a ``channels`` row (``channel_lock``; ``deleted_at`` may be absent)."""
        return cls(**field_values(cls, row, present_only=True))

    def as_row(self) -> dict[str, Any]:
        """The row's columns, by name (what :func:`core.channels.sealing.unseal_channel` reads)."""
        return {f: getattr(self, f) for f in _FIELDS}


_FIELDS = tuple(f.name for f in dataclasses.fields(ChannelState))


def evolve(state: ChannelState | None, event: Mapping[str, Any]) -> ChannelState:
    """Apply one event (a row of ``events`` or an equivalent dict) to ``state``.

    A secret field's change (``"[redacted]"`` in the event) leaves ``config`` and the sealed
    columns as they were: the command sets them.

    Raises:
        ValueError: a stream not starting with ``channel.created``, an unknown event type.
    """
    kind, data = event["event_type"], event["data"]
    at = instant(event["occurred_at"])
    version = event["stream_version"]
    if kind == "channel.created":
        if state is not None:
            raise ValueError("channel.created on an existing channel")
        return ChannelState(id=event["stream_id"], team_id=event["team_id"], name=data["name"],
                            kind=data["kind"], config=dict(data["config"]), key_id=None,
                            sealed=None, version=version, created_at=at, updated_at=at)
    if state is None:
        raise ValueError(f"{kind} before channel.created")
    if kind == "channel.updated":
        changes = data["changes"]
        config = {k: v for k, v in changes.items()
                  if k not in ("name", "kind", *SECRET_FIELDS)}
        return dataclasses.replace(state, name=changes.get("name", state.name),
                                   config={**state.config, **config}, version=version,
                                   updated_at=at)
    if kind == "channel.tested":
        return dataclasses.replace(state, version=version)
    if kind == "channel.deleted":
        return dataclasses.replace(state, key_id=None, sealed=None, deleted_at=at,
                                   version=version, updated_at=at)
    raise ValueError(f"unknown channel event {kind!r}")
