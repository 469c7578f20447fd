"""``/v1/api-keys``: create (the key is shown once), list, revoke."""

from __future__ import annotations

import uuid

from litestar import Controller, delete, get, post
from litestar.status_codes import HTTP_204_NO_CONTENT
from psycopg_pool import AsyncConnectionPool

from api.schemas import ApiKey, ApiKeyCreate, ApiKeyList, from_row
from core.actor import Actor
from core.apikeys import create_api_key, list_api_keys, revoke_api_key
from core.clock import Clock


class ApiKeyController(Controller):
    path = "/v1/api-keys"
    tags = ["api-keys"]

    @post("/", summary="Create an API key for the caller's team (shown once)")
    async def create(self, data: ApiKeyCreate, actor: Actor, pool: AsyncConnectionPool) -> ApiKey:
        key, record = await create_api_key(pool, actor.team_id, data.scope, data.name)
        return from_row(ApiKey, {**record, "key": key})

    @get("/", summary="List the team's API keys")
    async def list(self, actor: Actor, pool: AsyncConnectionPool) -> ApiKeyList:
        return ApiKeyList(items=[from_row(ApiKey, r) for r in await list_api_keys(pool, actor)])

    @delete("/{key_id:uuid}", status_code=HTTP_204_NO_CONTENT, summary="Revoke an API key")
    async def revoke(self, key_id: uuid.UUID, actor: Actor, pool: AsyncConnectionPool,
                     clock: Clock) -> None:
        await revoke_api_key(pool, actor, key_id, clock.now())
