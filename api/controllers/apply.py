"""``POST /v1/apply`` (plan and apply a declarative document, one transaction) and
``GET /v1/export`` (the team's definitions as such a document): docs/config.md."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, post
from litestar.params import FromQuery, JSONBody
from litestar.status_codes import HTTP_200_OK
from msgspec import structs

from api.bodies import integral
from api.controllers.monitors import base_url as public_base_url
from api.deps import ActorDep, ClockDep, KeyRingDep, NotifyDep, PoolDep
from api.schemas.apply import (
    ApplyDocument,
    ApplyResult,
    ApplyWarning,
    ExportDocument,
    FieldChange,
    ObjectChange,
)
from core.declarative.apply import apply_document
from core.declarative.export import export_document
from core.declarative.plan import Change


def change_view(change: Change) -> ObjectChange:
    return ObjectChange(
        # action: a str of plan.ACTIONS, the Literal the schema declares from it
        kind=change.kind, name=change.name, action=change.action,  # type: ignore[arg-type]
        changes=[FieldChange(d.field, d.old, d.new) for d in change.diffs], id=change.id,
        ping_url=change.extra.get("ping_url"), signing_secret=change.extra.get("signing_secret"),
        run_id=change.extra.get("run_id"))


class ApplyController(Controller):
    path = "/v1"
    tags = ["apply"]

    @post("/apply", status_code=HTTP_200_OK,
          summary="Plan and apply a declarative document (one transaction; dry_run: plan only)")
    async def apply(self, data: JSONBody[ApplyDocument], request: Request[Any, Any, Any],
                    actor: ActorDep, pool: PoolDep, clock: ClockDep, keyring: KeyRingDep,
                    notify: NotifyDep, dry_run: FromQuery[bool] = False,
                    prune: FromQuery[bool] = False) -> ApplyResult:
        """Objects are matched by name. 422 lists every problem with its document path
        (``jobs.0.schedule``) and nothing is written; every change is an event with actor
        ``apply`` and the document's ``digest``."""
        # 200.0 is an integer (the document's integers, as for every body: api/bodies.py)
        document = {k: integral(v) for k, v in structs.asdict(data).items() if k != "digest"}
        outcome = await apply_document(
            pool, actor, document, clock.now(), keyring=keyring, sealer=notify.sealer,
            base_url=public_base_url(request), digest=data.digest, dry_run=dry_run, prune=prune)
        return ApplyResult(
            dry_run=dry_run, applied=outcome.applied, digest=data.digest,
            changes=[change_view(c) for c in outcome.changes],
            warnings=[ApplyWarning(w.field, w.message) for w in outcome.warnings])

    @get("/export", summary="The team's definitions as a document for POST /v1/apply")
    async def export(self, actor: ActorDep, pool: PoolDep) -> ExportDocument:
        """Defaults are left out, and sealed values (channel url and signing_secret, job
        signing_secret), which apply keeps while absent: applying the export is a no-op."""
        return ExportDocument(**await export_document(pool, actor))
