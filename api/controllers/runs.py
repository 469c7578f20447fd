"""``/v1/runs/{id}``: one run with every attempt's request and response."""

from __future__ import annotations

import uuid

from litestar import Controller, get
from litestar.params import FromPath

from api.deps import ActorDep, PoolDep
from api.schemas.common import from_row
from api.schemas.runs import RunDetail
from core.runs.queries import get_run


class RunController(Controller):
    path = "/v1/runs"
    tags = ["runs"]

    @get("/{run_id:uuid}", summary="One run with its attempts")
    async def read(self, run_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep) -> RunDetail:
        return from_row(RunDetail, await get_run(pool, actor, run_id))
