"""Validation of the http(s) URLs that cronledger will send requests to (job targets, webhook
channels)."""

from __future__ import annotations

from urllib.parse import urlsplit

import yarl

ABSOLUTE = "must be an absolute http:// or https:// URL"


def url_problem(url: str) -> str | None:
    """What makes ``url`` unusable as an absolute http(s) request target, or ``None``.

    The URL must parse with both ``urllib.parse`` (RFC 3986 structure) and ``yarl``, the parser
    aiohttp sends with, so a URL accepted here cannot fail to parse at send time (a stray ``]``
    after an IPv6 literal passes the first and not the second). Never raises.

    Returns:
        ``None``, or one of: :data:`ABSOLUTE`, ``"has no host"``, ``"has an invalid port"``,
        ``"is not a valid URL: <reason>"``.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:  # unbalanced brackets, a non-IP inside them
        return f"is not a valid URL: {exc}"
    if parts.scheme not in ("http", "https"):
        return ABSOLUTE
    if not host:
        return "has no host"
    try:
        _ = parts.port
        _ = yarl.URL(url).port
    except ValueError as exc:
        return "has an invalid port" if "port" in str(exc).lower() else (
            f"is not a valid URL: {exc}")
    return None
