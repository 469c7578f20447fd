"""Short, user-facing reasons for a failure, as events, rows and alerts carry them.

A leaf module (imports nothing of cronledger).
"""

from __future__ import annotations

MAX_REASON = 500  # characters of a broken reason kept in events, rows and alerts


def reason_of(exc: BaseException) -> str:
    """A short, user-facing reason for ``exc`` (its message, else its type), at most
    :data:`MAX_REASON` characters."""
    text = str(exc).strip() or type(exc).__name__
    if not isinstance(exc, ValueError):  # InvalidSchedule is a ValueError: its text says it
        text = f"{type(exc).__name__}: {text}"
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 1] + "…"
