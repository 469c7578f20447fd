"""The overview at ``/``: jobs by state, monitors by status, failing jobs, down monitors, runs
of the last 24 hours and the newest events, live (:mod:`api.ui.live`)."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import ServerSentEvent, Template

from api.deps import ClockDep, PoolDep
from api.ui.auth import Viewer, ViewerDep
from api.ui.live import live_fragment, share_key
from api.ui.render import fragment, page
from api.ui.together import together
from core.events import list_team_events
from core.history.subjects import event_subjects
from core.projections.queries import dashboard

NEWEST_EVENTS = 10


async def _summary(request: Request[Any, Any, Any], viewer: Viewer) -> dict[str, Any]:
    pool = request.app.state.pool
    now = request.app.state.clock.now()

    async def newest() -> tuple[list[dict[str, Any]], dict[int, Any]]:
        events = await list_team_events(pool, viewer.actor.team_id, limit=NEWEST_EVENTS)
        return events, await event_subjects(pool, viewer.actor.team_id, events)
    # The page shows when the read models were updated, not the lag: that statement is skipped.
    (events, subjects), board = await together(newest(),
                                               dashboard(pool, viewer.actor, now, lag=False))
    return {"board": board, "events": events, "subjects": subjects}


@get("/", name="overview")
async def overview(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                   clock: ClockDep) -> Template:
    return page(request, viewer, "overview.html", "Overview", section="overview",
                **await _summary(request, viewer))


@get("/ui/overview/live", name="overview_live")
async def overview_live(request: Request[Any, Any, Any], viewer: ViewerDep) -> ServerSentEvent:
    async def render() -> str:
        return fragment(request, viewer, "_overview.html", **await _summary(request, viewer))
    return live_fragment(render, request, share_key(request, viewer))


ROUTES = [overview, overview_live]
