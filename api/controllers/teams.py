"""``/v1/team``: the caller's team, its ping key (created or rotated, shown once) and its badge
key (rotated). What the keys are for: docs/healthchecks.md."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, post

from api.controllers.monitors import base_url
from api.deps import ActorDep, ClockDep, PoolDep
from api.schemas.common import from_row
from api.schemas.teams import BadgeKey, PingKey, Team
from core.teams import get_team, rotate_badge_key, rotate_ping_key


class TeamController(Controller):
    path = "/v1/team"
    tags = ["team"]

    @get("/", summary="The caller's team (whether it has a ping key, its badge key)")
    async def read(self, request: Request[Any, Any, Any], actor: ActorDep,
                   pool: PoolDep) -> Team:
        row = await get_team(pool, actor)
        base = base_url(request)
        return from_row(Team, {**row, "badge_url": f"{base}/badge/{row['badge_key']}/*.svg",
                               "metrics_url": f"{base}/metrics/team/{row['badge_key']}"})

    @post("/ping-key", status_code=200,
          summary="Create or rotate the team's ping key (shown once)")
    async def ping_key(self, request: Request[Any, Any, Any], actor: ActorDep, pool: PoolDep,
                       clock: ClockDep) -> PingKey:
        key = await rotate_ping_key(pool, actor, clock.now())
        return PingKey(ping_key=key, ping_url=f"{base_url(request)}/ping/{key}/")

    @post("/badge-key", status_code=200, summary="Rotate the team's badge key")
    async def badge_key(self, actor: ActorDep, pool: PoolDep, clock: ClockDep) -> BadgeKey:
        return BadgeKey(badge_key=await rotate_badge_key(pool, actor, clock.now()))
