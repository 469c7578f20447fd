"""The badge-key routes (docs/healthchecks.md): status badges and a team's Prometheus metrics.

No API key: the team's badge key in the path is the credential, and it is read-only (it can
show a status, never change one). An unknown key, or a malformed path, is a plain 404.

- ``GET /badge/<badge-key>/<tag>.svg`` | ``.json`` | ``.shields``, ``<tag>-2.<format>`` for
  the two-state variant, ``*`` for every check of the team (:mod:`core.badges`); cached for
  :data:`core.badges.CACHE_SECONDS`.
- ``GET /metrics/team/<badge-key>``, or ``GET /metrics/team`` with an API key
  (:func:`core.metrics.render_team_metrics`).

These routes are not in the OpenAPI document: their answers are images and Prometheus text,
not the problem+json contract of ``/v1``.
"""

from __future__ import annotations

import re
from typing import Any

from litestar import Request, get
from litestar.params import FromPath
from litestar.response import Response

from api.controllers.health import MEDIA_TYPE
from api.deps import ActorDep, PoolDep
from core import badges
from core.checks import ALL, tagged, team_checks
from core.errors import NotFound
from core.metrics import render_team_metrics
from core.tags import TAG_PATTERN
from core.teams import BADGE_KEY_PATTERN, get_team_name, team_by_badge_key

_KEY = re.compile(BADGE_KEY_PATTERN)
# the tag is matched lazily, so "<tag>-2.svg" is the two-state badge of <tag>
_BADGE = re.compile(rf"(?P<tag>{TAG_PATTERN}?|\*)(?P<two>-2)?\.(?P<fmt>svg|json|shields)")
_CACHE = {"Cache-Control": f"public, max-age={badges.CACHE_SECONDS}"}


async def _team(pool: Any, key: str) -> Any:
    team_id = await team_by_badge_key(pool, key) if _KEY.fullmatch(key) else None
    if team_id is None:
        raise NotFound("unknown badge key")
    return team_id


@get("/badge/{key:str}/{name:str}", include_in_schema=False)
async def badge(key: FromPath[str], name: FromPath[str], pool: PoolDep) -> Response[Any]:
    match = _BADGE.fullmatch(name)
    if match is None:
        raise NotFound("no such badge: use <tag>.svg, <tag>.json, <tag>.shields or "
                       "<tag>-2.svg, with * for every check")
    team_id = await _team(pool, key)
    tag = match["tag"]
    checks = tagged(await team_checks(pool, team_id), tag)
    status = badges.badge_status(checks, two_state=match["two"] is not None)
    label = await get_team_name(pool, team_id) if tag == ALL else tag
    if match["fmt"] == "svg":
        return Response(badges.svg(label, status), media_type="image/svg+xml", headers=_CACHE)
    body = badges.as_json(checks, status) if match["fmt"] == "json" \
        else badges.as_shields(label, status)
    return Response(body, headers=_CACHE)


@get("/metrics/team/{key:str}", include_in_schema=False, media_type=MEDIA_TYPE)
async def team_metrics(key: FromPath[str], pool: PoolDep) -> Response[bytes]:
    team_id = await _team(pool, key)
    return Response(render_team_metrics(await team_checks(pool, team_id)),
                    media_type=MEDIA_TYPE)


@get("/metrics/team", include_in_schema=False, media_type=MEDIA_TYPE)
async def own_team_metrics(request: Request[Any, Any, Any], actor: ActorDep,
                           pool: PoolDep) -> Response[bytes]:
    return Response(render_team_metrics(await team_checks(pool, actor.team_id)),
                    media_type=MEDIA_TYPE)
