"""Domain errors. The API maps each class to one HTTP status (RFC 9457 problem details)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FieldError:
    """One problem with one input field; ``field`` is a dotted path such as ``request.url``."""

    field: str
    message: str


class DomainError(Exception):
    """Base of every error a command or query reports to its caller."""

    status = 400
    title = "Bad request"
    # extension members of the problem document (RFC 9457, section 3.2), e.g. ``deleted_at``
    extensions: dict[str, Any] = {}  # noqa: RUF012 - never mutated; instances replace it

    def __init__(self, detail: str, errors: list[FieldError] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors or []


class InvalidInput(DomainError):
    """The input is well-formed but not acceptable (HTTP 422)."""

    status = 422
    title = "Invalid input"


class NotFound(DomainError):
    """No such object for this team (HTTP 404; another team's objects are reported the same)."""

    status = 404
    title = "Not found"


class Gone(DomainError):
    """The object existed but was deleted before the instant asked about (HTTP 410); the
    problem document carries ``deleted_at`` (RFC 3339, UTC)."""

    status = 410
    title = "Gone"

    def __init__(self, detail: str, deleted_at: str) -> None:
        super().__init__(detail)
        self.extensions = {"deleted_at": deleted_at}


class Conflict(DomainError):
    """The object changed concurrently or is in a state that forbids the command (HTTP 409)."""

    status = 409
    title = "Conflict"


class Unauthorized(DomainError):
    """Missing or invalid credentials (HTTP 401)."""

    status = 401
    title = "Unauthorized"


class Forbidden(DomainError):
    """Valid credentials without the needed scope (HTTP 403)."""

    status = 403
    title = "Forbidden"


class Unavailable(DomainError):
    """The server is not configured for this request (HTTP 503), e.g. no secret key is set."""

    status = 503
    title = "Service unavailable"


class DatabaseUnavailable(Unavailable):
    """PostgreSQL cannot be reached, is full or is restarting (HTTP 503 with ``Retry-After``):
    the request was not carried out and can be sent again (docs/operations.md, "Database
    outages")."""

    def __init__(self, detail: str = "the database is unavailable; retry after the "
                                     "Retry-After delay") -> None:
        super().__init__(detail)


class ConcurrencyConflict(Conflict):
    """An append found its stream at another version than expected."""


class FieldErrors:
    """Collects the problems of one input, field by field, so that a single 422 lists them all.

    ``items`` holds the :class:`FieldError` s in the order found.
    """

    def __init__(self) -> None:
        self.items: list[FieldError] = []

    def add(self, field: str, message: str) -> None:
        """Record that ``field`` (a dotted path) ``message`` (e.g. "must be at most 200 ...")."""
        self.items.append(FieldError(field, message))

    def raise_if_any(self) -> None:
        """Raises:
            InvalidInput: listing every problem recorded so far, when there is one.
        """
        if self.items:
            raise InvalidInput("; ".join(f"{e.field}: {e.message}" for e in self.items),
                               self.items)


def invalid(field: str, message: str) -> InvalidInput:
    """Shorthand for an :class:`InvalidInput` about one field."""
    return InvalidInput(f"{field}: {message}", [FieldError(field, message)])


def nul_errors(value: Any, path: str = "") -> list[FieldError]:
    """One error per string (or object key) in ``value`` that contains NUL, which PostgreSQL
    text cannot store; fields are named by dotted path (``request.headers.X``, ``tags.0``)."""
    if isinstance(value, str):
        return [FieldError(path.replace("\x00", "\\0"),
                           "must not contain NUL (\\u0000) characters")] if "\x00" in value else []
    if isinstance(value, dict):
        found = []
        for key, item in value.items():
            sub = f"{path}.{key}" if path else str(key)
            found += nul_errors(key, sub) if isinstance(key, str) and "\x00" in key \
                else nul_errors(item, sub)
        return found
    if isinstance(value, list | tuple):
        return [e for i, item in enumerate(value) for e in nul_errors(item, f"{path}.{i}")]
    return []
