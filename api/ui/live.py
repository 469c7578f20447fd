"""Live regions: a page part that updates without a reload, over Server-Sent Events.

A template marks the region ``<div data-live="/ui/…/live">…</div>``; ``static/dashboard.js``
opens an ``EventSource`` on that URL and replaces the region's content with each ``fragment``
event's data. The handler of that URL returns :func:`live_fragment` with a function that
renders the region (usually :func:`api.ui.render.fragment` of the same template the page
includes); a render is sent only when it changed (the read models and the inline projections
are the source, so what the page shows is what the API would answer).

When a region is rendered again (docs/dashboard.md, "Live regions"): one :class:`LiveChanges`
per API process holds ONE listening connection (``CRONLEDGER_LISTEN_DATABASE_URL``, else the
database URL; opened when the first stream starts) on :data:`CHANNELS`, and every NOTIFY on
them wakes every open stream of the process. A woken stream renders at most every
:data:`COALESCE_SECONDS` (a burst of notifications is one render), and every
:data:`SAFETY_SECONDS` without any (what sends no notification, e.g. a ping that moves no alert
before the projector's batch; a lost listening connection, which reconnects by itself). A stream
ends after :data:`STREAM_SECONDS` (the browser reconnects by itself, after ``retry`` ms), so a
server shutdown never waits on an open page for long.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from litestar import Request
from litestar.response import ServerSentEvent, ServerSentEventMessage

from api.ui.auth import SESSION_COOKIE
from core.services.listen import listen_channels
from core.services.tasks import cancel_and_wait
from core.sessions import session_actor

# What changes a live region: the projector's batches (runs, pings, every event reaches the
# read models and the overview's log through it), job and run commands (the schedulers'
# wake-up), monitor alerts moving, notifications queued and maintenance windows.
CHANNELS = ("cronledger_projected", "cronledger_wakeup", "cronledger_monitors",
            "cronledger_notifications", "cronledger_maintenance")
COALESCE_SECONDS = 0.25  # a stream renders at most this often, however many notifications
SAFETY_SECONDS = 20.0  # and at least this often, notified or not
STREAM_SECONDS = 300.0  # how long one stream stays open
RETRY_MS = 1000  # the browser's reconnection delay


class LiveChanges:
    """The fan-out of one API process: a version that moves on each NOTIFY of
    :data:`CHANNELS` (or reconnection), and an event the streams wait on.

    Args:
        dsn: libpq DSN of the listening connection (direct, not through a pooler); ``None``:
            nothing listens and streams render every :data:`SAFETY_SECONDS` only.
    """

    def __init__(self, dsn: str | None) -> None:
        self.dsn = dsn
        self.version = 0  # moves on each notification (tests and logs)
        self.listening = False  # whether the connection is up
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def changed(self) -> asyncio.Event:
        """The event the next notification sets (take it *before* rendering: a notification
        that arrives during the render is not missed)."""
        if self._task is None and self.dsn is not None:
            self._task = asyncio.create_task(
                listen_channels(self.dsn, CHANNELS, self._notified, "live",
                                on_listening=self._up, on_lost=self._down),
                name="cronledger-live-listen")
        return self._changed

    def _up(self) -> None:
        self.listening = True

    def _down(self) -> None:
        self.listening = False

    def _notified(self, _channel: str | None) -> None:
        self.version += 1
        self._changed.set()
        self._changed = asyncio.Event()

    async def close(self) -> None:
        """Stop listening (the app's shutdown); waits at most a second."""
        if self._task is not None:
            await cancel_and_wait(self._task, 1.0)
            self._task = None
        self.listening = False


def live_fragment(render: Callable[[], Awaitable[str]],
                  request: Request[Any, Any, Any]) -> ServerSentEvent:
    """The SSE response of a live region: ``event: fragment`` with the region's HTML each time
    it changes (the first render at once).

    Args:
        request: the stream ends as soon as the request's session does (expired, signed out,
            key revoked), checked at each render; the browser's reconnection is then sent to
            sign in. Its app's ``state.live`` (a :class:`LiveChanges`, the app's lifespan) says
            when to render again; without one, every :data:`SAFETY_SECONDS`.
    """

    async def live() -> bool:
        return await session_actor(request.app.state.pool,
                                   request.cookies.get(SESSION_COOKIE, ""),
                                   request.app.state.clock.now()) is not None

    async def events(changes: LiveChanges | None) -> AsyncIterator[ServerSentEventMessage]:
        last = None
        ends = time.monotonic() + STREAM_SECONDS
        while time.monotonic() < ends and await live():
            changed = changes.changed() if changes is not None else None
            rendered = time.monotonic()
            html = await render()
            if html != last:
                yield ServerSentEventMessage(data=html, event="fragment", retry=RETRY_MS)
                last = html
            wait = max(0.0, min(SAFETY_SECONDS, ends - time.monotonic()))
            if changed is None:
                await asyncio.sleep(wait)  # nothing listens: the safety interval only
                continue
            try:
                await asyncio.wait_for(changed.wait(), wait)
            except TimeoutError:
                continue
            # rate limit, not a synchronisation: later notifications join this render
            await asyncio.sleep(max(0.0, rendered + COALESCE_SECONDS - time.monotonic()))

    changes = getattr(request.app.state, "live", None)
    return ServerSentEvent(events(changes), headers={"Cache-Control": "no-store",
                                                     "X-Accel-Buffering": "no"})
