"""``/v1/secrets``: write-only team secrets used as ``${secrets.NAME}`` in job requests."""

from __future__ import annotations

from litestar import Controller, Response, delete, get, put
from litestar.openapi import ResponseSpec
from litestar.params import JSONBody
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED, HTTP_204_NO_CONTENT

from api.deps import ActorDep, ClockDep, KeyRingDep, Limit, NameCursor, PoolDep, SecretPathName
from api.pagination import DEFAULT_LIMIT, by_name, check_limit, decode_name_cursor, paginate
from api.schemas.common import from_row
from api.schemas.secrets import Secret, SecretPage, SecretPut
from core.secrets import delete_secret, list_secrets, put_secret


class SecretController(Controller):
    path = "/v1/secrets"
    tags = ["secrets"]

    @put("/{name:str}", summary="Create or replace a secret (201 when new, 200 when replaced)",
         responses={HTTP_201_CREATED: ResponseSpec(Secret, description="Created")})
    async def put(self, name: SecretPathName, data: JSONBody[SecretPut], actor: ActorDep,
                  pool: PoolDep, clock: ClockDep, keyring: KeyRingDep) -> Response[Secret]:
        row, created = await put_secret(pool, keyring, actor, name, data.value, clock.now())
        return Response(from_row(Secret, row),
                        status_code=HTTP_201_CREATED if created else HTTP_200_OK)

    @get("/", summary="List the team's secrets (names and dates only)")
    async def list(self, actor: ActorDep, pool: PoolDep, limit: Limit = DEFAULT_LIMIT,
                   cursor: NameCursor = None) -> SecretPage:
        rows = await list_secrets(pool, actor, limit=check_limit(limit),
                                 after=decode_name_cursor(cursor))
        return paginate(SecretPage, rows, limit, by_name, lambda r: from_row(Secret, r))

    @delete("/{name:str}", status_code=HTTP_204_NO_CONTENT, summary="Delete a secret")
    async def remove(self, name: SecretPathName, actor: ActorDep, pool: PoolDep,
                     clock: ClockDep) -> None:
        await delete_secret(pool, actor, name, clock.now())
