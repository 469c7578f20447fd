"""The API's shared parameter helpers, without a database: :func:`api.deps.parse_instant` (every
instant of a query), :func:`api.pagination.paginate` (every list route) and
:func:`api.msgwords.plain` (every 422 of a body or a query in words)."""

from __future__ import annotations

import enum
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import msgspec
import pytest

from api.deps import INSTANT_MESSAGE, parse_instant
from api.msgwords import bare, choices_at, plain
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


class _Kind(enum.Enum):
    A = "alpha"
    B = "beta"


class _Inner(msgspec.Struct, forbid_unknown_fields=True):
    mode: Literal["fast", "slow"]


class _Every(msgspec.Struct, forbid_unknown_fields=True):
    """A field of every constraint msgspec checks, for its messages."""

    text: Annotated[str, msgspec.Meta(min_length=1, max_length=3)] = "a"
    longer: Annotated[str, msgspec.Meta(min_length=2)] = "ab"
    days: Annotated[int, msgspec.Meta(ge=1, le=90)] = 1
    above: Annotated[int, msgspec.Meta(gt=0, lt=5)] = 1
    ratio: Annotated[float, msgspec.Meta(gt=0.5, lt=2.5)] = 1.0
    step: Annotated[int, msgspec.Meta(multiple_of=5)] = 5
    items: Annotated[list[int], msgspec.Meta(min_length=1, max_length=2)] = msgspec.field(
        default_factory=lambda: [1])
    names: Annotated[dict[str, int], msgspec.Meta(min_length=2, max_length=3)] = msgspec.field(
        default_factory=lambda: {"a": 1, "b": 2})
    kind: _Kind = _Kind.A
    scope: Literal["read", "write"] | None = None
    at: Annotated[datetime, msgspec.Meta(tz=True)] = datetime(2026, 1, 1, tzinfo=UTC)
    id: uuid.UUID = uuid.UUID(int=0)
    pair: tuple[int, int] = (1, 2)
    maybe: int | None = None
    inner: _Inner | None = None


@pytest.mark.parametrize(("body", "words"), [
    ({"text": ""}, "must not be empty"),
    ({"text": "abcd"}, "must be at most 3 characters long"),
    ({"longer": "a"}, "must be at least 2 characters long"),
    ({"days": 0}, "must be at least 1"),
    ({"days": 91}, "must be at most 90"),
    ({"above": 0}, "must be at least 1"),  # msgspec states gt=0 of an int as >= 1
    ({"above": 5}, "must be at most 4"),
    ({"ratio": 0.5}, "must be greater than 0.5"),
    ({"ratio": 2.5}, "must be less than 2.5"),
    ({"step": 7}, "must be a multiple of 5"),
    ({"items": []}, "must not be empty"),
    ({"items": [1, 2, 3]}, "must have at most 2 items"),
    ({"names": {"a": 1}}, "must have at least 2 entries"),
    ({"names": {"a": 1, "b": 2, "c": 3, "d": 4}}, "must have at most 3 entries"),
    ({"kind": "gamma"}, "must be one of: alpha, beta"),
    ({"scope": "admin"}, "must be one of: read, write"),
    ({"inner": {"mode": "medium"}}, "must be one of: fast, slow"),
    ({"at": "2026-01-01T00:00:00"}, INSTANT_MESSAGE),
    ({"at": "soon"}, INSTANT_MESSAGE),
    ({"id": "x"}, "must be a UUID"),
    ({"pair": [1]}, "must be an array of exactly 2 items"),
    ({"maybe": "x"}, "must be a whole number or null, not a string"),
    ({"days": 1.5}, "must be a whole number, not a number with a fractional part"),
    ({"text": 5}, "must be a string, not a whole number"),
    ({"items": {}}, "must be an array, not an object"),
    ({"zz": 1}, "is not a field of this object"),
])
def test_msgspec_messages_are_plain_words(body: dict[str, Any], words: str) -> None:
    """Issue 32 (outside test): a 422 said "Expected `str` of length >= 1"; every message of
    a bound, a length, an enum or a type is plain words, the allowed values of an enum named
    from the type itself (the route's, in the API)."""
    with pytest.raises(msgspec.ValidationError) as raised:
        msgspec.json.decode(msgspec.json.encode(body), type=_Every)
    message, path = bare(raised.value)
    said = plain(message, choices_at(_Every, path))
    assert said.startswith(words), (message, said)
    assert "Expected" not in said and "`" not in said, said


def test_a_required_field_and_an_unknown_message() -> None:
    with pytest.raises(msgspec.ValidationError) as raised:
        msgspec.json.decode(b'{"inner": {}}', type=_Every)
    assert bare(raised.value) == ("Object missing required field `mode`", "$.inner")
    assert plain(bare(raised.value)[0]) == "is required"
    assert plain("something msgspec may say one day") == "something msgspec may say one day"
    assert choices_at(_Every, "$.nowhere.at.all") is None
    assert choices_at(_Every, "days") is None
    assert choices_at(_Every, "inner.mode") == ("fast", "slow")
