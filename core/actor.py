"""Who is asking: the team scope of every command and query, and the event metadata."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Actor:
    """An authenticated caller.

    Attributes:
        team_id: every read and write is filtered by this team.
        key_id: the API key used (``None`` for the CLI and the scheduler).
        scope: ``read`` or ``write``.
        request_id: the HTTP request id, recorded in event metadata.
        via: what made the change on the caller's behalf, recorded as the event's ``actor``
            (``"apply"``: a declarative file, docs/config.md; the key, if any, is then
            recorded as ``api_key``).
        digest: the SHA-256 (hex) of that file, recorded as ``digest``.
    """

    team_id: uuid.UUID
    key_id: uuid.UUID | None = None
    scope: str = "write"
    request_id: str | None = None
    via: str | None = None
    digest: str | None = None

    def metadata(self, **extra: Any) -> dict[str, Any]:
        """Event metadata describing this actor, plus ``extra``."""
        meta: dict[str, Any] = {"actor": f"api_key:{self.key_id}" if self.key_id else "system"}
        if self.via:
            meta["actor"] = self.via
            if self.key_id:
                meta["api_key"] = str(self.key_id)
        if self.digest:
            meta["digest"] = self.digest
        if self.request_id:
            meta["request_id"] = self.request_id
        meta.update(extra)
        return meta
