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

Streams of the same region share their renders (:meth:`LiveChanges.shared`): ten browsers on
the monitors list cost one render per notification, not ten. A render is shared only while no
notification arrived since it started and for at most :data:`SHARE_SECONDS`, and only between
streams of the same URL whose viewers see the same thing (same team, scope and team name:
what a region's template reads of its viewer), so each stream still shows every notified
change and nothing another viewer may not see.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any

from litestar import Request
from litestar.response import ServerSentEvent, ServerSentEventMessage

from api.ui.auth import SESSION_COOKIE, Viewer
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
SHARE_SECONDS = COALESCE_SECONDS  # how long a render may serve other streams of its region
RETRY_MS = 1000  # the browser's reconnection delay


@dataclass
class _Render:
    """A render of one region that other streams may take: started at ``version`` (of
    :attr:`LiveChanges.version`), at ``started`` (``time.monotonic()``)."""

    version: int
    started: float
    task: asyncio.Future[str]


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
        self._renders: dict[Hashable, _Render] = {}

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

    async def shared(self, key: Hashable, render: Callable[[], Awaitable[str]]) -> str:
        """``render()``, or the result of a render of the same ``key`` that started less than
        :data:`SHARE_SECONDS` ago with no notification since (so it read every change notified
        before this call). A render started here runs to its end even if this stream closes
        meanwhile (others may wait on it); its error, if any, reaches every stream that took
        it."""
        now = time.monotonic()
        for old in [k for k, r in self._renders.items() if now - r.started >= SHARE_SECONDS]:
            del self._renders[old]
        entry = self._renders.get(key)
        if entry is None or entry.version != self.version:
            entry = _Render(self.version, now, asyncio.ensure_future(render()))
            entry.task.add_done_callback(_retrieved)
            self._renders[key] = entry
        return await asyncio.shield(entry.task)

    async def close(self) -> None:
        """Stop listening (the app's shutdown); waits at most a second."""
        if self._task is not None:
            await cancel_and_wait(self._task, 1.0)
            self._task = None
        self.listening = False


def _retrieved(task: asyncio.Future[str]) -> None:
    """Mark a shared render's error as seen (each stream that awaited it got it already)."""
    if not task.cancelled():
        task.exception()


def share_key(request: Request[Any, Any, Any], viewer: Viewer) -> Hashable:
    """What a region's render depends on: its URL (path and query) and what its template
    reads of the viewer (``viewer.can_write``, ``viewer.team_name``; the team's data through
    ``viewer.actor``). Regions read nothing else of the session (no form, so no csrf token:
    ``api/ui/templates/_*.html``)."""
    return (request.url.path, request.url.query, viewer.actor.team_id, viewer.actor.scope,
            viewer.team_name)


def live_fragment(render: Callable[[], Awaitable[str]], request: Request[Any, Any, Any],
                  key: Hashable | None = None) -> ServerSentEvent:
    """The SSE response of a live region: ``event: fragment`` with the region's HTML each time
    it changes (the first render at once).

    Args:
        request: the stream ends as soon as the request's session does (expired, signed out,
            key revoked), checked at each render; the browser's reconnection is then sent to
            sign in. Its app's ``state.live`` (a :class:`LiveChanges`, the app's lifespan) says
            when to render again; without one, every :data:`SAFETY_SECONDS`.
        key: streams with equal keys share renders (:meth:`LiveChanges.shared`;
            :func:`share_key` gives it); ``None``: this stream renders on its own.
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
            html = await (changes.shared(key, render) if changes is not None and key is not None
                          else render())
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
