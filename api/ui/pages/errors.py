"""The catch-all of ``/ui/…``: an unknown dashboard address is the 404 page, not problem+json."""

from __future__ import annotations

from litestar import get
from litestar.params import FromPath

from core.errors import NotFound


@get("/ui/{rest:path}", name="ui_not_found")
async def not_found(rest: FromPath[str]) -> None:
    raise NotFound("there is no page at this address")


ROUTES = [not_found]
