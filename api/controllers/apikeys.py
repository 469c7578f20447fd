"""``/v1/api-keys``: create (the key is shown once), list, revoke."""

from __future__ import annotations

import uuid

from litestar import Controller, delete, get, post
from litestar.params import FromPath, JSONBody
from litestar.status_codes import HTTP_204_NO_CONTENT

from api.deps import ActorDep, ClockDep, KeysetCursor, Limit, PoolDep
from api.pagination import DEFAULT_LIMIT, check_limit, decode_cursor, keyset, paginate
from api.schemas.apikeys import ApiKey, ApiKeyCreate, ApiKeyList
from api.schemas.common import from_row
from core.apikeys import create_api_key, list_api_keys, revoke_api_key


class ApiKeyController(Controller):
    path = "/v1/api-keys"
    tags = ["api-keys"]

    @post("/", summary="Create an API key for the caller's team (shown once)")
    async def create(self, data: JSONBody[ApiKeyCreate], actor: ActorDep, pool: PoolDep) -> ApiKey:
        key, record = await create_api_key(pool, actor.team_id, data.scope, data.name)
        return from_row(ApiKey, {**record, "key": key})

    @get("/", summary="List the team's active API keys, oldest first (never the key)")
    async def list(self, actor: ActorDep, pool: PoolDep, limit: Limit = DEFAULT_LIMIT,
                   cursor: KeysetCursor = None) -> ApiKeyList:
        rows = await list_api_keys(pool, actor, limit=check_limit(limit),
                                   after=decode_cursor(cursor))
        return paginate(ApiKeyList, rows, limit, keyset("created_at"),
                        lambda r: from_row(ApiKey, r))

    @delete("/{key_id:uuid}", status_code=HTTP_204_NO_CONTENT, summary="Revoke an API key")
    async def revoke(self, key_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                     clock: ClockDep) -> None:
        await revoke_api_key(pool, actor, key_id, clock.now())
