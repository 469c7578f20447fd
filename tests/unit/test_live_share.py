"""Streams of one live region share a render only while it read every notified change
(api/ui/live.py, LiveChanges.shared): no database, the renders are counted; each render waits
on an event the test sets, so the streams overlap without a sleep."""

from __future__ import annotations

import asyncio

import pytest

from api.ui import live


class Renders:
    """A render function that counts its calls and finishes when :attr:`go` is set."""

    def __init__(self) -> None:
        self.calls = 0
        self.go = asyncio.Event()
        self.started = asyncio.Event()

    async def __call__(self) -> str:
        self.calls += 1
        self.started.set()
        n = self.calls
        await self.go.wait()
        return f"render {n}"


async def test_streams_of_one_region_take_the_render_under_way() -> None:
    changes, render = live.LiveChanges(None), Renders()
    streams = [asyncio.ensure_future(changes.shared("region", render)) for _ in range(10)]
    await render.started.wait()  # the first stream's render is under way, the others join it
    render.go.set()
    assert await asyncio.gather(*streams) == ["render 1"] * 10
    assert render.calls == 1


async def test_a_notification_since_the_render_started_makes_a_new_one() -> None:
    changes, render = live.LiveChanges(None), Renders()
    render.go.set()
    assert await changes.shared("region", render) == "render 1"
    changes._notified("cronledger_projected")
    assert await changes.shared("region", render) == "render 2"
    assert await changes.shared("region", render) == "render 2"


async def test_other_regions_and_other_viewers_render_on_their_own() -> None:
    changes, render = live.LiveChanges(None), Renders()
    render.go.set()
    assert await changes.shared(("/ui/monitors/live", "write"), render) == "render 1"
    assert await changes.shared(("/ui/monitors/live", "read"), render) == "render 2"
    assert await changes.shared(("/ui/overview/live", "write"), render) == "render 3"


async def test_an_old_render_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "SHARE_SECONDS", 0.0)  # every render is already too old
    changes, render = live.LiveChanges(None), Renders()
    render.go.set()
    assert await changes.shared("region", render) == "render 1"
    assert await changes.shared("region", render) == "render 2"


async def test_a_failed_render_fails_every_stream_that_took_it() -> None:
    changes = live.LiveChanges(None)
    go = asyncio.Event()

    async def broken() -> str:
        await go.wait()
        raise RuntimeError("the database went away")
    streams = [asyncio.ensure_future(changes.shared("region", broken)) for _ in range(3)]
    go.set()
    answers = await asyncio.gather(*streams, return_exceptions=True)
    assert all(isinstance(a, RuntimeError) for a in answers)


async def test_a_closed_stream_does_not_cancel_the_render_others_wait_on() -> None:
    changes, render = live.LiveChanges(None), Renders()
    first = asyncio.ensure_future(changes.shared("region", render))
    await render.started.wait()
    second = asyncio.ensure_future(changes.shared("region", render))
    first.cancel()
    render.go.set()
    assert await second == "render 1"
    assert render.calls == 1
