"""A page's reads run at once (api/ui/together.py): answers in order, and the first error in
the order given, after every read has ended."""

from __future__ import annotations

import asyncio

import pytest

from api.ui.together import together
from core.errors import NotFound


async def test_the_answers_come_in_the_order_given() -> None:
    second_done = asyncio.Event()

    async def first() -> str:
        await second_done.wait()  # ends after the second: the order is the order given
        return "first"

    async def second() -> str:
        second_done.set()
        return "second"
    assert await together(first(), second()) == ["first", "second"]


async def test_the_first_error_in_the_order_given_is_raised_after_all_ended() -> None:
    ended: list[str] = []
    first_failed = asyncio.Event()

    async def unknown() -> None:
        await first_failed.wait()
        ended.append("unknown")
        raise NotFound("job 1 not found")

    async def other() -> None:
        first_failed.set()
        ended.append("other")
        raise ValueError("a later read's error")

    async def fine() -> int:
        ended.append("fine")
        return 1
    with pytest.raises(NotFound):
        await together(unknown(), other(), fine())
    assert sorted(ended) == ["fine", "other", "unknown"]
