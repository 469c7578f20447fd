"""``/v1/secrets``: write-only team secrets used as ``${secrets.NAME}`` in job requests."""

from __future__ import annotations

import base64
import binascii

from litestar import Controller, Response, delete, get, put
from litestar.openapi import ResponseSpec
from litestar.params import FromQuery, JSONBody
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED, HTTP_204_NO_CONTENT

from api.deps import ActorDep, ClockDep, KeyRingDep, Limit, PoolDep, SecretPathName
from api.pagination import DEFAULT_LIMIT, check_limit
from api.schemas import Secret, SecretPage, SecretPut, from_row
from core.errors import invalid
from core.secrets import delete_secret, list_secrets, put_secret


def _encode(name: str) -> str:
    return base64.urlsafe_b64encode(name.encode()).decode().rstrip("=")


def _decode(cursor: str | None) -> str | None:
    if not cursor:
        return None
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, ValueError):
        raise invalid("cursor", "is not a valid cursor") from None


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
                   cursor: FromQuery[str | None] = None) -> SecretPage:
        rows = await list_secrets(pool, actor, limit=check_limit(limit), after=_decode(cursor))
        next_cursor = _encode(rows[-1]["name"]) if len(rows) == limit else None
        return SecretPage(items=[from_row(Secret, r) for r in rows], next_cursor=next_cursor)

    @delete("/{name:str}", status_code=HTTP_204_NO_CONTENT, summary="Delete a secret")
    async def remove(self, name: SecretPathName, actor: ActorDep, pool: PoolDep,
                     clock: ClockDep) -> None:
        await delete_secret(pool, actor, name, clock.now())
