"""What only the log can answer (docs/ledger.md): ``POST /v1/{jobs,monitors}/{id}/simulate``
(what-if replay) and ``GET /v1/{jobs,monitors}/{id}/history`` (definition changes). The
``?as_of=`` reads are on the resources' own read routes (:mod:`api.controllers.jobs`,
:mod:`api.controllers.monitors`)."""

from __future__ import annotations

import uuid
from datetime import datetime

import msgspec
from litestar import Controller, get, post
from litestar.params import FromPath, JSONBody

from api.deps import ActorDep, ClockDep, Limit, PoolDep, VersionCursor, parse_instant
from api.pagination import DEFAULT_LIMIT, by_position, check_limit, decode_position_cursor, paginate
from api.schemas.common import from_row, given_fields
from api.schemas.ledger import (
    DefinitionChange,
    DefinitionChangePage,
    JobSimulate,
    JobSimulation,
    MonitorSimulate,
    MonitorSimulation,
)
from core.history.changes import definition_history
from core.history.streams import JOB, MONITOR
from core.replay.jobs import simulate_job
from core.replay.monitors import simulate_monitor


def _window(body: MonitorSimulate | JobSimulate) -> tuple[datetime | None, datetime | None]:
    """The window's instants as given; its rules are checked once the id is found
    (:func:`core.replay.window.replay_window`)."""
    return parse_instant("from", body.from_), parse_instant("to", body.to)


class LedgerController(Controller):
    path = "/v1"
    tags = ["history"]

    @post("/monitors/{monitor_id:uuid}/simulate", status_code=200,
          summary="What-if replay: a proposed monitor definition over its recorded pings")
    async def simulate_monitor(self, monitor_id: FromPath[uuid.UUID],
                               data: JSONBody[MonitorSimulate], actor: ActorDep, pool: PoolDep,
                               clock: ClockDep) -> MonitorSimulation:
        now = clock.now()
        answer = await simulate_monitor(pool, actor, monitor_id, given_fields(data.changes),
                                        *_window(data), now)
        return msgspec.convert(answer, MonitorSimulation, from_attributes=False)

    @post("/jobs/{job_id:uuid}/simulate", status_code=200,
          summary="What-if replay: proposed job alert rules over its recorded runs")
    async def simulate_job(self, job_id: FromPath[uuid.UUID], data: JSONBody[JobSimulate],
                           actor: ActorDep, pool: PoolDep, clock: ClockDep) -> JobSimulation:
        now = clock.now()
        answer = await simulate_job(pool, actor, job_id, given_fields(data.changes),
                                    *_window(data), now)
        return msgspec.convert(answer, JobSimulation, from_attributes=False)

    @get("/jobs/{job_id:uuid}/history",
         summary="The job's definition changes: actor, time and field-level diff")
    async def job_history(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                          limit: Limit = DEFAULT_LIMIT,
                          cursor: VersionCursor = None) -> DefinitionChangePage:
        rows = await definition_history(pool, actor, JOB, job_id, limit=check_limit(limit),
                                        after_version=decode_position_cursor(cursor) or 0)
        return paginate(DefinitionChangePage, rows, limit, by_position("version"),
                        lambda r: from_row(DefinitionChange, r))

    @get("/monitors/{monitor_id:uuid}/history",
         summary="The monitor's definition changes: actor, time and field-level diff")
    async def monitor_history(self, monitor_id: FromPath[uuid.UUID], actor: ActorDep,
                              pool: PoolDep, limit: Limit = DEFAULT_LIMIT,
                              cursor: VersionCursor = None) -> DefinitionChangePage:
        rows = await definition_history(pool, actor, MONITOR, monitor_id,
                                        limit=check_limit(limit),
                                        after_version=decode_position_cursor(cursor) or 0)
        return paginate(DefinitionChangePage, rows, limit, by_position("version"),
                        lambda r: from_row(DefinitionChange, r))
