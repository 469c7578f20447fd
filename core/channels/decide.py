"""What a channel command decides, without the database: from the channel's state (its locked
``channels`` row) and the command (:class:`CreateChannel`, :class:`UpdateChannel`,
:class:`DeleteChannel`), the events to append and the row's fields no event carries.

Pure functions of their arguments, tested without PostgreSQL
(``tests/unit/test_channel_decide.py``); :mod:`core.channels.commands` unseals the current
secrets, asks here, seals what was decided and appends it (:mod:`core.streams`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.channels.definition import KIND_FIELDS, REDACTED, SECRET_FIELDS, normalize_channel
from core.channels.state import ChannelState
from core.errors import Conflict, FieldError
from core.streams import Change, Decision


@dataclass(frozen=True, slots=True)
class CreateChannel:
    """``POST /v1/channels``: ``fields``, the body (``name``, ``kind`` and the kind's fields)."""

    fields: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class UpdateChannel:
    """``PATCH /v1/channels/{id}``: ``fields``, the body (given fields replace the stored
    ones), and ``secrets``, the channel's current secret fields in plaintext (unsealed by the
    command, :func:`core.channels.sealing.unseal_channel`)."""

    fields: Mapping[str, Any]
    secrets: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class DeleteChannel:
    """Delete the channel."""


@dataclass(frozen=True, kw_only=True)
class ChannelDecision(Decision):
    """What a create or an update decided (:class:`core.streams.Decision`).

    Attributes:
        definition: the fields that may be stored and shown (``name``, ``kind``, URLs
            redacted).
        events: ``channel.created`` or ``channel.updated``; empty when nothing changes.
        sealed: the secret fields to seal (plaintext; never in an event).
    """

    sealed: dict[str, str] = field(default_factory=dict)

    @property
    def config(self) -> dict[str, Any]:
        """The ``config`` column: the public fields without ``name`` and ``kind``."""
        return {k: v for k, v in self.definition.items() if k not in ("name", "kind")}


def decide_create(command: CreateChannel) -> ChannelDecision:
    """A new channel: ``channel.created`` with the redacted view.

    Raises:
        InvalidInput: bad fields.
    """
    public, sealed = normalize_channel(dict(command.fields))
    decision = ChannelDecision(public, sealed=sealed)
    decision.events.append(("channel.created", {"name": public["name"],
                                                "kind": public["kind"],
                                                "config": decision.config}))
    return decision


def refuse_foreign(before: ChannelState, fields: Mapping[str, Any]) -> None:
    """Refuse a change of ``kind`` and fields of another kind than the channel's.

    What the stored channel's kind forbids is a conflict with its state (409), not a bad
    body: the same body is right for a channel of another kind.

    Raises:
        Conflict: naming the fields.
    """
    if fields.get("kind", before.kind) != before.kind:
        raise Conflict("kind: cannot change; create a new channel instead",
                       [FieldError("kind", "cannot change")])
    foreign = sorted(k for k, v in fields.items() if v is not None
                     and k not in ("name", "kind", *KIND_FIELDS[before.kind]))
    if foreign:
        raise Conflict(f"{', '.join(foreign)}: not a field of {before.kind} channels",
                       [FieldError(k, f"is not a field of {before.kind} channels")
                        for k in foreign])


def decide_update(before: ChannelState, command: UpdateChannel) -> ChannelDecision:
    """A partial update: given fields replace the stored ones; ``kind`` cannot change. The
    event names the changed public fields with their new values and every secret field given
    as ``"[redacted]"``.

    Raises:
        Conflict: as :func:`refuse_foreign`. InvalidInput: bad fields.
    """
    fields = command.fields
    refuse_foreign(before, fields)
    current = {**before.config, **command.secrets, "name": before.name, "kind": before.kind}
    public, sealed = normalize_channel({**current, **fields})
    changes = {k: v for k, v in public.items()
               if before.config.get(k, getattr(before, k, None)) != v}
    changes.update({k: REDACTED for k in SECRET_FIELDS if k in fields})
    return ChannelDecision(public, [("channel.updated", {"changes": changes})] if changes
                           else [], sealed=sealed)


def decide_delete(before: ChannelState, command: DeleteChannel) -> list[Change]:
    """Delete: ``channel.deleted`` (a deleted channel is not locked, so ``before`` is live)."""
    return [("channel.deleted", {})]
