"""The API's shared parameter helpers, without a database: :func:`api.deps.parse_instant` (every
instant of a query) and :func:`api.pagination.paginate` (every list route)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from api.deps import INSTANT_MESSAGE, parse_instant
from api.pagination import (
    by_name,
    by_position,
    decode_cursor,
    decode_name_cursor,
    keyset,
    paginate,
)
from api.schemas.common import Event, EventPage, page_of
from api.schemas.secrets import Secret, SecretPage
from core.errors import InvalidInput


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-11-30T00:00:00Z", datetime(2026, 11, 30, tzinfo=UTC)),
    ("2026-11-30T01:00:00+01:00", datetime(2026, 11, 30, tzinfo=UTC)),
    ("2026-11-30T01:00:00 01:00", datetime(2026, 11, 30, tzinfo=UTC)),  # '+' sent unencoded
    ("2026-11-30 00:00:00Z", datetime(2026, 11, 30, tzinfo=UTC)),
])
def test_instants_are_read_in_utc(text: str, expected: datetime) -> None:
    parsed = parse_instant("from", text)
    assert parsed == expected and parsed.tzinfo is UTC


def test_an_absent_instant_is_none() -> None:
    assert parse_instant("to", None) is None


@pytest.mark.parametrize("text", ["", "yesterday", "2026-11-30T00:00:00", "2026-11-30",
                                  "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_other_text_is_one_invalid_input_on_the_field(text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_instant("after", text)
    assert [(e.field, e.message) for e in caught.value.errors] == [("after", INSTANT_MESSAGE)]


def test_a_full_page_carries_the_cursor_of_its_last_row() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [{"name": n, "created_at": at, "updated_at": at, "id": uuid.uuid4()} for n in "ab"]
    page = paginate(SecretPage, rows, 2, by_name, lambda r: Secret(r["name"], at, at))
    assert [s.name for s in page.items] == ["a", "b"]
    assert decode_name_cursor(page.next_cursor) == "b"
    full = paginate(SecretPage, rows, 2, keyset("created_at"), lambda r: Secret(r["name"], at, at))
    assert decode_cursor(full.next_cursor) == (at, rows[-1]["id"])


def test_a_short_or_empty_page_is_the_last() -> None:
    assert paginate(EventPage, [], 5, by_position("stream_version"), dict).next_cursor is None
    rows = [{"stream_version": 3}]
    assert paginate(EventPage, rows, 2, by_position("stream_version"), lambda r: r).next_cursor \
        is None
    assert paginate(EventPage, rows, 1, by_position("stream_version"),
                    lambda r: r).next_cursor == "3"


def test_page_of_names_the_page_after_its_item() -> None:
    assert EventPage.__name__ == "EventPage" and EventPage.__module__ == Event.__module__
    assert EventPage.__struct_fields__ == ("items", "next_cursor")
    assert page_of(Event, "Other").__name__ == "Other"
