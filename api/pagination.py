"""Opaque cursors of the paginated routes, and the one place that decodes them.

Three encodings, each decoded strictly (docs/api.md, "REST API": cursors):

- keyset ``base64url(json([instant, id]))`` (jobs, monitors, channels, notifications, runs,
  API keys): :func:`encode_cursor` / :func:`decode_cursor`;
- name ``base64url(name)`` (secrets): :func:`encode_name_cursor` / :func:`decode_name_cursor`;
- stream position, decimal ASCII digits (job and monitor events, pings):
  :func:`encode_position_cursor` / :func:`decode_position_cursor`.

Every list route answers with :func:`paginate`: a page Struct (:func:`api.schemas.common.page_of`)
whose ``next_cursor`` is encoded from the last row, by the route's :data:`CursorKey`
(:func:`keyset`, :func:`by_name`, :func:`by_position`), when the page is full.

Anything else (not base64url, not UTF-8, not JSON of the exact shape and types, NUL or other
text PostgreSQL cannot store, an instant out of range, longer than :data:`MAX_CURSOR`) raises
:class:`core.errors.InvalidInput` on field ``cursor`` (422), never reaches the database.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from core.errors import InvalidInput, invalid

MAX_LIMIT = 200
DEFAULT_LIMIT = 50
MAX_EVENT_LIMIT = 1000  # ?limit= of the event streams (core.events.read_stream reads as many)
DEFAULT_EVENT_LIMIT = 100
MAX_CURSOR = 512  # characters; the longest cursor we produce is about 110
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")
_DIGITS = re.compile(r"[0-9]+")


def _bad_cursor() -> InvalidInput:
    return invalid("cursor", "is not a valid cursor: pass a next_cursor from this route")


def _unwrap(cursor: str) -> str:
    """The UTF-8 text inside an unpadded base64url cursor.

    Raises:
        InvalidInput: too long, not base64url, not UTF-8.
    """
    if len(cursor) > MAX_CURSOR or not _BASE64URL.fullmatch(cursor) or len(cursor) % 4 == 1:
        raise _bad_cursor()
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise _bad_cursor() from None


def _wrap(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def encode_cursor(at: datetime, row_id: uuid.UUID) -> str:
    """The keyset cursor that resumes after the row ``(at, row_id)`` (``at`` aware)."""
    return _wrap(json.dumps([at.isoformat(), str(row_id)]))


def decode_cursor(cursor: str | None) -> tuple[datetime, uuid.UUID] | None:
    """Parse a keyset cursor from ``?cursor=``: ``None`` when absent or empty, else
    ``(aware instant in UTC, row id)``.

    Raises:
        InvalidInput: the cursor was not produced by :func:`encode_cursor`.
    """
    if not cursor:
        return None
    try:
        value: Any = json.loads(_unwrap(cursor))
    except ValueError:  # json.JSONDecodeError, and out-of-range numbers
        raise _bad_cursor() from None
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, str) for v in value)):
        raise _bad_cursor()
    at, row_id = value
    try:
        instant, parsed_id = datetime.fromisoformat(at), uuid.UUID(row_id)
        # Exactly what encode_cursor wrote: fromisoformat and UUID accept more (a trailing NUL,
        # braces, upper case), and none of that is a cursor of ours.
        if instant.tzinfo is None or instant.isoformat() != at or str(parsed_id) != row_id:
            raise ValueError("not canonical")
        return instant.astimezone(UTC), parsed_id
    except (ValueError, OverflowError):  # bad text, or an instant that leaves 1..9999 in UTC
        raise _bad_cursor() from None


def encode_name_cursor(name: str) -> str:
    """The cursor that resumes after the row named ``name``."""
    return _wrap(name)


def decode_name_cursor(cursor: str | None, valid: Callable[[str], bool]) -> str | None:
    """Parse a name cursor: ``None`` when absent or empty, else the name, which ``valid``
    accepts (the route's own name rule, so no NUL or other unstorable text gets through).

    Raises:
        InvalidInput: not produced by :func:`encode_name_cursor` for a valid name.
    """
    if not cursor:
        return None
    name = _unwrap(cursor)
    if "\x00" in name or not valid(name):
        raise _bad_cursor()
    return name


def decode_position_cursor(cursor: str | None, digits: int = 9) -> int | None:
    """Parse a stream-position cursor (ASCII decimal digits, at most ``digits`` of them, so it
    fits PostgreSQL's ``integer``): ``None`` when absent or empty, else the position.

    Raises:
        InvalidInput: anything else (signs, spaces, non-ASCII digits, too many digits).
    """
    if not cursor:
        return None
    if len(cursor) > digits or not _DIGITS.fullmatch(cursor):
        raise _bad_cursor()
    return int(cursor)


def encode_position_cursor(position: int) -> str:
    """The cursor that resumes after stream position (version) ``position``."""
    return str(position)


Row = Mapping[str, Any]
CursorKey = Callable[[Row], str]
"""The cursor that resumes after a row (the route's last row of a full page)."""
P = TypeVar("P")


def keyset(column: str) -> CursorKey:
    """Keyset cursors on ``(row[column], row["id"])`` (``column`` an aware instant)."""
    return lambda row: encode_cursor(row[column], row["id"])


def by_name(row: Row) -> str:
    """Name cursors on ``row["name"]``."""
    return encode_name_cursor(row["name"])


def by_position(column: str) -> CursorKey:
    """Stream-position cursors on the integer ``row[column]``."""
    return lambda row: encode_position_cursor(row[column])


def paginate(page: Callable[..., P], rows: Sequence[Row], limit: int, key: CursorKey,
             view: Callable[[Row], Any]) -> P:
    """The page of ``rows`` (fetched with ``limit``): ``items`` the rows through ``view``,
    ``next_cursor`` the ``key`` of the last row when there are ``limit`` rows (there may be
    more), else ``None``."""
    next_cursor = key(rows[-1]) if rows and len(rows) == limit else None
    return page(items=[view(r) for r in rows], next_cursor=next_cursor)


def check_limit(limit: int) -> int:
    """Validate ``?limit=`` (1..200).

    Raises:
        InvalidInput: out of range.
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise invalid("limit", f"must be between 1 and {MAX_LIMIT}")
    return limit
