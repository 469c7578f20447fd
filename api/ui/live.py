"""Live regions: a page part that updates without a reload, over Server-Sent Events.

A template marks the region ``<div data-live="/ui/…/live">…</div>``; ``static/dashboard.js``
opens an ``EventSource`` on that URL and replaces the region's content with each ``fragment``
event's data. The handler of that URL returns :func:`live_fragment` with a function that
renders the region (usually :func:`api.ui.render.fragment` of the same template the page
includes). The region is rendered every :data:`POLL_SECONDS` and sent only when it changed (the
read models and the inline projections are the source, so what the page shows is what the API
would answer). A stream ends after :data:`STREAM_SECONDS` (the browser reconnects by itself,
after ``retry`` ms), so a server shutdown never waits on an open page for long.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from litestar import Request
from litestar.response import ServerSentEvent, ServerSentEventMessage

from api.ui.auth import SESSION_COOKIE
from core.sessions import session_actor

POLL_SECONDS = 1.0  # how often a live region is rendered again
STREAM_SECONDS = 300.0  # how long one stream stays open
RETRY_MS = 1000  # the browser's reconnection delay


def live_fragment(render: Callable[[], Awaitable[str]],
                  request: Request[Any, Any, Any] | None = None) -> ServerSentEvent:
    """The SSE response of a live region: ``event: fragment`` with the region's HTML each time
    it changes (the first render at once).

    Args:
        request: when given, the stream ends as soon as the request's session does (expired,
            signed out, key revoked); the browser's reconnection is then sent to sign in.
    """

    async def live() -> bool:
        if request is None:
            return True
        return await session_actor(request.app.state.pool,
                                   request.cookies.get(SESSION_COOKIE, ""),
                                   request.app.state.clock.now()) is not None

    async def events() -> AsyncIterator[ServerSentEventMessage]:
        last = None
        ends = time.monotonic() + STREAM_SECONDS
        while time.monotonic() < ends and await live():
            html = await render()
            if html != last:
                yield ServerSentEventMessage(data=html, event="fragment", retry=RETRY_MS)
                last = html
            await asyncio.sleep(POLL_SECONDS)  # the polling interval, not a synchronisation

    return ServerSentEvent(events(), headers={"Cache-Control": "no-store",
                                              "X-Accel-Buffering": "no"})
