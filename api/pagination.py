"""Cursors of the paginated routes, and the one place that decodes them.

Three encodings, each a regular language that the OpenAPI document states as the parameter's
``pattern`` (:data:`KEYSET_CURSOR_PATTERN`, :data:`NAME_CURSOR_PATTERN`,
:data:`VERSION_CURSOR_PATTERN`), so that every string the document allows is a position the
route can resume after (docs/api.md, "REST API": cursors):

- keyset ``<microseconds since 1970-01-01T00:00:00Z>_<row id as 32 hex digits>`` (jobs,
  monitors, channels, notifications, runs, API keys, maintenance windows):
  :func:`encode_cursor` / :func:`decode_cursor`;
- name: the last row's name itself (secrets): :func:`encode_name_cursor` /
  :func:`decode_name_cursor`;
- stream position, decimal ASCII digits (job and monitor events, pings):
  :func:`encode_position_cursor` / :func:`decode_position_cursor`.

Every list route answers with :func:`paginate`: a page Struct (:func:`api.schemas.common.page_of`)
whose ``next_cursor`` is encoded from the last row, by the route's :data:`CursorKey`
(:func:`keyset`, :func:`by_name`, :func:`by_position`), when the page is full. The empty
string is no cursor (the first page).

Anything else raises :class:`core.errors.InvalidInput` on field ``cursor`` (422) and never
reaches the database.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from core.errors import InvalidInput, invalid
from core.secrets import NAME_PATTERN

MAX_LIMIT = 200
DEFAULT_LIMIT = 50
MAX_EVENT_LIMIT = 1000  # ?limit= of the event streams (core.events.read_stream reads as many)
DEFAULT_EVENT_LIMIT = 100
# At most 16 digits of microseconds either side of 1970: the years 1653 to 2286, every one of
# them an instant Python and PostgreSQL hold, so any string of the pattern decodes.
_KEYSET = r"(-?[0-9]{1,16})_([0-9a-f]{32})"
KEYSET_CURSOR_PATTERN = f"^(?:{_KEYSET})?$"
NAME_CURSOR_PATTERN = f"^(?:{NAME_PATTERN})?$"
VERSION_CURSOR_PATTERN = r"^[0-9]{0,9}$"
CURSOR_PATTERNS = (KEYSET_CURSOR_PATTERN, NAME_CURSOR_PATTERN, VERSION_CURSOR_PATTERN)
BAD_CURSOR = "is not a valid cursor: pass a next_cursor from this route"
"""What a cursor that does not decode is told, whether the parameter's pattern (in the
decoder of the query) or this module refused it: never the raw regular expression."""
_KEYSET_RE = re.compile(_KEYSET)
_NAME_RE = re.compile(NAME_PATTERN)
_DIGITS = re.compile(r"[0-9]+")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _bad_cursor(field: str = "cursor") -> InvalidInput:
    return invalid(field, BAD_CURSOR)


def encode_cursor(at: datetime, row_id: uuid.UUID) -> str:
    """The keyset cursor that resumes after the row ``(at, row_id)`` (``at`` aware, within
    the years 1653 to 2286)."""
    return f"{(at - _EPOCH) // _MICROSECOND}_{row_id.hex}"


def decode_cursor(cursor: str | None, field: str = "cursor"
                  ) -> tuple[datetime, uuid.UUID] | None:
    """Parse a keyset cursor from ``?cursor=`` (or the query parameter ``field``, which a
    refusal names): ``None`` when absent or empty, else ``(aware instant in UTC, row id)``.

    Raises:
        InvalidInput: the cursor does not match :data:`KEYSET_CURSOR_PATTERN`.
    """
    if not cursor:
        return None
    found = _KEYSET_RE.fullmatch(cursor)
    if found is None:
        raise _bad_cursor(field)
    return _EPOCH + int(found.group(1)) * _MICROSECOND, uuid.UUID(hex=found.group(2))


def encode_name_cursor(name: str) -> str:
    """The cursor that resumes after the row named ``name``."""
    return name


def decode_name_cursor(cursor: str | None) -> str | None:
    """Parse a name cursor: ``None`` when absent or empty, else the name (a secret's name,
    :data:`core.secrets.NAME_PATTERN`).

    Raises:
        InvalidInput: not a name of :data:`NAME_CURSOR_PATTERN`.
    """
    if not cursor:
        return None
    if not _NAME_RE.fullmatch(cursor):
        raise _bad_cursor()
    return cursor


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


Row = dict[str, Any]  # psycopg's dict rows
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
