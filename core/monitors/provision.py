"""Monitors created by their first ping: ``/ping/<ping-key>/<slug>?create=1``
(docs/healthchecks.md, healthchecks' auto-provisioning).

The ping route first records the ping as usual; only when the slug names no live monitor of
the key's team does it call :func:`provision`, which creates the monitor (name and slug = the
slug, the configured schedule and grace, ``monitor.created`` with actor ``ping``), and the ping
is then recorded on it. The team row is locked for the decision, so concurrent first pings of
one slug create one monitor and the limit cannot be overrun by a burst.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.crypto import KeyRing
from core.db import ConnectionPool, one_row, transaction
from core.errors import Forbidden
from core.monitors.commands import create_in
from core.queries import Q
from core.tokens import token_hash


class MonitorLimit(Forbidden):
    """The team has as many live monitors as it may have: a ping creates none (HTTP 403,
    healthchecks' answer when the check limit is reached)."""


@dataclass(frozen=True)
class PingActor(Actor):
    """The actor of what a ping does: event metadata ``{"actor": "ping"}``."""

    def metadata(self, **extra: Any) -> dict[str, Any]:
        return {"actor": "ping", **extra}


async def provision(pool: ConnectionPool, ping_key: str, slug: str, *, schedule: str,
                    grace_seconds: int, limit: int, now: datetime,
                    keyring: KeyRing | None = None) -> uuid.UUID | None:
    """Create the monitor ``slug`` of the team whose ping key is ``ping_key``.

    Args:
        ping_key: the key from the URL.
        slug: a well-formed slug (:data:`core.monitors.slugs.SLUG_PATTERN`).
        schedule: the new monitor's schedule (``CRONLEDGER_PING_CREATE_SCHEDULE``).
        grace_seconds: its grace (``CRONLEDGER_PING_CREATE_GRACE``).
        limit: the most live monitors the team may have (``CRONLEDGER_TEAM_MONITOR_LIMIT``).
        now: the instant of the ping (UTC).
        keyring: keeps the new monitor's token sealed (its token URL readable later).

    Returns:
        The new monitor's id; ``None`` when no team has the key, or when a concurrent ping
        created the monitor first (the caller records the ping as an ordinary one).

    Raises:
        MonitorLimit: the team is at its limit (nothing is written).
    """
    async with transaction(pool) as conn:
        cur = await conn.execute(Q["team_by_ping_key"], {"ping_key_hash": token_hash(ping_key)})
        team = await cur.fetchone()
        if team is None:
            return None
        cur = await conn.execute(Q["team_lock"], {"team_id": team["id"]})
        await cur.fetchone()
        cur = await conn.execute(Q["monitor_slug_taken"], {
            "team_id": team["id"], "slug": slug, "id": uuid.UUID(int=0)})
        if one_row(await cur.fetchone(), "monitor_slug_taken")["taken"]:
            return None
        cur = await conn.execute(Q["monitor_count_live"], {"team_id": team["id"]})
        if one_row(await cur.fetchone(), "monitor_count_live")["monitors"] >= limit:
            raise MonitorLimit(f"the team has reached its limit of {limit} monitors: "
                               "delete one or ask the operator to raise "
                               "CRONLEDGER_TEAM_MONITOR_LIMIT")
        monitor_id, _ = await create_in(conn, PingActor(team["id"]), {
            "name": slug, "slug": slug, "schedule": schedule,
            "grace_seconds": grace_seconds}, now, keyring)
    return monitor_id
