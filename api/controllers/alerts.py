"""``/v1/alerts``: the alerts the rules raised, newest first, and why each one fired."""

from __future__ import annotations

import uuid

import msgspec
from litestar import Controller, get
from litestar.params import FromPath, FromQuery

from api.deps import ActorDep, KeysetCursor, Limit, PoolDep
from api.pagination import DEFAULT_LIMIT, check_limit, decode_cursor, keyset, paginate
from api.schemas.alerts import AlertExplanation, AlertRecord, AlertRecordPage
from api.schemas.common import from_row
from core.alerts.explain import explain_alert
from core.alerts.queries import get_alert, list_alerts


class AlertController(Controller):
    path = "/v1/alerts"
    tags = ["alerts"]

    @get("/", summary="Alerts, newest first (of one monitor or job with ?monitor= / ?job=)")
    async def list(self, actor: ActorDep, pool: PoolDep, limit: Limit = DEFAULT_LIMIT,
                   cursor: KeysetCursor = None,
                   monitor: FromQuery[uuid.UUID | None] = None,
                   job: FromQuery[uuid.UUID | None] = None) -> AlertRecordPage:
        rows = await list_alerts(pool, actor, limit=check_limit(limit),
                                 before=decode_cursor(cursor), monitor=monitor, job=job)
        return paginate(AlertRecordPage, rows, limit, keyset("created_at"),
                        lambda r: from_row(AlertRecord, r))

    @get("/{alert_id:uuid}", summary="Read an alert")
    async def read(self, alert_id: FromPath[uuid.UUID], actor: ActorDep,
                   pool: PoolDep) -> AlertRecord:
        return from_row(AlertRecord, await get_alert(pool, actor, alert_id))

    @get("/{alert_id:uuid}/explain",
         summary="Why an alert fired, from the log: rule, slot and zone, grace, pings or runs "
                 "around it, maintenance and dependencies")
    async def explain(self, alert_id: FromPath[uuid.UUID], actor: ActorDep,
                      pool: PoolDep) -> AlertExplanation:
        return msgspec.convert(await explain_alert(pool, actor, alert_id), AlertExplanation,
                               from_attributes=False)
