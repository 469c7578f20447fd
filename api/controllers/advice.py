"""``GET /v1/monitors/{id}/advice`` and ``GET /v1/jobs/{id}/advice`` (docs/advice.md): the
advisor's suggestions, computed by :mod:`core.advice`; nothing is changed."""

from __future__ import annotations

import uuid
from typing import Annotated

import msgspec
from litestar import Controller, get
from litestar.params import FromPath, QueryParameter

from api.deps import ActorDep, ClockDep, PoolDep, whole_number_words
from api.schemas.advice import Advice
from core.advice.jobs import advise_job
from core.advice.monitors import advise_monitor
from core.advice.rules import DEFAULT_DAYS, MAX_DAYS

Days = Annotated[int, QueryParameter(
    ge=1, le=MAX_DAYS,
    description=f"how many days of history to read, before now (1 to {MAX_DAYS}, default "
                f"{DEFAULT_DAYS})")]
DAYS_WORDS = whole_number_words(1, MAX_DAYS)  # api/deps.py:whole_number_queries refuses


class AdviceController(Controller):
    path = "/v1"
    tags = ["history"]

    @get("/monitors/{monitor_id:uuid}/advice",
         summary="Suggested grace, run-time bounds, failure tolerance and schedule, from the "
                 "monitor's recorded history (never applied)")
    async def monitor_advice(self, monitor_id: FromPath[uuid.UUID], actor: ActorDep,
                             pool: PoolDep, clock: ClockDep,
                             days: Days = DEFAULT_DAYS) -> Advice:
        answer = await advise_monitor(pool, actor, monitor_id, days, clock.now())
        return msgspec.convert(answer, Advice, from_attributes=True)

    @get("/jobs/{job_id:uuid}/advice",
         summary="Suggested failure tolerance and run-time bounds, from the job's recorded "
                 "runs (never applied)")
    async def job_advice(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                         clock: ClockDep,
                         days: Days = DEFAULT_DAYS) -> Advice:
        answer = await advise_job(pool, actor, job_id, days, clock.now())
        return msgspec.convert(answer, Advice, from_attributes=True)
