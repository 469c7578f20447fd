"""Opaque keyset cursors: ``base64url(json([instant, id]))``."""

from __future__ import annotations

import base64
import json
import uuid
from datetime import datetime

from core.errors import invalid

MAX_LIMIT = 200
DEFAULT_LIMIT = 50


def encode_cursor(at: datetime, row_id: uuid.UUID) -> str:
    """The cursor that resumes after the row ``(at, row_id)``."""
    raw = json.dumps([at.isoformat(), str(row_id)]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> tuple[datetime, uuid.UUID] | None:
    """Parse a cursor from ``?cursor=``.

    Raises:
        InvalidInput: the cursor was not produced by :func:`encode_cursor`.
    """
    if not cursor:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        at, row_id = json.loads(raw)
        instant = datetime.fromisoformat(at)
        if instant.tzinfo is None:
            raise ValueError
        return instant, uuid.UUID(row_id)
    except (ValueError, TypeError, json.JSONDecodeError, UnicodeDecodeError):
        raise invalid("cursor", "is not a valid cursor") from None


def check_limit(limit: int) -> int:
    """Validate ``?limit=`` (1..200).

    Raises:
        InvalidInput: out of range.
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise invalid("limit", f"must be between 1 and {MAX_LIMIT}")
    return limit
