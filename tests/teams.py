"""The ``team`` fixture's value: a new team with one write key and one read key."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # kept out of import time, as in tests/conftest.py

    from core.actor import Actor
    from core.db import ConnectionPool


@dataclass(frozen=True)
class Team:
    """A team made for one test.

    Attributes:
        name: The team's name (``team-<hex>`` unless given).
        write: The plaintext write key.
        read: The plaintext read key.
        actor: The write key's actor (team id and key id).
        auth: ``Authorization`` headers carrying the write key.
        read_auth: ``Authorization`` headers carrying the read key.
    """

    name: str
    write: str
    read: str
    actor: Actor
    auth: dict[str, str] = field(hash=False)
    read_auth: dict[str, str] = field(hash=False)


async def new_team(pool: ConnectionPool, name: str | None = None) -> Team:
    """Create a team with a write key and a read key and return them as a ``Team``."""
    from core.actor import Actor
    from core.apikeys import create_api_key

    name = name or f"team-{uuid.uuid4().hex[:10]}"
    write, record = await create_api_key(pool, name, "write")
    read, _ = await create_api_key(pool, name, "read")
    return Team(name=name, write=write, read=read,
                actor=Actor(team_id=record["team_id"], key_id=record["id"]),
                auth={"Authorization": f"Bearer {write}"},
                read_auth={"Authorization": f"Bearer {read}"})
