"""``/v1/runs/{id}``: one run with every attempt's request and response."""

from __future__ import annotations

import uuid

from litestar import Controller, get
from psycopg_pool import AsyncConnectionPool

from api.schemas import RunDetail, from_row
from core.actor import Actor
from core.runs import get_run


class RunController(Controller):
    path = "/v1/runs"
    tags = ["runs"]

    @get("/{run_id:uuid}", summary="One run with its attempts")
    async def read(self, run_id: uuid.UUID, actor: Actor, pool: AsyncConnectionPool) -> RunDetail:
        return from_row(RunDetail, await get_run(pool, actor, run_id))
